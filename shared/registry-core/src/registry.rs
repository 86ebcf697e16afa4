//! The registry service: every Confluent operation, over any [`Store`].
//!
//! Owns the business rules: ID reuse by fingerprint, version numbering, soft/hard delete,
//! modes, config resolution and compatibility. Retries on `StoreError::Conflict`.
//!
//! The operations live in submodules, one per concern: `register` (the write path), `read`
//! (lookups, listings, by-ID), `delete` (soft/hard deletes), `compatibility` (the check shared by
//! register and the test endpoint), `config` (config, mode, contexts); `support` holds helpers.

mod alias;
mod compatibility;
mod config;
mod contract_merge;
pub mod contracts;
mod cpu;
mod delete;
mod format;
mod governance;
mod live_ids;
mod lookup_match;
mod parse_cache;
mod read;
mod recent;
mod recent_lookups;
mod register;
mod register_import;
mod register_recorded;
mod support;
mod usage;

pub use cpu::default_schema_workers;
pub use governance::{SubjectReport, body_guid};
pub use read::LookupAnswer;
pub use recent::Freshness;
pub use usage::{MAX_REMEMBERED, civil_date, epoch_day, period_start};

use crate::access::Access;
use crate::model::SchemaId;
use crate::model::{Context, SchemaBody};
use crate::store::Store;
use crate::subject_scope::SubjectScope;
use registry_schema::{CompatibilityLevel, SchemaReference, SchemaType};
use std::sync::Arc;

/// Server-wide settings the registry needs (plain values; read from the environment by the caller).
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// The level used when neither subject nor global config sets one (Confluent: BACKWARD).
    pub default_compatibility: CompatibilityLevel,
    /// Largest accepted schema text in bytes (42209 above it).
    pub max_schema_bytes: usize,
    /// Period of the per-subject last-used marker in days (0: no marking). Lookups and
    /// re-registrations write the marker at most once per subject per period per process, and not
    /// when the subject's newest version was registered in the period; see `registry::usage`.
    pub usage_granularity_days: u32,
    /// Ownership policy: when set, registering into a subject without live versions requires this
    /// metadata property (after config defaults/overrides apply); 42201 otherwise. `None`: no policy.
    pub require_owner: Option<String>,
    /// The per-subject churn guard (new versions per hour; see [`crate::churn`]).
    pub churn: crate::churn::ChurnSettings,
    /// How long `GET /schemas/ids/{id}` and `GET /schemas/guids/{guid}` may trust that an ID seen
    /// carried by a row still is (this process's own hard deletes are seen at once; see
    /// `registry::live_ids`). Zero: always read.
    pub live_id_ttl: std::time::Duration,
    /// How long a lookup answer (`POST /subjects/{s}`) may be served from memory (this process's
    /// own writes are seen at once; see `registry::recent_lookups`). Zero: always read.
    pub lookup_ttl: std::time::Duration,
    /// Budgets of every parse and compatibility check (depth, nodes, work; 42201 naming the budget
    /// when one is exceeded). See `registry_schema::limits`.
    pub limits: registry_schema::Limits,
    /// Compatibility rules where Confluent releases differ (default: the newest release's). See
    /// `registry_schema::compat::Rules`.
    pub compat_rules: registry_schema::compat::Rules,
    /// Refuse (42201) a posted schema whose reference closure binds one reference name at two
    /// versions; by default the first binding wins, as in Confluent (its
    /// `schema.providers.reference.versions.strict`).
    pub reference_versions_strict: bool,
    /// Parses and checks running at once (the bounded pool; others queue). See `registry::cpu`.
    pub schema_workers: usize,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        RegistrySettings {
            default_compatibility: CompatibilityLevel::Backward,
            max_schema_bytes: 1024 * 1024,
            usage_granularity_days: 1,
            require_owner: None,
            churn: crate::churn::ChurnSettings::default(),
            live_id_ttl: live_ids::DEFAULT_LIVE_ID_TTL,
            lookup_ttl: recent_lookups::DEFAULT_LOOKUP_TTL,
            limits: registry_schema::Limits::default(),
            compat_rules: registry_schema::compat::Rules::default(),
            reference_versions_strict: false,
            schema_workers: cpu::default_schema_workers(),
        }
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
    /// Skip the compatibility check, reserved fields included (Confluent's `?force=true`, commit
    /// 38996279868: `isCompatibleWithPrevious` is skipped as in IMPORT mode). Mode, data contracts,
    /// explicit ID and version rules still apply.
    pub force: bool,
}

