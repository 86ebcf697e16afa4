//! What only `AwsStore` has, on the emulator (moto server; see scripts/emulator-start.sh): where its
//! data lives. The per-method contract and the races are `registry_core::testkit` (tests/conformance.rs);
//! AWS calls per operation are counted in tests/calls.rs.

mod support;

use registry_core::{
    NewSchema, RegisterOptions, Registry, RegistryError, RegistrySettings, SchemaReference, Store, Subject,
};
use std::sync::Arc;
use support::{body, with_store};

#[tokio::test]
async fn bodies_live_in_s3_under_their_fingerprint() {
    with_store(|store, sdk| async move {
        let b = body("\"string\"");
        let fp = b.fingerprint();
        store.put_body(&fp, &b).await.unwrap_or_else(|e| panic!("{e}"));
        let s3 = aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(&sdk).force_path_style(true).build());
        let head = s3.head_object().bucket(store.config().bucket).key(format!("schemas/{}", fp.to_hex())).send().await;
        assert!(head.is_ok(), "body must live at schemas/<sha256 hex>");
    })
    .await;
}

/// Registers `count` record types `<prefix><i>`, each as version 1 of subject `<prefix>-ref-<i>`.
async fn register_types(registry: &Registry, prefix: &str, count: usize) {
    // One after another: what this file tests is the size of one transaction, and concurrent
    // registrations into one table would race for the ID counter, retrying quadratically (the
    // conformance suite's race cases test those races).
    for i in 0..count {
        let text = format!(r#"{{"type":"record","name":"{prefix}{i}","fields":[{{"name":"v","type":"int"}}]}}"#);
        let schema = NewSchema { schema: Some(text), ..NewSchema::default() };
        registry
            .register(&format!("{prefix}-ref-{i}"), schema, RegisterOptions::default())
            .await
            .unwrap_or_else(|e| panic!("referenced type: {e}"));
    }
}

/// A record with one field of each of the first `count` types of [`register_types`], referencing them.
fn holder(prefix: &str, count: usize) -> NewSchema {
    let fields: Vec<String> = (0..count).map(|i| format!(r#"{{"name":"f{i}","type":"{prefix}{i}"}}"#)).collect();
    let text = format!(r#"{{"type":"record","name":"{prefix}Holder{count}","fields":[{}]}}"#, fields.join(","));
    let references = (0..count)
        .map(|i| SchemaReference { name: format!("{prefix}{i}"), subject: format!("{prefix}-ref-{i}"), version: 1 })
        .collect();
    NewSchema { schema: Some(text), references, ..NewSchema::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn more_references_than_one_transaction_holds_are_refused_with_42201_naming_the_limit() {
    with_store(|store, _| async move {
        let registry = Registry::new(Arc::new(store), RegistrySettings::default());
        register_types(&registry, "T", 120).await;
        let registered = registry.register("few-holder", holder("T", 20), RegisterOptions::default()).await;
        assert!(registered.is_ok(), "20 references fit one transaction: {registered:?}");

        match registry.register("many-holder", holder("T", 120), RegisterOptions::default()).await {
            Err(RegistryError::InvalidSchema { reason }) => {
                assert!(reason.contains("120 versions of 120 subjects") && reason.contains("limit of 100"), "{reason}");
            }
            other => panic!("expected 42201 naming the transaction limit, got {other:?}"),
        }
        let subject = Subject::new("many-holder").unwrap_or_else(|e| panic!("{e}"));
        assert!(registry.store().versions(&subject).await.unwrap_or_default().is_empty(), "nothing was committed");
    })
    .await;
}
