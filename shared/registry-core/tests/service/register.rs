//! Registering: identity, IDs, versions, explicit id/version, limits.

use crate::common::*;
use registry_core::{
    CompatibilityLevel, DeletedFilter, MemoryStore, NewSchema, RegisterOptions, Registry, RegistryError,
    RegistrySettings, SchemaId, SchemaType,
};
use std::sync::Arc;

#[tokio::test]
async fn first_registration_is_id_1_version_1_with_the_stored_text() {
    let r = registry();
    let text = rec("R", &[("a", "int")]);
    let record = reg(&r, "orders-value", &text).await;
    assert_eq!((record.id.0, record.version.0), (1, 1));
    assert_eq!(record.body.schema, text);
    assert_eq!(record.subject.as_str(), "orders-value");
    assert!(!record.deleted);
}

#[tokio::test]
async fn re_registering_returns_the_existing_id_and_version() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let again = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    assert_eq!((again.id, again.version), (first.id, first.version));
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::IncludeDeleted).await)), [1]);
}

#[tokio::test]
async fn layout_variants_of_one_schema_share_an_id() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let spaced = r#"{ "type" : "record", "name" : "R", "fields" : [ { "name" : "a", "type" : "int" } ] }"#;
    let again = reg(&r, "s", spaced).await;
    assert_eq!((again.id, again.version), (first.id, first.version));
}

#[tokio::test]
async fn the_same_schema_in_another_subject_gets_the_same_id_and_its_own_version() {
    let r = registry();
    set_level(&r, "b", CompatibilityLevel::None).await;
    reg(&r, "b", &rec("Other", &[("x", "int")])).await;
    let in_a = reg(&r, "a", &rec("R", &[("a", "int")])).await;
    let in_b = reg(&r, "b", &rec("R", &[("a", "int")])).await;
    assert_eq!(in_a.id, in_b.id);
    assert_eq!((in_a.version.0, in_b.version.0), (1, 2));
}

#[tokio::test]
async fn different_schemas_get_increasing_ids_and_dense_versions() {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::None).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let record = reg(&r, "s", &rec(&format!("R{i}"), &[("a", "int")])).await;
        assert_eq!(record.version.0, i + 1);
        ids.push(record.id.0);
    }
    assert_eq!(ids, [1, 2, 3, 4]);
}

#[tokio::test]
async fn an_invalid_subject_is_42208() {
    let r = registry();
    let e = reg_err(&r, "bad\u{1}subject", avro(&rec("R", &[("a", "int")]))).await;
    assert!(matches!(e, RegistryError::InvalidSubject { .. }), "{e:?}");
    assert_eq!(e.to_string(), "The specified subject 'bad\u{1}subject' is not a valid.");
}

#[tokio::test]
async fn a_schema_over_the_size_limit_is_42209_and_stores_nothing() {
    let settings = RegistrySettings { max_schema_bytes: 64, ..RegistrySettings::default() };
    let r = Registry::new(Arc::new(MemoryStore::new()), settings);
    let big = rec("R", &[("a_long_field_name", "int"), ("another_long_field", "string")]);
    let e = reg_err(&r, "s", avro(&big)).await;
    assert!(matches!(e, RegistryError::SchemaTooLarge), "{e:?}");
    assert!(matches!(
        r.version_numbers("s", DeletedFilter::IncludeDeleted).await,
        Err(RegistryError::SubjectNotFound { .. })
    ));
}

#[tokio::test]
async fn an_unparseable_schema_is_42201_and_stores_nothing() {
    let r = registry();
    let e = reg_err(&r, "s", avro("{not json")).await;
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
    assert_eq!(ok(r.max_id_in(&registry_core::Context::DEFAULT).await), None);
}

#[tokio::test]
async fn an_invalid_default_is_rejected_on_register() {
    let r = registry();
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"abc"}]}"#;
    let e = reg_err(&r, "s", avro(text)).await;
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

#[tokio::test]
async fn an_empty_schema_on_a_new_subject_is_42201_empty_schema() {
    let r = registry();
    for schema in [None, Some(String::new())] {
        let e = reg_err(&r, "s", NewSchema { schema, ..NewSchema::default() }).await;
        assert!(matches!(&e, RegistryError::InvalidSchema { reason } if reason == "Empty schema"), "{e:?}");
    }
}

#[tokio::test]
async fn an_empty_schema_reuses_the_latest_version() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let record = ok(r.register("s", NewSchema::default(), RegisterOptions::default()).await);
    assert_eq!((record.id, record.version), (first.id, first.version));
}

