//! The exporter store port: one record per exporter ([`ExporterRecord`]: definition and status),
//! keyed by name, written conditionally on the revision the writer read, so the API and the
//! engine (which records progress) never overwrite each other's changes: the loser re-reads.
//!
//! Backends: [`crate::MemoryExporterStore`], SQLite (registry-store-local) and DynamoDB
//! (registry-store-aws, items in the registry's table). A backend stores the record as the
//! JSON of [`ExporterRecord`]; exporters are few (the service bounds them), so listing reads all.

use crate::model::ExporterRecord;
use async_trait::async_trait;
pub use registry_core::revision::{Expect, Stored};
pub use registry_core::{StoreError, StoreResult};
use std::fmt::Debug;

/// Persistent exporters. Reads observe every write acknowledged before they started.
#[async_trait]
pub trait ExporterStore: Send + Sync + Debug {
    /// The exporter named `name`.
    async fn exporter(&self, name: &str) -> StoreResult<Option<Stored<ExporterRecord>>>;

    /// Every exporter, in name order.
    async fn exporters(&self) -> StoreResult<Vec<Stored<ExporterRecord>>>;

    /// Writes `record` (its exporter's name is the key) if the stored record is as `expect`
    /// says (`Conflict` otherwise); answers the new revision.
    async fn put_exporter(&self, record: &ExporterRecord, expect: Expect) -> StoreResult<u64>;

    /// Removes the exporter named `name` if it is at `revision` (`Conflict` otherwise).
    async fn remove_exporter(&self, name: &str, revision: u64) -> StoreResult<()>;
}

/// The revision a write under `expect` gives a record currently at `current`, or the conflict.
pub fn next_revision(current: Option<u64>, expect: Expect) -> StoreResult<u64> {
    match (expect, current) {
        (Expect::Absent, None) => Ok(1),
        (Expect::Revision(expected), Some(revision)) if expected == revision => Ok(revision + 1),
        _ => Err(StoreError::Conflict("exporter changed".to_owned())),
    }
}
