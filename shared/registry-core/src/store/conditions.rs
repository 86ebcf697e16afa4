//! What a subject write decided on, and the conditions it commits under.
//!
//! Many processes write one store without a leader, so a write's decision (mode, compatibility
//! level, the subject's rows, the versions it references, the ID it reuses) can go stale between
//! the reads it was made from and its commit. Every subject write therefore reads a
//! [`LayeredContext`] first, then the rows, decides, and hands the store [`Preconditions`] that the
//! store checks in the same atomic step as the write (one DynamoDB transaction, one SQLite
//! transaction, one lock). A failed condition is `Conflict`: the registry reads again and decides
//! again, so every acknowledged write is ordered after every write it could have missed.

use crate::model::{ConfigRecord, Guid, Mode, SchemaId, Scope, Subject, Version, VersionRow};
use registry_schema::Fingerprint;

/// A subject's write revision. Every write that creates, soft-deletes or removes one of the
/// subject's rows raises it, and so does every registration that references one of its versions
/// (so a delete that read the referrers before conflicts). `Revision(0)`: never written since
/// revisions exist. Only equality is meaningful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Revision(pub u64);

/// Which settings item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingKind {
    Config,
    Mode,
}

/// A conditional change of one settings item ([`crate::Store::write_setting`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SettingChange {
    /// Replace (`Some`) or remove (`None`) the config.
    Config(Option<Box<ConfigRecord>>),
    /// Replace (`Some`) or remove (`None`) the mode.
    Mode(Option<Mode>),
}

impl SettingChange {
    /// Which item it writes.
    pub fn kind(&self) -> SettingKind {
        match self {
            SettingChange::Config(_) => SettingKind::Config,
            SettingChange::Mode(_) => SettingKind::Mode,
        }
    }
}

/// A config or mode item as a decision read it: the store's own stored form (opaque to the
/// registry; a store compares it with what is stored at commit), or `None` when absent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SettingSeen {
    pub kind: SettingKind,
    pub scope: Scope,
    pub stored: Option<String>,
}

/// A schema's ID and guid bindings and its context's ID counter, as a store read them together
/// with a [`LayeredContext`]: what a registration needs before its commit and a re-registration
/// before its answer, read in the call it makes anyway. A snapshot, not a condition: a store that
/// commits from it conditions its write on it (and conflicts when it went stale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingsSeen {
    pub fingerprint: Fingerprint,
    pub guid: Guid,
    /// The ID `fingerprint` is bound to in the subject's context.
    pub id: Option<SchemaId>,
    /// The fingerprint `guid` is bound to (immutable once bound).
    pub guid_bound_to: Option<Fingerprint>,
    /// What the next allocation in the subject's context starts after: the greatest ID allocated
    /// there (the counter), or a store's lower bound above it (a multi-region store's failover
    /// floor).
    pub max_id: Option<SchemaId>,
    /// The subject's newest live version with `fingerprint`, where the store keeps a record of it
    /// that it trusts without reading the rows (a re-registration's answer in the call it makes
    /// anyway; its `references` may be left empty: they are the body's); `None` when it has none:
    /// only the rows say.
    pub live_version: Option<VersionRow>,
}

/// The config and mode stored at one scope, as a decision read them.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsAt {
    pub scope: Scope,
    pub config: Option<ConfigRecord>,
    pub mode: Option<Mode>,
}

/// What a write at `scope` decides on, with the settings at every scope it resolves through
/// ([`Scope::settings_read`]: the scope, its context's, the registry-wide and the global ones),
/// read by [`crate::Store::layered_write_context`] in one call.
#[derive(Debug, Clone, PartialEq)]
pub struct LayeredContext {
    pub scope: Scope,
    pub revision: Revision,
    /// The settings read, one entry per scope.
    pub levels: Vec<SettingsAt>,
    /// Every settings item as read, for [`Preconditions::settings`].
    pub seen: Vec<SettingSeen>,
    /// The bindings of the schemas asked for ([`crate::Store::layered_write_context`]), where the
    /// store read them in the same call; empty otherwise.
    pub bindings: Vec<BindingsSeen>,
    /// The subject's last-used marker day ([`crate::Store::last_used`]) where the store reads it in
    /// the same call; `None` when absent, not read, or for the global scope.
    pub last_used: Option<u32>,
}

