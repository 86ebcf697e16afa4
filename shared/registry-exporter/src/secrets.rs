//! Credentials in an exporter's `config` at rest: sealed by the host's [`Sealer`] before they are
//! stored, and never answered: reads show [`MASK`] in their place. A write that sends [`MASK`] back
//! for a key keeps the stored value, so a read-modify-write of the config does not lose the
//! credentials.
//!
//! A credential is bound to the destination it was given for: what is sealed is the credential
//! with that destination's URL ([`bind`]), and [`unbind`] gives it back only for the same URL. A
//! definition whose URL changes drops its credentials (they must be sent again, see
//! [`crate::service`]); the binding makes sure no other path can send them elsewhere.
//!
//! Each seal and open also names its [`Binding`] (the exporter and its destination URL): a sealer
//! that can bind more than the plaintext does (KMS, as encryption context) makes a ciphertext open
//! only for the exporter and destination it was sealed for.
//!
//! [`SecretBox`] is the sealer of `registry serve`'s embedded and memory stores: AES-256-GCM under
//! a key derived (HKDF-SHA256) from the host's secret, stored as
//! `sealed:v1:<base64 nonce|ciphertext|tag>`. On AWS the sealer is a KMS key
//! (`registry_store_aws::exporter_secrets`).

use async_trait::async_trait;
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hkdf::{HKDF_SHA256, KeyType, Salt};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

/// What reads show instead of a credential.
pub const MASK: &str = "[hidden]";

const SEALED_PREFIX: &str = "sealed:v1:";

/// The plaintext of a bound credential: `bound:v1:<URL length>:<URL><credential>`.
const BOUND_PREFIX: &str = "bound:v1:";

/// `credential` bound to the destination `url`, as it is sealed.
pub fn bind(url: &str, credential: &str) -> String {
    format!("{BOUND_PREFIX}{}:{url}{credential}", url.len())
}

/// The credential of a [`bind`] plaintext, if it was bound to `url`. A plaintext sealed before
/// credentials were bound is answered as is: its definition's URL has not changed since (a change
/// drops the credentials).
pub fn unbind(url: &str, plaintext: &str) -> Result<String, SecretError> {
    let Some(rest) = plaintext.strip_prefix(BOUND_PREFIX) else { return Ok(plaintext.to_owned()) };
    let elsewhere = || SecretError("a stored exporter credential was given for another destination".to_owned());
    let (length, rest) = rest.split_once(':').ok_or_else(elsewhere)?;
    let length: usize = length.parse().map_err(|_| elsewhere())?;
    match (rest.get(..length), rest.get(length..)) {
        (Some(bound), Some(credential)) if bound == url => Ok(credential.to_owned()),
        _ => Err(elsewhere()),
    }
}

/// HKDF info: keys derived for exporters differ from any other use of the same secret.
const INFO: &[u8] = b"registry exporter credentials";

/// Whether the `config` key `key` holds a credential (sealed at rest, masked in answers):
/// `basic.auth.user.info`, `bearer.auth.token`, and any key naming a password, secret, token,
/// credential or user info.
pub fn is_credential(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    // `basic.auth.credentials.source` and `bearer.auth.credentials.source` name a kind, not a secret.
    if key.ends_with(".source") {
        return false;
    }
    ["password", "secret", "token", "credential", "user.info", "userinfo", "api.key"]
        .iter()
        .any(|word| key.contains(word))
}

/// Whose a credential is: the exporter it belongs to and the destination URL it was given for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding<'a> {
    /// The exporter's name.
    pub exporter: &'a str,
    /// The exporter's `schema.registry.url`.
    pub destination: &'a str,
}

/// Seals credentials before they are stored and opens them for the destination's client.
#[async_trait]
pub trait Sealer: Send + Sync + std::fmt::Debug {
    /// `value` sealed for `binding`, as it is stored.
    async fn seal(&self, value: &str, binding: Binding<'_>) -> Result<String, SecretError>;

    /// The plaintext of a value [`Sealer::seal`] made for `binding`.
    async fn open(&self, value: &str, binding: Binding<'_>) -> Result<String, SecretError>;
}

struct KeyLength(usize);

impl KeyType for KeyLength {
    fn len(&self) -> usize {
        self.0
    }
}

/// Seals and opens credentials under one key.
pub struct SecretBox {
    key: LessSafeKey,
}

impl std::fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretBox")
    }
}

