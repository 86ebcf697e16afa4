//! Config resolution, modes and IMPORT.

use crate::common::*;
use registry_core::SubjectScope;
use registry_core::testkit::StoreTestExt;
use registry_core::{
    CompatibilityLevel, ConfigRecord, DeletedFilter, Mode, NewSchema, RegisterOptions, RegistryError, Scope,
};

fn level(level: CompatibilityLevel) -> ConfigRecord {
    ConfigRecord { compatibility_level: Some(level), normalize: None, ..ConfigRecord::default() }
}

#[tokio::test]
async fn global_config_defaults_to_backward_and_reverts_on_delete() {
    let r = registry();
    assert_eq!(ok(r.config(&Scope::Global, false).await).compatibility_level, Some(CompatibilityLevel::Backward));
    ok(r.set_config(&Scope::Global, level(CompatibilityLevel::Full)).await);
    assert_eq!(ok(r.config(&Scope::Global, false).await).compatibility_level, Some(CompatibilityLevel::Full));
    assert_eq!(ok(r.delete_config(&Scope::Global).await).compatibility_level, Some(CompatibilityLevel::Full));
    assert_eq!(ok(r.config(&Scope::Global, false).await).compatibility_level, Some(CompatibilityLevel::Backward));
}

#[tokio::test]
async fn subject_config_is_40408_when_unset_and_falls_back_with_default_to_global() {
    let r = registry();
    let e = err(r.config(&scope("s"), false).await);
    assert_eq!(e.to_string(), "Subject 's' does not have subject-level compatibility configured");
    ok(r.set_config(&Scope::Global, level(CompatibilityLevel::Forward)).await);
    assert_eq!(ok(r.config(&scope("s"), true).await).compatibility_level, Some(CompatibilityLevel::Forward));
}

#[tokio::test]
async fn subject_config_can_be_set_before_the_subject_exists_and_wins_over_global() {
    let r = registry();
    ok(r.set_config(&Scope::Global, level(CompatibilityLevel::Forward)).await);
    let stored = ok(r.set_config(&scope("s"), level(CompatibilityLevel::None)).await);
    assert_eq!(stored.compatibility_level, Some(CompatibilityLevel::None));
    assert_eq!(ok(r.config(&scope("s"), false).await).compatibility_level, Some(CompatibilityLevel::None));
    assert_eq!(ok(r.config(&scope("s"), true).await).compatibility_level, Some(CompatibilityLevel::None));
    assert!(
        ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::IncludeDeleted, None, 10).await).is_empty(),
        "no subject created"
    );
}

#[tokio::test]
async fn deleting_an_unset_subject_config_is_40401() {
    let r = registry();
    assert_eq!(err(r.delete_config(&scope("s")).await).to_string(), "Subject 's' not found.");
    ok(r.set_config(&scope("s"), level(CompatibilityLevel::Full)).await);
    assert_eq!(ok(r.delete_config(&scope("s")).await).compatibility_level, Some(CompatibilityLevel::Full));
}

#[tokio::test]
async fn the_effective_level_decides_registration() {
    let r = registry();
    reg(&r, "s", &rec_defaults("R", &["a"], &[])).await;
    let incompatible = rec_defaults("R", &["a", "b"], &[]);
    assert!(matches!(reg_err(&r, "s", avro(&incompatible)).await, RegistryError::IncompatibleSchema { .. }));
    ok(r.set_config(&Scope::Global, level(CompatibilityLevel::None)).await);
    assert_eq!(reg(&r, "s", &incompatible).await.version.0, 2, "global NONE applies");
    ok(r.set_config(&scope("s"), level(CompatibilityLevel::Backward)).await);
    let next = rec_defaults("R", &["a", "b", "c"], &[]);
    assert!(matches!(reg_err(&r, "s", avro(&next)).await, RegistryError::IncompatibleSchema { .. }), "subject wins");
}

