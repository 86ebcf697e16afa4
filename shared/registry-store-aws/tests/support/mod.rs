//! Emulator fixture for the integration tests: gating, a unique table and bucket per test, cleanup.
//!
//! Gating: without `AWS_ENDPOINT_URL` the tests skip, unless `CI` is set, in which case they fail.

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use aws_config::SdkConfig;
use futures::FutureExt;
use registry_core::{Fingerprint, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow};
use registry_store_aws::AwsStore;
use registry_store_aws::provision::{create_resources, delete_resources};
use std::future::Future;
use std::panic::AssertUnwindSafe;

pub use registry_store_aws::testing::emulator_sdk;

/// Runs `test` against a store on a fresh table and bucket, then deletes them (even on panic).
/// Returns what `test` returned, or `None` when the tests skip (no emulator).
pub async fn with_store<F, Fut, T>(test: F) -> Option<T>
where
    F: FnOnce(AwsStore, SdkConfig) -> Fut,
    Fut: Future<Output = T>,
{
    let sdk = emulator_sdk().await?;
    let config = registry_store_aws::testing::unique_names("registry-test");
    create_resources(&sdk, &config, true).await.unwrap_or_else(|e| panic!("creating test resources: {e}"));
    let store = AwsStore::with_path_style(&sdk, config.clone(), true);
    let outcome = AssertUnwindSafe(test(store, sdk.clone())).catch_unwind().await;
    delete_resources(&sdk, &config, true).await.unwrap_or_else(|e| panic!("deleting test resources: {e}"));
    match outcome {
        Ok(value) => Some(value),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// An Avro body with text `text`.
pub fn body(text: &str) -> SchemaBody {
    SchemaBody {
        schema_type: SchemaType::Avro,
        schema: text.to_string(),
        references: vec![],
        metadata: None,
        rule_set: None,
    }
}

/// A subject name (panics on an invalid one: test input).
pub fn subject(name: &str) -> Subject {
    Subject::new(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A live row.
pub fn row(subject_name: &str, version: i32, id: i32, fingerprint: Fingerprint) -> VersionRow {
    VersionRow {
        subject: subject(subject_name),
        version: Version(version),
        id: SchemaId(id),
        fingerprint,
        deleted: false,
        references: vec![],
        registered_at_ms: 1_700_000_000_000 + i64::from(version),
    }
}
