//! Store conformance suite: the same cases for every backend (feature `testkit`).
//!
//! Call [`run_conformance`] from a backend crate's test with a fresh or shared store, or generate
//! one test per case, each on a store of its own, with
//! [`conformance_cases!`](crate::conformance_cases). Every case works on a store that already
//! holds data from other cases or earlier runs: names are unique per case ([`unique_name`]), IDs
//! are compared relative to [`Store::max_id`], and global config and mode are restored after use.
//! Failures panic with a message naming the case.
//!
//! Sections: `store_cases` checks each [`Store`] method's contract directly; `scoped` pages scoped
//! listings through a [`crate::Registry`]; `race` drives the [`crate::Registry`] from many tokio
//! tasks at once and checks the registry invariants; `contexts` checks that every context has its
//! own ID space ([`context_cases`], with a race of [`RACE_TASKS`] writers in two contexts);
//! `decisions` puts a whole operation between another one's reads and its commit
//! ([`decision_cases`]); `hooked` wraps any store to inject faults or count calls in other tests.

// A test kit: a failed expectation is an assertion failure, so `expect` is the right tool here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod contexts;
mod decisions;
pub mod history;
mod hooked;
mod id_bounds;
mod manual_clock;
mod race;
mod scoped;
mod store_cases;
mod store_ext;

pub use contexts::{
    contexts_have_independent_id_spaces, race_registrations_in_two_contexts, rows_bindings_and_listing_are_per_context,
    unique_context,
};
pub use decisions::{
    alias_change_between_decision_and_commit, context_delete_and_first_registration_serialize,
    context_import_mode_and_first_registration_serialize, decision_cases_over,
    import_mode_keeps_versions_a_deleted_referrer_references,
    import_replacing_a_version_removes_it_only_with_its_replacement,
};
pub use history::{check_history, history_cases, history_round, history_rounds};
pub use hooked::{HookedStore, Interleaved, StoreCall, StoreHook};
pub use id_bounds::{
    counter_at_the_top_again_restarts_past_the_ids_issued_after_the_first_lowering,
    counter_at_the_top_restarts_below_imported_ids, counter_at_the_top_with_nothing_below_restarts_at_one,
};
pub use manual_clock::ManualClock;

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
    set_version_deleted_rules, soft_delete_versions_is_all_or_nothing, subjects_with_config_pages,
    usage_marker_moves_forward_only, versions_page_pages_one_subject,
};
pub use store_ext::StoreTestExt;

use crate::model::{Guid, SchemaBody, SchemaId, Subject, UnassignedRow, Version, VersionRow};
use crate::store::{HardDeletion, NewVersion, Preconditions, SoftDeletion, Store, StoreResult};
use registry_schema::{Fingerprint, SchemaReference, SchemaType};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The conformance cases, declared once, in run order; each line is a call of a pub case function
/// of this module: `&store` passes it the store as `&dyn Store`, `store` as `Arc<dyn Store>`, then
/// the case's own arguments. A case added here runs everywhere: [`CASES`] (and so
/// [`run_conformance`] for the memory and embedded stores) and every backend test that
/// instantiates the list through this macro (the DynamoDB one: one test, and one table, per case).
///
/// `conformance_cases!(callback)` calls `callback! { Section name => case, ... }`, each `case` a
/// closure that coerces to [`CaseFn`] and `Section` a [`Section`] variant.
#[macro_export]
macro_rules! conformance_cases {
    ($callback:ident) => {
        $crate::conformance_cases! { @each $callback
            // The per-method store contract.
            Store put_body_is_idempotent(&store);
            Store allocate_id_is_unique_and_binds_both_ways(&store);
            Store bind_id_rules_and_counter(&store);
            Store bind_id_rebinds_an_id_no_row_carries(&store);
            Store hard_delete_unbinds_the_schema_not_the_id(&store);
            Store bind_guid_first_binding_wins(&store);
            Store guid_resolves_to_the_carried_id(&store);
            Store guid_resolves_in_named_contexts(&store);
            Store create_version_is_create_if_absent(&store);
            Store versions_page_pages_one_subject(&store);
            Store set_version_deleted_rules(&store);
            Store delete_version_is_idempotent(&store);
            Store soft_delete_versions_is_all_or_nothing(&store);
            Store hard_delete_versions_removes_rows_and_settings(&store);
            Store rows_with_id_index(&store);
            Store referrers_index(&store);
            Store list_subjects_paging_and_filters(&store);
            Store config_crud(&store);
            Store subjects_with_config_pages(&store);
            Store mode_crud(&store);
            Store layered_write_context_reads_every_level(&store);
            Store usage_marker_moves_forward_only(&store);
            // Scoped listings through a registry.
            Scoped scoped_listings_page_inside_the_scope(store);
            // Concurrent registrations, allocations and version creations, then imports racing
            // for a freed ID.
            Race race_same_schema_one_subject(store, $crate::testkit::RACE_TASKS);
            Race race_same_schema_many_subjects(store, $crate::testkit::RACE_TASKS);
            Race race_different_schemas_one_subject(store, $crate::testkit::ONE_SUBJECT_RACE_TASKS);
            Race race_mixed(store, 8, 4);
            Race race_allocate_id(store, $crate::testkit::RACE_TASKS / 4);
            Race race_create_version(store, $crate::testkit::RACE_TASKS / 4);
            Race race_imports_for_a_freed_id(store, 8);
            // One ID space per context.
            Contexts contexts_have_independent_id_spaces(&store);
            Contexts rows_bindings_and_listing_are_per_context(&store);
            Contexts race_registrations_in_two_contexts(store, $crate::testkit::RACE_TASKS);
            Contexts counter_at_the_top_restarts_below_imported_ids(&store);
            Contexts counter_at_the_top_again_restarts_past_the_ids_issued_after_the_first_lowering(&store);
            Contexts counter_at_the_top_with_nothing_below_restarts_at_one(&store);
            // Another operation between a decision's reads and its commit.
            Decisions alias_change_between_decision_and_commit(store);
            Decisions import_mode_keeps_versions_a_deleted_referrer_references(store);
            Decisions import_replacing_a_version_removes_it_only_with_its_replacement(store);
            Decisions context_import_mode_and_first_registration_serialize(store);
            Decisions context_delete_and_first_registration_serialize(store);
        }
    };
    (@each $callback:ident $($section:ident $name:ident($($call:tt)*);)*) => {
        $callback! { $($section $name => $crate::conformance_cases!(@case $name($($call)*)),)* }
    };
    (@case $name:ident(&store $(, $arg:expr)*)) => {
        |store: ::std::sync::Arc<dyn $crate::Store>| -> $crate::testkit::CaseFuture {
            ::std::boxed::Box::pin(async move { $crate::testkit::$name(store.as_ref() $(, $arg)*).await })
        }
    };
    (@case $name:ident(store $(, $arg:expr)*)) => {
        |store: ::std::sync::Arc<dyn $crate::Store>| -> $crate::testkit::CaseFuture {
            ::std::boxed::Box::pin($crate::testkit::$name(store $(, $arg)*))
        }
    };
}

