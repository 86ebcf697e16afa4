//! The registry service: every Confluent operation, over any [`Store`].
//!
//! Owns the business rules: ID reuse by fingerprint, version numbering, soft/hard delete,
//! modes, config resolution and compatibility. Retries on `StoreError::Conflict`.

use crate::error::RegistryError;
use crate::model::{
    ConfigRecord, DeletedFilter, Mode, SchemaBody, SchemaId, SchemaRecord, Scope, Subject, Version, VersionSelector,
};
use crate::store::Store;
use registry_schema::{CompatibilityLevel, SchemaReference, SchemaType};
use std::sync::Arc;

/// Server-wide settings the registry needs (plain values; read from the environment by the caller).
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// The level used when neither subject nor global config sets one (Confluent: BACKWARD).
    pub default_compatibility: CompatibilityLevel,
    /// Largest accepted schema text in bytes (42209 above it).
    pub max_schema_bytes: usize,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        RegistrySettings { default_compatibility: CompatibilityLevel::Backward, max_schema_bytes: 1024 * 1024 }
    }
}

/// A schema as posted to register, lookup and compatibility endpoints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewSchema {
    /// The schema text; `None` or empty means "reuse the latest version's schema" on register.
    pub schema: Option<String>,
    pub schema_type: SchemaType,
    pub references: Vec<SchemaReference>,
    pub metadata: Option<serde_json::Value>,
    pub rule_set: Option<serde_json::Value>,
    /// Explicit ID (IMPORT mode, or the schema's own ID).
    pub id: Option<i32>,
    /// Explicit version (IMPORT mode, or the next version).
    pub version: Option<i32>,
}

/// Options of `POST /subjects/{s}/versions`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegisterOptions {
    pub normalize: bool,
}

/// Options of `POST /subjects/{s}` (lookup).
#[derive(Debug, Clone, Copy, Default)]
pub struct LookupOptions {
    pub normalize: bool,
    /// Match soft-deleted versions too.
    pub include_deleted: bool,
}

/// The answer of a compatibility test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompatibilityReport {
    pub is_compatible: bool,
    /// Confluent's verbose messages (empty when compatible).
    pub messages: Vec<String>,
}

/// A schema by ID: its body (and the current maximum ID, when asked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaById {
    pub id: SchemaId,
    pub body: SchemaBody,
}

/// Query of `GET /schemas`.
#[derive(Debug, Clone, Default)]
pub struct SchemasQuery {
    pub subject_prefix: String,
    pub include_deleted: bool,
    pub latest_only: bool,
    pub offset: usize,
    pub limit: usize,
}

/// The registry service. Cheap to clone; all state is in the store.
#[derive(Debug, Clone)]
pub struct Registry {
    store: Arc<dyn Store>,
    settings: RegistrySettings,
}

impl Registry {
    /// A registry over `store`.
    pub fn new(store: Arc<dyn Store>, settings: RegistrySettings) -> Self {
        Registry { store, settings }
    }

    /// The store (for admin tooling and tests).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The settings in force.
    pub fn settings(&self) -> &RegistrySettings {
        &self.settings
    }
}

// The operations below are implemented in the `registry/*.rs` submodules; their signatures are
// the contract the HTTP layer is written against.
#[allow(unused_variables)]
impl Registry {
    /// `POST /subjects/{s}/versions`. Returns the stored version (existing one when the schema
    /// is already a live version of the subject).
    pub async fn register(
        &self,
        subject: &str,
        schema: NewSchema,
        options: RegisterOptions,
    ) -> Result<SchemaRecord, RegistryError> {
        todo!()
    }

    /// `POST /subjects/{s}`: the version of `subject` whose schema matches.
    pub async fn lookup(
        &self,
        subject: &str,
        schema: NewSchema,
        options: LookupOptions,
    ) -> Result<SchemaRecord, RegistryError> {
        todo!()
    }

    /// `GET /schemas/ids/{id}`: resolvable while any row (live or soft-deleted) carries it.
    pub async fn schema_by_id(&self, id: i32) -> Result<SchemaById, RegistryError> {
        todo!()
    }

    /// The greatest ID ever allocated (`fetchMaxId`).
    pub async fn max_id(&self) -> Result<Option<SchemaId>, RegistryError> {
        todo!()
    }

