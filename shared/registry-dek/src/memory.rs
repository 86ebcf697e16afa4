//! [`MemoryKeyStore`]: the key store in a map behind one lock (unit tests, the memory backend).
//! The lock makes every conditional write, the KEK guard included, atomic.

use crate::model::{Dek, DekAlgorithm, DekId, DekSeries, Kek};
use crate::store::{Expect, KekGuard, KeyStore, StoreError, StoreResult, Stored, SubjectPage};
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

/// The KEK's DEKs of the subjects starting with `prefix` (all of them for an empty one): the range
/// from the prefix itself to the first subject without it.
fn deks_of<'a>(state: &'a State, kek_name: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a Stored<Dek>> + 'a {
    let start = (kek_name.to_owned(), prefix.to_owned(), DekAlgorithm::Aes128Gcm, i32::MIN);
    state
        .deks
        .range((Bound::Included(start), Bound::Unbounded))
        .take_while(move |((kek, subject, ..), _)| kek == kek_name && subject.starts_with(prefix))
        .map(|(_, dek)| dek)
}

/// The versions of `series` from `first` on, ascending.
fn versions<'a>(
    state: &'a State,
    series: DekSeries<'_>,
    first: Bound<i32>,
) -> impl DoubleEndedIterator<Item = &'a Stored<Dek>> + 'a {
    let key = |version| (series.kek_name.to_owned(), series.subject.to_owned(), series.algorithm, version);
    state.deks.range((first.map(key), Bound::Included(key(i32::MAX)))).map(|(_, dek)| dek)
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

    async fn deks(&self, series: DekSeries<'_>, after_version: i32, limit: usize) -> StoreResult<Vec<Stored<Dek>>> {
        let state = self.state();
        Ok(versions(&state, series, Bound::Excluded(after_version)).take(limit).cloned().collect())
    }

    async fn latest_dek(&self, series: DekSeries<'_>, include_deleted: bool) -> StoreResult<Option<Stored<Dek>>> {
        let state = self.state();
        let mut newest_first = versions(&state, series, Bound::Included(i32::MIN)).rev();
        Ok(newest_first.find(|dek| include_deleted || !dek.value.deleted).cloned())
    }

    async fn dek_subjects(&self, page: SubjectPage<'_>) -> StoreResult<Vec<String>> {
        let SubjectPage { kek_name, prefix, after, limit, include_deleted } = page;
        let state = self.state();
        let mut subjects: Vec<String> = Vec::new();
        for dek in deks_of(&state, kek_name, prefix) {
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
        if kek != KekGuard::Unchecked {
            let live_only = kek == KekGuard::Live;
            let Some(stored_kek) = state.keks.get_mut(&dek.kek_name).filter(|kek| !(live_only && kek.value.deleted))
            else {
                return Err(StoreError::Conflict(format!("KEK {} is not {kek:?}", dek.kek_name)));
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
