//! The KMS port: wraps and unwraps DEK key material with a KEK's key. One implementation per
//! `kmsType` (`aws-kms` through the AWS SDK, `local-kms` from a configured secret), looked up in a
//! [`KmsRegistry`]. Only shared KEKs reach a KMS: for the others the registry stores what the
//! client sends.

use crate::model::Kek;
use crate::store::KeyStore;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a storage backend gives the DEK registry: its key store, and the KMS implementations
/// that come with it (`aws-kms` on AWS); the host adds the configured ones (`local-kms`).
pub struct DekBackend {
    pub key_store: Arc<dyn KeyStore>,
    pub kms: KmsRegistry,
}

impl DekBackend {
    /// A backend with `key_store` and no KMS of its own.
    pub fn new(key_store: Arc<dyn KeyStore>) -> Self {
        DekBackend { key_store, kms: KmsRegistry::new() }
    }
}

/// Why a KMS call failed, classified by what the registry answers.
#[derive(Debug, thiserror::Error)]
pub enum KmsError {
    /// The KMS refused the registry the key (IAM, key policy): 403, error code 40370.
    #[error("KMS access denied: {0}")]
    AccessDenied(String),
    /// The key does not exist, or is disabled or pending deletion.
    #[error("KMS key not found: {0}")]
    KeyNotFound(String),
    /// Throttled, unreachable or failing: retry later.
    #[error("KMS unavailable: {0}")]
    Unavailable(String),
    /// The input or the key is unusable (bad key ID, ciphertext that does not decrypt).
    #[error("KMS rejected the request: {0}")]
    Invalid(String),
}

#[async_trait::async_trait]
pub trait Kms: Send + Sync {
    /// Wraps DEK key material with the KEK's key.
    async fn encrypt(&self, kek: &Kek, plaintext: &[u8]) -> Result<Vec<u8>, KmsError>;
    /// Unwraps DEK key material wrapped by `encrypt` (or by the client's own KMS driver of the same type).
    async fn decrypt(&self, kek: &Kek, ciphertext: &[u8]) -> Result<Vec<u8>, KmsError>;
}

/// The KMS implementations the registry can use, by normalised `kmsType`.
#[derive(Clone, Default)]
pub struct KmsRegistry {
    by_type: BTreeMap<String, Arc<dyn Kms>>,
}

impl KmsRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the implementation of `kms_type`.
    pub fn with(mut self, kms_type: impl Into<String>, kms: Arc<dyn Kms>) -> Self {
        self.by_type.insert(kms_type.into(), kms);
        self
    }

    /// The implementation of `kms_type`, if one is configured.
    pub fn get(&self, kms_type: &str) -> Option<&Arc<dyn Kms>> {
        self.by_type.get(kms_type)
    }

    /// The configured types, in order (for logs and errors).
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.by_type.keys().map(String::as_str)
    }
}

impl std::fmt::Debug for KmsRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.types()).finish()
    }
}