    /// `GET /schemas/ids/{id}/subjects`: sorted, distinct.
    pub async fn subjects_for_id(&self, id: i32, include_deleted: bool) -> Result<Vec<Subject>, RegistryError> {
        todo!()
    }

    /// `GET /schemas/ids/{id}/versions`: (subject, version) pairs sorted.
    pub async fn versions_for_id(
        &self,
        id: i32,
        include_deleted: bool,
    ) -> Result<Vec<(Subject, Version)>, RegistryError> {
        todo!()
    }

    /// `GET /schemas`.
    pub async fn schemas(&self, query: &SchemasQuery) -> Result<Vec<SchemaRecord>, RegistryError> {
        todo!()
    }

    /// `GET /subjects`: one page (ascending, after `after`, at most `limit`).
    pub async fn subjects_page(
        &self,
        prefix: &str,
        filter: DeletedFilter,
        after: Option<&Subject>,
        limit: usize,
    ) -> Result<Vec<Subject>, RegistryError> {
        todo!()
    }

    /// `GET /subjects/{s}/versions`: ascending. 40401 when none is visible under `filter`.
    pub async fn version_numbers(&self, subject: &str, filter: DeletedFilter) -> Result<Vec<Version>, RegistryError> {
        todo!()
    }

    /// `GET /subjects/{s}/versions/{v}`.
    pub async fn version(
        &self,
        subject: &str,
        version: VersionSelector,
        include_deleted: bool,
    ) -> Result<SchemaRecord, RegistryError> {
        todo!()
    }

    /// `GET /subjects/{s}/versions/{v}/referencedby`: IDs, ascending.
    pub async fn referenced_by(
        &self,
        subject: &str,
        version: VersionSelector,
        include_deleted: bool,
    ) -> Result<Vec<SchemaId>, RegistryError> {
        todo!()
    }

    /// `DELETE /subjects/{s}/versions/{v}`: the deleted version number.
    pub async fn delete_version(
        &self,
        subject: &str,
        version: VersionSelector,
        permanent: bool,
    ) -> Result<Version, RegistryError> {
        todo!()
    }

    /// `DELETE /subjects/{s}`: the deleted version numbers.
    pub async fn delete_subject(&self, subject: &str, permanent: bool) -> Result<Vec<Version>, RegistryError> {
        todo!()
    }

    /// `POST /compatibility/subjects/{s}/versions[/{v}]`. `version = None` checks against all
    /// live versions honouring transitive levels.
    pub async fn test_compatibility(
        &self,
        subject: &str,
        version: Option<VersionSelector>,
        schema: NewSchema,
        normalize: bool,
        verbose: bool,
    ) -> Result<CompatibilityReport, RegistryError> {
        todo!()
    }

    /// `GET /config[/{s}]`. For a subject without its own config: 40408, or with
    /// `default_to_global` the effective config.
    pub async fn config(&self, scope: &Scope, default_to_global: bool) -> Result<ConfigRecord, RegistryError> {
        todo!()
    }

    /// `PUT /config[/{s}]`: stores and returns the new config.
    pub async fn set_config(&self, scope: &Scope, config: ConfigRecord) -> Result<ConfigRecord, RegistryError> {
        todo!()
    }

    /// `DELETE /config[/{s}]`: returns the removed config (40401 for a subject with none).
    pub async fn delete_config(&self, scope: &Scope) -> Result<ConfigRecord, RegistryError> {
        todo!()
    }

    /// `GET /mode[/{s}]`. For a subject without its own mode: 40409, or the effective mode.
    pub async fn mode(&self, scope: &Scope, default_to_global: bool) -> Result<Mode, RegistryError> {
        todo!()
    }

    /// `PUT /mode[/{s}]`: `force` allows IMPORT while live versions exist.
    pub async fn set_mode(&self, scope: &Scope, mode: Mode, force: bool) -> Result<Mode, RegistryError> {
        todo!()
    }

    /// `DELETE /mode[/{s}]`: returns the removed mode (40401 for a subject with none).
    pub async fn delete_mode(&self, scope: &Scope) -> Result<Mode, RegistryError> {
        todo!()
    }

    /// `GET /contexts`.
    pub async fn contexts(&self) -> Result<Vec<String>, RegistryError> {
        todo!()
    }
}
