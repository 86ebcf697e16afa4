//! The storage port: one small trait with conditional-write semantics that every backend
//! (memory, embedded disk, DynamoDB + S3) implements the same way.
//!
//! Stores are storage-shaped: put-if-absent, create-if-absent, update-if-state-is, get, list.
//! All business rules (version numbering, deletes, modes, compatibility, retries) live in
//! [`crate::Registry`]. A backend may implement one call as several storage operations only if
//! a crash between them leaves a state the registry already handles (see each method).

use crate::model::{
    ConfigRecord, Context, DeletedFilter, Guid, SchemaBody, SchemaId, Scope, Subject, UnassignedRow, Version,
    VersionRow,
};
use async_trait::async_trait;
use registry_schema::Fingerprint;
use std::fmt::Debug;

mod conditions;
pub use conditions::{
    BindingsSeen, CommitHints, LayeredContext, Preconditions, Revision, SettingChange, SettingKind, SettingSeen,
    SettingsAt,
};

/// What a storage call can fail with, classified by what the caller must do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A conditional write lost: the state changed. Re-read and retry.
    #[error("conditional write lost: {0}")]
    Conflict(String),
    /// Throttled or unreachable: retry later or answer 5xx.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The write exceeds a bound of the backend (DynamoDB: 100 items in one transaction); retrying
    /// cannot help, the request must be smaller. The message names the bound.
    #[error("exceeds a storage limit: {0}")]
    Limit(String),
    /// Stored data does not parse: an operator must look.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A read region's replica holds a row but not yet what it points at (a body, in a bucket
    /// whose replication is behind the table's); the home region has it. Answered as "not found
    /// here" (404 / 40403), which the read region's application asks of the home.
    #[error("not yet replicated to this region: {0}")]
    NotReplicated(String),
    /// Anything else.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// `Limit`: no ID of `context` is left to allocate (its counter is at `i32::MAX` and cannot be
    /// lowered, see [`Store::allocate_id_in`]); the registry answers it as a 4xx naming the cause.
    pub fn ids_exhausted(context: &Context) -> StoreError {
        StoreError::Limit(StoreError::ids_exhausted_detail(context))
    }

    /// The text of [`StoreError::ids_exhausted`], for a backend's own error type.
    pub fn ids_exhausted_detail(context: &Context) -> String {
        format!("the schema ID space of context {context} is exhausted: every ID up to {} is taken", i32::MAX)
    }
}

/// Shorthand for store results.
pub type StoreResult<T> = Result<T, StoreError>;

/// The only place the registry touches persistent state.
///
/// Consistency contract: every read observes every write acknowledged before it started
/// (read-after-write across processes), because a later request must see an earlier write.
#[async_trait]
pub trait Store: Send + Sync + Debug {
    // --- schema bodies, content-addressed -------------------------------------------------

    /// Stores `body` under `fingerprint` if absent. Idempotent: putting an existing fingerprint
    /// succeeds without writing. Must complete before any ID or version points at it.
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()>;

    /// The body stored under `fingerprint`.
    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>>;

    // --- schema IDs, one space per context ------------------------------------------------------
    //
    // Every context (`.` the default, `.name` the named ones) has its own ID counter and its own
    // fingerprint ↔ ID bindings: the same schema may have different IDs in two contexts, and one
    // ID may name different schemas in two contexts. The default context keeps the keys it had
    // before contexts existed, so stored data needs no migration. A row's context is its
    // subject's ([`Subject::context`]). The methods without `_in` act on the default context.

