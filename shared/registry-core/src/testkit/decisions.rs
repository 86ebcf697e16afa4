//! DECISIONS section: every decision commits on what it read. Each case runs one operation through
//! a registry whose store runs a whole other operation (through a second registry on the same
//! store) right before the first one's commit, between its reads and its write, and checks that
//! the two end as some serial order of them would: the first one's commit conflicts and it
//! decides again on what the second one left, or it wins and the second one saw it. Deterministic,
//! one interleaving per case: no sweep, no sleeps, so every case ends in a few operations.

use super::{StoreCall, StoreHook, unique_context, unique_name, unique_subject};
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Context, Mode, Scope, Subject, Version};
use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
use crate::store::{Store, StoreResult};
use registry_schema::CompatibilityLevel;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::hooked::{HookedStore, Interleaved};

/// Runs its work once, before the first call `at` accepts.
struct Between {
    at: fn(StoreCall) -> bool,
    work: Mutex<Option<Interleaved>>,
}

impl StoreHook for Between {
    fn before(&self, _call: StoreCall) -> StoreResult<()> {
        Ok(())
    }

    fn interleave(&self, call: StoreCall) -> Option<Interleaved> {
        if (self.at)(call) { self.work.lock().expect("decisions: hook lock").take() } else { None }
    }
}

/// Nothing remembered between requests: every answer comes from the store.
fn settings() -> RegistrySettings {
    RegistrySettings {
        lookup_ttl: std::time::Duration::ZERO,
        live_id_ttl: std::time::Duration::ZERO,
        usage_granularity_days: 0,
        ..RegistrySettings::default()
    }
}

/// A registry straight over `store`: the operation put in between.
fn plain(store: &Arc<dyn Store>) -> Registry {
    Registry::new(store.clone(), settings())
}

/// A registry over `store` that runs `work` (another operation, through [`plain`]) to its end
/// right before its first store call `at` accepts; the receiver answers what `work` returned, and
/// fails the case if it never ran.
fn interleaved<T: Send + 'static>(
    store: &Arc<dyn Store>,
    at: fn(StoreCall) -> bool,
    work: impl Future<Output = T> + Send + 'static,
) -> (Registry, oneshot::Receiver<T>) {
    let (sent, answer) = oneshot::channel();
    let work: Interleaved = Box::pin(async move {
        let _ = sent.send(work.await);
    });
    let hook = Between { at, work: Mutex::new(Some(work)) };
    (Registry::new(Arc::new(HookedStore::new(store.clone(), hook)), settings()), answer)
}

/// What the interleaved operation answered.
async fn second<T>(answer: oneshot::Receiver<T>, case: &str) -> T {
    answer.await.unwrap_or_else(|_| panic!("{case}: the interleaved operation never ran"))
}

/// A version row commit (either way a registration commits one).
fn row_commit(call: StoreCall) -> bool {
    matches!(call, StoreCall::CreateVersion | StoreCall::CreateVersionAssigningId)
}

