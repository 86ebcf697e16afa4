//! A bounded, short-lived memory of which schema IDs some row still carries, so the hot
//! `GET /schemas/ids/{id}` does not read the store's rows on every request (measured: that one
//! read per request cost more than half the by-ID throughput and most of its tail latency).
//!
//! Correctness: every hard delete this process makes goes through [`Registry::hard_delete`],
//! which forgets everything and bumps a generation, and a check that began before a delete is
//! never remembered after it; so this process never answers for an ID it hard-deleted. Another
//! process or function instance may keep answering for a hard-deleted ID for at most
//! [`super::RegistrySettings::live_id_ttl`]: the by-ID answer is cacheable for a year by HTTP caches
//! anyway (`Cache-Control` of `GET /schemas/ids/{id}`), so this adds no staleness a client could
//! rely on not seeing. A zero TTL turns the memory off.

use super::Registry;
use crate::error::RegistryError;
use crate::model::{SchemaId, Subject, Version};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Default [`super::RegistrySettings::live_id_ttl`].
pub const DEFAULT_LIVE_ID_TTL: Duration = Duration::from_secs(5);

/// Most IDs remembered; past it the memory starts over (each entry is a few dozen bytes).
const MAX_ENTRIES: usize = 65_536;

/// IDs seen carried by a row, with when; plus the generation of the last forget.
#[derive(Debug, Default)]
pub(super) struct LiveIds {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    generation: u64,
    seen: HashMap<SchemaId, Instant>,
}

impl LiveIds {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every mutation completes under the guard, so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `id` was seen live less than `ttl` ago.
    pub(super) fn is_fresh(&self, id: SchemaId, ttl: Duration) -> bool {
        self.state().seen.get(&id).is_some_and(|seen| seen.elapsed() < ttl)
    }

    /// The generation a check starts in; pass it to [`LiveIds::remember`].
    pub(super) fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Remembers `id` as live, unless a hard delete happened since `generation` was read.
    pub(super) fn remember(&self, id: SchemaId, generation: u64) {
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        if state.seen.len() >= MAX_ENTRIES {
            state.seen.clear();
        }
        state.seen.insert(id, Instant::now());
    }

    /// Forgets every ID (called after each hard delete).
    pub(super) fn forget_all(&self) {
        let mut state = self.state();
        state.generation = state.generation.wrapping_add(1);
        state.seen.clear();
    }
}

impl Registry {
    /// Whether some row (live or soft-deleted) carries `id`, from memory when seen recently.
    pub(super) async fn id_in_use(&self, id: SchemaId) -> Result<bool, RegistryError> {
        let ttl = self.settings.live_id_ttl;
        if !ttl.is_zero() && self.live_ids.is_fresh(id, ttl) {
            return Ok(true);
        }
        let generation = self.live_ids.generation();
        let in_use = !self.store.rows_with_id(id).await?.is_empty();
        if in_use && !ttl.is_zero() {
            self.live_ids.remember(id, generation);
        }
        Ok(in_use)
    }

    /// The one way the registry hard-deletes rows: the store's atomic batch, then the
    /// live-ID memory is forgotten (see the module doc).
    pub(super) async fn hard_delete(
        &self,
        subject: &Subject,
        versions: &[Version],
        remove_subject_settings: bool,
    ) -> Result<(), crate::store::StoreError> {
        let deleted = self.store.hard_delete_versions(subject, versions, remove_subject_settings).await;
        self.live_ids.forget_all();
        deleted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistrySettings;

    #[test]
    fn remembered_ids_expire_and_a_forget_wins_over_an_older_check() {
        let live = LiveIds::default();
        let generation = live.generation();
        live.remember(SchemaId(1), generation);
        assert!(live.is_fresh(SchemaId(1), Duration::from_secs(60)));
        assert!(!live.is_fresh(SchemaId(1), Duration::ZERO), "a zero TTL never answers from memory");
        assert!(!live.is_fresh(SchemaId(2), Duration::from_secs(60)));

        let before_delete = live.generation();
        live.forget_all();
        assert!(!live.is_fresh(SchemaId(1), Duration::from_secs(60)), "a hard delete forgets everything");
        live.remember(SchemaId(1), before_delete);
        assert!(!live.is_fresh(SchemaId(1), Duration::from_secs(60)), "a check from before the delete is dropped");
        live.remember(SchemaId(1), live.generation());
        assert!(live.is_fresh(SchemaId(1), Duration::from_secs(60)));
    }

    #[test]
    fn default_ttl_is_short() {
        assert_eq!(RegistrySettings::default().live_id_ttl, DEFAULT_LIVE_ID_TTL);
    }
}
