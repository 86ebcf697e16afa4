//! Store conformance suite: the same cases for every backend (feature `testkit`).
//!
//! Call [`run_conformance`] from a backend crate's test with a fresh or shared store. Every case
//! works on a store that already holds data from other cases or earlier runs: names are unique
//! per case ([`unique_name`]), IDs are compared relative to [`Store::max_id`], and global config
//! and mode are restored after use. Failures panic with a message naming the case.
//!
//! Sections: `store_cases` checks each [`Store`] method's contract directly; `scoped` pages scoped
//! listings through a [`crate::Registry`]; `race` drives the [`crate::Registry`] from many tokio
//! tasks at once and checks the registry invariants; `contexts` checks that every context has its
//! own ID space ([`context_cases`], with a race of [`RACE_TASKS`] writers in two contexts);
//! `hooked` wraps any store to inject faults or count calls in other tests.

// A test kit: a failed expectation is an assertion failure, so `expect` is the right tool here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod contexts;
pub mod history;
mod hooked;
mod id_bounds;
mod race;
mod scoped;
mod store_cases;

pub use contexts::{
    context_cases, contexts_have_independent_id_spaces, race_registrations_in_two_contexts,
    rows_bindings_and_listing_are_per_context, unique_context,
};
pub use history::history_cases;
pub use hooked::{HookedStore, StoreCall, StoreHook};
pub use id_bounds::{
    counter_at_the_top_restarts_below_imported_ids, counter_at_the_top_with_nothing_below_restarts_at_one,
};

pub use race::{
    race_allocate_id, race_create_version, race_different_schemas_one_subject, race_imports_for_a_freed_id, race_mixed,
    race_same_schema_many_subjects, race_same_schema_one_subject,
};
pub use scoped::scoped_listings_page_inside_the_scope;
pub use store_cases::{
    allocate_id_is_unique_and_binds_both_ways, bind_guid_first_binding_wins, bind_id_rebinds_an_id_no_row_carries,
    bind_id_rules_and_counter, config_crud, create_version_is_create_if_absent, delete_version_is_idempotent,
    guid_resolves_in_named_contexts, guid_resolves_to_the_carried_id, hard_delete_unbinds_the_schema_not_the_id,
    hard_delete_versions_removes_rows_and_settings, layered_write_context_reads_every_level,
    list_subjects_paging_and_filters, mode_crud, put_body_is_idempotent, referrers_index, rows_with_id_index,
    set_version_deleted_rules, soft_delete_versions_is_all_or_nothing, usage_marker_moves_forward_only,
    versions_page_pages_one_subject,
};

use crate::model::{Guid, SchemaBody, SchemaId, Subject, UnassignedRow, Version, VersionRow};
use crate::store::{HardDeletion, NewVersion, Preconditions, SoftDeletion, Store, StoreResult};
use registry_schema::{Fingerprint, SchemaReference, SchemaType};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs every case: the per-method store contract, scoped listings, the concurrency races
/// through a [`crate::Registry`] built over `store`, then the per-context ID spaces.
pub async fn run_conformance(store: Arc<dyn Store>) {
    store_cases(store.as_ref()).await;
    scoped_listings_page_inside_the_scope(store.clone()).await;
    race_cases(store.clone()).await;
    context_cases(store).await;
}

/// The per-method contract cases, in sequence.
pub async fn store_cases(store: &dyn Store) {
    put_body_is_idempotent(store).await;
    allocate_id_is_unique_and_binds_both_ways(store).await;
    bind_id_rules_and_counter(store).await;
    bind_id_rebinds_an_id_no_row_carries(store).await;
    hard_delete_unbinds_the_schema_not_the_id(store).await;
    bind_guid_first_binding_wins(store).await;
    guid_resolves_to_the_carried_id(store).await;
    guid_resolves_in_named_contexts(store).await;
    create_version_is_create_if_absent(store).await;
    versions_page_pages_one_subject(store).await;
    set_version_deleted_rules(store).await;
    delete_version_is_idempotent(store).await;
    soft_delete_versions_is_all_or_nothing(store).await;
    hard_delete_versions_removes_rows_and_settings(store).await;
    rows_with_id_index(store).await;
    referrers_index(store).await;
    list_subjects_paging_and_filters(store).await;
    config_crud(store).await;
    mode_crud(store).await;
    layered_write_context_reads_every_level(store).await;
    usage_marker_moves_forward_only(store).await;
}

/// Concurrent registrations per RACE case, on every backend.
pub const RACE_TASKS: usize = 64;

