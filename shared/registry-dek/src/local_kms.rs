//! `local-kms`: a KMS whose key is derived from a configured secret, for tests and local runs.
//! Compatible with the clients' own local KMS driver (confluent-kafka's `LocalKmsDriver`): the key
//! is HKDF-SHA256 of the secret (no salt, no info) cut to 128 bits, and wrapping is Tink's raw
//! AES128-GCM (12-byte random nonce, then ciphertext and tag, no associated data). A DEK wrapped
//! here can be unwrapped by a client given the same secret, and the other way round. The KEK's
//! `kmsKeyId` does not select a key: the secret is the key.

use crate::kms::{Kms, KmsError};
use crate::model::Kek;
use aws_lc_rs::aead::{AES_128_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hkdf::{HKDF_SHA256, KeyType, Salt};

struct KeyLength(usize);

impl KeyType for KeyLength {
    fn len(&self) -> usize {
        self.0
    }
}

pub struct LocalKms {
    key: LessSafeKey,
}

impl LocalKms {
    /// The KMS of `secret` (any non-empty text).
    pub fn new(secret: &str) -> Result<Self, KmsError> {
        let invalid = |_| KmsError::Invalid("cannot derive the local KMS key".to_owned());
        let prk = Salt::new(HKDF_SHA256, &[]).extract(secret.as_bytes());
        let okm = prk.expand(&[], KeyLength(AES_128_GCM.key_len())).map_err(invalid)?;
        let mut key = [0u8; 16];
        okm.fill(&mut key).map_err(invalid)?;
        let key = UnboundKey::new(&AES_128_GCM, &key).map_err(invalid)?;
        Ok(Self { key: LessSafeKey::new(key) })
    }

    fn seal(&self, plaintext: &[u8]) -> Result<Vec<u8>, KmsError> {
        let mut nonce = [0u8; NONCE_LEN];
        aws_lc_rs::rand::fill(&mut nonce).map_err(|_| KmsError::Unavailable("no randomness".to_owned()))?;
        let mut sealed = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed)
            .map_err(|_| KmsError::Invalid("local KMS encryption failed".to_owned()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn open(&self, ciphertext: &[u8]) -> Result<Vec<u8>, KmsError> {
        let undecryptable = || KmsError::Invalid("the ciphertext does not decrypt with the local KMS key".to_owned());
        let (nonce, sealed) = ciphertext.split_at_checked(NONCE_LEN).ok_or_else(undecryptable)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| undecryptable())?;
        let mut buffer = sealed.to_vec();
        let plaintext = self.key.open_in_place(nonce, Aad::empty(), &mut buffer).map_err(|_| undecryptable())?;
        Ok(plaintext.to_vec())
    }
}

impl std::fmt::Debug for LocalKms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalKms")
    }
}

#[async_trait::async_trait]
impl Kms for LocalKms {
    async fn encrypt(&self, _kek: &Kek, plaintext: &[u8]) -> Result<Vec<u8>, KmsError> {
        self.seal(plaintext)
    }

    async fn decrypt(&self, _kek: &Kek, ciphertext: &[u8]) -> Result<Vec<u8>, KmsError> {
        self.open(ciphertext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_unwraps_with_the_same_secret_only() -> Result<(), KmsError> {
        let kms = LocalKms::new("mysecret")?;
        let wrapped = kms.seal(b"key material")?;
        assert_eq!(wrapped.len(), NONCE_LEN + 12 + 16);
        assert_eq!(kms.open(&wrapped)?, b"key material");
        assert_ne!(kms.seal(b"key material")?, wrapped, "a fresh nonce every time");
        assert!(matches!(LocalKms::new("other")?.open(&wrapped), Err(KmsError::Invalid(_))));
        assert!(matches!(kms.open(b"short"), Err(KmsError::Invalid(_))));
        Ok(())
    }

    /// Written by confluent-kafka's LocalKmsClient (tink AES128_GCM_RAW) with secret "mysecret":
    /// `aead.encrypt(b"hello", b"")`.
    #[test]
    fn unwraps_what_the_python_client_wrapped() -> Result<(), KmsError> {
        const CLIENT_WRAPPED_HELLO: [u8; 33] = [
            0x1c, 0x57, 0xc0, 0x32, 0xb1, 0xec, 0xa3, 0xb6, 0xeb, 0x8c, 0x6d, 0xc1, 0xaa, 0x43, 0x29, 0x66, 0xf9, 0x4e,
            0x54, 0x4a, 0x6d, 0x8a, 0xc4, 0x7e, 0xe1, 0x61, 0xa7, 0xcf, 0xff, 0xa6, 0x91, 0x6e, 0x37,
        ];
        assert_eq!(LocalKms::new("mysecret")?.open(&CLIENT_WRAPPED_HELLO)?, b"hello");
        Ok(())
    }
}
