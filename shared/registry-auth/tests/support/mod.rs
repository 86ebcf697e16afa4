//! Signing keys generated per test, the JWKS that publishes them, and the tokens they sign.

#![allow(dead_code)]

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// A private key of its own, published under `kid`.
pub struct Key {
    kid: String,
    algorithm: Algorithm,
    /// The private key, for tokens signed some other way.
    pub encoding: EncodingKey,
}

impl Key {
    /// A fresh P-256 key (ES256).
    pub fn ec(kid: &str) -> Key {
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap_or_else(|e| panic!("{e}"));
        Key { kid: kid.into(), algorithm: Algorithm::ES256, encoding: EncodingKey::from_ec_der(der.as_ref()) }
    }

    /// A fresh Ed25519 key (EdDSA).
    pub fn ed(kid: &str) -> Key {
        let der = Ed25519KeyPair::generate_pkcs8v1(&SystemRandom::new()).unwrap_or_else(|e| panic!("{e}"));
        Key { kid: kid.into(), algorithm: Algorithm::EdDSA, encoding: EncodingKey::from_ed_der(der.as_ref()) }
    }

    /// The public half, as a JWKS lists it.
    pub fn jwk(&self) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.encoding, self.algorithm).unwrap_or_else(|e| panic!("{e}"));
        jwk.common.key_id = Some(self.kid.clone());
        jwk
    }

    /// A token of `claims` signed by this key, its `kid` in the header.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.algorithm);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The JWKS text publishing `keys`.
pub fn jwks(keys: &[&Key]) -> String {
    serde_json::to_string(&JwkSet { keys: keys.iter().map(|key| key.jwk()).collect() })
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Seconds since the epoch, as `exp` and `iat` count them.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}
