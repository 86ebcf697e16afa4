//! [`MemoryKeyStore`]: the key store in a map behind one lock (unit tests, the memory backend).
//! The lock makes every conditional write, the KEK guard included, atomic.

use crate::model::{Dek, DekAlgorithm, DekId, Kek};
use crate::store::{Expect, KekGuard, KeyStore, StoreError, StoreResult, Stored};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard};

type DekKey = (String, String, DekAlgorithm, i32);

#[derive(Debug, Default)]
struct State {
    keks: BTreeMap<String, Stored<Kek>>,
    deks: BTreeMap<DekKey, Stored<Dek>>,
}

#[derive(Debug, Default)]
pub struct MemoryKeyStore {
    state: Mutex<State>,
}

impl MemoryKeyStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves a consistent map (every write is one insert or
        // remove), so the data is still good.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn dek_key(id: &DekId) -> DekKey {
    (id.kek_name.clone(), id.subject.clone(), id.algorithm, id.version)
}

/// The revision a write under `expect` gives the record, or the conflict.
fn next_revision<T>(current: Option<&Stored<T>>, expect: Expect, what: &str) -> StoreResult<u64> {
    match (expect, current) {
        (Expect::Absent, None) => Ok(1),
        (Expect::Revision(revision), Some(stored)) if stored.revision == revision => Ok(revision + 1),
        _ => Err(StoreError::Conflict(format!("{what} changed"))),
    }
}

/// The KEK's DEKs, from the first of `kek_name` on.
fn deks_of<'a>(state: &'a State, kek_name: &'a str) -> impl Iterator<Item = &'a Stored<Dek>> + 'a {
    let start = (kek_name.to_owned(), String::new(), DekAlgorithm::Aes128Gcm, i32::MIN);
    state
        .deks
        .range((Bound::Included(start), Bound::Unbounded))
        .take_while(move |((kek, ..), _)| kek == kek_name)
        .map(|(_, dek)| dek)
}

#[async_trait]
impl KeyStore for MemoryKeyStore {
    async fn kek(&self, name: &str) -> StoreResult<Option<Stored<Kek>>> {
        Ok(self.state().keks.get(name).cloned())
    }

    async fn keks(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<Stored<Kek>>> {
        let state = self.state();
        let start = match after {
            Some(after) => Bound::Excluded(after.to_owned()),
            None => Bound::Unbounded,
        };
        Ok(state.keks.range((start, Bound::Unbounded)).take(limit).map(|(_, kek)| kek.clone()).collect())
    }

    async fn put_kek(&self, kek: &Kek, expect: Expect) -> StoreResult<u64> {
        let mut state = self.state();
        let revision = next_revision(state.keks.get(&kek.name), expect, &kek.name)?;
        state.keks.insert(kek.name.clone(), Stored { value: kek.clone(), revision });
        Ok(revision)
    }

    async fn remove_kek(&self, name: &str, revision: u64) -> StoreResult<()> {
        let mut state = self.state();
        next_revision(state.keks.get(name), Expect::Revision(revision), name)?;
        state.keks.remove(name);
        Ok(())
    }

    async fn dek(&self, id: &DekId) -> StoreResult<Option<Stored<Dek>>> {
        Ok(self.state().deks.get(&dek_key(id)).cloned())
    }

    async fn deks(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: DekAlgorithm,
        after_version: i32,
        limit: usize,
    ) -> StoreResult<Vec<Stored<Dek>>> {
        let state = self.state();
        let key = |version| (kek_name.to_owned(), subject.to_owned(), algorithm, version);
        Ok(state
            .deks
            .range((Bound::Excluded(key(after_version)), Bound::Included(key(i32::MAX))))
            .take(limit)
            .map(|(_, dek)| dek.clone())
            .collect())
    }

    async fn latest_dek(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: DekAlgorithm,
        include_deleted: bool,
    ) -> StoreResult<Option<Stored<Dek>>> {
        let state = self.state();
        let key = |version| (kek_name.to_owned(), subject.to_owned(), algorithm, version);
        Ok(state
            .deks
            .range(key(i32::MIN)..=key(i32::MAX))
            .rev()
            .map(|(_, dek)| dek)
            .find(|dek| include_deleted || !dek.value.deleted)
            .cloned())
    }

    async fn dek_subjects(
        &self,
        kek_name: &str,
        after: Option<&str>,
        limit: usize,
        include_deleted: bool,
    ) -> StoreResult<Vec<String>> {
        let state = self.state();
        let mut subjects: Vec<String> = Vec::new();
        for dek in deks_of(&state, kek_name) {
            if subjects.len() >= limit {
                break;
            }
            let subject = &dek.value.subject;
            let listed = subjects.last() == Some(subject);
            let after_cursor = after.is_none_or(|after| subject.as_str() > after);
            if !listed && after_cursor && (include_deleted || !dek.value.deleted) {
                subjects.push(subject.clone());
            }
        }
        Ok(subjects)
    }

    async fn put_dek(&self, dek: &Dek, expect: Expect, kek: KekGuard) -> StoreResult<u64> {
        let mut state = self.state();
        let key = dek_key(&dek.id());
        let revision = next_revision(state.deks.get(&key), expect, &dek.subject)?;
        if kek == KekGuard::Live {
            let Some(stored_kek) = state.keks.get_mut(&dek.kek_name).filter(|kek| !kek.value.deleted) else {
                return Err(StoreError::Conflict(format!("KEK {} is not live", dek.kek_name)));
            };
            stored_kek.revision += 1;
        }
        state.deks.insert(key, Stored { value: dek.clone(), revision });
        Ok(revision)
    }

    async fn remove_dek(&self, id: &DekId, revision: u64) -> StoreResult<()> {
        let mut state = self.state();
        let key = dek_key(id);
        next_revision(state.deks.get(&key), Expect::Revision(revision), &id.subject)?;
        state.deks.remove(&key);
        Ok(())
    }
}