    /// The ID bound to `fingerprint` in `context`: the first one bound, if IMPORT bound several.
    async fn id_for_fingerprint_in(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> StoreResult<Option<SchemaId>>;

    /// The fingerprint bound to `id` in `context`.
    async fn fingerprint_for_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>>;

    /// The fingerprint bound to `id` in `context` if some row of that context (live or
    /// soft-deleted) carries `id`; `None` when `id` is unbound or no row carries it any more. What
    /// `GET /schemas/ids/{id}` needs before it reads the body: one read where the backend can
    /// (DynamoDB: one Query of the ID's partition).
    async fn fingerprint_for_carried_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        if self.rows_with_id_page_in(context, IdRowsPage { id, prefix: "", after: None, limit: 1 }).await?.is_empty() {
            return Ok(None);
        }
        self.fingerprint_for_id_in(context, id).await
    }

    /// Atomically takes the next ID of `context` (greater than every ID ever bound or allocated
    /// there) and binds it to `fingerprint` in both directions; a named context starts at 1 and is
    /// listed ([`Store::list_contexts`]) from then on. `Conflict` when `fingerprint` is already
    /// bound in `context` (the caller re-reads and uses that ID) or when a concurrent allocation
    /// won the counter (the caller retries). An ID is never handed out twice in one context; gaps
    /// are allowed.
    ///
    /// A counter at the top of the ID space (`i32::MAX`: an IMPORT bound an ID above
    /// [`SchemaId::MAX_IMPORTED`] before the registry refused those) is first lowered, conditioned
    /// on its value, to the greatest ID at or below `MAX_IMPORTED` ever bound or allocated in
    /// `context` (a backend may stop higher, past IDs it knows were issued right after it); the
    /// IDs above stay bound and are never handed out. The allocation then proceeds from there, or
    /// answers `Conflict` and the caller's retry does. `Limit` when the counter cannot be lowered
    /// (every ID is taken). [`crate::id_rules::allocation`] decides, on what the atomic step read.
    async fn allocate_id_in(&self, context: &Context, fingerprint: &Fingerprint) -> StoreResult<SchemaId>;

