//! The DEK registry's key store conformance suite (`registry_dek::testkit`) on `LocalStore`, and
//! the keys surviving a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_dek::store::{Expect, KeyStore};
use registry_dek::testkit;
use registry_store_local::LocalStore;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_store_passes_the_key_store_suite() {
    let dir = tempfile::tempdir().unwrap();
    testkit::key_store_cases(Arc::new(LocalStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kek_removal_and_a_deleted_dek_creation_race_through_two_handles() {
    // Two handles on one data directory: two processes.
    let dir = tempfile::tempdir().unwrap();
    let first = Arc::new(LocalStore::open(dir.path()).unwrap());
    let second = Arc::new(LocalStore::open(dir.path()).unwrap());
    testkit::race_kek_removal_and_deleted_dek_create_over(first, second).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keys_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let kek = testkit::kek("kept");
    let dek = testkit::dek("kept", "s", registry_dek::DekAlgorithm::Aes128Gcm, 3);
    {
        let store = LocalStore::open(dir.path()).unwrap();
        store.put_kek(&kek, Expect::Absent).await.unwrap();
        store.put_dek(&dek, Expect::Absent, registry_dek::KekGuard::Live).await.unwrap();
    }
    let store = LocalStore::open(dir.path()).unwrap();
    assert_eq!(store.kek("kept").await.unwrap().map(|stored| (stored.value, stored.revision)), Some((kek, 2)));
    assert_eq!(store.dek(&dek.id()).await.unwrap().map(|stored| stored.value), Some(dek));
}
