//! The shared store conformance suite (`registry_core::testkit`) on `LocalStore`: per-method
//! contract cases and the registry RACE section, on a fresh store and again after a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_core::testkit;
use registry_store_local::LocalStore;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    testkit::run_conformance(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_passes_the_store_cases_on_a_reopened_database_with_data() {
    let dir = tempfile::tempdir().unwrap();
    testkit::store_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
    testkit::store_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_keeps_one_id_space_per_context_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    testkit::context_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
    testkit::context_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_keeps_every_invariant_over_racing_histories() {
    let dir = tempfile::tempdir().unwrap();
    let findings = testkit::history_cases(Arc::new(LocalStore::open(dir.path()).unwrap()), 15).await;
    eprintln!("history on the embedded store: {findings:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_commits_each_decision_on_what_it_read() {
    let dir = tempfile::tempdir().unwrap();
    testkit::decision_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_commits_each_decision_on_what_it_read_with_two_handles() {
    // The operation put in between goes through a second handle on the same data directory: two
    // processes sharing it.
    let dir = tempfile::tempdir().unwrap();
    let first = Arc::new(LocalStore::open(dir.path()).unwrap());
    let second = Arc::new(LocalStore::open(dir.path()).unwrap());
    testkit::decision_cases_over(first, second).await;
}
