//! Schema linking: Confluent's exporters (`/exporters`). An exporter copies chosen subjects of
//! this registry into a destination registry, keeping their IDs and versions, into a context of
//! the destination (held in IMPORT mode), and keeps them current.
//!
//! - [`model`]: the exporter as Confluent describes it, its status and state machine.
//! - [`store`]: the [`ExporterStore`] port, one record per exporter (definition and status),
//!   written conditionally on its revision; [`memory`] is the in-process implementation.
//! - [`destination`]: the destination URL read strictly and the operator's allow-list
//!   (`REGISTRY_EXPORTER_ALLOWED_DESTINATIONS`). The ports' transports (HTTP to a destination,
//!   this registry's router in process) are the host's, in `registry-exporter-http`.
//! - [`secrets`]: credentials in `config` are sealed before they are stored and never answered.
//! - [`service`]: the API's operations and Confluent's errors ([`ExporterError`]).
//! - [`engine`]: one synchronisation pass of an exporter over two [`engine::RegistryApi`] ports
//!   (source, destination; destinations opened through [`engine::Connect`]), and [`runner`]: the background task that drives the passes with
//!   backoff and records the status.

pub mod destination;
pub mod engine;
pub mod error;
pub mod memory;
pub mod model;
pub mod runner;
pub mod secrets;
pub mod service;
pub mod store;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use destination::DestinationPolicy;
pub use error::ExporterError;
pub use memory::MemoryExporterStore;
pub use model::{ContextType, Exporter, ExporterRecord, ExporterState, ExporterStatus};
pub use secrets::{Binding, Sealer, SecretBox};
pub use service::{ExporterService, ExporterUpdate};
pub use store::{Expect, ExporterStore, Stored};