/// A running conformance case.
pub type CaseFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A conformance case: runs against the store it is given, panicking with a message naming the
/// case on a failure.
pub type CaseFn = fn(Arc<dyn Store>) -> CaseFuture;

/// The section of the suite a case belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Each [`Store`] method's contract, called directly.
    Store,
    /// Scoped listings paged through a [`crate::Registry`].
    Scoped,
    /// [`RACE_TASKS`]-wide races through a [`crate::Registry`] and on the store.
    Race,
    /// One ID space per context.
    Contexts,
    /// Another operation between a decision's reads and its commit: the commit conditions on
    /// what the decision read.
    Decisions,
}

/// One case of [`CASES`].
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The case function's name.
    pub name: &'static str,
    pub section: Section,
    pub run: CaseFn,
}

macro_rules! case_table {
    ($($section:ident $name:ident => $case:expr,)*) => {
        /// Every conformance case ([`conformance_cases!`](crate::conformance_cases)), in run order.
        pub const CASES: &[Case] = &[$(Case { name: stringify!($name), section: Section::$section, run: $case }),*];
    };
}
crate::conformance_cases!(case_table);

/// Runs every case of [`CASES`] in sequence on `store`: the per-method store contract, scoped
/// listings, the concurrency races through a [`crate::Registry`] built over `store`, then the
/// per-context ID spaces.
pub async fn run_conformance(store: Arc<dyn Store>) {
    for case in CASES {
        (case.run)(store.clone()).await;
    }
}

/// Runs the cases of `section`, in sequence.
pub async fn run_section(store: Arc<dyn Store>, section: Section) {
    for case in CASES.iter().filter(|case| case.section == section) {
        (case.run)(store.clone()).await;
    }
}

/// The per-method contract cases, in sequence.
pub async fn store_cases(store: Arc<dyn Store>) {
    run_section(store, Section::Store).await;
}

/// Concurrent registrations per RACE case, on every backend.
pub const RACE_TASKS: usize = 64;

/// Concurrent registrations of different schemas into one subject. Every commit there changes the
/// subject every other writer decided on, so each loser decides again: the work grows with the
/// square of the writers (64 cost the DynamoDB emulator about 2,000 decisions). 32, as the API
/// suite's concurrency cases, still has every registration contend.
pub const ONE_SUBJECT_RACE_TASKS: usize = 32;

/// The RACE section: [`RACE_TASKS`] concurrent registrations in several shapes, then concurrent
/// allocations and version creations on the store itself, then imports racing for a freed ID.
pub async fn race_cases(store: Arc<dyn Store>) {
    run_section(store, Section::Race).await;
}

/// Every DECISIONS case, in sequence.
pub async fn decision_cases(store: Arc<dyn Store>) {
    run_section(store, Section::Decisions).await;
}

/// Every CONTEXTS case, in sequence.
pub async fn context_cases(store: Arc<dyn Store>) {
    run_section(store, Section::Contexts).await;
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
    store
        .create_version_assigning_id(NewVersion {
            row,
            guid,
            preconditions: &Preconditions::default(),
            hints: &crate::CommitHints::default(),
        })
        .await
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
