//! The DEK registry: key-encryption keys (KEKs) and the data-encryption keys (DEKs) wrapped by
//! them, for clients that encrypt fields with data-contract `ENCRYPT` rules.
//!
//! Invariants every backend keeps through [`KeyStore`]'s conditional writes:
//! - one DEK per (KEK, subject, algorithm, version): two writers of the same version race to one
//!   winner;
//! - a live DEK only under a live KEK: a DEK write that makes a DEK live requires the KEK record
//!   live and bumps its revision in the same atomic write, and KEK deletes are conditional on the
//!   revision they read, so a KEK delete cannot miss a DEK created concurrently;
//! - plaintext key material is never stored: stores hold only `encryptedKeyMaterial`.
//!
//! KMS calls go through the [`Kms`] port, one implementation per `kmsType` in a [`KmsRegistry`].

pub mod error;
pub mod keygen;
pub mod kms;
pub mod local_kms;
pub mod memory;
pub mod model;
pub mod service;
pub mod store;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use error::DekError;
pub use kms::{DekBackend, Kms, KmsError, KmsRegistry};
pub use local_kms::LocalKms;
pub use memory::MemoryKeyStore;
pub use model::{Dek, DekAlgorithm, DekId, DekSeries, Kek};
pub use service::{DekAnswer, DekRegistry, DekVersion, KekUpdate, NewDek, NewKek, Page};
pub use store::{Expect, KekGuard, KeyStore, Stored, SubjectPage};