#[tokio::test]
async fn read_only_refuses_new_schemas_but_answers_existing_ones() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    ok(r.set_mode(&scope("s"), Mode::ReadOnly, false).await);
    assert_eq!(reg(&r, "s", &rec("R", &[("a", "int")])).await.id, first.id);
    let e = reg_err(&r, "s", avro(&rec_defaults("R", &[], &["x"]))).await;
    assert_eq!(e.to_string(), "Subject s in context . is in read-only mode");
    let e = err(r.set_config(&scope("s"), level(CompatibilityLevel::None)).await);
    assert!(matches!(e, RegistryError::OperationNotPermitted { .. }), "{e:?}");
    assert!(matches!(err(r.delete_config(&scope("s")).await), RegistryError::OperationNotPermitted { .. }));
    assert_eq!(ok(r.delete_mode(&scope("s")).await), Mode::ReadOnly, "deleting a mode is allowed while read-only");
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
}

#[tokio::test]
async fn mode_refusals_name_the_subjects_own_context() {
    let r = registry();
    reg(&r, ":.team-a:s", &rec("R", &[("a", "int")])).await;
    ok(r.set_mode(&scope(":.team-a:s"), Mode::ReadOnly, false).await);
    let e = reg_err(&r, ":.team-a:s", avro(&rec_defaults("R", &[], &["x"]))).await;
    assert_eq!(e.to_string(), "Subject :.team-a:s in context .team-a is in read-only mode");
    let explicit = NewSchema { id: Some(100), ..avro(&rec("R2", &[("a", "int")])) };
    let e = reg_err(&r, ":.team-a:t", explicit).await;
    assert_eq!(e.to_string(), "Subject :.team-a:t in context .team-a is not in import mode");
}

#[tokio::test]
async fn global_read_only_override_beats_a_subject_mode() {
    let r = registry();
    ok(r.set_mode(&scope("s"), Mode::ReadWrite, false).await);
    ok(r.set_mode(&Scope::Global, Mode::ReadOnlyOverride, false).await);
    let e = reg_err(&r, "s", avro(&rec("R", &[("a", "int")]))).await;
    assert!(matches!(e, RegistryError::OperationNotPermitted { .. }), "{e:?}");
    ok(r.set_mode(&Scope::Global, Mode::ReadOnly, false).await);
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
}

#[tokio::test]
async fn subject_mode_is_40409_when_unset_and_40401_on_delete() {
    let r = registry();
    assert_eq!(ok(r.mode(&Scope::Global, false).await), Mode::ReadWrite);
    let e = err(r.mode(&scope("s"), false).await);
    assert_eq!(e.to_string(), "Subject 's' does not have subject-level mode configured");
    ok(r.set_mode(&Scope::Global, Mode::ReadOnly, false).await);
    assert_eq!(ok(r.mode(&scope("s"), true).await), Mode::ReadOnly);
    assert_eq!(err(r.delete_mode(&scope("s")).await).to_string(), "Subject 's' not found.");
    assert_eq!(ok(r.delete_mode(&Scope::Global).await), Mode::ReadOnly);
    assert_eq!(ok(r.mode(&Scope::Global, false).await), Mode::ReadWrite);
}

#[tokio::test]
async fn import_mode_is_refused_while_live_versions_exist_unless_forced() {
    let r = registry();
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
    for target in [scope("s"), Scope::Global] {
        let e = err(r.set_mode(&target, Mode::Import, false).await);
        assert_eq!(e.to_string(), "Cannot import since found existing subjects");
    }
    assert_eq!(ok(r.set_mode(&scope("s"), Mode::Import, true).await), Mode::Import);
    ok(r.set_mode(&scope("empty"), Mode::Import, false).await);
}

#[tokio::test]
async fn import_needs_an_id_and_takes_id_and_version_as_given() {
    let r = registry();
    ok(r.set_mode(&Scope::Global, Mode::Import, false).await);
    let e = reg_err(&r, "s", avro(&rec("R", &[("a", "int")]))).await;
    assert_eq!(e.to_string(), "Subject s in context . is not in read-write mode");
    let imported = NewSchema { id: Some(100), version: Some(7), ..avro(&rec("R", &[("a", "int")])) };
    let record = ok(r.register("s", imported, RegisterOptions::default()).await);
    assert_eq!((record.id.0, record.version.0), (100, 7));
    assert_eq!(record.body.metadata, None, "no confluent:version stamp in IMPORT");
    ok(r.set_mode(&Scope::Global, Mode::ReadWrite, false).await);
    let next = reg(&r, "t", &rec("Other", &[("a", "int")])).await;
    assert!(next.id.0 > 100, "imported ids raise the counter: got {}", next.id);
    assert_eq!(reg(&r, "s", &rec_defaults("R", &[], &[])).await.version.0, 8);
}