/// Options of `POST /subjects/{s}` (lookup).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
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
    /// The context `id` was read in, where the body's unqualified references resolve.
    pub context: Context,
}

/// Query of `GET /schemas`.
#[derive(Debug, Clone, Default)]
pub struct SchemasQuery {
    pub subject_prefix: String,
    /// Only subjects inside this scope (the caller's).
    pub scope: SubjectScope,
    pub include_deleted: bool,
    pub latest_only: bool,
    pub offset: usize,
    pub limit: usize,
}

/// The registry service. Cheap to clone (one reference count: it is cloned for every request);
/// all durable state is in the store.
#[derive(Debug, Clone)]
pub struct Registry {
    shared: Arc<Shared>,
    /// Who this handle's requests act for (see [`crate::access`]): consulted for every subject a
    /// request reaches indirectly.
    access: Access,
}

/// What the clones of one [`Registry`] share. Its fields are the registry's own.
#[derive(Debug)]
pub struct Shared {
    store: Arc<dyn Store>,
    settings: RegistrySettings,
    /// Posted schema → canonical text, for lookups (see `parse_cache`).
    parse_cache: parse_cache::ParseCache,
    /// Subjects this process already marked used in the current period.
    usage: usage::UsageMarks,
    /// Operational counters.
    metrics: Arc<crate::metrics::Metrics>,
    /// Per-subject new-version rate.
    churn: crate::churn::ChurnGuard,
    /// IDs recently seen carried by a row.
    live_ids: live_ids::LiveIds,
    /// Guids recently seen resolving to a carried ID.
    live_guids: live_ids::LiveGuids,
    /// Lookup answers recently read.
    recent_lookups: recent_lookups::RecentLookups,
    /// Where parsing and compatibility checks run.
    cpu: cpu::CpuPool,
}

impl std::ops::Deref for Registry {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl Registry {
    /// A registry over `store`.
    pub fn new(store: Arc<dyn Store>, settings: RegistrySettings) -> Self {
        let shared = Shared {
            store,
            parse_cache: parse_cache::ParseCache::new(parse_cache::PARSE_CACHE_BYTES),
            usage: usage::UsageMarks::default(),
            metrics: Arc::default(),
            churn: crate::churn::ChurnGuard::new(settings.churn),
            live_ids: live_ids::live_ids(),
            live_guids: live_ids::live_guids(),
            recent_lookups: recent_lookups::recent_lookups(),
            cpu: cpu::CpuPool::new(settings.schema_workers),
            settings,
        };
        Registry { shared: Arc::new(shared), access: Access::all() }
    }

    /// This registry acting for `access`: the same state, with every subject a request reaches
    /// indirectly (alias targets, context-fallback candidates, referenced subjects) authorized by it.
    pub fn acting_for(&self, access: Access) -> Registry {
        Registry { shared: Arc::clone(&self.shared), access }
    }

    /// The store (for admin tooling and tests).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The operational counters of this registry (and its clones).
    pub fn metrics(&self) -> &Arc<crate::metrics::Metrics> {
        &self.metrics
    }

    /// The settings in force.
    pub fn settings(&self) -> &RegistrySettings {
        &self.settings
    }

    /// Forgets every answer this registry remembers (IDs and guids carried, lookups), as its own
    /// hard deletes, IMPORT bindings and writes do. For a process whose writes go through another
    /// registry: a read region's, whose reads are answered by a registry over the local replica
    /// and whose writes by one over the home region's storage (`registry_http::regional`).
    pub fn forget_remembered_answers(&self) {
        self.forget_live_ids();
        self.forget_lookups();
    }
}
