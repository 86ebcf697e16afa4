//! Emulator fixture for the integration tests: gating, a unique table and bucket per test, cleanup.
//!
//! Gating: without `AWS_ENDPOINT_URL` the tests skip, unless `CI` is set, in which case they fail.

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use aws_config::SdkConfig;
use futures::FutureExt;
use registry_core::{Fingerprint, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow};
use registry_store_aws::AwsStore;
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::regions::{AckRegion, AckReplicas};
use registry_store_aws::testing::replicator::Site;
use std::future::Future;
use std::panic::AssertUnwindSafe;

pub mod http;

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

/// Two regions of one registry on the emulator (moto keeps regions apart): the home site in `home`
/// and the read site in `read`, one table name and a bucket each, deleted after `test` (even on
/// panic). Does nothing when the tests skip (no emulator).
pub async fn with_regions<F, Fut>(prefix: &str, home: &str, read: &str, test: F)
where
    F: FnOnce(Site, Site) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some([home, read]) = Site::of_regions(prefix, [(home, "home"), (read, "read")]).await else { return };
    for site in [&home, &read] {
        site.create().await;
    }
    let outcome = AssertUnwindSafe(test(home.clone(), read.clone())).catch_unwind().await;
    for site in [&home, &read] {
        site.delete().await;
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// The AWS calls `store` made while `op` ran, and what `op` answered.
pub async fn calls_of<T>(store: &AwsStore, op: impl Future<Output = T>) -> (u64, T) {
    let before = store.calls().get();
    let out = op.await;
    (store.calls().get() - before, out)
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

/// The acknowledging replicas of `read`'s region (its table and its bucket) as `home` waits for
/// them, at most `timeout`.
pub fn read_region_acks(home: &Site, read: &Site, timeout: std::time::Duration) -> std::sync::Arc<AckReplicas> {
    let region = AckRegion { region: region_of(read), bucket: Some(read.config.bucket.clone()) };
    std::sync::Arc::new(AckReplicas::new(&home.sdk, &home.config.table, &home.config.bucket, &[region], timeout))
}

/// `home`'s store as the home region runs it: fenced on its own region and waiting at most
/// `timeout` for `read`'s replicas ([`read_region_acks`]), with those replicas.
pub fn acknowledging_home(
    home: &Site,
    read: &Site,
    timeout: std::time::Duration,
) -> (AwsStore, std::sync::Arc<AckReplicas>) {
    let acks = read_region_acks(home, read, timeout);
    (home.store().fenced_by(&region_of(home)).with_acks(acks.clone()), acks)
}

/// The home application (as [`http::app`]) over [`acknowledging_home`]'s store, and what it waits for.
pub fn acknowledging_home_app(
    home: &Site,
    read: &Site,
    timeout: std::time::Duration,
) -> (axum::Router, std::sync::Arc<AckReplicas>) {
    let (acked, acks) = acknowledging_home(home, read, timeout);
    (http::app(std::sync::Arc::new(acked)), acks)
}

/// The region of `site`'s SDK configuration.
fn region_of(site: &Site) -> String {
    site.sdk.region().map(|r| r.as_ref().to_string()).unwrap_or_default()
}
