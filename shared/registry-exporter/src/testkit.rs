//! What backends' tests share: schema linking as a property ([`linking`]) with an exporter paused
//! from inside a pass ([`mid_pass_pause`]), and the exporter store
//! conformance cases, for every backend's tests: conditional create, update
//! and remove on the revision, listing in name order, and the record read back as written.

#![allow(clippy::expect_used, clippy::unwrap_used)]

pub mod linking;
pub mod mid_pass_pause;

use crate::model::{ContextType, Exporter, ExporterRecord, ExporterState, ExporterStatus};
use crate::store::{Expect, ExporterStore, StoreError};
use std::collections::BTreeMap;

fn record(name: &str, offset: i64) -> ExporterRecord {
    ExporterRecord {
        exporter: Exporter {
            name: name.to_owned(),
            context_type: ContextType::Custom,
            context: Some(".team-a".to_owned()),
            subjects: vec!["orders-*".to_owned()],
            subject_rename_format: "${subject}".to_owned(),
            config: BTreeMap::from([("schema.registry.url".to_owned(), "http://dest:8081".to_owned())]),
        },
        status: ExporterStatus { state: ExporterState::Running, offset, ts: 1, trace: Some("why".to_owned()) },
        configured: ["orders-config-only".to_owned()].into(),
    }
}

fn conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{what}: {result:?}");
}

/// Runs every case on `store`, which must hold no exporter.
pub async fn exporter_store_conformance(store: &dyn ExporterStore) {
    assert!(store.exporters().await.expect("list").is_empty());
    assert!(store.exporter("b").await.expect("read").is_none());

    let first = store.put_exporter(&record("b", 0), Expect::Absent).await.expect("create b");
    assert_eq!(first, 1);
    store.put_exporter(&record("a", 0), Expect::Absent).await.expect("create a");
    conflict(store.put_exporter(&record("b", 0), Expect::Absent).await, "create twice");
    conflict(store.put_exporter(&record("c", 0), Expect::Revision(1)).await, "update of a missing record");

    let read = store.exporter("b").await.expect("read").expect("b exists");
    assert_eq!((read.value.clone(), read.revision), (record("b", 0), 1));
    let names: Vec<String> =
        store.exporters().await.expect("list").into_iter().map(|s| s.value.exporter.name).collect();
    assert_eq!(names, ["a", "b"]);

    let second = store.put_exporter(&record("b", 7), Expect::Revision(1)).await.expect("update");
    assert_eq!(second, 2);
    conflict(store.put_exporter(&record("b", 8), Expect::Revision(1)).await, "stale update");
    assert_eq!(store.exporter("b").await.expect("read").expect("b").value.status.offset, 7);

    conflict(store.remove_exporter("b", 1).await, "stale remove");
    conflict(store.remove_exporter("zzz", 1).await, "remove of a missing record");
    store.remove_exporter("b", 2).await.expect("remove");
    assert!(store.exporter("b").await.expect("read").is_none());
    assert_eq!(store.exporters().await.expect("list").len(), 1);
    store.put_exporter(&record("b", 0), Expect::Absent).await.expect("create again after remove");
}