fn avro(tag: &str) -> NewSchema {
    let name: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let text = format!(r#"{{"type":"record","name":"D_{name}","fields":[{{"name":"f","type":"string"}}]}}"#);
    NewSchema { schema: Some(text), ..NewSchema::default() }
}

async fn register(registry: &Registry, subject: &Subject, schema: NewSchema, case: &str) -> Version {
    let record = registry.register(subject.as_str(), schema, RegisterOptions::default()).await;
    record.unwrap_or_else(|e| panic!("{case}: register into {subject}: {e}")).version
}

async fn set_alias(registry: &Registry, subject: &Subject, target: &Subject) -> Result<(), RegistryError> {
    let config = ConfigRecord {
        alias: Some(target.to_string()),
        compatibility_level: Some(CompatibilityLevel::None),
        ..ConfigRecord::default()
    };
    registry.set_config(&Scope::Subject(subject.clone()), config).await.map(drop)
}

async fn live_versions(store: &Arc<dyn Store>, subject: &Subject) -> Vec<Version> {
    let rows = store.versions(subject).await.expect("decisions: versions");
    rows.iter().filter(|row| !row.deleted).map(|row| row.version).collect()
}

/// An alias changed between a write's reads and its commit: once `PUT /config/al {"alias":"t2"}`
/// is acknowledged, a registration or a delete through `al` must not commit into `t1`. The
/// aliasing subject's config, as the write read it, is a condition of its commit.
pub async fn alias_change_between_decision_and_commit(store: Arc<dyn Store>) {
    alias_change_between_decision_and_commit_over(store.clone(), store).await;
}

/// [`alias_change_between_decision_and_commit`] with the operation put in between
/// made through `other` (another handle of the same store: another process).
async fn alias_change_between_decision_and_commit_over(store: Arc<dyn Store>, other: Arc<dyn Store>) {
    let case = "alias_change_between_decision_and_commit";
    let (alias, first, second_target) = (unique_subject("al"), unique_subject("t1"), unique_subject("t2"));
    let setup = plain(&store);
    set_alias(&setup, &alias, &first).await.unwrap_or_else(|e| panic!("{case}: alias: {e}"));

    // A registration through the alias, the alias moved to t2 right before its commit.
    let moved = {
        let (registry, alias, target) = (plain(&other), alias.clone(), second_target.clone());
        async move { set_alias(&registry, &alias, &target).await }
    };
    let (registry, answer) = interleaved(&store, row_commit, moved);
    let record = registry.register(alias.as_str(), avro(&unique_name("aliased")), RegisterOptions::default()).await;
    let record = record.unwrap_or_else(|e| panic!("{case}: register through the alias: {e}"));
    second(answer, case).await.unwrap_or_else(|e| panic!("{case}: moving the alias: {e}"));
    assert!(
        live_versions(&store, &first).await.is_empty(),
        "{case}: a registration through {alias} committed into {first} after the alias named {second_target}"
    );
    assert_eq!(record.subject, second_target, "{case}: the registration answers the alias's target when it committed");

    // A delete through the alias, the alias moved back to t1 right before its commit.
    register(&setup, &first, avro(&unique_name("first")), case).await;
    let moved = {
        let (registry, alias, target) = (plain(&other), alias.clone(), first.clone());
        async move { set_alias(&registry, &alias, &target).await }
    };
    let soft_delete = |call: StoreCall| call == StoreCall::SoftDeleteVersions;
    let (registry, answer) = interleaved(&store, soft_delete, moved);
    let deleted = registry.delete_subject(alias.as_str(), false).await;
    let deleted = deleted.unwrap_or_else(|e| panic!("{case}: delete through the alias: {e}"));
    second(answer, case).await.unwrap_or_else(|e| panic!("{case}: moving the alias back: {e}"));
    assert_eq!(deleted, [Version(1)], "{case}: the delete answers the target's versions");
    assert_eq!(
        live_versions(&store, &second_target).await,
        [Version(1)],
        "{case}: a delete through {alias} committed into {second_target} after the alias named {first}"
    );
    assert!(
        live_versions(&store, &first).await.is_empty(),
        "{case}: the delete went to the alias's target when it committed"
    );
}

/// `PUT /mode/{s} IMPORT` clears the subject's soft-deleted versions first, but not one a row of
/// another subject still references (soft-deleted or not): the hard delete of it is refused with
/// 42206, and clearing for IMPORT keeps the same rule, so the referrer still resolves.
pub async fn import_mode_keeps_versions_a_deleted_referrer_references(store: Arc<dyn Store>) {
    let case = "import_mode_keeps_versions_a_deleted_referrer_references";
    let registry = plain(&store);
    let (lib, app) = (unique_subject("lib"), unique_subject("app"));
    let tag = unique_name("lib");
    register(&registry, &lib, avro(&tag), case).await;
    let type_name: String =
        format!("D_{}", tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>());
    let referrer = NewSchema {
        schema: Some(format!(r#"{{"type":"record","name":"App","fields":[{{"name":"l","type":"{type_name}"}}]}}"#)),
        references: vec![registry_schema::SchemaReference { name: type_name, subject: lib.to_string(), version: 1 }],
        ..NewSchema::default()
    };
    register(&registry, &app, referrer, case).await;
    registry.delete_subject(app.as_str(), false).await.unwrap_or_else(|e| panic!("{case}: soft-delete {app}: {e}"));
    registry.delete_subject(lib.as_str(), false).await.unwrap_or_else(|e| panic!("{case}: soft-delete {lib}: {e}"));

    let scope = Scope::Subject(lib.clone());
    registry.set_mode(&scope, Mode::Import, false).await.unwrap_or_else(|e| panic!("{case}: IMPORT mode: {e}"));
    let rows = store.versions(&lib).await.expect("decisions: versions");
    assert!(
        rows.iter().any(|row| row.version == Version(1) && row.deleted),
        "{case}: IMPORT mode hard-deleted {lib} version 1, which soft-deleted {app} version 1 references: {rows:?}"
    );
    let refused = registry.delete_subject(lib.as_str(), true).await;
    assert!(
        matches!(refused, Err(RegistryError::ReferenceExists { .. })),
        "{case}: the hard delete answers 42206: {refused:?}"
    );
}

/// IMPORT over a taken version number: the replaced row goes in the new row's own atomic write,
/// so an import that fails (here: another import took its ID between its reads and its commit, so
/// it answers 42205) leaves the acknowledged version it meant to replace in place.
pub async fn import_replacing_a_version_removes_it_only_with_its_replacement(store: Arc<dyn Store>) {
    import_replacing_a_version_removes_it_only_with_its_replacement_over(store.clone(), store).await;
}

/// [`import_replacing_a_version_removes_it_only_with_its_replacement`] with the operation put in between
/// made through `other` (another handle of the same store: another process).
async fn import_replacing_a_version_removes_it_only_with_its_replacement_over(
    store: Arc<dyn Store>,
    other: Arc<dyn Store>,
) {
    let case = "import_replacing_a_version_removes_it_only_with_its_replacement";
    let setup = plain(&store);
    let (subject, taker) = (unique_subject("replaced"), unique_subject("taker"));
    for at in [&subject, &taker] {
        let scope = Scope::Subject(at.clone());
        setup.set_mode(&scope, Mode::Import, false).await.unwrap_or_else(|e| panic!("{case}: IMPORT mode: {e}"));
    }
    let base = store.max_id_in(&Context::DEFAULT).await.expect("decisions: max_id").map_or(0, |id| id.0) + 1000;
    let imported = |tag: &str, id: i32| NewSchema { id: Some(id), version: Some(1), ..avro(&unique_name(tag)) };
    let original = setup.register(subject.as_str(), imported("original", base + 1), RegisterOptions::default()).await;
    let original = original.unwrap_or_else(|e| panic!("{case}: import version 1: {e}"));

    // Another import takes the ID between the replacing import's reads and its first write.
    let taking = {
        let (registry, taker, schema) = (plain(&other), taker.clone(), imported("taker", base + 2));
        async move { registry.register(taker.as_str(), schema, RegisterOptions::default()).await }
    };
    let first_write = |call: StoreCall| matches!(call, StoreCall::HardDeleteVersions | StoreCall::CreateVersion);
    let (registry, answer) = interleaved(&store, first_write, taking);
    let replacing =
        registry.register(subject.as_str(), imported("replacing", base + 2), RegisterOptions::default()).await;
    let taken = second(answer, case).await.unwrap_or_else(|e| panic!("{case}: the other import: {e}"));
    assert_eq!(taken.id.0, base + 2, "{case}: the other import holds the ID");
    assert!(
        matches!(replacing, Err(RegistryError::OperationNotPermitted { .. })),
        "{case}: the replacing import answers 42205 once its ID names another schema: {replacing:?}"
    );
    let rows = store.versions(&subject).await.expect("decisions: versions");
    let kept: Vec<_> = rows.iter().map(|row| (row.version, row.id, row.deleted)).collect();
    assert_eq!(
        kept,
        [(Version(1), original.id, false)],
        "{case}: a failed import removed the acknowledged version it meant to replace"
    );
}

/// `PUT /mode/:.ctx: IMPORT` (allowed only while no subject of the context has a live version)
/// and a first registration in the context: never both acknowledged, in either order between
/// one's reads and its commit. The registration raises the context's revision, which the mode
/// write is conditioned on; the mode write changes a setting the registration is conditioned on.
pub async fn context_import_mode_and_first_registration_serialize(store: Arc<dyn Store>) {
    context_import_mode_and_first_registration_serialize_over(store.clone(), store).await;
}

/// [`context_import_mode_and_first_registration_serialize`] with the operation put in between
/// made through `other` (another handle of the same store: another process).
async fn context_import_mode_and_first_registration_serialize_over(store: Arc<dyn Store>, other: Arc<dyn Store>) {
    let case = "context_import_mode_and_first_registration_serialize";

    // The registration between the mode's reads and its write.
    let context = unique_context("imp");
    let (scope, subject) = (Scope::of_context(&context), in_context(&context, "s"));
    let registering = {
        let (registry, subject) = (plain(&other), subject.clone());
        let schema = avro(&unique_name("first"));
        async move { registry.register(subject.as_str(), schema, RegisterOptions::default()).await }
    };
    let (registry, answer) = interleaved(&store, |call| matches!(call, StoreCall::WriteSetting { .. }), registering);
    let mode = registry.set_mode(&scope, Mode::Import, false).await;
    let registered = second(answer, case).await;
    assert!(registered.is_ok(), "{case}: the registration read READWRITE: {registered:?}");
    assert!(mode.is_err(), "{case}: IMPORT mode at {context} acknowledged after a registration there committed");
    let stored = plain(&store).mode(&scope, false).await.ok();
    assert_ne!(stored, Some(Mode::Import), "{case}: {context} is in IMPORT mode with a live subject");

    // The mode between the registration's reads and its commit.
    let context = unique_context("imp");
    let (scope, subject) = (Scope::of_context(&context), in_context(&context, "s"));
    let entering = {
        let (registry, scope) = (plain(&other), scope.clone());
        async move { registry.set_mode(&scope, Mode::Import, false).await }
    };
    let (registry, answer) = interleaved(&store, row_commit, entering);
    let registered = registry.register(subject.as_str(), avro(&unique_name("first")), RegisterOptions::default()).await;
    let mode = second(answer, case).await;
    assert!(
        !(mode.is_ok() && registered.is_ok()),
        "{case}: IMPORT mode at {context} and a registration there both acknowledged ({registered:?})"
    );
}

/// `DELETE /contexts/{ctx}` (only of a context no subject has a row in) and a first registration
/// in the context: whichever comes between the other's reads and its commit, a context holding a
/// subject stays listed. The unlisting conflicts while a subject has a row (answered 42211, as a
/// context found not empty); a first registration lists its context again.
pub async fn context_delete_and_first_registration_serialize(store: Arc<dyn Store>) {
    context_delete_and_first_registration_serialize_over(store.clone(), store).await;
}

/// [`context_delete_and_first_registration_serialize`] with the operation put in between
/// made through `other` (another handle of the same store: another process).
async fn context_delete_and_first_registration_serialize_over(store: Arc<dyn Store>, other: Arc<dyn Store>) {
    let case = "context_delete_and_first_registration_serialize";
    let setup = plain(&store);
    // A schema bound in each context below with no row carrying it: listed and empty, and a
    // registration of it there takes the bound ID (no allocation, which would list the context).
    let schema = avro(&unique_name("bound"));
    let probe = unique_subject("probe");
    register(&setup, &probe, schema.clone(), case).await;
    let fingerprint = store.versions(&probe).await.expect("decisions: versions")[0].fingerprint;
    let empty_context = || async {
        let context = unique_context("del");
        store.allocate_id_in(&context, &fingerprint).await.expect("decisions: allocate_id_in");
        context
    };
    let listed = |context: Context| {
        let store = store.clone();
        async move { store.list_contexts().await.expect("decisions: list_contexts").contains(&context) }
    };

    // The registration between the delete's reads and its unlisting.
    let context = empty_context().await;
    let subject = in_context(&context, "s");
    let registering = {
        let (registry, subject, schema) = (plain(&other), subject.clone(), schema.clone());
        async move { registry.register(subject.as_str(), schema, RegisterOptions::default()).await }
    };
    let (registry, answer) = interleaved(&store, |call| call == StoreCall::UnlistContext, registering);
    let deleted = registry.delete_context(context.name()).await;
    let registered = second(answer, case).await;
    assert!(registered.is_ok(), "{case}: the registration into {subject}: {registered:?}");
    assert!(listed(context.clone()).await, "{case}: {context} unlisted while {subject} has a live version");
    assert!(
        matches!(deleted, Err(RegistryError::ContextNotEmpty { .. })),
        "{case}: the delete answers 42211 once a subject is there: {deleted:?}"
    );

    // The delete between the registration's reads and its commit.
    let context = empty_context().await;
    let subject = in_context(&context, "s");
    let deleting = {
        let (registry, context) = (plain(&other), context.name().to_string());
        async move { registry.delete_context(&context).await }
    };
    let (registry, answer) = interleaved(&store, row_commit, deleting);
    let registered = registry.register(subject.as_str(), schema.clone(), RegisterOptions::default()).await;
    let deleted = second(answer, case).await;
    assert!(deleted.is_ok(), "{case}: the delete of the empty {context}: {deleted:?}");
    let registered = registered.unwrap_or_else(|e| panic!("{case}: the registration into {subject}: {e}"));
    assert_eq!(
        store.id_for_fingerprint_in(&context, &fingerprint).await.expect("decisions: id_for_fingerprint_in"),
        Some(registered.id),
        "{case}: the registration took the ID bound in {context}"
    );
    assert!(listed(context.clone()).await, "{case}: {context} unlisted while {subject} has a live version");
}

fn in_context(context: &Context, name: &str) -> Subject {
    Subject::new(context.qualify(name)).expect("decisions: generated subject names are valid")
}

/// The DECISIONS cases with the operation put in between made through `second`, another handle of
/// `first`'s storage (two processes on one data directory, two instances on one table).
pub async fn decision_cases_over(first: Arc<dyn Store>, second: Arc<dyn Store>) {
    alias_change_between_decision_and_commit_over(first.clone(), second.clone()).await;
    import_mode_keeps_versions_a_deleted_referrer_references(first.clone()).await;
    import_replacing_a_version_removes_it_only_with_its_replacement_over(first.clone(), second.clone()).await;
    context_import_mode_and_first_registration_serialize_over(first.clone(), second.clone()).await;
    context_delete_and_first_registration_serialize_over(first, second).await;
}
