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
//! (`kms:EncryptionContext:purpose`). The context also names the exporter and its destination
//! (`exporter=<name>`, `destination=<schema.registry.url>`), so a ciphertext copied into another
//! exporter's config, or kept under a changed URL, does not open at KMS either (and CloudTrail
//! shows whose credential each `Decrypt` was). A credential sealed before the context named them
//! (purpose only) still opens: when `Decrypt` under the full context fails, it is tried under the
//! purpose alone, which a ciphertext sealed under the full context never passes; such a credential
//! is sealed again under the full context the next time its exporter's config is written. `Decrypt` names no key: KMS finds it in the ciphertext, so
//! credentials sealed before the variable names another key still open.
//!
//! A KMS key belongs to one region, and so does what it sealed. In a multi-region registry the API
//! seals with the home region's key; the exporter function opens with the home region's KMS first
//! and then with each further key it is given ([`KmsSealer::opening_also`], each called in its own
//! region), so credentials sealed by an earlier home before a failover still open.

use aws_config::SdkConfig;
use aws_sdk_kms::error::DisplayErrorContext;
use aws_sdk_kms::primitives::Blob;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use registry_exporter::secrets::SecretError;
use registry_exporter::{Binding, Sealer};
use std::collections::HashMap;

/// The variable naming the key (an ID, ARN or alias).
pub const KEY_VAR: &str = "REGISTRY_EXPORTER_KMS_KEY";

/// What a value sealed here starts with.
pub const SEALED_PREFIX: &str = "kms:v1:";

/// The purpose entry of every call's encryption context: (key, value).
const CONTEXT: (&str, &str) = ("purpose", "registry-exporter-credential");

/// The encryption context of a credential sealed for `binding`; `None`: the purpose alone (how
/// credentials were sealed before the context named their exporter and destination).
fn context(binding: Option<Binding<'_>>) -> HashMap<String, String> {
    let mut context = HashMap::from([(CONTEXT.0.to_owned(), CONTEXT.1.to_owned())]);
    if let Some(binding) = binding {
        context.insert("exporter".to_owned(), binding.exporter.to_owned());
        context.insert("destination".to_owned(), binding.destination.to_owned());
    }
    context
}

/// What a value sealed by a host's local secret (`registry serve` on the embedded store) starts with.
const LOCALLY_SEALED: &str = "sealed:";

/// Seals exporter credentials with a KMS key. Cheap to clone.
#[derive(Debug, Clone)]
pub struct KmsSealer {
    client: aws_sdk_kms::Client,
    key: Option<String>,
    /// The region `client` calls (the one its keys live in).
    region: Option<String>,
    /// Keys tried in turn when `client` cannot open a value: (a client in the key's region, its ARN).
    also: Vec<(aws_sdk_kms::Client, String)>,
}

impl KmsSealer {
    /// Calls KMS through `sdk` (region, credentials, `AWS_ENDPOINT_URL[_KMS]`); `key` seals, and
    /// without one every credential is refused (opening needs none).
    pub fn new(sdk: &SdkConfig, key: Option<String>) -> KmsSealer {
        KmsSealer {
            client: aws_sdk_kms::Client::new(sdk),
            key: key.filter(|key| !key.is_empty()),
            region: sdk.region().map(ToString::to_string),
            also: Vec::new(),
        }
    }

    /// This sealer opening, when its own region's KMS cannot open a value, with each of `keys` in
    /// turn (key ARNs; each `Decrypt` names its key and is sent to the key's region, with `sdk`'s
    /// credentials and endpoint). Keys of this sealer's own region are left out (its `Decrypt`
    /// already tried every key there), and so are entries that are not key ARNs. Sealing is
    /// unchanged. With no further key, opening makes the one call it always made.
    pub fn opening_also(mut self, sdk: &SdkConfig, keys: &[String]) -> KmsSealer {
        for key in keys.iter().map(|key| key.trim()).filter(|key| !key.is_empty()) {
            let Some(region) = key_region(key) else {
                tracing::warn!(key, "not a KMS key ARN: not used to open exporter credentials");
                continue;
            };
            if self.region.as_deref() != Some(region) {
                let client = aws_sdk_kms::Client::new(&crate::regions::in_region(sdk, region));
                self.also.push((client, key.to_owned()));
            }
        }
        self
    }
}

