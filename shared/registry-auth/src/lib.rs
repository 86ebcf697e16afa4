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
//!   once in this process, an HMAC tag under a random per-process key compared in constant time. The
//!   remembered tag is one per configured user (so the memory is bounded by the users file), replaced only
//!   by a later successful verification: wrong passwords never evict it.
//! - argon2 runs only in the [`PasswordPool`] (blocking threads, a bounded number at once), never on the
//!   async workers: a flood of wrong passwords queues behind itself, and users who already authenticated
//!   skip argon2 altogether.
//! - Nothing here logs or formats a password, a hash or a token.

pub mod access;
pub mod config;
pub mod error;
pub mod jwt;
pub mod password;
pub mod pool;
pub mod users;

pub use access::{Decision, Operation, Principal, Role, Scope, authorize};
pub use config::{AuthConfig, JwksSource, JwtConfig, UsersSource};
pub use error::AuthError;
pub use jwt::{JwtValidator, TokenRejection};
pub use password::{HashCost, hash_password, verify_password};
pub use pool::{PasswordPool, default_password_workers};
pub use users::{UserEntry, UsersFile};

use aws_lc_rs::{hmac, rand};
use base64::Engine;
use std::collections::HashMap;
use std::sync::Mutex;

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
    users: HashMap<String, Account>,
    dummy_hash: String,
    jwt: Option<JwtValidator>,
    cache_key: hmac::Key,
    passwords: PasswordPool,
}

/// A configured user and the tag of the credentials that last verified for it.
#[derive(Debug)]
struct Account {
    entry: UserEntry,
    verified: Mutex<Option<hmac::Tag>>,
}

impl Account {
    fn remembers(&self, tag: &hmac::Tag) -> bool {
        let remembered = self.verified.lock().ok().and_then(|verified| *verified);
        remembered.is_some_and(|known| {
            aws_lc_rs::constant_time::verify_slices_are_equal(known.as_ref(), tag.as_ref()).is_ok()
        })
    }

    fn remember(&self, tag: hmac::Tag) {
        if let Ok(mut verified) = self.verified.lock() {
            *verified = Some(tag);
        }
    }
}

impl Authenticator {
    /// An authenticator over `users` and, optionally, bearer tokens, verifying passwords in a pool of
    /// [`default_password_workers`]. Computes the dummy hash (same parameters as the first user's hash, else
    /// argon2's defaults) used for unknown users.
    pub fn new(users: &UsersFile, jwt: Option<JwtValidator>) -> Result<Self, AuthError> {
        let cost = users.entries().first().and_then(|entry| cost_of(&entry.hash)).unwrap_or(HashCost::DEFAULT);
        let mut filler = [0u8; 24];
        rand::fill(&mut filler).map_err(|_| AuthError::Hash("no randomness".into()))?;
        let dummy_hash = hash_password(&base64::engine::general_purpose::STANDARD.encode(filler), cost)?;
        let cache_key = hmac::Key::generate(hmac::HMAC_SHA256, &rand::SystemRandom::new())
            .map_err(|_| AuthError::Hash("no randomness".into()))?;
        Ok(Authenticator {
            users: users
                .entries()
                .iter()
                .map(|entry| (entry.user.clone(), Account { entry: entry.clone(), verified: Mutex::new(None) }))
                .collect(),
            dummy_hash,
            jwt,
            cache_key,
            passwords: PasswordPool::new(default_password_workers()),
        })
    }

    /// The same authenticator with at most `workers` argon2 verifications running at once.
    pub fn with_password_workers(mut self, workers: usize) -> Self {
        self.passwords = PasswordPool::new(workers);
        self
    }

    /// The pool password verifications run in (its bound and work counters).
    pub fn password_pool(&self) -> &PasswordPool {
        &self.passwords
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
    /// case-insensitively) or, when configured, `Bearer <jwt>`. A password costs one argon2 verification in
    /// the [`PasswordPool`] unless the same credentials already verified in this process.
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthFailure> {
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
            return self.basic(user, password).await;
        }
        match (&self.jwt, scheme.eq_ignore_ascii_case("bearer")) {
            (Some(jwt), true) => jwt.validate(credentials).map_err(AuthFailure::BadToken),
            _ => Err(AuthFailure::BadCredentials),
        }
    }

    async fn basic(&self, user: &str, password: &str) -> Result<Principal, AuthFailure> {
        let Some(account) = self.users.get(user) else {
            self.passwords.verify(password, &self.dummy_hash).await;
            return Err(AuthFailure::BadCredentials);
        };
        let entry = &account.entry;
        let tag = hmac::sign(&self.cache_key, format!("{user}\0{password}\0{}", entry.hash).as_bytes());
        if !account.remembers(&tag) {
            if !self.passwords.verify(password, &entry.hash).await {
                return Err(AuthFailure::BadCredentials);
            }
            account.remember(tag);
        }
        Ok(Principal { name: entry.user.clone(), role: Some(entry.role), scope: entry.scope() })
    }
}

fn cost_of(phc: &str) -> Option<HashCost> {
    let hash = argon2::password_hash::phc::PasswordHash::new(phc).ok()?;
    let params = argon2::Params::try_from(&hash).ok()?;
    Some(HashCost { memory_kib: params.m_cost(), iterations: params.t_cost(), parallelism: params.p_cost() })
}
