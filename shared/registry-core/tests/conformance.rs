//! The store conformance suite (`registry_core::testkit`) over [`MemoryStore`], fresh and shared.

use registry_core::{MemoryStore, Store, testkit};
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_conformance_suite() {
    testkit::run_conformance(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_suite_runs_twice_on_one_store() {
    // Backends may reuse one table across runs: every case must tolerate earlier data.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    testkit::run_conformance(store.clone()).await;
    testkit::run_conformance(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_keeps_one_id_space_per_context() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    testkit::context_cases(store.clone()).await;
    testkit::context_cases(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_keeps_every_invariant_over_racing_histories() {
    let findings = testkit::history_cases(Arc::new(MemoryStore::new()), 30).await;
    eprintln!("history on memory: {findings:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_commits_each_decision_on_what_it_read() {
    testkit::decision_cases(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_conformance_suite_with_commit_hints_dropped() {
    // A store may ignore every commit hint and stay correct (`CommitHints`).
    let hinted_away = testkit::HookedStore::new(Arc::new(MemoryStore::new()), |_| Ok(())).dropping_hints();
    testkit::run_conformance(Arc::new(hinted_away)).await;
}
