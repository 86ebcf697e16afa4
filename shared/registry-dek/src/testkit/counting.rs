//! A key store that counts the reads made under each KEK, for work-count cases.

use crate::model::{Dek, DekId, DekSeries, Kek};
use crate::store::{Expect, KekGuard, KeyStore, StoreResult, Stored, SubjectPage};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// `inner`, counting its DEK reads (`dek`, `deks`, `latest_dek`, `dek_subjects`) per KEK name.
#[derive(Debug)]
pub struct CountingKeyStore {
    inner: Arc<dyn KeyStore>,
    reads: Mutex<HashMap<String, u64>>,
}

impl CountingKeyStore {
    pub fn new(inner: Arc<dyn KeyStore>) -> Self {
        CountingKeyStore { inner, reads: Mutex::new(HashMap::new()) }
    }

    /// DEK reads made under `kek_name` so far.
    pub fn reads_of(&self, kek_name: &str) -> u64 {
        self.reads.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(kek_name).copied().unwrap_or(0)
    }

    fn count(&self, kek_name: &str) {
        let mut reads = self.reads.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *reads.entry(kek_name.to_owned()).or_default() += 1;
    }
}

#[async_trait]
impl KeyStore for CountingKeyStore {
    async fn kek(&self, name: &str) -> StoreResult<Option<Stored<Kek>>> {
        self.inner.kek(name).await
    }

    async fn keks(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<Stored<Kek>>> {
        self.inner.keks(after, limit).await
    }

    async fn put_kek(&self, kek: &Kek, expect: Expect) -> StoreResult<u64> {
        self.inner.put_kek(kek, expect).await
    }

    async fn remove_kek(&self, name: &str, revision: u64) -> StoreResult<()> {
        self.inner.remove_kek(name, revision).await
    }

    async fn dek(&self, id: &DekId) -> StoreResult<Option<Stored<Dek>>> {
        self.count(&id.kek_name);
        self.inner.dek(id).await
    }

    async fn deks(&self, series: DekSeries<'_>, after_version: i32, limit: usize) -> StoreResult<Vec<Stored<Dek>>> {
        self.count(series.kek_name);
        self.inner.deks(series, after_version, limit).await
    }

    async fn latest_dek(&self, series: DekSeries<'_>, include_deleted: bool) -> StoreResult<Option<Stored<Dek>>> {
        self.count(series.kek_name);
        self.inner.latest_dek(series, include_deleted).await
    }

    async fn dek_subjects(&self, page: SubjectPage<'_>) -> StoreResult<Vec<String>> {
        self.count(page.kek_name);
        self.inner.dek_subjects(page).await
    }

    async fn put_dek(&self, dek: &Dek, expect: Expect, kek: KekGuard) -> StoreResult<u64> {
        self.inner.put_dek(dek, expect, kek).await
    }

    async fn remove_dek(&self, id: &DekId, revision: u64) -> StoreResult<()> {
        self.inner.remove_dek(id, revision).await
    }
}