/// Why a value could not be sealed or opened.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(pub String);

impl SecretBox {
    /// The box of `secret` (any non-empty bytes).
    pub fn new(secret: &[u8]) -> Result<Self, SecretError> {
        let invalid = |_| SecretError("cannot derive the exporter credentials key".to_owned());
        let prk = Salt::new(HKDF_SHA256, &[]).extract(secret);
        let okm = prk.expand(&[INFO], KeyLength(AES_256_GCM.key_len())).map_err(invalid)?;
        let mut key = [0u8; 32];
        okm.fill(&mut key).map_err(invalid)?;
        let key = UnboundKey::new(&AES_256_GCM, &key).map_err(invalid)?;
        Ok(Self { key: LessSafeKey::new(key) })
    }

    /// A box with a random key: credentials live as long as the process (the memory backend).
    pub fn ephemeral() -> Result<Self, SecretError> {
        let mut secret = [0u8; 32];
        aws_lc_rs::rand::fill(&mut secret).map_err(|_| SecretError("no randomness".to_owned()))?;
        Self::new(&secret)
    }

    /// A new random secret (32 bytes, hex) for a host to keep and pass to [`SecretBox::new`].
    pub fn generate_secret() -> Result<String, SecretError> {
        let mut secret = [0u8; 32];
        aws_lc_rs::rand::fill(&mut secret).map_err(|_| SecretError("no randomness".to_owned()))?;
        Ok(secret.iter().map(|byte| format!("{byte:02x}")).collect())
    }

    /// `value` sealed.
    pub fn seal(&self, value: &str) -> Result<String, SecretError> {
        let mut nonce = [0u8; NONCE_LEN];
        aws_lc_rs::rand::fill(&mut nonce).map_err(|_| SecretError("no randomness".to_owned()))?;
        let mut sealed = value.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed)
            .map_err(|_| SecretError("sealing failed".to_owned()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{SEALED_PREFIX}{}", BASE64.encode(out)))
    }

    /// The plaintext of a value [`SecretBox::seal`] made (a value not sealed is answered as is).
    pub fn open(&self, value: &str) -> Result<String, SecretError> {
        let Some(encoded) = value.strip_prefix(SEALED_PREFIX) else { return Ok(value.to_owned()) };
        let undecryptable = || SecretError("a stored exporter credential does not decrypt with this key".to_owned());
        let bytes = BASE64.decode(encoded).map_err(|_| undecryptable())?;
        let (nonce, sealed) = bytes.split_at_checked(NONCE_LEN).ok_or_else(undecryptable)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| undecryptable())?;
        let mut buffer = sealed.to_vec();
        let plaintext = self.key.open_in_place(nonce, Aad::empty(), &mut buffer).map_err(|_| undecryptable())?;
        String::from_utf8(plaintext.to_vec()).map_err(|_| undecryptable())
    }
}

/// The local box binds the destination in the plaintext ([`bind`]) and nothing more: its key is
/// the host's own, in no other party's hands, so there is no second use of it to keep apart.
#[async_trait]
impl Sealer for SecretBox {
    async fn seal(&self, value: &str, _: Binding<'_>) -> Result<String, SecretError> {
        SecretBox::seal(self, value)
    }

    async fn open(&self, value: &str, _: Binding<'_>) -> Result<String, SecretError> {
        SecretBox::open(self, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens() -> Result<(), SecretError> {
        let sealed_box = SecretBox::new(b"secret")?;
        let sealed = sealed_box.seal("user:pass")?;
        assert!(sealed.starts_with(SEALED_PREFIX) && !sealed.contains("user:pass"));
        assert_eq!(sealed_box.open(&sealed)?, "user:pass");
        assert!(SecretBox::new(b"other")?.open(&sealed).is_err());
        assert!(is_credential("basic.auth.user.info") && is_credential("bearer.auth.token"));
        assert!(!is_credential("schema.registry.url") && !is_credential("basic.auth.credentials.source"));
        Ok(())
    }

    #[test]
    fn credentials_open_for_their_destination_only() -> Result<(), SecretError> {
        let bound = bind("https://a.example", "user:pass");
        assert_eq!(unbind("https://a.example", &bound)?, "user:pass");
        assert!(unbind("https://b.example", &bound).is_err());
        assert!(unbind("https://a.exampl", &bound).is_err());
        assert_eq!(unbind("https://a.example", "legacy:value")?, "legacy:value");
        Ok(())
    }
}
