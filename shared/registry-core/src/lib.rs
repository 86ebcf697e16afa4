//! Registry domain and service.
//!
//! Invariants every operation keeps, on every [`Store`]:
//! - an ID is bound to exactly one schema body and is never handed out twice, even after a hard delete;
//! - the same schema (same fingerprint) registered anywhere gets the same ID;
//! - versions of a subject are created with create-if-absent, so two writers never take one number;
//! - a write interrupted between any two storage calls leaves a state the next call completes or ignores:
//!   bodies are written before IDs point at them, IDs are bound before versions carry them.

pub mod access;
mod bounded;
pub mod cache;
pub mod churn;
pub mod error;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod registry;
pub mod store;
pub mod subject_scope;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use access::{Access, SubjectGuard, SubjectOperation};
pub use cache::{CacheStats, CachedStore};
pub use churn::ChurnSettings;
pub use error::RegistryError;
pub use memory::MemoryStore;
pub use model::{
    ConfigRecord, ConfigUpdate, Context, DeletedFilter, Guid, Mode, SchemaBody, SchemaId, SchemaRecord, Scope, Subject,
    UnassignedRow, Version, VersionRow, VersionSelector,
};
pub use registry::{
    CompatibilityReport, LookupOptions, NewSchema, RegisterOptions, Registry, RegistrySettings, SchemaById,
    SchemasQuery, default_schema_workers,
};
pub use registry_schema::compat::Rules;
pub use registry_schema::{CompatibilityLevel, Fingerprint, Limits, SchemaReference, SchemaType};
pub use store::{
    BindingsSeen, GuidCarried, HardDeletion, IdRowsPage, LayeredContext, NewVersion, Preconditions, Revision,
    SettingChange, SettingKind, SettingSeen, SettingWrite, SettingsAt, SoftDeletion, Store, StoreError, StoreResult,
    SubjectsPage, VersionsPage, WriteContext, carried_in_contexts,
};
pub use subject_scope::SubjectScope;
