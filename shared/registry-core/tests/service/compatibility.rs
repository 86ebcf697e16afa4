//! Compatibility on register and on the test endpoint, at several levels.

use crate::common::*;
use registry_core::{CompatibilityLevel, NewSchema, RegistryError, SchemaType, VersionSelector};

fn messages(e: RegistryError) -> Vec<String> {
    match e {
        RegistryError::IncompatibleSchema { messages, .. } => messages,
        other => panic!("expected IncompatibleSchema, got {other:?}"),
    }
}

#[tokio::test]
async fn backward_accepts_a_field_with_default_and_rejects_one_without() {
    let r = registry();
    reg(&r, "s", &rec_defaults("R", &["a"], &[])).await;
    assert_eq!(reg(&r, "s", &rec_defaults("R", &["a"], &["b"])).await.version.0, 2);
    let e = reg_err(&r, "s", avro(&rec_defaults("R", &["a", "c"], &["b"]))).await;
    assert!(
        e.to_string().starts_with("Schema being registered is incompatible with an earlier schema for subject \"s\"")
    );
}

#[tokio::test]
async fn the_409_message_lists_findings_then_version_schema_and_level() {
    let r = registry();
    let old = rec_defaults("R", &["a"], &[]);
    reg(&r, "s", &old).await;
    let list = messages(reg_err(&r, "s", avro(&rec_defaults("R", &["a", "c"], &[]))).await);
    assert!(list.len() >= 4, "{list:?}");
    assert!(list[0].contains("READER_FIELD_MISSING_DEFAULT_VALUE"), "{list:?}");
    let n = list.len();
    assert_eq!(list[n - 3], "{oldSchemaVersion: 1}");
    assert_eq!(list[n - 2], format!("{{oldSchema: '{old}'}}"));
    assert_eq!(list[n - 1], "{validateFields: 'false', compatibility: 'BACKWARD'}");
}

#[tokio::test]
async fn forward_rejects_removing_a_field_without_default() {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::Forward).await;
    reg(&r, "s", &rec_defaults("R", &["a", "b"], &[])).await;
    let e = reg_err(&r, "s", avro(&rec_defaults("R", &["a"], &[]))).await;
    assert!(messages(e).last().is_some_and(|m| m.contains("'FORWARD'")));
    assert_eq!(reg(&r, "s", &rec_defaults("R", &["a", "b", "c"], &[])).await.version.0, 2, "adding is forward-safe");
}

#[tokio::test]
async fn full_needs_both_directions() {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::Full).await;
    reg(&r, "s", &rec_defaults("R", &["a"], &[])).await;
    assert!(matches!(
        reg_err(&r, "s", avro(&rec_defaults("R", &["a", "b"], &[]))).await,
        RegistryError::IncompatibleSchema { .. }
    ));
    assert_eq!(reg(&r, "s", &rec_defaults("R", &["a"], &["b"])).await.version.0, 2);
}

#[tokio::test]
async fn transitive_levels_check_every_live_version_and_plain_ones_only_the_latest() {
    let v1 = rec_defaults("R", &["f1"], &[]);
    let v2 = rec_defaults("R", &["f1"], &["f2"]);
    let v3 = rec_defaults("R", &["f1", "f2"], &[]);
    let plain = registry();
    for text in [&v1, &v2, &v3] {
        reg(&plain, "s", text).await;
    }
    let transitive = registry();
    set_level(&transitive, "s", CompatibilityLevel::BackwardTransitive).await;
    reg(&transitive, "s", &v1).await;
    reg(&transitive, "s", &v2).await;
    let list = messages(reg_err(&transitive, "s", avro(&v3)).await);
    assert!(list.contains(&"{oldSchemaVersion: 1}".to_string()), "fails against v1: {list:?}");
}

#[tokio::test]
async fn none_accepts_anything_and_deleted_versions_are_ignored() {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::None).await;
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    reg(&r, "s", r#""string""#).await;
    let other = registry();
    reg(&other, "s", &rec_defaults("R", &["a"], &[])).await;
    ok(other.delete_subject("s", false).await);
    assert_eq!(reg(&other, "s", &rec_defaults("R", &["a", "b"], &[])).await.version.0, 2);
}

#[tokio::test]
async fn a_different_schema_type_is_incompatible_unless_none() {
    let r = registry();
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let json = NewSchema { schema_type: SchemaType::Json, ..avro(r#"{"type":"object"}"#) };
    let list = messages(reg_err(&r, "s", json).await);
    assert_eq!(list[0], "Incompatible because of different schema type");
}

#[tokio::test]
async fn test_compatibility_against_one_version_or_all() {
    let r = registry();
    reg(&r, "s", &rec_defaults("R", &["a"], &[])).await;
    let good = avro(&rec_defaults("R", &["a"], &["b"]));
    let bad = avro(&rec_defaults("R", &["a", "b"], &[]));
    assert!(
        ok(r.test_compatibility("s", Some(VersionSelector::Latest), good.clone(), false, false).await).is_compatible
    );
    assert!(ok(r.test_compatibility("s", None, good, false, false).await).is_compatible);
    let report = ok(r.test_compatibility("s", Some(v(1)), bad.clone(), false, true).await);
    assert!(!report.is_compatible);
    assert_eq!(
        report.messages.last().map(String::as_str),
        Some("{validateFields: 'false', compatibility: 'BACKWARD'}")
    );
    assert!(!ok(r.test_compatibility("s", None, bad, false, false).await).is_compatible);
    assert_eq!(
        nums(&ok(r.version_numbers("s", registry_core::DeletedFilter::IncludeDeleted).await)),
        [1],
        "never writes"
    );
}

#[tokio::test]
async fn test_compatibility_on_missing_subjects_and_versions() {
    let r = registry();
    let schema = avro(&rec("R", &[("a", "int")]));
    assert!(
        ok(r.test_compatibility("nope", Some(VersionSelector::Latest), schema.clone(), false, false).await)
            .is_compatible
    );
    assert!(ok(r.test_compatibility("nope", None, schema.clone(), false, false).await).is_compatible);
    let e = err(r.test_compatibility("nope", Some(v(3)), schema, false, false).await);
    assert_eq!(e.to_string(), "Version 3 not found.");
}

#[tokio::test]
async fn test_compatibility_with_an_invalid_schema_is_42201_or_a_verbose_report() {
    let r = registry();
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let e = err(r.test_compatibility("s", None, avro("{broken"), false, false).await);
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
    let report = ok(r.test_compatibility("s", None, avro("{broken"), false, true).await);
    assert!(!report.is_compatible);
    assert_eq!(report.messages.len(), 1);
}
