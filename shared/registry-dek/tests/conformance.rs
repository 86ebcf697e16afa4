//! The key store conformance suite over the memory store.

use registry_dek::MemoryKeyStore;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_key_store_passes_the_conformance_suite() {
    registry_dek::testkit::key_store_cases(Arc::new(MemoryKeyStore::new())).await;
}
