//! Lookups (`POST /subjects/{s}`) are answered from memory for a short while; every write of rows
//! or config made through a registry (or its clones) must still be seen by its next lookup, and
//! another process sees changes after the TTL, or at once with a zero TTL.

use crate::common::*;
use registry_core::{
    ConfigRecord, LookupOptions, MemoryStore, NewSchema, RegisterOptions, Registry, RegistryError, RegistrySettings,
    SchemaRecord, SchemaType, Store,
};
use std::sync::Arc;
use std::time::Duration;

const INCLUDE_DELETED: LookupOptions = LookupOptions { normalize: false, include_deleted: true };

async fn lookup(
    r: &Registry,
    subject: &str,
    text: &str,
    options: LookupOptions,
) -> Result<SchemaRecord, RegistryError> {
    r.lookup(subject, avro(text), options).await
}

#[tokio::test]
async fn soft_deletes_by_the_same_registry_are_seen_at_once() {
    // Given two versions, each just looked up (and so remembered)
    let r = registry();
    let (a, b) = (rec("R", &[("a", "int")]), rec_defaults("R", &[], &["b"]));
    reg(&r, "s", &a).await;
    reg(&r, "s", &b).await;
    assert_eq!(ok(lookup(&r, "s", &b, LookupOptions::default()).await).version.0, 2);
    assert_eq!(ok(lookup(&r, "s", &a, LookupOptions::default()).await).version.0, 1);
    // When a clone soft-deletes version 2, then the whole subject
    let clone = r.clone();
    ok(clone.delete_version("s", v(2), false).await);
    // Then each lookup answers from the new state
    assert!(matches!(err(lookup(&r, "s", &b, LookupOptions::default()).await), RegistryError::SchemaNotFound));
    assert_eq!(ok(lookup(&r, "s", &a, LookupOptions::default()).await).version.0, 1);
    ok(clone.delete_subject("s", false).await);
    assert!(matches!(err(lookup(&r, "s", &a, LookupOptions::default()).await), RegistryError::SubjectNotFound { .. }));
    assert!(ok(lookup(&r, "s", &a, INCLUDE_DELETED).await).deleted);
}

#[tokio::test]
async fn a_registration_by_the_same_registry_is_seen_at_once() {
    // Given a soft-deleted version, remembered by a lookup that includes deleted versions
    let (r, a) = soft_deleted_subject().await;
    let before = ok(lookup(&r, "s", &a, INCLUDE_DELETED).await);
    assert_eq!((before.version.0, before.deleted), (1, true));
    // When the same schema is registered again (a new live version)
    assert_eq!(reg(&r, "s", &a).await.version.0, 2);
    // Then the lookup answers the new version
    let after = ok(lookup(&r, "s", &a, INCLUDE_DELETED).await);
    assert_eq!((after.version.0, after.deleted), (2, false));
}

#[tokio::test]
async fn a_hard_delete_by_the_same_registry_is_seen_at_once() {
    let (r, a) = soft_deleted_subject().await;
    assert!(ok(lookup(&r, "s", &a, INCLUDE_DELETED).await).deleted);
    ok(r.clone().delete_subject("s", true).await);
    assert!(matches!(err(lookup(&r, "s", &a, INCLUDE_DELETED).await), RegistryError::SubjectNotFound { .. }));
}

#[tokio::test]
async fn a_config_change_by_the_same_registry_is_seen_at_once() {
    // Given a Protobuf schema whose normal form differs (fields sorted by tag), looked up as posted; a
    // Protobuf lookup matches the stored text only (Confluent's `ParsedSchema.equivalent` compares
    // canonical strings; only Avro compares parsed schemas)
    let r = registry();
    let posted = "syntax = \"proto3\";\nmessage M {\n  string b = 2;\n  int32 a = 1;\n}\n";
    let schema =
        NewSchema { schema: Some(posted.to_string()), schema_type: SchemaType::Protobuf, ..NewSchema::default() };
    ok(r.register("s", schema.clone(), RegisterOptions::default()).await);
    let lookup = |r: &Registry| {
        let (r, schema) = (r.clone(), schema.clone());
        async move { r.lookup("s", schema, LookupOptions::default()).await }
    };
    ok(lookup(&r).await);
    // When the subject's config turns normalization on
    let normalize = ConfigRecord { normalize: Some(true), ..ConfigRecord::default() };
    ok(r.set_config(&scope("s"), normalize).await);
    // Then the lookup answers as a registry with no memory does (the normal form is not stored)
    let fresh = Registry::new(r.store().clone(), RegistrySettings { lookup_ttl: Duration::ZERO, ..Default::default() });
    assert!(matches!(err(lookup(&fresh).await), RegistryError::SchemaNotFound));
    assert!(matches!(err(lookup(&r).await), RegistryError::SchemaNotFound));
    // And deleting the config is seen at once too
    ok(r.delete_config(&scope("s")).await);
    ok(lookup(&r).await);
}

#[tokio::test]
async fn another_process_sees_a_delete_after_the_ttl_or_at_once_with_a_zero_ttl() {
    // Given a writer and three readers over one store: one remembering lookups for a day (longer than
    // any run, so its memory cannot run out between two lines however busy the machine), one for
    // 50 ms, one not remembering
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let settings = |ttl| RegistrySettings { lookup_ttl: ttl, ..RegistrySettings::default() };
    let writer = Registry::new(store.clone(), RegistrySettings::default());
    let remembering = Registry::new(store.clone(), settings(Duration::from_secs(24 * 3600)));
    let briefly = Registry::new(store.clone(), settings(Duration::from_millis(50)));
    let reading = Registry::new(store, settings(Duration::ZERO));
    let a = rec("R", &[("a", "int")]);
    reg(&writer, "s", &a).await;
    for reader in [&remembering, &briefly, &reading] {
        ok(lookup(reader, "s", &a, LookupOptions::default()).await);
    }
    // When the writer soft-deletes the only version
    ok(writer.delete_subject("s", false).await);
    // Then the reader without memory sees it at once; the others answer from memory until their TTL ends
    assert!(matches!(
        err(lookup(&reading, "s", &a, LookupOptions::default()).await),
        RegistryError::SubjectNotFound { .. }
    ));
    assert_eq!(ok(lookup(&remembering, "s", &a, LookupOptions::default()).await).version.0, 1);
    // (sleeping makes at least that much time pass, however busy the machine is)
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(
        err(lookup(&briefly, "s", &a, LookupOptions::default()).await),
        RegistryError::SubjectNotFound { .. }
    ));
}

#[tokio::test]
async fn a_schema_registered_elsewhere_is_found_on_the_next_lookup() {
    // Failed lookups are never remembered.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let writer = Registry::new(store.clone(), RegistrySettings::default());
    let reader = Registry::new(store, RegistrySettings::default());
    let (a, b) = (rec("R", &[("a", "int")]), rec_defaults("R", &[], &["b"]));
    reg(&writer, "s", &a).await;
    assert!(matches!(err(lookup(&reader, "s", &b, LookupOptions::default()).await), RegistryError::SchemaNotFound));
    reg(&writer, "s", &b).await;
    assert_eq!(ok(lookup(&reader, "s", &b, LookupOptions::default()).await).version.0, 2);
}

/// A registry whose subject `s` has one soft-deleted version, with that version's schema text.
async fn soft_deleted_subject() -> (Registry, String) {
    let r = registry();
    let a = rec("R", &[("a", "int")]);
    reg(&r, "s", &a).await;
    ok(r.delete_subject("s", false).await);
    (r, a)
}
