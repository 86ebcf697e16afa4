//! Exporter credentials on AWS ([`KmsSealer`]): each credential in an exporter's `config` is
//! encrypted by KMS `Encrypt` under the key `REGISTRY_EXPORTER_KMS_KEY` and stored as
//! `kms:v1:<base64 ciphertext blob>`; the exporter function opens it with `Decrypt` when it builds
//! the destination's client. No key material ever leaves KMS and the item holds no plaintext.
//!
//! Why `Encrypt` of each value and no envelope: a credential is a few hundred bytes (KMS takes up
//! to 4 KB), it is sealed only when an admin writes a config and opened once per exporter pass, so
//! one call each is cheap, and there is no data key to cache, rotate or wipe. Every call carries
//! the encryption context `purpose=registry-exporter-credential`, so a ciphertext of any other use
//! of the same key does not open here, and IAM can grant the functions the key for this use only
//! (`kms:EncryptionContext:purpose`). `Decrypt` names no key: KMS finds it in the ciphertext, so
//! credentials sealed before the variable names another key still open.

use aws_config::SdkConfig;
use aws_sdk_kms::error::DisplayErrorContext;
use aws_sdk_kms::primitives::Blob;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use registry_exporter::Sealer;
use registry_exporter::secrets::SecretError;

/// The variable naming the key (an ID, ARN or alias).
pub const KEY_VAR: &str = "REGISTRY_EXPORTER_KMS_KEY";

/// What a value sealed here starts with.
pub const SEALED_PREFIX: &str = "kms:v1:";

/// The encryption context of every call: (key, value).
const CONTEXT: (&str, &str) = ("purpose", "registry-exporter-credential");

/// What a value sealed by a host's local secret (`registry serve` on the embedded store) starts with.
const LOCALLY_SEALED: &str = "sealed:";

/// Seals exporter credentials with a KMS key. Cheap to clone.
#[derive(Debug, Clone)]
pub struct KmsSealer {
    client: aws_sdk_kms::Client,
    key: Option<String>,
}

impl KmsSealer {
    /// Calls KMS through `sdk` (region, credentials, `AWS_ENDPOINT_URL[_KMS]`); `key` seals, and
    /// without one every credential is refused (opening needs none).
    pub fn new(sdk: &SdkConfig, key: Option<String>) -> KmsSealer {
        KmsSealer { client: aws_sdk_kms::Client::new(sdk), key: key.filter(|key| !key.is_empty()) }
    }
}

#[async_trait::async_trait]
impl Sealer for KmsSealer {
    async fn seal(&self, value: &str) -> Result<String, SecretError> {
        let Some(key) = &self.key else {
            return Err(SecretError(format!(
                "exporter credentials are stored encrypted with a KMS key on the aws backend, and {KEY_VAR} is not set"
            )));
        };
        let output = self
            .client
            .encrypt()
            .key_id(key)
            .plaintext(Blob::new(value.as_bytes()))
            .encryption_context(CONTEXT.0, CONTEXT.1)
            .send()
            .await
            .map_err(|error| SecretError(format!("KMS Encrypt under {key}: {}", DisplayErrorContext(&error))))?;
        let blob =
            output.ciphertext_blob.ok_or_else(|| SecretError("KMS Encrypt answered no ciphertext".to_owned()))?;
        Ok(format!("{SEALED_PREFIX}{}", BASE64.encode(blob.as_ref())))
    }

    /// A value not sealed here is answered as is (the literal mask, kept when nothing was stored),
    /// except one sealed with a local secret, which this host cannot open.
    async fn open(&self, value: &str) -> Result<String, SecretError> {
        let Some(encoded) = value.strip_prefix(SEALED_PREFIX) else {
            if value.starts_with(LOCALLY_SEALED) {
                return Err(SecretError(
                    "a stored exporter credential was sealed with a local secret, not KMS".to_owned(),
                ));
            }
            return Ok(value.to_owned());
        };
        let undecodable = || SecretError("a stored exporter credential is not a KMS ciphertext".to_owned());
        let blob = BASE64.decode(encoded).map_err(|_| undecodable())?;
        let output = self
            .client
            .decrypt()
            .ciphertext_blob(Blob::new(blob))
            .encryption_context(CONTEXT.0, CONTEXT.1)
            .send()
            .await
            .map_err(|error| {
                SecretError(format!("KMS Decrypt of an exporter credential: {}", DisplayErrorContext(&error)))
            })?;
        let plaintext = output.plaintext.ok_or_else(|| SecretError("KMS Decrypt answered no plaintext".to_owned()))?;
        String::from_utf8(plaintext.into_inner()).map_err(|_| undecodable())
    }
}