impl LayeredContext {
    /// A context read at every scope of [`Scope::settings_read`] of `scope` (`levels`, in that
    /// order), by a store answering [`crate::Store::layered_write_context`]; no bindings.
    pub fn every_level(
        scope: &Scope,
        revision: Revision,
        levels: Vec<SettingsAt>,
        seen: Vec<SettingSeen>,
        last_used: Option<u32>,
    ) -> LayeredContext {
        LayeredContext { scope: scope.clone(), revision, levels, seen, bindings: Vec::new(), last_used }
    }

    /// [`LayeredContext::every_level`] from the settings items as the store holds them (`seen`,
    /// which must hold every scope of [`Scope::settings_read`]), parsed by `config` and `mode`.
    pub fn from_stored<E>(
        scope: &Scope,
        revision: Revision,
        seen: Vec<SettingSeen>,
        last_used: Option<u32>,
        config: impl Fn(&str) -> Result<ConfigRecord, E>,
        mode: impl Fn(&str) -> Result<Mode, E>,
    ) -> Result<LayeredContext, E> {
        let stored = |kind: SettingKind, at: &Scope| {
            seen.iter().find(|s| s.kind == kind && s.scope == *at).and_then(|s| s.stored.as_deref())
        };
        let mut levels = Vec::new();
        for at in scope.settings_read() {
            let config = stored(SettingKind::Config, &at).map(&config).transpose()?;
            let mode = stored(SettingKind::Mode, &at).map(&mode).transpose()?;
            levels.push(SettingsAt { scope: at, config, mode });
        }
        Ok(LayeredContext::every_level(scope, revision, levels, seen, last_used))
    }

    /// The settings stored at `scope`, if it was read and holds any.
    pub fn at(&self, scope: &Scope) -> Option<&SettingsAt> {
        self.levels.iter().find(|level| level.scope == *scope)
    }

    /// The config stored at the written scope itself.
    pub fn own_config(&self) -> Option<ConfigRecord> {
        self.at(&self.scope).and_then(|level| level.config.clone())
    }

    /// The mode stored at the written scope itself.
    pub fn own_mode(&self) -> Option<Mode> {
        self.at(&self.scope).and_then(|level| level.mode)
    }

    /// Mode: a global READONLY_OVERRIDE wins; else the first mode along [`Scope::resolution`],
    /// else READWRITE.
    pub fn effective_mode(&self) -> Mode {
        if self.at(&Scope::Global).and_then(|level| level.mode) == Some(Mode::ReadOnlyOverride) {
            return Mode::ReadOnlyOverride;
        }
        self.scope.resolution().iter().find_map(|scope| self.at(scope).and_then(|level| level.mode)).unwrap_or_default()
    }

    /// The config in effect (unset fields stay unset), as Confluent's `getConfigInScope`: a
    /// subject's or context's own config over the global one, field by field; without one, the
    /// first config along [`Scope::resolution`] as stored.
    pub fn merged_config(&self) -> ConfigRecord {
        let global = || self.at(&Scope::Global).and_then(|level| level.config.clone()).unwrap_or_default();
        match self.own_config() {
            Some(own) if self.scope != Scope::Global => own.over(global()),
            _ => self
                .scope
                .resolution()
                .iter()
                .find_map(|scope| self.at(scope).and_then(|level| level.config.clone()))
                .unwrap_or_default(),
        }
    }

    /// Conditions that hold while nothing this context was read from has changed.
    pub fn unchanged(&self) -> Preconditions {
        Preconditions { revision: Some(self.revision), settings: self.seen.clone(), ..Preconditions::default() }
    }
}

