//! Registry domain and service.
//!
//! Invariants every operation keeps, on every [`Store`] (the conformance suite, `testkit`, checks each
//! backend against them, with racing histories across processes where the backend allows):
//! - each context numbers its own IDs; within a context an ID names one schema body while any version
//!   carries it, and allocation never hands out an ID issued before (the counter never goes back, not
//!   even after a hard delete). Only IMPORT binds an ID that no version carries any more (its schema
//!   hard-deleted) to another schema, as Confluent does. These ID rules (allocation, the counter
//!   lowered from the top, IMPORT's bind and rebind, what a hard delete unbinds) are decided once, in
//!   [`id_rules`], and every store commits those decisions in its own atomic step;
//! - the same schema (same fingerprint) registered anywhere in a context gets that context's one ID;
//! - versions of a subject are created with create-if-absent, so two writers never take one number;
//! - every decision commits on what it read: a write hands the store [`Preconditions`] (the subject's
//!   revision read before its rows, the config and mode items of every scope it resolved, the versions
//!   it references, the binding whose ID it reuses) and the store checks them in the same atomic step
//!   as the write, so each acknowledged write is ordered after every write it could have missed
//!   (linearizable per subject, across any number of processes);
//! - a version another subject's version references is never hard-deleted (even when that referrer is
//!   soft-deleted), and not soft-deleted while the referrer is live;
//! - a write interrupted between any two storage calls leaves a state the next call completes or ignores:
//!   bodies are written before IDs point at them, IDs are bound before versions carry them.

pub mod access;
pub mod bounded;
pub mod cache;
pub mod churn;
pub mod error;
pub mod id_rules;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod registry;
pub mod revision;
pub mod store;
pub mod subject_scope;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use access::{Access, Operation, SubjectGuard};
pub use cache::{CacheStats, CachedStore};
pub use churn::ChurnSettings;
pub use error::RegistryError;
pub use memory::MemoryStore;
pub use model::{
    ConfigRecord, ConfigUpdate, Context, DeletedFilter, Guid, Mode, SchemaBody, SchemaId, SchemaRecord, Scope, Subject,
    UnassignedRow, Version, VersionRow, VersionSelector,
};
pub use registry::{
    CompatibilityReport, Freshness, LookupAnswer, LookupOptions, NewSchema, RegisterOptions, Registry,
    RegistrySettings, SchemaById, SchemasQuery, default_schema_workers,
};
pub use registry_schema::compat::Rules;
pub use registry_schema::{CompatibilityLevel, Fingerprint, Limits, SchemaReference, SchemaType, wire_names};
pub use store::{
    BindingsSeen, CommitHints, ConfiguredPage, GuidCarried, HardDeletion, IdRowsPage, LayeredContext, NewVersion,
    Preconditions, Revision, SettingChange, SettingKind, SettingSeen, SettingWrite, SettingsAt, SoftDeletion, Store,
    StoreError, StoreResult, SubjectsPage, VersionsPage, carried_in_contexts,
};
pub use subject_scope::SubjectScope;
