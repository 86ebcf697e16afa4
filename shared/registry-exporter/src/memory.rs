//! [`MemoryExporterStore`]: exporters in a map behind one lock (the memory backend, unit tests).

use crate::model::ExporterRecord;
use crate::store::{Expect, ExporterStore, StoreError, StoreResult, Stored, next_revision};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, Default)]
pub struct MemoryExporterStore {
    records: Mutex<BTreeMap<String, Stored<ExporterRecord>>>,
}

impl MemoryExporterStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn records(&self) -> MutexGuard<'_, BTreeMap<String, Stored<ExporterRecord>>> {
        // Every write is one insert or remove: a panic while holding the lock leaves a good map.
        self.records.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl ExporterStore for MemoryExporterStore {
    async fn exporter(&self, name: &str) -> StoreResult<Option<Stored<ExporterRecord>>> {
        Ok(self.records().get(name).cloned())
    }

    async fn exporters(&self) -> StoreResult<Vec<Stored<ExporterRecord>>> {
        Ok(self.records().values().cloned().collect())
    }

    async fn put_exporter(&self, record: &ExporterRecord, expect: Expect) -> StoreResult<u64> {
        let mut records = self.records();
        let name = record.exporter.name.clone();
        let revision = next_revision(records.get(&name).map(|stored| stored.revision), expect)?;
        records.insert(name, Stored { value: record.clone(), revision });
        Ok(revision)
    }

    async fn remove_exporter(&self, name: &str, revision: u64) -> StoreResult<()> {
        let mut records = self.records();
        match records.get(name) {
            Some(stored) if stored.revision == revision => {
                records.remove(name);
                Ok(())
            }
            _ => Err(StoreError::Conflict("exporter changed".to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn conforms() {
        crate::testkit::exporter_store_conformance(&super::MemoryExporterStore::new()).await;
    }
}