/// Conditions a subject write commits under, checked atomically with it; `Conflict` when any fails.
/// `Preconditions::default()` checks nothing (repairs and tools that decided nothing).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preconditions {
    /// The written subject's revision as read before its rows: no row of it changed since.
    pub revision: Option<Revision>,
    /// Config and mode items exactly as read.
    pub settings: Vec<SettingSeen>,
    /// Rows that must exist and be live: the versions a new row references. The write raises their
    /// subjects' revisions, so a delete of one of them that read the referrers before conflicts.
    pub live_rows: Vec<(Subject, Version)>,
    /// The fingerprint → ID binding a new row's ID was read from, in the context of the written
    /// subject ([`Subject::context`]): it must still name that ID. The write records the use, so a hard delete that read the ID's carriers before conflicts.
    pub binding: Option<(Fingerprint, SchemaId)>,
    /// The ID → fingerprint binding of a new row whose ID the request named (IMPORT), in the
    /// context of the written subject: the ID must still name that fingerprint. IMPORT may rebind
    /// an ID no row carries ([`crate::Store::bind_id_in`]); the write records the use, so a rebind
    /// that read the ID's carriers before conflicts, and a row never commits under an ID rebound
    /// to another schema meanwhile.
    pub id_binding: Option<(SchemaId, Fingerprint)>,
    /// The row at the new row's (subject, version) as the decision read it, which the new row
    /// replaces (IMPORT over a taken version number, as Confluent's log keyed by subject and
    /// version); `None`: the version must be free. Only with `revision` (so the row is still as
    /// read). The write removes it as [`crate::Store::hard_delete_versions`] would (its index
    /// entries, and its fingerprint's binding when no other row of the context carries its ID) in
    /// the same atomic step as the new row, so a replacement that fails removes nothing.
    pub replaces: Option<VersionRow>,
    /// Subjects whose revision the write raises besides its own: a registration that makes a
    /// subject of a named context live raises its context's settings pseudo-subject's (`:.ctx:`,
    /// [`Scope::of_context`]), so a decision that read that revision and then found no subject
    /// there (an IMPORT mode at the context, [`crate::Store::unlist_context`]) conflicts; the write
    /// also lists that context again if a delete unlisted it meanwhile.
    pub raises: Vec<Subject>,
}

/// What a version commit may use to read less, handed beside its [`Preconditions`] to
/// [`crate::Store::create_version`] and [`crate::Store::create_version_assigning_id`]: snapshots
/// and facts the registry's decision read anyway, none of them a condition.
///
/// The contract: a store may ignore every hint (treat them as `CommitHints::default()`) and stay
/// correct, only doing more reads. A store that uses one conditions its write on what it used, so a
/// stale hint costs a `Conflict` and a retry, never a wrong commit. The conformance cases run
/// with every hint dropped (`testkit::HookedStore::dropping_hints`) to hold stores to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommitHints {
    /// The new row's bindings as read with the write context, which
    /// [`crate::Store::create_version_assigning_id`] may use instead of reading them again (its
    /// write is conditioned on what it used: the fingerprint's binding as seen, the guid's as
    /// seen, the counter as seen; so a stale snapshot only conflicts). Ignored: the store reads
    /// the bindings itself (DynamoDB: one BatchGetItem more).
    pub bindings_seen: Option<BindingsSeen>,
    /// The decision read every row of the subject at [`Preconditions::revision`] and the new row
    /// is then the subject's only live row with its fingerprint and supersedes no soft-deleted row
    /// (none carries its ID). A store keeping [`BindingsSeen::live_version`] records may then write
    /// the new row's record with it and keep the subject's other records (the DynamoDB store's
    /// "keeping" revision step), committed only under `revision`; without the hint (or without a
    /// `revision`) it raises the revision by the changing step, so every record of the subject is
    /// untrusted and the next re-registration reads the rows. Ignoring it is therefore safe: a dropped record only costs
    /// reads. A wrong `true` is not: the kept records would be trusted although the new row
    /// changed what they say (a live twin of the fingerprint, or a soft-deleted row the new row
    /// supersedes), so a re-registration could answer a version the rows no longer give. It is
    /// set only by the registry's decision over every row it read at `revision`, which the commit
    /// is conditioned on.
    pub sole_live_fingerprint: bool,
}