/// The region of a key ARN (`arn:<partition>:kms:<region>:<account>:key/<id>`).
fn key_region(arn: &str) -> Option<&str> {
    let mut parts = arn.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("arn"), Some(_), Some("kms"), Some(region)) if !region.is_empty() => Some(region),
        _ => None,
    }
}

/// `Decrypt` of `blob` through `client`, naming `key` when given, under `binding`'s context, then
/// under the purpose alone (a credential sealed before the context named its binding): the
/// plaintext, or why not.
async fn decrypt(
    client: &aws_sdk_kms::Client,
    key: Option<&str>,
    blob: &[u8],
    binding: Binding<'_>,
) -> Result<Vec<u8>, String> {
    let mut refusals = Vec::new();
    for context in [context(Some(binding)), context(None)] {
        let output = client
            .decrypt()
            .set_key_id(key.map(str::to_owned))
            .ciphertext_blob(Blob::new(blob))
            .set_encryption_context(Some(context))
            .send()
            .await;
        match output {
            Ok(output) => {
                return output
                    .plaintext
                    .map(Blob::into_inner)
                    .ok_or_else(|| "KMS Decrypt answered no plaintext".to_owned());
            }
            Err(error) => refusals.push(DisplayErrorContext(&error).to_string()),
        }
    }
    Err(refusals.join("; under the purpose alone: "))
}

#[async_trait::async_trait]
impl Sealer for KmsSealer {
    async fn seal(&self, value: &str, binding: Binding<'_>) -> Result<String, SecretError> {
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
            .set_encryption_context(Some(context(Some(binding))))
            .send()
            .await
            .map_err(|error| SecretError(format!("KMS Encrypt under {key}: {}", DisplayErrorContext(&error))))?;
        let blob =
            output.ciphertext_blob.ok_or_else(|| SecretError("KMS Encrypt answered no ciphertext".to_owned()))?;
        Ok(format!("{SEALED_PREFIX}{}", BASE64.encode(blob.as_ref())))
    }

    /// A value not sealed here is answered as is (the literal mask, kept when nothing was stored),
    /// except one sealed with a local secret, which this host cannot open.
    async fn open(&self, value: &str, binding: Binding<'_>) -> Result<String, SecretError> {
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
        let text = |plaintext: Vec<u8>| String::from_utf8(plaintext).map_err(|_| undecodable());
        let mut refusals = match decrypt(&self.client, None, &blob, binding).await {
            Ok(plaintext) => return text(plaintext),
            Err(error) => vec![error],
        };
        for (client, key) in &self.also {
            match decrypt(client, Some(key), &blob, binding).await {
                Ok(plaintext) => return text(plaintext),
                Err(error) => refusals.push(format!("{key}: {error}")),
            }
        }
        Err(SecretError(format!("KMS Decrypt of an exporter credential: {}", refusals.join("; "))))
    }
}

#[cfg(test)]
mod tests {
    use super::key_region;

    #[test]
    fn a_key_arn_names_its_region() {
        assert_eq!(key_region("arn:aws:kms:eu-west-1:123456789012:key/1234abcd"), Some("eu-west-1"));
        assert_eq!(key_region("arn:aws-cn:kms:cn-north-1:123456789012:key/1"), Some("cn-north-1"));
        assert_eq!(key_region("alias/registry"), None);
        assert_eq!(key_region("arn:aws:s3:::bucket"), None);
        assert_eq!(key_region("arn:aws:kms::123456789012:key/1"), None);
    }
}
