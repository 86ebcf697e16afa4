//! Crash consistency: a store that fails the N-th call of an operation, for every N, must leave
//! a state that one retry turns into exactly what a single successful call would have made.
//!
//! A failed storage call stands for a process killed between two storage calls: the registry
//! stops at the first error (it retries only `Conflict`), so nothing after call N happens.

use registry_core::testkit::{HookedStore, StoreCall, StoreHook, StoreTestExt};
use registry_core::{
    ConfigRecord, DeletedFilter, Guid, MemoryStore, Mode, NewSchema, RegisterOptions, Registry, RegistryError,
    RegistrySettings, SchemaId, Scope, Store, StoreError, StoreResult, Subject, SubjectsPage, Version, VersionSelector,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Lets calls through, except that call number `fail_at` (1-based) fails with `Unavailable`.
#[derive(Debug, Default)]
struct FaultAt {
    calls: AtomicUsize,
    fail_at: usize,
    /// `mark_used` calls: best effort by contract, so counted here and never a fault point.
    marks: AtomicUsize,
}

impl StoreHook for FaultAt {
    fn before(&self, call: StoreCall) -> StoreResult<()> {
        if call == StoreCall::MarkUsed {
            self.marks.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.fail_at {
            Err(StoreError::Unavailable(format!("injected fault at call {call}")))
        } else {
            Ok(())
        }
    }
}

/// `inner` behind a hook that fails call number `fail_at` (0: never).
fn faulty(inner: Arc<MemoryStore>, fail_at: usize) -> Arc<HookedStore<FaultAt>> {
    // The memory store makes a version with a new ID as separate calls: fail each of them.
    Arc::new(HookedStore::new(inner, FaultAt { fail_at, ..FaultAt::default() }).assigning_ids_in_steps())
}

fn avro(text: &str) -> NewSchema {
    NewSchema { schema: Some(text.to_string()), ..NewSchema::default() }
}

fn record(name: &str, fields: &[&str]) -> String {
    let fields: Vec<String> =
        fields.iter().map(|f| format!(r#"{{"name":"{f}","type":"string","default":""}}"#)).collect();
    format!(r#"{{"type":"record","name":"{name}","fields":[{}]}}"#, fields.join(","))
}

/// A fresh registry, as a restarted process: answer memories carry nothing from run to run, so
/// they are off (an IMPORT rebinding a freed ID then has no other process's memory to wait out).
fn registry(store: Arc<dyn Store>) -> Registry {
    let settings =
        RegistrySettings { live_id_ttl: Duration::ZERO, lookup_ttl: Duration::ZERO, ..RegistrySettings::default() };
    Registry::new(store, settings)
}

fn subject(name: &str) -> Subject {
    Subject::new(name).unwrap_or_else(|e| panic!("bad subject {name}: {e}"))
}

/// Everything a client can observe, in a comparable form.
#[derive(Debug, PartialEq)]
struct Snapshot {
    rows: Vec<(String, i32, i32, bool)>,
    max_id: Option<SchemaId>,
    /// Config and mode of every subject a case touches, and the global ones (as debug text).
    settings: Vec<String>,
}

/// Every subject the cases touch, deleted ones included.
const SUBJECTS: [&str; 8] = ["orders", "payments", "shared", "multi", "common", "retired", "holder", "reborn"];

/// Checks the invariants and returns the observable state.
async fn snapshot(store: &MemoryStore) -> Snapshot {
    let mut rows = Vec::new();
    let every = SubjectsPage { prefix: "", filter: DeletedFilter::IncludeDeleted, after: None, limit: usize::MAX };
    let subjects = store.list_subjects(every).await.unwrap_or_default();
    for subject in subjects {
        let versions = store.versions(&subject).await.unwrap_or_default();
        for row in versions {
            let body = store.get_body(&row.fingerprint).await.ok().flatten();
            let Some(body) = body else { panic!("version {} of {} has no body", row.version, row.subject) };
            let by_guid = store.fingerprint_for_guid(&Guid::of(&body)).await.ok().flatten();
            assert_eq!(by_guid, Some(row.fingerprint), "{} v{}: its guid is not indexed", row.subject, row.version);
            let bound = store.fingerprint_for_id(row.id).await.ok().flatten();
            assert_eq!(
                bound,
                Some(row.fingerprint),
                "id {} of {} v{} is not bound to its body",
                row.id,
                row.subject,
                row.version
            );
            let schema_bound = store.id_for_fingerprint(&row.fingerprint).await.ok().flatten();
            assert_eq!(
                schema_bound,
                Some(row.id),
                "{} v{}: its schema is not bound to its id",
                row.subject,
                row.version
            );
            for reference in &row.references {
                let target = store.get_version(&crate::subject(&reference.subject), Version(reference.version)).await;
                let target = target.ok().flatten();
                assert!(
                    target.is_some_and(|t| row.deleted || !t.deleted),
                    "{} v{} references {} v{}, which is not there (or not live)",
                    row.subject,
                    row.version,
                    reference.subject,
                    reference.version
                );
            }
            rows.push((row.subject.to_string(), row.version.0, row.id.0, row.deleted));
        }
    }
    let mut settings = Vec::new();
    let scopes = SUBJECTS.iter().map(|name| Scope::Subject(subject(name))).chain([Scope::Global]);
    for scope in scopes {
        let config = store.get_config(&scope).await.ok().flatten();
        let mode = store.get_mode(&scope).await.ok().flatten();
        settings.push(format!("{scope:?}: {config:?} {mode:?}"));
    }
    Snapshot { rows, max_id: store.max_id().await.unwrap_or_default(), settings }
}

/// Builds the starting state on a fresh store: `orders` v1..v2 (v1 soft-deleted), `payments` v1,
/// `shared` v1 holding the schema later registered elsewhere, `multi` v1..v3 all live, `common` v1
/// (referenced later), `retired` v1 soft-deleted.
async fn given(store: Arc<MemoryStore>) {
    let registry = registry(store);
    for (s, text) in [
        ("orders", record("Order", &["a"])),
        ("orders", record("Order", &["a", "b"])),
        ("payments", record("Payment", &["p"])),
        ("shared", record("Shared", &["s"])),
        ("multi", record("Multi", &["a"])),
        ("multi", record("Multi", &["a", "b"])),
        ("multi", record("Multi", &["a", "b", "c"])),
        ("common", record("Common", &["c"])),
        ("retired", record("Retired", &["r"])),
    ] {
        registry.register(s, avro(&text), RegisterOptions::default()).await.unwrap_or_else(|e| panic!("given: {e}"));
    }
    registry
        .delete_version("orders", VersionSelector::Number(Version(1)), false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    registry.delete_subject("retired", false).await.unwrap_or_else(|e| panic!("{e}"));
}

/// Runs `operation` with a fault at every call number in turn, retries it once without faults,
/// and compares answer and state with a clean run.
async fn for_every_fault<T, F, Fut>(name: &str, operation: F)
where
    T: PartialEq + std::fmt::Debug,
    F: Fn(Registry) -> Fut,
    Fut: std::future::Future<Output = Result<T, registry_core::RegistryError>>,
{
    let clean_store = Arc::new(MemoryStore::new());
    given(clean_store.clone()).await;
    let expected_answer =
        operation(registry(clean_store.clone())).await.unwrap_or_else(|e| panic!("{name}: clean run failed: {e}"));
    let expected_state = snapshot(&clean_store).await;

    let mut fail_at = 1;
    loop {
        let inner = Arc::new(MemoryStore::new());
        given(inner.clone()).await;
        let hooked = faulty(inner.clone(), fail_at);
        let first = operation(registry(hooked.clone())).await;
        let made_calls = hooked.hook().calls.load(Ordering::SeqCst);
        if made_calls < fail_at {
            assert_eq!(first.ok(), Some(expected_answer), "{name}: run without a fault differs");
            assert!(fail_at > 1, "{name}: made no storage call at all");
            return;
        }
        assert!(first.is_err(), "{name}: the fault at call {fail_at} was swallowed");
        snapshot(&inner).await; // invariants hold right after the crash
        let retried = operation(registry(inner.clone())).await;
        assert_eq!(retried.ok().as_ref(), Some(&expected_answer), "{name}: retry after a fault at call {fail_at}");
        assert_eq!(snapshot(&inner).await, expected_state, "{name}: state after a fault at call {fail_at} and a retry");
        fail_at += 1;
    }
}

#[tokio::test]
async fn register_new_schema_survives_a_crash_at_every_call() {
    registering_survives_every_fault("register new", "orders", record("Order", &["a", "b", "c"])).await;
}

#[tokio::test]
async fn register_schema_known_elsewhere_survives_a_crash_at_every_call() {
    registering_survives_every_fault("register existing id", "brand-new", record("Shared", &["s"])).await;
}

#[tokio::test]
async fn re_register_soft_deleted_schema_survives_a_crash_at_every_call() {
    registering_survives_every_fault("re-register soft-deleted", "orders", record("Order", &["a"])).await;
}

/// Registering the Avro `text` under `subject` survives a crash at every storage call (see
/// [`for_every_fault`]); the answer compared is the ID and version.
async fn registering_survives_every_fault(name: &str, subject: &'static str, text: String) {
    for_every_fault(name, |r| {
        let text = text.clone();
        async move {
            let record = r.register(subject, avro(&text), RegisterOptions::default()).await?;
            Ok((record.id, record.version))
        }
    })
    .await;
}

/// Soft-deletes then hard-deletes `subject`. The soft delete is applied at most once: a retry of
/// the pair after it committed finds the subject soft-deleted already and must answer the same.
async fn soft_then_hard_delete(r: &Registry, subject: &str) -> Result<Vec<Version>, RegistryError> {
    match r.delete_subject(subject, false).await {
        Ok(_) | Err(RegistryError::SubjectSoftDeleted { .. }) => {}
        Err(e) => return Err(e),
    }
    r.delete_subject(subject, true).await
}

#[tokio::test]
async fn soft_delete_version_survives_a_crash_at_every_call() {
    for_every_fault("soft delete version", |r| async move {
        r.delete_version("orders", VersionSelector::Latest, false).await
    })
    .await;
}

#[tokio::test]
async fn hard_delete_version_survives_a_crash_at_every_call() {
    for_every_fault("hard delete version", |r| async move {
        r.delete_version("orders", VersionSelector::Number(Version(1)), true).await
    })
    .await;
}

#[tokio::test]
async fn soft_delete_subject_survives_a_crash_at_every_call() {
    for_every_fault("soft delete subject", |r| async move { r.delete_subject("payments", false).await }).await;
}

#[tokio::test]
async fn hard_delete_subject_survives_a_crash_at_every_call() {
    for_every_fault("hard delete subject", |r| async move { soft_then_hard_delete(&r, "payments").await }).await;
}

#[tokio::test]
async fn soft_delete_subject_with_several_versions_is_all_or_nothing() {
    for_every_fault("soft delete multi", |r| async move { r.delete_subject("multi", false).await }).await;
}

#[tokio::test]
async fn hard_delete_subject_with_several_versions_is_all_or_nothing() {
    for_every_fault("hard delete orders", |r| async move { soft_then_hard_delete(&r, "orders").await }).await;
}

#[tokio::test]
async fn register_with_references_survives_a_crash_at_every_call() {
    for_every_fault("register with references", |r| async move {
        let text = r#"{"type":"record","name":"Holder","fields":[{"name":"c","type":"Common"}]}"#;
        let reference =
            registry_core::SchemaReference { name: "Common".to_string(), subject: "common".to_string(), version: 1 };
        let schema = NewSchema { references: vec![reference], ..avro(text) };
        let record = r.register("holder", schema, RegisterOptions::default()).await?;
        Ok((record.id, record.version))
    })
    .await;
}

#[tokio::test]
async fn hard_delete_that_unbinds_then_registering_again_survives_a_crash_at_every_call() {
    for_every_fault("unbind and re-register", |r| async move {
        // The delete is applied at most once: a retry after it committed finds the version gone.
        match r.delete_version("orders", VersionSelector::Number(Version(1)), true).await {
            Ok(_) | Err(RegistryError::VersionNotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        let record = r.register("reborn", avro(&record("Order", &["a"])), RegisterOptions::default()).await?;
        Ok((record.id, record.version))
    })
    .await;
}

#[tokio::test]
async fn config_write_survives_a_crash_at_every_call() {
    for_every_fault("config write", |r| async move {
        let full = ConfigRecord {
            compatibility_level: Some(registry_core::CompatibilityLevel::Full),
            ..ConfigRecord::default()
        };
        let written = r.set_config(&Scope::Subject(subject("orders")), full).await?;
        let record = r.register("orders", avro(&record("Order", &["a", "b", "c"])), RegisterOptions::default()).await?;
        Ok((written.compatibility_level, record.version))
    })
    .await;
}

#[tokio::test]
async fn entering_import_mode_survives_a_crash_at_every_call() {
    for_every_fault("enter import", |r| async move {
        // Clears the soft-deleted leftovers first, then writes the mode.
        r.set_mode(&Scope::Subject(subject("retired")), Mode::Import, false).await
    })
    .await;
}

/// The ID of `retired` v1 in the starting state (soft-deleted there, so free once hard-deleted).
async fn retired_id() -> SchemaId {
    let store = Arc::new(MemoryStore::new());
    given(store.clone()).await;
    let rows = store.versions(&subject("retired")).await.unwrap_or_else(|e| panic!("{e}"));
    rows.first().map(|row| row.id).unwrap_or_else(|| panic!("retired has no row"))
}

#[tokio::test]
async fn importing_another_schema_under_a_freed_id_survives_a_crash_at_every_call() {
    let freed = retired_id().await;
    for_every_fault("import under a freed id", |r| async move {
        // The delete is applied at most once: a retry after it committed finds the subject gone.
        match r.delete_version("retired", VersionSelector::Number(Version(1)), true).await {
            Ok(_) | Err(RegistryError::SubjectNotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        r.set_mode(&Scope::Subject(subject("reborn")), Mode::Import, false).await?;
        let schema = NewSchema { id: Some(freed.0), version: Some(1), ..avro(&record("Reborn", &["x"])) };
        let record = r.register("reborn", schema, RegisterOptions::default()).await?;
        Ok((record.id, record.version))
    })
    .await;
}

#[test]
fn subject_helper_validates() {
    assert_eq!(subject("orders").as_str(), "orders");
}

#[tokio::test]
async fn usage_is_marked_once_per_day_per_process_without_a_read_per_request() {
    let inner = Arc::new(MemoryStore::new());
    given(inner.clone()).await;
    let text = record("Order", &["a", "b"]);
    // `dormant`'s only version was registered long ago (its row rewritten with a 2023 time).
    let dormant = subject("dormant");
    let fresh = registry(inner.clone()).register("dormant", avro(&text), RegisterOptions::default()).await;
    let version = fresh.unwrap_or_else(|e| panic!("{e}")).version;
    let mut row = inner.get_version(&dormant, version).await.ok().flatten().unwrap_or_else(|| panic!("no row"));
    inner.delete_version(&dormant, version).await.unwrap_or_else(|e| panic!("{e}"));
    row.registered_at_ms = 1_700_000_000_000;
    inner.add_version(&row).await.unwrap_or_else(|e| panic!("{e}"));

    let hooked = faulty(inner.clone(), 0);
    let registry = registry(hooked.clone());
    let lookup = |name| registry.lookup(name, avro(&text), registry_core::LookupOptions::default());
    lookup("orders").await.unwrap_or_else(|e| panic!("lookup of orders: {e}"));
    registry.register("orders", avro(&text), RegisterOptions::default()).await.unwrap_or_else(|e| panic!("{e}"));
    let marks = || hooked.hook().marks.load(Ordering::SeqCst);
    assert_eq!(marks(), 0, "a subject whose newest version was registered today needs no marker");
    lookup("dormant").await.unwrap_or_else(|e| panic!("first lookup: {e}"));
    assert_eq!(marks(), 1, "the first use today of a dormant subject writes the marker");
    lookup("dormant").await.unwrap_or_else(|e| panic!("second lookup: {e}"));
    registry.register("dormant", avro(&text), RegisterOptions::default()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(marks(), 1, "later uses the same day write nothing");
    let today = registry_core::registry::epoch_day(std::time::SystemTime::now());
    assert_eq!(inner.last_used(&dormant).await.ok().flatten(), Some(today));
    assert_eq!(inner.last_used(&subject("orders")).await.ok().flatten(), None);
}
