//! `aws-kms`: wraps and unwraps DEK key material with an AWS KMS key, for shared KEKs whose DEKs
//! the registry generates itself.
//!
//! The wrapped material is exactly what a client's own AWS KMS driver reads and writes (Tink's
//! `awskms` AEAD under the key ARN, as the Confluent serializers use it with empty associated
//! data): the raw key bytes through KMS `Encrypt`/`Decrypt` with `KeyId` = the KEK's `kmsKeyId`
//! and no encryption context. So a DEK the registry wraps, a client unwraps, and the reverse.
//!
//! Calls go to the key's own region (from its ARN), with the process's credentials (the Lambda
//! function's role, or the default chain) and the usual endpoint variables (`AWS_ENDPOINT_URL`,
//! `AWS_ENDPOINT_URL_KMS`). An optional allow-list (`REGISTRY_KMS_KEY_ARNS`, set by the Terraform
//! module from the same list its IAM policy names) refuses other keys before any call, so a
//! misconfigured KEK gets the same clear refusal locally as IAM gives in AWS.

use crate::CallCounter;
use aws_config::{Region, SdkConfig};
use aws_sdk_kms::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_kms::primitives::Blob;
use registry_dek::{Kek, Kms, KmsError};

/// The `aws-kms` KMS client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AwsKms {
    client: aws_sdk_kms::Client,
    /// Key ARNs this registry may use; empty: any (IAM decides).
    allowed: Vec<String>,
    calls: CallCounter,
}

impl AwsKms {
    /// A client from `sdk` (region, credentials, endpoints), restricted to `allowed` key ARNs
    /// unless that is empty.
    pub fn new(sdk: &SdkConfig, allowed: Vec<String>) -> AwsKms {
        let calls = CallCounter::default();
        let config = aws_sdk_kms::config::Builder::from(sdk).interceptor(calls.clone()).build();
        AwsKms { client: aws_sdk_kms::Client::from_conf(config), allowed, calls }
    }

    /// This client restricted to the key ARNs `allowed` (empty: any key).
    pub fn restricted_to(self, allowed: Vec<String>) -> AwsKms {
        AwsKms { allowed, ..self }
    }

    /// The counter of KMS operations this client has started.
    pub fn calls(&self) -> &CallCounter {
        &self.calls
    }

    /// Wraps `plaintext` (raw DEK key bytes) under the KMS key `key_id` (a key ARN).
    async fn encrypt_under(&self, key_id: &str, plaintext: &[u8]) -> Result<Vec<u8>, KmsError> {
        let request = self.client.encrypt().key_id(key_id).plaintext(Blob::new(plaintext));
        let output = self.call("Encrypt", key_id, |region| request.customize().config_override(region).send()).await?;
        key_bytes("Encrypt", key_id, output.ciphertext_blob, "ciphertext")
    }

    /// Unwraps `ciphertext` that [`AwsKms::encrypt_under`] (or a client's AWS KMS driver) made
    /// under `key_id`. KMS refuses a ciphertext made under any other key.
    async fn decrypt_under(&self, key_id: &str, ciphertext: &[u8]) -> Result<Vec<u8>, KmsError> {
        let request = self.client.decrypt().key_id(key_id).ciphertext_blob(Blob::new(ciphertext));
        let output = self.call("Decrypt", key_id, |region| request.customize().config_override(region).send()).await?;
        key_bytes("Decrypt", key_id, output.plaintext, "plaintext")
    }

    /// Operation `op` on the KMS key `key_id`: refused before any request unless the allow-list
    /// lets the registry use the key; else `send` sends it with the override that picks the key's
    /// region, and a failure is classified.
    async fn call<T, E, R, F>(
        &self,
        op: &str,
        key_id: &str,
        send: impl FnOnce(aws_sdk_kms::config::Builder) -> F,
    ) -> Result<T, KmsError>
    where
        F: Future<Output = Result<T, SdkError<E, R>>>,
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        R: std::fmt::Debug,
    {
        self.check_allowed(key_id)?;
        send(region_override(key_id)).await.map_err(|error| classify(op, key_id, error))
    }

    fn check_allowed(&self, key_id: &str) -> Result<(), KmsError> {
        if self.allowed.is_empty() || self.allowed.iter().any(|allowed| allowed == key_id) {
            return Ok(());
        }
        Err(KmsError::AccessDenied(format!(
            "KMS key {key_id} is not one this registry may use (REGISTRY_KMS_KEY_ARNS)"
        )))
    }
}

#[async_trait::async_trait]
impl Kms for AwsKms {
    async fn encrypt(&self, kek: &Kek, plaintext: &[u8]) -> Result<Vec<u8>, KmsError> {
        self.encrypt_under(&kek.kms_key_id, plaintext).await
    }

    async fn decrypt(&self, kek: &Kek, ciphertext: &[u8]) -> Result<Vec<u8>, KmsError> {
        self.decrypt_under(&kek.kms_key_id, ciphertext).await
    }
}

