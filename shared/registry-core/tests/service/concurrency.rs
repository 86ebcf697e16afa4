//! 32 concurrent registrations: unique IDs, one ID per schema, dense versions.

use registry_core::{MemoryStore, Store, testkit};
use std::sync::Arc;

fn store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_registrations_of_one_schema_in_one_subject() {
    testkit::race_same_schema_one_subject(store(), 32).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_subjects_registering_one_schema() {
    testkit::race_same_schema_many_subjects(store(), 32).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_different_schemas_in_one_subject() {
    testkit::race_different_schemas_one_subject(store(), 32).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_many_schemas_shared_and_own_subjects() {
    testkit::race_mixed(store(), 8, 8).await;
}