/// The RACE section: [`RACE_TASKS`] concurrent registrations in several shapes, then concurrent
/// allocations and version creations on the store itself, then imports racing for a freed ID.
pub async fn race_cases(store: Arc<dyn Store>) {
    race_same_schema_one_subject(store.clone(), RACE_TASKS).await;
    race_same_schema_many_subjects(store.clone(), RACE_TASKS).await;
    race_different_schemas_one_subject(store.clone(), RACE_TASKS).await;
    race_mixed(store.clone(), 8, 4).await;
    race_allocate_id(store.clone(), RACE_TASKS / 4).await;
    race_create_version(store.clone(), RACE_TASKS / 4).await;
    race_imports_for_a_freed_id(store, 8).await;
}

/// A name no other case, run or process uses: `tk-<time>-<counter>-<case>`.
pub fn unique_name(case: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    format!("tk-{nanos:x}-{}-{case}", COUNTER.fetch_add(1, Ordering::SeqCst))
}

/// A subject named [`unique_name`]`(case)`.
pub fn unique_subject(case: &str) -> Subject {
    Subject::new(unique_name(case)).expect("generated subject names are valid")
}

/// An Avro record body whose text is already canonical and unique to `tag`.
pub fn record_body(tag: &str) -> SchemaBody {
    let name: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    SchemaBody {
        schema_type: SchemaType::Avro,
        schema: format!(r#"{{"type":"record","name":"R_{name}","fields":[{{"name":"a","type":"int"}}]}}"#),
        references: Vec::new(),
        metadata: None,
        rule_set: None,
    }
}

/// A body unique to `tag`, stored, with its fingerprint.
pub async fn stored_body(store: &dyn Store, tag: &str) -> (Fingerprint, SchemaBody) {
    let body = record_body(tag);
    let fingerprint = body.fingerprint();
    store.put_body(&fingerprint, &body).await.expect("put_body");
    (fingerprint, body)
}

/// A live row.
pub fn row(subject: &Subject, version: i32, id: SchemaId, fingerprint: Fingerprint) -> VersionRow {
    VersionRow {
        subject: subject.clone(),
        version: Version(version),
        id,
        fingerprint,
        deleted: false,
        references: Vec::new(),
        registered_at_ms: 1_700_000_000_000,
    }
}

/// A live row that references `targets` (subject, version).
pub fn row_referencing(
    subject: &Subject,
    version: i32,
    id: SchemaId,
    fingerprint: Fingerprint,
    targets: &[(&Subject, i32)],
) -> VersionRow {
    let references = targets
        .iter()
        .enumerate()
        .map(|(i, (s, v))| SchemaReference { name: format!("ref{i}"), subject: s.as_str().to_string(), version: *v })
        .collect();
    VersionRow { references, ..row(subject, version, id, fingerprint) }
}

/// [`Store::create_version_assigning_id`] of `row` binding `guid`, without preconditions.
pub(crate) async fn assign(store: &dyn Store, row: &UnassignedRow, guid: &Guid) -> StoreResult<(SchemaId, bool)> {
    store.create_version_assigning_id(NewVersion { row, guid, preconditions: &Preconditions::default() }).await
}

/// [`Store::soft_delete_versions`] of `versions` of `subject`, without preconditions.
pub(crate) async fn soft_delete(store: &dyn Store, subject: &Subject, versions: &[Version]) -> StoreResult<()> {
    store.soft_delete_versions(SoftDeletion { subject, versions, preconditions: &Preconditions::default() }).await
}

/// [`Store::hard_delete_versions`] of `versions` of `subject`, without preconditions, keeping the
/// subject's settings.
pub(crate) async fn hard_delete(store: &dyn Store, subject: &Subject, versions: &[Version]) -> StoreResult<()> {
    let preconditions = Preconditions::default();
    let deletion = HardDeletion { subject, versions, remove_subject_settings: false, preconditions: &preconditions };
    store.hard_delete_versions(deletion).await
}

/// `name` as a subject; panics on a name [`Subject::new`] refuses (test input is known good).
pub fn subject(name: &str) -> crate::Subject {
    crate::Subject::new(name).unwrap_or_else(|e| panic!("subject {name:?}: {e}"))
}

/// `name` as a context; panics on a name [`Context::parse`](crate::Context::parse) refuses.
pub fn context(name: &str) -> crate::Context {
    crate::Context::parse(name).unwrap_or_else(|e| panic!("context {name:?}: {e}"))
}