    /// Binds an explicit `id` to `fingerprint` in `context` (IMPORT). Succeeds if `id` is already
    /// bound to the same fingerprint there. If it is bound to another fingerprint that no row of
    /// `context` (live or soft-deleted, any subject) carries any more (its schema was hard-deleted),
    /// rebinds it, as Confluent frees an ID with its last version: in one atomic step checked
    /// against the carriers, which also unbinds the old fingerprint's side where it named `id`, so
    /// a crash leaves the old binding or the new one. `Conflict` if a row carries it (a row
    /// committing it concurrently makes exactly one of the two fail: see
    /// [`Preconditions::binding`] and [`Preconditions::id_binding`]). Raises the context's counter
    /// so later allocations are greater than `id`, and lists a named context. Binds fingerprint →
    /// id only if that side is unbound (one schema may be imported under several IDs).
    /// [`crate::id_rules::bind_decision`] decides, on what the atomic step read.
    async fn bind_id_in(&self, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()>;

    /// The context's counter: the greatest ID ever bound or allocated in `context`, if any (lower
    /// only after [`Store::allocate_id_in`] lowered a counter an import had pushed to the top).
    async fn max_id_in(&self, context: &Context) -> StoreResult<Option<SchemaId>>;

    /// The named contexts that are listed (one took an ID and was not deleted since), in
    /// ascending order; never the default context, which always exists.
    async fn list_contexts(&self) -> StoreResult<Vec<Context>>;

    /// Stops listing the named `context` (`DELETE /contexts/{context}`; the registry checks that
    /// no subject is left first). Its counter stays, so an ID is never handed out twice there even
    /// if the context is used again. Succeeds if it was not listed. `Conflict` when a subject of
    /// the context has a row (live or soft-deleted) at the moment it would unlist: checked in the
    /// same atomic step, or conditioned on the context's revision ([`Preconditions::raises`]) as
    /// read before the subjects, so a registration racing the delete is never left unlisted.
    async fn unlist_context(&self, context: &Context) -> StoreResult<()>;

    // --- guid index (CP 8 `GET /schemas/guids/{guid}`) ------------------------------------------

    /// Binds `guid` to `fingerprint` if `guid` is unbound (create-if-absent, one conditional
    /// write): the first binding wins and is never changed or removed. Succeeds without writing
    /// when `guid` is already bound to `fingerprint` (idempotent on retry); `Conflict` when it is
    /// bound to another fingerprint (two bodies that differ only outside the guid, e.g. in schema
    /// type), which the registry treats as done. Written after the body put and before a version
    /// row carries the fingerprint, so a crash leaves at worst a binding nothing uses yet.
    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()>;

    /// The fingerprint bound to `guid` ([`Store::bind_guid`]), if any. A point read: immutable
    /// once present, so callers may cache a `Some` forever.
    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>>;

    /// The fingerprint bound to `guid` and the ID that fingerprint is bound to now in a context
    /// where some row (live or soft-deleted) carries that ID: the default context's, else the
    /// first listed named context's (Confluent's `getIdUsingContexts`); `None` otherwise. What
    /// `GET /schemas/guids/{guid}` needs before it reads the body: one read where the backend can
    /// (DynamoDB: the guid item, which carries each context's ID while a row registered through
    /// [`Store::create_version_assigning_id`] carries it). The default reads the guid's binding
    /// and looks in each context ([`carried_in_contexts`]).
    async fn carried_id_for_guid(&self, guid: &Guid) -> StoreResult<Option<GuidCarried>> {
        let Some(fingerprint) = self.fingerprint_for_guid(guid).await? else { return Ok(None) };
        carried_in_contexts(self, fingerprint).await
    }

    // --- subject versions ------------------------------------------------------------------

    /// Every row of `subject`, live and soft-deleted, ascending by version.
    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>>;

    /// One page of the subject's rows, live and soft-deleted, ascending by version, strictly after
    /// `after`, at most `limit` ([`VersionsPage`]; for listings that must not hold every version at
    /// once). No default on purpose: a wrapper that forgot to forward it would silently read
    /// everything.
    async fn versions_page(&self, page: VersionsPage<'_>) -> StoreResult<Vec<VersionRow>>;

    /// One row.
    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>>;

    /// What a write at `scope` decides on, read together (one call where the backend can) before
    /// the subject's rows: for a subject its revision (revision 0 for the global scope), and the
    /// config and mode at every scope of [`Scope::settings_read`] (the scope itself, its context's,
    /// the registry-wide and the global ones); its `seen` lists every settings item read, so a
    /// write conditioned on them misses no racing change at any level (every conditioned write
    /// checks `seen` items of every scope). With the bindings of each schema in `schemas`
    /// (fingerprint and guid) in the subject's context ([`LayeredContext::bindings`]) where the
    /// backend reads them in the same call (DynamoDB: one BatchGetItem), none otherwise; and the
    /// subject's last-used marker where it reads that too. Every decision of the registry starts
    /// here, and what the reads of settings answer (`GET /config`, `GET /mode`) too.
    async fn layered_write_context(
        &self,
        scope: &Scope,
        schemas: &[(Fingerprint, Guid)],
    ) -> StoreResult<LayeredContext>;

    /// Records that `row` is its subject's newest live version with its fingerprint, as the rows
    /// read at `revision` said, for a store answering [`BindingsSeen::live_version`] (a
    /// registration that found its schema already registered writes it once, so the next one reads
    /// no rows); written only while the subject's revision is still `revision` (`Conflict`
    /// otherwise). The caller checked that no soft-deleted row of the subject carries `row`'s ID.
    /// The default records nothing.
    async fn record_live_version(&self, row: &VersionRow, revision: Revision) -> StoreResult<()> {
        let _ = (row, revision);
        Ok(())
    }

    /// Creates `row` if no row has its (subject, version) and every one of `preconditions` holds,
    /// in one atomic step that also raises the subject's revision; `Conflict` otherwise. The row is
    /// visible to every index (subject listings, rows by ID, referrers) once this returns. `hints`
    /// may spare reads and may be ignored ([`CommitHints`]).
    async fn create_version(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
    ) -> StoreResult<()>;

    /// Creates `row` as [`Store::create_version`] does, under the ID its fingerprint is bound to
    /// (which must still be bound when it commits, as [`Preconditions::binding`]) or, when the
    /// fingerprint is unbound, under a newly allocated ID bound to it as [`Store::allocate_id_in`]
    /// does; and binds `guid` to the fingerprint when `guid` is unbound (a guid bound to another
    /// fingerprint keeps its binding, as [`Store::bind_guid`] says). Returns the row's ID and whether
    /// it was allocated. `Conflict` as `create_version`'s, and when the fingerprint got bound or the
    /// ID counter moved concurrently (the caller reads again and retries).
    ///
    /// The default makes those steps as separate calls, each idempotent and ordered so a crash
    /// between two leaves only a guid or ID binding no row carries yet (which a retry reuses); a
    /// backend may make them one atomic write (DynamoDB: one transaction).
    async fn create_version_assigning_id(&self, version: NewVersion<'_>) -> StoreResult<(SchemaId, bool)> {
        assign_id_in_steps(self, version).await
    }

    /// Soft-deletes every version in `versions` of `subject` ([`SoftDeletion`]) as one atomic write
    /// (all of them or none) under `preconditions`, raising the subject's revision. `Conflict` if any
    /// is missing or already soft-deleted, or a precondition fails. A backend whose batches are
    /// bounded (DynamoDB transactions: 100 items) documents its bound and splits above it.
    async fn soft_delete_versions(&self, deletion: SoftDeletion<'_>) -> StoreResult<()>;

    /// Removes every version in `versions` of `subject` ([`HardDeletion`]) as one atomic write (hard
    /// delete) under `preconditions`, together with the subject's config and mode when
    /// `remove_subject_settings` is set, and the fingerprint → ID binding (in the subject's context)
    /// of every ID no row of that context carries any more (so the same schema registered again
    /// gets a new ID, as in Confluent; the ID → fingerprint side stays and the ID is never handed
    /// out again). A registration that commits a row carrying such an ID concurrently makes exactly
    /// one of the two fail (see [`Preconditions::binding`]); [`crate::id_rules::unbinds_on_removal`]
    /// decides each binding. Rows already gone are skipped. Same batching note as
    /// [`Store::soft_delete_versions`].
    async fn hard_delete_versions(&self, deletion: HardDeletion<'_>) -> StoreResult<()>;

    /// One page of the rows of `context` carrying `id` whose subject starts with `prefix` (`""`:
    /// every subject of the context), sorted by (subject, version), strictly after `after`, at
    /// most `limit` ([`IdRowsPage`]): for the listings by ID (scoped ones read one prefix at a
    /// time), and for the checks that only need to know whether some (or some other) row carries
    /// it, none of which may read every carrier of a schema that many subjects share. No default, as
    /// [`Store::versions_page`].
    async fn rows_with_id_page_in(&self, context: &Context, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>>;

    /// Every row whose references include (`subject`, `version`), sorted by ID.
    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>>;

    /// One page of subject names in ascending order, strictly after `after`, starting with
    /// `prefix`, filtered by `filter` (a subject is live while it has a live row), at most `limit`
    /// ([`SubjectsPage`]).
    async fn list_subjects(&self, page: SubjectsPage<'_>) -> StoreResult<Vec<Subject>>;

    // --- config and mode --------------------------------------------------------------------

    /// The config stored at `scope`, if any.
    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>>;

    /// One page of the subjects holding a config of their own, versions or none, in ascending
    /// order ([`ConfiguredPage`]): what an exporter copies of a subject [`Store::list_subjects`]
    /// does not list. A context's own config (stored at a name that is no subject) is not listed.
    async fn subjects_with_config(&self, page: ConfiguredPage<'_>) -> StoreResult<Vec<Subject>>;

    /// Replaces (`Some`) or removes (`None`) the config or mode at `scope` ([`SettingWrite`]) if
    /// every one of `preconditions` holds, in one atomic step; `Conflict` otherwise. A precondition on the
    /// written item itself is checked on that write. The revision precondition names the subject
    /// of `scope` (ignored for the global scope). Raises no revision: decisions that depend on a
    /// setting carry it as a settings precondition.
    async fn write_setting(&self, write: SettingWrite<'_>) -> StoreResult<()>;

    // --- usage marker ------------------------------------------------------------------------

    /// The day `subject` was last marked used ([`Store::mark_used`]), if ever. A day is a plain
    /// number the registry chooses (days since the Unix epoch, or a coarser bucket); stores only
    /// compare days. The marker is independent of version rows: deletes leave it in place.
    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>>;

    /// Records that `subject` was used on `day`: stores `day` only if nothing is stored or the
    /// stored day is older (one conditional write where the backend has them). Never moves the
    /// marker back; finding an equal or newer day is success, not `Conflict`. Idempotent.
    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()>;

    // --- diagnostics -------------------------------------------------------------------------

    /// Hit/miss counts of an in-process cache in front of the backend ([`crate::CachedStore`]),
    /// for metrics; `None` (the default) for stores without one. Never touches storage.
    fn cache_stats(&self) -> Option<crate::CacheStats> {
        None
    }
}

/// One page of a subject's rows: what [`Store::versions_page`] reads.
#[derive(Debug, Clone, Copy)]
pub struct VersionsPage<'a> {
    /// The subject whose rows are read.
    pub subject: &'a Subject,
    /// Only versions strictly greater (`None`: from the first).
    pub after: Option<Version>,
    /// At most this many rows.
    pub limit: usize,
}

/// One page of the rows of a context carrying an ID: what [`Store::rows_with_id_page_in`] reads.
#[derive(Debug, Clone, Copy)]
pub struct IdRowsPage<'a> {
    /// The ID the rows carry.
    pub id: SchemaId,
    /// Only subjects starting with it (`""`: every subject of the context).
    pub prefix: &'a str,
    /// Only rows strictly after this (subject, version) (`None`: from the first).
    pub after: Option<(&'a Subject, Version)>,
    /// At most this many rows.
    pub limit: usize,
}

/// One page of subject names: what [`Store::list_subjects`] reads.
#[derive(Debug, Clone, Copy)]
pub struct SubjectsPage<'a> {
    /// Only subjects starting with it (`""`: every subject).
    pub prefix: &'a str,
    /// Live, soft-deleted or both (a subject is live while it has a live row).
    pub filter: DeletedFilter,
    /// Only subjects strictly after this one (`None`: from the first).
    pub after: Option<&'a Subject>,
    /// At most this many subjects.
    pub limit: usize,
}

/// One page of the subjects holding a config: what [`Store::subjects_with_config`] reads.
#[derive(Debug, Clone, Copy)]
pub struct ConfiguredPage<'a> {
    /// Only subjects starting with it (`""`: every subject).
    pub prefix: &'a str,
    /// Only subjects strictly after this one (`None`: from the first).
    pub after: Option<&'a Subject>,
    /// At most this many subjects.
    pub limit: usize,
}

/// A row to create under its fingerprint's ID: what [`Store::create_version_assigning_id`] writes.
#[derive(Debug, Clone, Copy)]
pub struct NewVersion<'a> {
    /// The row, without its ID.
    pub row: &'a UnassignedRow,
    /// The guid to bind to the row's fingerprint if it is unbound.
    pub guid: &'a Guid,
    /// What must still hold when the row is created.
    pub preconditions: &'a Preconditions,
    /// What the store may use to read less, or ignore ([`CommitHints`]).
    pub hints: &'a CommitHints,
}

/// Versions of one subject to soft-delete together: what [`Store::soft_delete_versions`] writes.
#[derive(Debug, Clone, Copy)]
pub struct SoftDeletion<'a> {
    /// The subject whose versions are soft-deleted.
    pub subject: &'a Subject,
    /// The versions, each live until this write.
    pub versions: &'a [Version],
    /// What must still hold when they are soft-deleted.
    pub preconditions: &'a Preconditions,
}

/// Versions of one subject to remove together: what [`Store::hard_delete_versions`] writes.
#[derive(Debug, Clone, Copy)]
pub struct HardDeletion<'a> {
    /// The subject whose versions are removed.
    pub subject: &'a Subject,
    /// The versions (rows already gone are skipped).
    pub versions: &'a [Version],
    /// Whether the subject's config and mode go too.
    pub remove_subject_settings: bool,
    /// What must still hold when they are removed.
    pub preconditions: &'a Preconditions,
}

/// A config or mode change at one scope: what [`Store::write_setting`] writes.
#[derive(Debug, Clone, Copy)]
pub struct SettingWrite<'a> {
    /// Where the setting is written.
    pub scope: &'a Scope,
    /// The config or mode stored (`Some`) or removed (`None`) there.
    pub change: &'a SettingChange,
    /// What must still hold when it is written.
    pub preconditions: &'a Preconditions,
}

/// Where `GET /schemas/guids/{guid}` finds its schema ([`Store::carried_id_for_guid`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuidCarried {
    /// The fingerprint the guid is bound to.
    pub fingerprint: Fingerprint,
    /// The context whose rows carry `id`.
    pub context: Context,
    /// The ID `fingerprint` is bound to in `context`.
    pub id: SchemaId,
}