#[tokio::test]
async fn an_explicit_version_must_be_the_next_one() {
    let r = registry();
    reg(&r, "s", r#""string""#).await;
    let again = NewSchema { version: Some(1), ..avro(r#""string""#) };
    let e = reg_err(&r, "s", again).await;
    assert_eq!(e.to_string(), "Version is not one more than previous version");
    let skip = NewSchema { version: Some(5), ..avro(r#""string""#) };
    assert!(matches!(reg_err(&r, "s", skip).await, RegistryError::InvalidSchema { .. }));
}

#[tokio::test]
async fn an_explicit_next_version_stamps_metadata_and_gets_its_own_id() {
    let r = registry();
    let first = reg(&r, "s", r#""string""#).await;
    let next = NewSchema { version: Some(2), ..avro(r#""string""#) };
    let record = ok(r.register("s", next, RegisterOptions::default()).await);
    assert_eq!(record.version.0, 2);
    assert_ne!(record.id, first.id);
    let metadata = record.body.metadata.unwrap_or_default();
    assert_eq!(metadata["properties"]["confluent:version"], "2");
    let zero = NewSchema { version: Some(0), ..avro(r#""string""#) };
    let record = ok(r.register("s", zero, RegisterOptions::default()).await);
    assert_eq!(record.id, first.id, "version 0 means no explicit version");
}

#[tokio::test]
async fn an_explicit_foreign_id_outside_import_is_42205() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let other = NewSchema { id: Some(first.id.0 + 7), ..avro(&rec("R2", &[("a", "int")])) };
    let e = reg_err(&r, "t", other).await;
    assert!(matches!(e, RegistryError::OperationNotPermitted { .. }), "{e:?}");
    assert_eq!(e.to_string(), "Subject t in context . is not in import mode");
}

#[tokio::test]
async fn the_schemas_own_id_is_accepted_outside_import() {
    let r = registry();
    let first = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let same = NewSchema { id: Some(first.id.0), ..avro(&rec("R", &[("a", "int")])) };
    let record = ok(r.register("t", same, RegisterOptions::default()).await);
    assert_eq!((record.id, record.version.0), (first.id, 1));
}

#[tokio::test]
async fn re_registering_a_soft_deleted_schema_keeps_its_id_and_purges_the_old_row() {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::None).await;
    let first = reg(&r, "s", &rec("A", &[("a", "int")])).await;
    reg(&r, "s", &rec("B", &[("a", "int")])).await;
    ok(r.delete_version("s", v(1), false).await);
    let again = reg(&r, "s", &rec("A", &[("a", "int")])).await;
    assert_eq!((again.id, again.version.0), (first.id, 3));
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::IncludeDeleted).await)), [2, 3]);
}

#[tokio::test]
async fn ids_are_never_reused_after_a_hard_delete() {
    let r = registry();
    let a = reg(&r, "a", &rec("A", &[("a", "int")])).await;
    ok(r.delete_subject("a", false).await);
    ok(r.delete_subject("a", true).await);
    let b = reg(&r, "b", &rec("B", &[("a", "int")])).await;
    assert!(b.id > a.id, "{} must exceed {}", b.id, a.id);
    assert!(matches!(r.schema_by_id(a.id.0).await, Err(RegistryError::SchemaIdNotFound { id }) if id == a.id.0));
}

#[tokio::test]
async fn hard_deleted_top_versions_are_reused_but_soft_deleted_ones_are_not() {
    let r = registry_with_versions(&["A", "B"]).await;
    ok(r.delete_version("s", v(2), false).await);
    assert_eq!(reg(&r, "s", &rec("C", &[("a", "int")])).await.version.0, 3, "soft-deleted 2 still counts");
    ok(r.delete_version("s", v(3), false).await);
    ok(r.delete_version("s", v(3), true).await);
    assert_eq!(reg(&r, "s", &rec("D", &[("a", "int")])).await.version.0, 3, "hard-deleted 3 is reused");
}

#[tokio::test]
async fn after_a_permanent_subject_delete_numbering_restarts_at_1() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    ok(r.delete_subject("s", false).await);
    ok(r.delete_subject("s", true).await);
    assert_eq!(reg(&r, "s", &rec("A", &[("a", "int")])).await.version.0, 1);
}

#[tokio::test]
async fn json_schemas_are_accepted_and_keep_their_type() {
    let r = registry();
    let schema = NewSchema { schema_type: SchemaType::Json, ..avro(r#"{"type":"object"}"#) };
    let record = ok(r.register("j", schema, RegisterOptions::default()).await);
    assert_eq!(record.body.schema_type, SchemaType::Json);
    assert_eq!(ok(r.schema_by_id(record.id.0).await).body.schema_type, SchemaType::Json);
    assert_eq!(record.id, SchemaId(1));
}