/// The key bytes `blob` of operation `op`'s answer, which must hold them (`what` they are).
fn key_bytes(op: &str, key_id: &str, blob: Option<Blob>, what: &str) -> Result<Vec<u8>, KmsError> {
    blob.map(Blob::into_inner).ok_or_else(|| KmsError::Invalid(format!("{op} under {key_id}: no {what}")))
}

/// The key's own region when `key_id` is an ARN (`arn:aws:kms:<region>:<account>:key/<id>`):
/// KMS serves a key only in its region, whatever the process's default region.
fn region_override(key_id: &str) -> aws_sdk_kms::config::Builder {
    let builder = aws_sdk_kms::config::Builder::default();
    match arn_region(key_id) {
        Some(region) => builder.region(Region::new(region.to_string())),
        None => builder,
    }
}

fn arn_region(key_id: &str) -> Option<&str> {
    let mut parts = key_id.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("arn"), Some(_partition), Some("kms"), Some(region)) if !region.is_empty() => Some(region),
        _ => None,
    }
}

/// Error codes that mean KMS will not let the registry use the key: IAM or the key policy
/// refused, the key is disabled or pending deletion, or it does not exist (or is not visible) in
/// the ARN's account and region. All are a KEK pointing at a key the registry may not use: the
/// registry answers them 403 (40370) with KMS's reason, as Confluent answers a refused DEK
/// generation, never a 5xx.
const REFUSAL_CODES: &[&str] = &[
    "AccessDeniedException",
    "DisabledException",
    "KMSInvalidStateException",
    "NotFoundException",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "ExpiredTokenException",
    "IncompleteSignature",
];

/// Error codes of transient trouble: throttling, KMS or its key store unreachable.
const UNAVAILABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "LimitExceededException",
    "KMSInternalException",
    "KeyUnavailableException",
    "DependencyTimeoutException",
    "ServiceUnavailableException",
    "InternalFailure",
];

/// Classifies a failed KMS call by its error code; timeouts and connection failures are
/// `Unavailable`, and so is any other failure to reach KMS.
fn classify<E, R>(op: &str, key_id: &str, error: SdkError<E, R>) -> KmsError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    let code = error.code().map(str::to_string);
    let detail = match (code.as_deref(), error.message()) {
        (Some(code), Some(message)) if !message.is_empty() => format!("{op} under {key_id}: {code}: {message}"),
        (Some(code), _) => format!("{op} under {key_id}: {code}"),
        (None, _) => format!("{op} under {key_id}: {}", aws_sdk_kms::error::DisplayErrorContext(&error)),
    };
    match (code.as_deref(), &error) {
        (Some(code), _) => classify_code(code, detail),
        (None, SdkError::ServiceError(_)) => KmsError::Invalid(detail),
        (None, _) => KmsError::Unavailable(detail),
    }
}

fn classify_code(code: &str, detail: String) -> KmsError {
    if REFUSAL_CODES.contains(&code) {
        KmsError::AccessDenied(detail)
    } else if UNAVAILABLE_CODES.contains(&code) {
        KmsError::Unavailable(detail)
    } else {
        KmsError::Invalid(detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_by_policy_key_state_or_a_missing_key_are_access_denied() {
        for code in ["AccessDeniedException", "DisabledException", "KMSInvalidStateException", "NotFoundException"] {
            assert!(matches!(classify_code(code, code.into()), KmsError::AccessDenied(_)), "{code}");
        }
    }

    #[test]
    fn throttling_and_internal_trouble_are_unavailable() {
        for code in
            ["ThrottlingException", "KMSInternalException", "KeyUnavailableException", "DependencyTimeoutException"]
        {
            assert!(matches!(classify_code(code, code.into()), KmsError::Unavailable(_)), "{code}");
        }
    }

    #[test]
    fn bad_ciphertext_or_key_usage_is_invalid() {
        for code in
            ["InvalidCiphertextException", "IncorrectKeyException", "InvalidKeyUsageException", "ValidationException"]
        {
            assert!(matches!(classify_code(code, code.into()), KmsError::Invalid(_)), "{code}");
        }
    }

    #[test]
    fn a_kms_out_of_reach_is_unavailable() {
        type Failed = SdkError<aws_sdk_kms::operation::encrypt::EncryptError, aws_sdk_kms::config::http::HttpResponse>;
        let timed_out: Failed = SdkError::timeout_error("no answer in time");
        assert!(matches!(classify("Encrypt", "k", timed_out), KmsError::Unavailable(_)));
    }

    #[test]
    fn the_region_comes_from_the_key_arn() {
        let arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        assert_eq!(arn_region(arn), Some("eu-west-1"));
        assert_eq!(arn_region("arn:aws-cn:kms:cn-north-1:1:key/x"), Some("cn-north-1"));
        assert_eq!(arn_region("1234abcd-12ab-34cd-56ef-1234567890ab"), None);
        assert_eq!(arn_region("alias/registry"), None);
    }
}