/// The ID `fingerprint` is bound to where a row carries it: in the default context, else in each
/// listed named context in turn (point reads per context, never a scan).
pub async fn carried_in_contexts<S: Store + ?Sized>(
    store: &S,
    fingerprint: Fingerprint,
) -> StoreResult<Option<GuidCarried>> {
    let carried_in = |context: Context| async move {
        let Some(id) = store.id_for_fingerprint_in(&context, &fingerprint).await? else { return Ok(None) };
        let carried = store.fingerprint_for_carried_id_in(&context, id).await?;
        Ok::<_, StoreError>(carried.map(|_| GuidCarried { fingerprint, context, id }))
    };
    if let Some(found) = carried_in(Context::DEFAULT).await? {
        return Ok(Some(found));
    }
    for context in store.list_contexts().await? {
        if let Some(found) = carried_in(context).await? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// [`Store::create_version_assigning_id`] as separate calls on `store`: bind the guid, find or
/// allocate the fingerprint's ID in the row's context, then commit the row under that binding. Each
/// step is idempotent and a crash between two leaves only a binding no row carries yet, which the
/// retry reuses. The trait's default; `testkit::HookedStore` can run it through its hook so fault
/// injection reaches every step.
pub async fn assign_id_in_steps<S: Store + ?Sized>(
    store: &S,
    version: NewVersion<'_>,
) -> StoreResult<(SchemaId, bool)> {
    let NewVersion { row, guid, preconditions, hints } = version;
    match store.bind_guid(guid, &row.fingerprint).await {
        Ok(()) | Err(StoreError::Conflict(_)) => {}
        Err(e) => return Err(e),
    }
    let context = row.subject.context();
    let (id, allocated) = match store.id_for_fingerprint_in(&context, &row.fingerprint).await? {
        Some(id) => (id, false),
        None => (store.allocate_id_in(&context, &row.fingerprint).await?, true),
    };
    let preconditions = Preconditions { binding: Some((row.fingerprint, id)), ..preconditions.clone() };
    store.create_version(&row.with_id(id), &preconditions, hints).await?;
    Ok((id, allocated))
}

/// The list every wrapper of [`Store`] is generated from, so that none can forget a method: calls
/// `$callback!` with one line per async method of the trait (all but [`Store::cache_stats`]), in
/// trait order: `read` or `write` (whether it changes stored state), the method with its
/// arguments and answer, and the `testkit::StoreCall` variant naming the call (with the fields a
/// hook looks at: their types, and how each is computed from the arguments). `CachedStore` and `HookedStore` implement the
/// trait from it, and `StoreCall` is declared from it.
macro_rules! for_each_store_method {
    ($callback:ident) => {
        $callback! {
            write put_body(fingerprint: &Fingerprint, body: &SchemaBody) -> () => PutBody;
            read get_body(fingerprint: &Fingerprint) -> Option<SchemaBody> => GetBody;
            read id_for_fingerprint_in(context: &Context, fingerprint: &Fingerprint) -> Option<SchemaId>
                => IdForFingerprint;
            read fingerprint_for_id_in(context: &Context, id: SchemaId) -> Option<Fingerprint> => FingerprintForId;
            read fingerprint_for_carried_id_in(context: &Context, id: SchemaId) -> Option<Fingerprint>
                => FingerprintForCarriedId;
            write allocate_id_in(context: &Context, fingerprint: &Fingerprint) -> SchemaId => AllocateId;
            write bind_id_in(context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> () => BindId;
            read max_id_in(context: &Context) -> Option<SchemaId> => MaxId;
            read list_contexts() -> Vec<Context> => ListContexts;
            write unlist_context(context: &Context) -> () => UnlistContext;
            write bind_guid(guid: &Guid, fingerprint: &Fingerprint) -> () => BindGuid;
            read fingerprint_for_guid(guid: &Guid) -> Option<Fingerprint> => FingerprintForGuid;
            read carried_id_for_guid(guid: &Guid) -> Option<GuidCarried> => CarriedIdForGuid;
            read versions(subject: &Subject) -> Vec<VersionRow> => Versions;
            read versions_page(page: VersionsPage<'_>) -> Vec<VersionRow> => VersionsPage { limit: usize = page.limit };
            read get_version(subject: &Subject, version: Version) -> Option<VersionRow> => GetVersion;
            read layered_write_context(scope: &Scope, schemas: &[(Fingerprint, Guid)]) -> LayeredContext
                => LayeredWriteContext;
            write record_live_version(row: &VersionRow, revision: Revision) -> () => RecordLiveVersion;
            write create_version(row: &VersionRow, preconditions: &Preconditions, hints: &CommitHints) -> ()
                => CreateVersion;
            write create_version_assigning_id(version: NewVersion<'_>) -> (SchemaId, bool)
                => CreateVersionAssigningId;
            write soft_delete_versions(deletion: SoftDeletion<'_>) -> () => SoftDeleteVersions;
            write hard_delete_versions(deletion: HardDeletion<'_>) -> () => HardDeleteVersions;
            read rows_with_id_page_in(context: &Context, page: IdRowsPage<'_>) -> Vec<VersionRow>
                => RowsWithIdPage { limit: usize = page.limit };
            read referrers(subject: &Subject, version: Version) -> Vec<VersionRow> => Referrers;
            read list_subjects(page: SubjectsPage<'_>) -> Vec<Subject> => ListSubjects { limit: usize = page.limit };
            read get_config(scope: &Scope) -> Option<ConfigRecord> => GetConfig;
            read subjects_with_config(page: ConfiguredPage<'_>) -> Vec<Subject>
                => SubjectsWithConfig { limit: usize = page.limit };
            write write_setting(write: SettingWrite<'_>) -> () => WriteSetting { kind: SettingKind = write.change.kind() };
            read last_used(subject: &Subject) -> Option<u32> => LastUsed;
            write mark_used(subject: &Subject, day: u32) -> () => MarkUsed;
        }
    };
}
pub(crate) use for_each_store_method;
