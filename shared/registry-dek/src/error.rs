//! The DEK registry's errors, one variant per Confluent error family (`DekRegistryErrors`); the
//! HTTP layer maps each to its status and error code once.

use crate::kms::KmsError;
use registry_core::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum DekError {
    /// 404 / 40470: no such KEK or DEK (the name is the KEK's name or the DEK's subject).
    #[error("Key '{0}' not found")]
    KeyNotFound(String),
    /// 404 / 40471: a permanent delete of a key not soft-deleted first.
    #[error("Key '{0}' was not deleted first before being permanently deleted")]
    KeyNotSoftDeleted(String),
    /// 404 / 40472: an operation that needs the KEK undeleted first.
    #[error("Key '{0}' must be undeleted first")]
    KeySoftDeleted(String),
    /// 409 / 40971.
    #[error("Key '{0}' already exists; use a different value")]
    AlreadyExists(String),
    /// 409 / 40972.
    #[error("A maximum of {0} keys already exist")]
    TooManyKeys(usize),
    /// 422 / 42271: a missing or invalid field (the field's name).
    #[error("Invalid or missing value for field '{0}' of key")]
    InvalidKey(String),
    /// 422 / 42202: a version that is not a positive integer, `latest` or -1.
    #[error(
        "The specified version '{0}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""
    )]
    InvalidVersion(String),
    /// 422 / 42272: a KEK still has DEKs.
    #[error("One or more references exist to the key '{0}'")]
    ReferenceExists(String),
    /// 403 / 40370: the KMS refused the registry the KEK's key.
    #[error("{0}")]
    GenerationForbidden(String),
    /// 500 / 50070: the KMS failed, or the KEK's type has no KMS here.
    #[error("{0}")]
    Generation(String),
    /// Storage failed (5xx), or kept conflicting beyond the retry budget.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl DekError {
    /// The error of a failed KMS call made for `subject`'s DEK, worded as Confluent's.
    pub fn from_kms(subject: &str, error: KmsError) -> Self {
        let message = format!("Could not generate dek for {subject}: {error}");
        match error {
            KmsError::AccessDenied(_) => DekError::GenerationForbidden(message),
            KmsError::KeyNotFound(_) | KmsError::Unavailable(_) | KmsError::Invalid(_) => DekError::Generation(message),
        }
    }
}
