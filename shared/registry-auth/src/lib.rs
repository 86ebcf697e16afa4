//! Authentication and authorization for the registry, as Confluent clients speak it: HTTP Basic users from
//! a users file (argon2id hashes), optional OAuth/OIDC bearer JWTs, three roles and subject-prefix scopes.
//!
//! Pure logic: no HTTP types and no network. The HTTP layer (`registry-http::auth`) turns a request into an
//! `Authorization` header value and an [`Operation`] on an optional subject, then asks
//! [`Authenticator::authenticate`] and [`authorize`].
//!
//! Invariants:
//! - Answers never reveal whether a user exists: an unknown user costs one argon2 verification against a
//!   dummy hash with the same parameters, and fails exactly like a wrong password.
//! - Passwords are compared only through argon2 (constant-time) or, for credentials that already verified
//!   once in this process, an HMAC tag under a random per-process key compared in constant time.
//! - Nothing here logs or formats a password, a hash or a token.

pub mod access;
pub mod config;
pub mod error;
pub mod jwt;
pub mod password;
pub mod users;

pub use access::{Decision, Operation, Principal, Role, Scope, authorize};
pub use config::{AuthConfig, JwksSource, JwtConfig, UsersSource};
pub use error::AuthError;
pub use jwt::{JwtValidator, TokenRejection};
pub use password::{HashCost, hash_password, verify_password};
pub use users::{UserEntry, UsersFile};

use aws_lc_rs::{hmac, rand};
use base64::Engine;
use std::collections::HashMap;
use std::sync::Mutex;

/// How many verified credentials the per-process cache keeps before it is cleared.
const VERIFIED_CACHE_ENTRIES: usize = 1024;

/// Why a request is not authenticated. Every variant gets the same 401 answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header.
    Missing,
    /// An unsupported scheme, an undecodable header, an unknown user or a wrong password.
    BadCredentials,
    /// A bearer token that does not validate.
    BadToken(TokenRejection),
}

/// Checks credentials against the configured users and token issuer. Built once at start-up; cheap to share.
#[derive(Debug)]
pub struct Authenticator {
    users: HashMap<String, UserEntry>,
    dummy_hash: String,
    jwt: Option<JwtValidator>,
    cache_key: hmac::Key,
    verified: Mutex<HashMap<String, Vec<u8>>>,
}

impl Authenticator {
    /// An authenticator over `users` and, optionally, bearer tokens. Computes the dummy hash (same
    /// parameters as the first user's hash, else argon2's defaults) used for unknown users.
    pub fn new(users: &UsersFile, jwt: Option<JwtValidator>) -> Result<Self, AuthError> {
        let cost = users.entries().first().and_then(|entry| cost_of(&entry.hash)).unwrap_or(HashCost::DEFAULT);
        let mut filler = [0u8; 24];
        rand::fill(&mut filler).map_err(|_| AuthError::Hash("no randomness".into()))?;
        let dummy_hash = hash_password(&base64::engine::general_purpose::STANDARD.encode(filler), cost)?;
        let cache_key = hmac::Key::generate(hmac::HMAC_SHA256, &rand::SystemRandom::new())
            .map_err(|_| AuthError::Hash("no randomness".into()))?;
        Ok(Authenticator {
            users: users.entries().iter().map(|entry| (entry.user.clone(), entry.clone())).collect(),
            dummy_hash,
            jwt,
            cache_key,
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// The authenticator `config` selects, or `None` when auth is off. Reads the users and JWKS files it
    /// names. `fetched_users` is the users-file content the host fetched for [`UsersSource::Secret`]; a
    /// secret source without it is an error, so a misconfigured host never serves without auth. A
    /// [`JwksSource::Secret`] must have been replaced by the fetched document (`JwksSource::Inline`).
    pub fn from_config(config: &AuthConfig, fetched_users: Option<&str>) -> Result<Option<Self>, AuthError> {
        if !config.is_enabled() {
            return Ok(None);
        }
        let users = match &config.users {
            None => UsersFile::default(),
            Some(UsersSource::File(path)) => UsersFile::load(path, false)?,
            Some(UsersSource::Inline(text)) => UsersFile::parse(text)?,
            Some(UsersSource::Secret(name)) => match fetched_users {
                Some(text) => UsersFile::parse(text)?,
                None => return Err(AuthError::Config(format!("the users secret {name:?} was not fetched"))),
            },
        };
        let jwt = match &config.jwt {
            None => None,
            Some(jwt) => {
                let jwks = match &jwt.jwks {
                    JwksSource::Inline(text) => text.clone(),
                    JwksSource::File(path) => std::fs::read_to_string(path).map_err(|error| AuthError::Io {
                        path: path.display().to_string(),
                        reason: error.to_string(),
                    })?,
                    JwksSource::Secret(name) => {
                        return Err(AuthError::Config(format!("the JWKS secret {name:?} was not fetched")));
                    }
                };
                Some(JwtValidator::new(&jwt.issuer, &jwt.audience, &jwks, &jwt.role_claim)?)
            }
        };
        Self::new(&users, jwt).map(Some)
    }

    /// Whether bearer tokens are accepted (the 401 challenge then also offers `Bearer`).
    pub fn accepts_bearer(&self) -> bool {
        self.jwt.is_some()
    }

    /// Authenticates the `Authorization` header value: `Basic base64(user:password)` (scheme matched
    /// case-insensitively) or, when configured, `Bearer <jwt>`.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthFailure> {
        let header = authorization.ok_or(AuthFailure::Missing)?.trim();
        let (scheme, credentials) = header.split_once(' ').ok_or(AuthFailure::BadCredentials)?;
        let credentials = credentials.trim();
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credentials)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or(AuthFailure::BadCredentials)?;
            let (user, password) = decoded.split_once(':').ok_or(AuthFailure::BadCredentials)?;
            return self.basic(user, password);
        }
        match (&self.jwt, scheme.eq_ignore_ascii_case("bearer")) {
            (Some(jwt), true) => jwt.validate(credentials).map_err(AuthFailure::BadToken),
            _ => Err(AuthFailure::BadCredentials),
        }
    }

    fn basic(&self, user: &str, password: &str) -> Result<Principal, AuthFailure> {
        let Some(entry) = self.users.get(user) else {
            verify_password(password, &self.dummy_hash);
            return Err(AuthFailure::BadCredentials);
        };
        let tag = hmac::sign(&self.cache_key, format!("{user}\0{password}\0{}", entry.hash).as_bytes());
        let cached = self.verified.lock().ok().and_then(|cache| cache.get(user).cloned());
        let known = cached
            .is_some_and(|expected| aws_lc_rs::constant_time::verify_slices_are_equal(&expected, tag.as_ref()).is_ok());
        if !known {
            if !verify_password(password, &entry.hash) {
                return Err(AuthFailure::BadCredentials);
            }
            if let Ok(mut cache) = self.verified.lock() {
                if cache.len() >= VERIFIED_CACHE_ENTRIES {
                    cache.clear();
                }
                cache.insert(user.to_string(), tag.as_ref().to_vec());
            }
        }
        Ok(Principal { name: entry.user.clone(), role: Some(entry.role), scope: entry.scope() })
    }
}

fn cost_of(phc: &str) -> Option<HashCost> {
    let hash = argon2::password_hash::phc::PasswordHash::new(phc).ok()?;
    let params = argon2::Params::try_from(&hash).ok()?;
    Some(HashCost { memory_kib: params.m_cost(), iterations: params.t_cost(), parallelism: params.p_cost() })
}
