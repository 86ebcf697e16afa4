//! `GET /schemas/ids/{id}` remembers for a short while that an ID is carried by a row; a hard
//! delete must still be seen at once by the process that made it, and a zero TTL always reads.

use crate::common::*;
use registry_core::{MemoryStore, Registry, RegistryError, RegistrySettings, Store};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_hard_delete_is_seen_at_once_by_the_registry_that_made_it() {
    // Given an ID that was just served (and so is remembered as live)
    let r = registry();
    let id = reg(&r, "s", &rec("A", &[("a", "int")])).await.id;
    ok(r.schema_by_id(id.0).await);
    // When the subject is soft- then hard-deleted through a clone of that registry
    let clone = r.clone();
    ok(clone.delete_subject("s", false).await);
    ok(r.schema_by_id(id.0).await);
    ok(clone.delete_subject("s", true).await);
    // Then the ID is gone at once
    assert!(matches!(err(r.schema_by_id(id.0).await), RegistryError::SchemaIdNotFound { .. }));
}

#[tokio::test]
async fn with_a_zero_ttl_another_process_sees_a_hard_delete_at_once() {
    // Given two registries over one store (two processes), the reader with no live-ID memory
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let writer = Registry::new(store.clone(), RegistrySettings::default());
    let reader = Registry::new(store, RegistrySettings { live_id_ttl: Duration::ZERO, ..RegistrySettings::default() });
    let id = reg(&writer, "s", &rec("A", &[("a", "int")])).await.id;
    ok(reader.schema_by_id(id.0).await);
    // When the writer hard-deletes the only row carrying the ID
    ok(writer.delete_subject("s", false).await);
    ok(writer.delete_subject("s", true).await);
    // Then the reader answers 40403 on its next request
    assert!(matches!(err(reader.schema_by_id(id.0).await), RegistryError::SchemaIdNotFound { .. }));
}
