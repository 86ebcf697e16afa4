//! A bounded, short-lived memory of which schema IDs some row still carries, so the hot
//! `GET /schemas/ids/{id}` does not read the store's rows on every request (measured: that one
//! read per request cost more than half the by-ID throughput and most of its tail latency).
//!
//! Correctness: every hard delete this process makes goes through [`Registry::hard_delete`],
//! which forgets everything and bumps a generation, and a check that began before a delete is
//! never remembered after it; so this process never answers for an ID it hard-deleted. Another
//! process or function instance may keep answering for a hard-deleted ID for at most
//! [`super::RegistrySettings::live_id_ttl`], counted from the start of the read that saw it
//! carried ([`Recent::remember`]), as every answer memory counts: the lookup memory and the guid
//! memory too.
//!
//! **An ID never answers a schema it no longer names.** IMPORT may rebind an ID whose schema was
//! hard-deleted from every subject of its context ([`crate::Store::bind_id_in`], as Confluent's
//! `checkIfSchemaWithIdExist` allows), so the memory holds the fingerprint the ID named, and a
//! rebind first waits out every answer memory ([`Registry::await_rebind_quiet`]): it sees the ID
//! free (every read that saw it carried began before that), waits the longest answer-memory TTL,
//! then binds. No process or Lambda instance remembers the old binding by then, so none answers
//! the old schema for the ID once the rebind can be seen. The cost is that wait (5 s by default)
//! on the rare IMPORT that rebinds a freed ID, nothing elsewhere. The HTTP side of the rule (by-ID
//! answers are revalidated, not `immutable`) is in `registry_http::http_cache`.

use super::Registry;
use super::recent::{Freshness, Recent};
use crate::error::RegistryError;
use crate::model::{Context, Guid, SchemaId, Subject, Version};
use crate::store::HardDeletion;
use registry_schema::Fingerprint;
use std::time::Duration;

/// Default [`super::RegistrySettings::live_id_ttl`].
pub const DEFAULT_LIVE_ID_TTL: Duration = Duration::from_secs(5);

/// Most IDs remembered; past it the least recently used go first (each entry is a few dozen bytes).
const MAX_ENTRIES: usize = 65_536;

/// IDs seen carried by a row, per context, with the fingerprint they named (each costs one entry).
pub(super) type LiveIds = Recent<(Context, SchemaId), Fingerprint>;

/// Shards of the ID and guid memories: the by-ID reads of every connection meet here.
const SHARDS: usize = 16;

pub(super) fn live_ids() -> LiveIds {
    Recent::sharded(MAX_ENTRIES, SHARDS)
}

/// Guids seen resolving to a fingerprint and the context and ID a row carries, under the same
/// rules and TTL as [`LiveIds`]: `GET /schemas/guids/{guid}` repeated from memory.
pub(super) type LiveGuids = Recent<Guid, (Fingerprint, Context, SchemaId)>;

pub(super) fn live_guids() -> LiveGuids {
    Recent::sharded(MAX_ENTRIES, SHARDS)
}

impl Registry {
    /// The fingerprint of the schema `id` names in `context`, when this process remembers it (the
    /// answer [`Registry::fingerprint_of_id_in`] gives without reading the store), with how long
    /// that answer holds, for an answer kept elsewhere ([`Registry::still_remembered`]).
    pub fn remembered_id_in(&self, context: &Context, id: i32) -> Option<(Fingerprint, Freshness)> {
        self.live_ids.get_fresh(&(context.clone(), SchemaId(id)))
    }

    /// Whether an answer of [`Registry::remembered_id_in`] is still the one this process's memory
    /// gives: nothing was forgotten since (a hard delete, a rebind) and it has not expired.
    pub fn still_remembered(&self, freshness: &Freshness) -> bool {
        self.live_ids.is_fresh(freshness)
    }

    /// The fingerprint of `id` in `context` while some row of it (live or soft-deleted) carries
    /// it: from memory when seen carried recently, else one store read that answers both.
    pub(super) async fn carried_fingerprint(
        &self,
        context: &Context,
        id: SchemaId,
    ) -> Result<Option<Fingerprint>, RegistryError> {
        if let Some((fingerprint, _)) = self.remembered_id_in(context, id.0) {
            return Ok(Some(fingerprint));
        }
        let key = (context.clone(), id);
        let generation = self.live_ids.generation();
        let fingerprint = self.store.fingerprint_for_carried_id_in(context, id).await?;
        if let Some(fingerprint) = fingerprint {
            self.live_ids.remember(key, fingerprint, 1, generation, self.settings.live_id_ttl);
        }
        Ok(fingerprint)
    }

    /// Before IMPORT binds `id` in `context` to `fingerprint`: when that rebinds a freed ID (bound
    /// to another schema that no row of the context carries any more), waits the longest
    /// answer-memory TTL, so that every memory of the old binding, in any process, has expired
    /// when the rebind commits (see the module doc). Returns whether it waited. An ID a row still
    /// carries is left to [`crate::Store::bind_id_in`], which refuses it (42205).
    ///
    /// What it cannot see: an IMPORT of the old schema under the ID and its hard delete, both
    /// within the wait, leave memories of the old binding that may outlive the rebind by the time
    /// between the check and that second delete.
    pub(super) async fn await_rebind_quiet(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<bool, RegistryError> {
        let quiet = self.settings.live_id_ttl.max(self.settings.lookup_ttl);
        if quiet.is_zero() {
            return Ok(false);
        }
        let bound = self.store.fingerprint_for_id_in(context, id).await?;
        if bound.is_none_or(|bound| bound == *fingerprint) {
            return Ok(false);
        }
        if self.store.fingerprint_for_carried_id_in(context, id).await?.is_some() {
            return Ok(false);
        }
        tokio::time::sleep(quiet).await;
        Ok(true)
    }

    /// Forgets what this process remembers of IDs and guids being carried (after a hard delete or
    /// an IMPORT binding, which may rebind a freed ID).
    pub(super) fn forget_live_ids(&self) {
        self.live_ids.forget_all();
        self.live_guids.forget_all();
    }

    /// The one way the registry hard-deletes rows: the store's atomic batch under `preconditions`, then the
    /// live-ID and live-guid memories are forgotten (see the module doc).
    pub(super) async fn hard_delete(
        &self,
        subject: &Subject,
        versions: &[Version],
        remove_subject_settings: bool,
        preconditions: &crate::store::Preconditions,
    ) -> Result<(), crate::store::StoreError> {
        let deletion = HardDeletion { subject, versions, remove_subject_settings, preconditions };
        let deleted = self.store.hard_delete_versions(deletion).await;
        self.forget_live_ids();
        self.forget_lookups();
        deleted
    }
}
