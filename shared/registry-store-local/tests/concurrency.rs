//! Many tasks allocating IDs and appending versions at once: IDs unique, versions dense, nothing lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{body, store, subject};
use registry_core::{DeletedFilter, SchemaId, Store, StoreError, Subject, Version, VersionRow};
use registry_store_local::LocalStore;
use std::collections::{HashMap, HashSet};

const TASKS: usize = 32;
const SCHEMAS_PER_TASK: usize = 6;

/// The registry's register path in miniature: body, then id (allocate or reuse), then the next version.
async fn register(store: &LocalStore, subject: &Subject, n: usize) -> (SchemaId, Version) {
    let schema = body(n);
    let fingerprint = schema.fingerprint();
    store.put_body(&fingerprint, &schema).await.unwrap();
    let id = loop {
        if let Some(id) = store.id_for_fingerprint(&fingerprint).await.unwrap() {
            break id;
        }
        match store.allocate_id(&fingerprint).await {
            Ok(id) => break id,
            Err(StoreError::Conflict(_)) => continue,
            Err(other) => panic!("{other}"),
        }
    };
    loop {
        let next = store.versions(subject).await.unwrap().last().map_or(1, |r| r.version.0 + 1);
        let row = VersionRow {
            subject: subject.clone(),
            version: Version(next),
            id,
            fingerprint,
            deleted: false,
            references: Vec::new(),
            registered_at_ms: 0,
        };
        match store.create_version(&row).await {
            Ok(()) => return (id, Version(next)),
            Err(StoreError::Conflict(_)) => continue,
            Err(other) => panic!("{other}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registrations_get_unique_ids_and_dense_versions() {
    let (_dir, store) = store();
    let shared = subject("shared");
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (store, shared) = (store.clone(), shared.clone());
        tasks.push(tokio::spawn(async move {
            let own = subject(&format!("task-{t:02}"));
            let mut acked = Vec::new();
            for k in 0..SCHEMAS_PER_TASK {
                // Schema 0 is registered by every task; the others are unique to the task.
                let n = if k == 0 { 0 } else { 1 + t * SCHEMAS_PER_TASK + k };
                let (id, version) = register(&store, &shared, n).await;
                acked.push((shared.clone(), version, id, n));
                let (id, version) = register(&store, &own, n).await;
                acked.push((own.clone(), version, id, n));
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for task in tasks {
        acked.extend(task.await.unwrap());
    }

    let mut id_of_schema: HashMap<usize, SchemaId> = HashMap::new();
    for (subject, version, id, n) in &acked {
        assert_eq!(*id_of_schema.entry(*n).or_insert(*id), *id, "schema {n} got two ids");
        let row = store.get_version(subject, *version).await.unwrap().expect("acknowledged row is stored");
        assert_eq!((row.id, row.fingerprint), (*id, body(*n).fingerprint()));
    }
    let distinct_ids: HashSet<SchemaId> = id_of_schema.values().copied().collect();
    assert_eq!(distinct_ids.len(), id_of_schema.len(), "two schemas share an id");
    assert_eq!(id_of_schema.len(), 1 + TASKS * (SCHEMAS_PER_TASK - 1));

    let versions: Vec<i32> = store.versions(&shared).await.unwrap().iter().map(|r| r.version.0).collect();
    assert_eq!(versions, (1..=(TASKS * SCHEMAS_PER_TASK) as i32).collect::<Vec<_>>());
    let listed = store.list_subjects("", DeletedFilter::LiveOnly, None, usize::MAX).await.unwrap();
    assert_eq!(listed.len(), TASKS + 1);
    for (n, id) in id_of_schema {
        assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(body(n).fingerprint()));
    }
}

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
