//! Soft and hard deletes: answers, error codes in Confluent's order, and what they leave behind.

use crate::common::*;
use registry_core::SubjectScope;
use registry_core::{CompatibilityLevel, ConfigRecord, DeletedFilter, Mode, RegistryError, Scope, VersionSelector};

#[tokio::test]
async fn soft_delete_version_returns_its_number_and_hides_it() {
    let r = registry_with_versions(&["A", "B"]).await;
    assert_eq!(ok(r.delete_version("s", VersionSelector::Latest, false).await).0, 2);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::LiveOnly).await)), [1]);
}

#[tokio::test]
async fn soft_deleting_twice_is_40406() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    ok(r.delete_version("s", v(1), false).await);
    let e = err(r.delete_version("s", v(1), false).await);
    assert!(matches!(e, RegistryError::VersionSoftDeleted { .. }), "{e:?}");
    assert_eq!(e.to_string(), "Subject 's' Version 1 was soft deleted.Set permanent=true to delete permanently");
}

#[tokio::test]
async fn hard_deleting_a_live_version_is_40407() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    let e = err(r.delete_version("s", v(1), true).await);
    assert_eq!(e.to_string(), "Subject 's' Version 1 was not deleted first before being permanently deleted");
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::LiveOnly).await)), [1], "nothing deleted");
}

#[tokio::test]
async fn deleting_a_missing_version_is_40401_or_40402() {
    let r = registry();
    let e = err(r.delete_version("nope", v(1), false).await);
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    let e = err(r.delete_version("nope", v(1), true).await);
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    let e = err(r.delete_version("s", v(9), false).await);
    assert_eq!(e.to_string(), "Version 9 not found.");
}

#[tokio::test]
async fn hard_delete_after_soft_delete_removes_the_row() {
    let r = registry_with_versions(&["A", "B"]).await;
    ok(r.delete_version("s", v(1), false).await);
    assert_eq!(ok(r.delete_version("s", v(1), true).await).0, 1);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::IncludeDeleted).await)), [2]);
    assert!(matches!(err(r.version("s", v(1), true).await), RegistryError::VersionNotFound { .. }));
}

#[tokio::test]
async fn hard_deleting_the_last_row_removes_the_subjects_config_and_mode() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    set_level(&r, "s", CompatibilityLevel::Full).await;
    ok(r.set_mode(&scope("s"), Mode::ReadWrite, false).await);
    ok(r.delete_version("s", v(1), false).await);
    assert!(ok(r.config(&scope("s"), false).await).compatibility_level.is_some(), "soft delete keeps config");
    ok(r.delete_version("s", v(1), true).await);
    assert!(matches!(err(r.config(&scope("s"), false).await), RegistryError::SubjectConfigNotFound { .. }));
    assert!(matches!(err(r.mode(&scope("s"), false).await), RegistryError::SubjectModeNotFound { .. }));
}

#[tokio::test]
async fn soft_delete_subject_returns_the_live_versions() {
    let r = registry_with_versions(&["A", "B", "C"]).await;
    ok(r.delete_version("s", v(2), false).await);
    assert_eq!(nums(&ok(r.delete_subject("s", false).await)), [1, 3]);
    assert!(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::LiveOnly, None, 10).await).is_empty());
    assert_eq!(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::DeletedOnly, None, 10).await).len(), 1);
}

#[tokio::test]
async fn soft_deleting_a_soft_deleted_subject_is_40404() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    ok(r.delete_subject("s", false).await);
    let e = err(r.delete_subject("s", false).await);
    assert_eq!(e.to_string(), "Subject 's' was soft deleted.Set permanent=true to delete permanently");
}

#[tokio::test]
async fn hard_deleting_a_live_subject_is_40405() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    let e = err(r.delete_subject("s", true).await);
    assert_eq!(e.to_string(), "Subject 's' was not deleted first before being permanently deleted");
}

#[tokio::test]
async fn deleting_an_unknown_subject_is_40401_even_when_permanent() {
    let r = registry();
    for permanent in [false, true] {
        let e = err(r.delete_subject("nope", permanent).await);
        assert_eq!(e.to_string(), "Subject 'nope' not found.");
    }
}

#[tokio::test]
async fn hard_delete_subject_returns_every_version_and_drops_config() {
    let r = registry_with_versions(&["A", "B"]).await;
    ok(r.delete_subject("s", false).await);
    assert_eq!(nums(&ok(r.delete_subject("s", true).await)), [1, 2]);
    assert!(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::IncludeDeleted, None, 10).await).is_empty());
    assert!(matches!(err(r.config(&scope("s"), false).await), RegistryError::SubjectConfigNotFound { .. }));
}

#[tokio::test]
async fn registering_after_a_soft_subject_delete_continues_numbering() {
    let r = registry_with_versions(&["A", "B"]).await;
    ok(r.delete_subject("s", false).await);
    assert_eq!(reg(&r, "s", &rec("C", &[("a", "int")])).await.version.0, 3);
    assert_eq!(reg(&r, "s", &rec("D", &[("a", "int")])).await.version.0, 4);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::LiveOnly).await)), [3, 4]);
}

#[tokio::test]
async fn read_only_refuses_deletes_with_42205_after_the_not_found_checks() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    ok(r.set_mode(&scope("s"), Mode::ReadOnly, false).await);
    let e = err(r.delete_version("s", v(1), false).await);
    assert_eq!(e.to_string(), "Subject s in context . is in read-only mode");
    assert!(matches!(err(r.delete_subject("s", false).await), RegistryError::OperationNotPermitted { .. }));
    assert!(matches!(err(r.delete_version("s", v(5), false).await), RegistryError::VersionNotFound { .. }));
    let global = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::Full),
        normalize: None,
        ..ConfigRecord::default()
    };
    assert!(ok(r.set_config(&Scope::Global, global).await).compatibility_level.is_some(), "other scopes writable");
}
