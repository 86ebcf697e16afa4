//! The registry-core store conformance suite (`registry_core::testkit`) against `AwsStore` on the
//! emulator, on a fresh table and bucket.

mod support;

use registry_core::{Store, testkit};
use std::sync::Arc;
use support::with_store;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_store_passes_the_conformance_suite() {
    with_store(|store, _| async move {
        let store: Arc<dyn Store> = Arc::new(store);
        testkit::run_conformance(store).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_store_keeps_every_invariant_over_racing_histories() {
    // The emulator is slow: few rounds, each still sweeping where the late operation starts.
    with_store(|store, _| async move {
        let findings = testkit::history_cases(Arc::new(store), 3).await;
        eprintln!("history on DynamoDB: {findings:?}");
    })
    .await;
}