#[tokio::test]
async fn import_refuses_an_id_bound_to_another_schema() {
    let r = registry();
    ok(r.set_mode(&Scope::Global, Mode::Import, false).await);
    let first = NewSchema { id: Some(5), ..avro(&rec("A", &[("a", "int")])) };
    ok(r.register("a", first, RegisterOptions::default()).await);
    let clash = NewSchema { id: Some(5), ..avro(&rec("B", &[("a", "int")])) };
    let e = reg_err(&r, "b", clash).await;
    assert_eq!(e.to_string(), "Overwrite new schema with id 5 in context . is not permitted.");
    let same_schema_new_id = NewSchema { id: Some(6), ..avro(&rec("A", &[("a", "int")])) };
    let record = ok(r.register("c", same_schema_new_id, RegisterOptions::default()).await);
    assert_eq!(record.id.0, 6, "one schema may be imported under several ids");
    assert_eq!(ok(r.schema_by_id(6).await).body.schema, ok(r.schema_by_id(5).await).body.schema);
}

#[tokio::test]
async fn import_skips_compatibility() {
    let r = registry();
    reg(&r, "s", &rec_defaults("R", &["a"], &[])).await;
    ok(r.set_mode(&scope("s"), Mode::Import, true).await);
    let incompatible = NewSchema { id: Some(50), ..avro(&rec("R", &[("a", "int")])) };
    let record = ok(r.register("s", incompatible, RegisterOptions::default()).await);
    assert_eq!((record.id.0, record.version.0), (50, 2));
}

#[tokio::test]
async fn entering_import_clears_soft_deleted_rows_of_the_scope() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    reg(&r, "keep", &rec("B", &[("a", "int")])).await;
    ok(r.delete_subject("s", false).await);
    ok(r.set_mode(&scope("s"), Mode::Import, false).await);
    let e = err(r.version_numbers("s", DeletedFilter::IncludeDeleted).await);
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    assert_eq!(nums(&ok(r.version_numbers("keep", DeletedFilter::LiveOnly).await)), [1], "other subjects untouched");
    let imported = NewSchema { id: Some(9), version: Some(1), ..avro(&rec("C", &[("a", "int")])) };
    assert_eq!(ok(r.register("s", imported, RegisterOptions::default()).await).version.0, 1);
}

/// Polls a future of the memory store (which never waits) to its answer, from a synchronous hook.
fn now<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(answer) => answer,
        std::task::Poll::Pending => panic!("the memory store never waits"),
    }
}

/// A context's READONLY stored between a registration's decision and its commit is not missed:
/// the commit is conditioned on the context's settings as read, so it conflicts, reads again and
/// answers 42205.
#[tokio::test]
async fn a_context_mode_set_while_a_registration_decides_is_not_missed() {
    use registry_core::testkit::{HookedStore, StoreCall};
    use registry_core::{MemoryStore, Registry, RegistrySettings, Store};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let inner = Arc::new(MemoryStore::new());
    let racing = inner.clone();
    let raced = AtomicBool::new(false);
    let hook = move |call: StoreCall| {
        if call == StoreCall::CreateVersionAssigningId && !raced.swap(true, Ordering::SeqCst) {
            let context = Scope::parse(":.team:").unwrap_or_else(|e| panic!("{e}"));
            now(racing.put_mode(&context, Mode::ReadOnly)).unwrap_or_else(|e| panic!("{e}"));
        }
        Ok(())
    };
    let r = Registry::new(Arc::new(HookedStore::new(inner.clone(), hook)), RegistrySettings::default());
    let e = err(r.register(":.team:orders", avro(&rec("A", &[("a", "int")])), RegisterOptions::default()).await);
    assert!(matches!(e, RegistryError::OperationNotPermitted { .. }), "{e}");
    let team_orders = registry_core::Subject::new(":.team:orders").unwrap_or_else(|e| panic!("{e}"));
    assert!(ok(inner.versions(&team_orders).await.map_err(RegistryError::from)).is_empty(), "nothing committed");
}
