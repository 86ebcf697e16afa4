//! Readers beside the group-commit writer: every acknowledged write is visible at once, and the ID
//! counter never goes back. (Concurrent registrations: the RACE section of `registry_core::testkit`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{body, store};
use registry_core::SchemaId;
use registry_core::testkit::StoreTestExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_see_every_acknowledged_write_while_writes_continue() {
    let (_dir, store) = store();
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..200 {
                let fingerprint = body(i).fingerprint();
                let id = store.allocate_id(&fingerprint).await.unwrap();
                // Read back on the pool straight after the acknowledgement.
                assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(fingerprint));
            }
        })
    };
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut last = None;
                for _ in 0..100 {
                    let max = store.max_id().await.unwrap();
                    assert!(max >= last, "the id counter went backwards");
                    last = max;
                }
            })
        })
        .collect();
    writer.await.unwrap();
    for reader in readers {
        reader.await.unwrap();
    }
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(200)));
}
