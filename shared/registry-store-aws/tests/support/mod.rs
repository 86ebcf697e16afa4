//! Emulator fixture for the integration tests: gating, a unique table and bucket per test, cleanup.
//!
//! Gating: without `AWS_ENDPOINT_URL` the tests skip, unless `CI` is set, in which case they fail.

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};
use futures::FutureExt;
use registry_core::{Fingerprint, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow};
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::{AwsStore, AwsStoreConfig};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// The SDK config for the emulator, or `None` to skip (no endpoint and not under CI).
pub async fn emulator_sdk() -> Option<SdkConfig> {
    let endpoint = std::env::var("AWS_ENDPOINT_URL").ok().filter(|v| !v.is_empty());
    if endpoint.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI is set but AWS_ENDPOINT_URL is not: start the emulator");
        eprintln!("skipping: AWS_ENDPOINT_URL is unset (run scripts/emulator-start.sh)");
        return None;
    }
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
        loader = loader.region(Region::new("us-east-1"));
    }
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        let dummy = Credentials::new("test", "test", None, None, "emulator");
        loader = loader.credentials_provider(SharedCredentialsProvider::new(dummy));
    }
    Some(loader.load().await)
}

/// Runs `test` against a store on a fresh table and bucket, then deletes them (even on panic).
pub async fn with_store<F, Fut>(test: F)
where
    F: FnOnce(AwsStore, SdkConfig) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(sdk) = emulator_sdk().await else { return };
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let name = format!("registry-test-{}-{nanos}-{n}", std::process::id());
    let config = AwsStoreConfig { table: name.clone(), bucket: name };
    create_resources(&sdk, &config, true).await.unwrap_or_else(|e| panic!("creating test resources: {e}"));
    let store = AwsStore::with_path_style(&sdk, config.clone(), true);
    let outcome = AssertUnwindSafe(test(store, sdk.clone())).catch_unwind().await;
    delete_resources(&sdk, &config, true).await.unwrap_or_else(|e| panic!("deleting test resources: {e}"));
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
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
