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
//!   skip argon2 altogether. Checks that name the client's address ([`Authenticator::authenticate_from`])
//!   pass the pool's gate: a few per address at once and a rate of failures per address, so a flood from
//!   some addresses cannot delay other clients' logins ([`pool`]).
//! - Revocation reaches running processes: with a [`CredentialSource`] attached, the users file and the
//!   JWKS are read again every [`ReloadPolicy::interval`] (and after a miss, rate-limited), and a changed
//!   users file replaces every account with its remembered tag ([`reload`]).
//! - Nothing here logs or formats a password, a hash or a token.

pub mod access;
pub mod config;
pub mod error;
pub mod jwt;
pub mod password;
pub mod pool;
pub mod reload;
pub mod users;

pub use access::{Decision, Operation, Principal, Role, Scope, authorize};
pub use config::{AuthConfig, JwksSource, JwtConfig, UsersSource};
pub use error::AuthError;
pub use jwt::{JwtValidator, TokenRejection};
pub use password::{HashCost, hash_password, verify_password};
pub use pool::{GateLimits, PasswordPool, default_password_workers};
pub use reload::{Clock, ConfiguredSource, CredentialSource, CredentialTexts, ReloadPolicy, SecretReader};
pub use users::{UserEntry, UsersFile};

use aws_lc_rs::{hmac, rand};
use base64::Engine;
use reload::Reload;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

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

impl AuthFailure {
    /// Whether credentials loaded since might accept what was presented (a user, a password or a key
    /// added or changed): such a miss may trigger a reload ([`reload`]).
    fn may_be_stale(&self) -> bool {
        matches!(
            self,
            AuthFailure::BadCredentials | AuthFailure::BadToken(TokenRejection::UnknownKey | TokenRejection::Signature)
        )
    }
}

/// Checks credentials against the configured users and token issuer. Cheap to share; with a
/// [`CredentialSource`] attached ([`Authenticator::reloading`]) it reads its users and keys again on
/// the [`ReloadPolicy`]'s schedule.
#[derive(Debug)]
pub struct Authenticator {
    current: RwLock<Arc<Credentials>>,
    reload: Option<Reload>,
    dummy_hash: String,
    cache_key: hmac::Key,
    passwords: PasswordPool,
}

/// The users and keys in use, with the texts they were built from (to tell a changed source).
#[derive(Debug)]
struct Credentials {
    users: Arc<Users>,
    jwt: Option<Arc<Keys>>,
}

/// The configured users, each with the tag of the credentials that last verified for it. Replaced
/// whole when the users file changes, so every remembered verification is dropped with it.
#[derive(Debug)]
struct Users {
    text: Option<String>,
    accounts: HashMap<String, Account>,
}

impl Users {
    fn of(file: &UsersFile, text: Option<String>) -> Users {
        let accounts = file
            .entries()
            .iter()
            .map(|entry| (entry.user.clone(), Account { entry: entry.clone(), verified: Mutex::new(None) }))
            .collect();
        Users { text, accounts }
    }
}

/// The token validator and the JWKS text it was built from.
#[derive(Debug)]
struct Keys {
    text: Option<String>,
    validator: JwtValidator,
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

/// Credentials as a request presents them.
enum Presented<'a> {
    Basic { user: &'a str, password: &'a str },
    Bearer(&'a str),
}

impl Authenticator {
    /// An authenticator over `users` and, optionally, bearer tokens, verifying passwords in a pool of
    /// [`default_password_workers`]. Computes the dummy hash (same parameters as the first user's hash, else
    /// argon2's defaults) used for unknown users. Never reloads unless [`Authenticator::reloading`].
    pub fn new(users: &UsersFile, jwt: Option<JwtValidator>) -> Result<Self, AuthError> {
        Self::built(users, None, jwt.map(|validator| Keys { text: None, validator }))
    }

    fn built(users: &UsersFile, users_text: Option<String>, jwt: Option<Keys>) -> Result<Self, AuthError> {
        let cost = users.entries().first().and_then(|entry| cost_of(&entry.hash)).unwrap_or(HashCost::DEFAULT);
        let mut filler = [0u8; 24];
        rand::fill(&mut filler).map_err(|_| AuthError::Hash("no randomness".into()))?;
        let dummy_hash = hash_password(&base64::engine::general_purpose::STANDARD.encode(filler), cost)?;
        let cache_key = hmac::Key::generate(hmac::HMAC_SHA256, &rand::SystemRandom::new())
            .map_err(|_| AuthError::Hash("no randomness".into()))?;
        let credentials = Credentials { users: Arc::new(Users::of(users, users_text)), jwt: jwt.map(Arc::new) };
        Ok(Authenticator {
            current: RwLock::new(Arc::new(credentials)),
            reload: None,
            dummy_hash,
            cache_key,
            passwords: PasswordPool::new(default_password_workers()),
        })
    }

    /// The same authenticator with at most `workers` argon2 verifications running at once.
    pub fn with_password_workers(mut self, workers: usize) -> Self {
        self.passwords = PasswordPool::new(workers);
        self
    }

    /// The same authenticator reading its users and keys from `source` again on `policy`'s schedule
    /// (see [`reload`]); the credentials it holds now count as read at this moment.
    pub fn reloading(mut self, source: Arc<dyn CredentialSource>, policy: ReloadPolicy) -> Self {
        self.reload = Some(Reload::new(source, policy, Arc::new(Instant::now)));
        self
    }

    /// The same authenticator timing its reloads by `clock` (tests advance it by hand).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.reload = self.reload.map(|reload| reload.with_clock(clock));
        self
    }

    /// The pool password verifications run in (its bound and work counters).
    pub fn password_pool(&self) -> &PasswordPool {
        &self.passwords
    }

    /// Reads of the credential source since start-up (0 without one).
    pub fn credential_reads(&self) -> u64 {
        self.reload.as_ref().map_or(0, Reload::reads)
    }

    /// The authenticator `config` selects, or `None` when auth is off. Reads the users and JWKS files it
    /// names. `fetched_users` is the users-file content the host fetched for [`UsersSource::Secret`]; a
    /// secret source without it is an error, so a misconfigured host never serves without auth. A
    /// [`JwksSource::Secret`] must have been replaced by the fetched document (`JwksSource::Inline`).
    /// Never reloads: see [`Authenticator::load`].
    pub fn from_config(config: &AuthConfig, fetched_users: Option<&str>) -> Result<Option<Self>, AuthError> {
        if !config.is_enabled() {
            return Ok(None);
        }
        let users = match &config.users {
            None => None,
            Some(UsersSource::File(path)) => Some(
                std::fs::read_to_string(path)
                    .map_err(|error| AuthError::Io { path: path.display().to_string(), reason: error.to_string() })?,
            ),
            Some(UsersSource::Inline(text)) => Some(text.clone()),
            Some(UsersSource::Secret(name)) => match fetched_users {
                Some(text) => Some(text.to_string()),
                None => return Err(AuthError::Config(format!("the users secret {name:?} was not fetched"))),
            },
        };
        let jwks = match config.jwt.as_ref().map(|jwt| &jwt.jwks) {
            None => None,
            Some(JwksSource::Inline(text)) => Some(text.clone()),
            Some(JwksSource::File(path)) => Some(
                std::fs::read_to_string(path)
                    .map_err(|error| AuthError::Io { path: path.display().to_string(), reason: error.to_string() })?,
            ),
            Some(JwksSource::Secret(name)) => {
                return Err(AuthError::Config(format!("the JWKS secret {name:?} was not fetched")));
            }
        };
        Self::from_texts(config, CredentialTexts { users, jwks }).map(Some)
    }

    /// The authenticator `config` selects, or `None` when auth is off, its sources read now (secrets
    /// through `secrets`) and again on `policy`'s schedule. Any source that cannot be read or parsed
    /// now is an error: a host never starts without its users or keys.
    pub async fn load(
        config: &AuthConfig,
        secrets: Option<Arc<dyn SecretReader>>,
        policy: ReloadPolicy,
    ) -> Result<Option<Self>, AuthError> {
        if !config.is_enabled() {
            return Ok(None);
        }
        let source = ConfiguredSource::new(config.clone(), secrets);
        let texts = source.read().await?;
        Ok(Some(Self::from_texts(config, texts)?.reloading(Arc::new(source), policy)))
    }

    fn from_texts(config: &AuthConfig, texts: CredentialTexts) -> Result<Self, AuthError> {
        let users = texts.users.as_deref().map(UsersFile::parse).transpose()?.unwrap_or_default();
        let jwt = match (&config.jwt, texts.jwks) {
            (Some(jwt), Some(jwks)) => Some(Keys {
                validator: JwtValidator::new(&jwt.issuer, &jwt.audience, &jwks, &jwt.role_claim)?,
                text: Some(jwks),
            }),
            (Some(_), None) => return Err(AuthError::Jwks("no JWKS document".into())),
            (None, _) => None,
        };
        Self::built(&users, texts.users, jwt)
    }

    /// Whether bearer tokens are accepted (the 401 challenge then also offers `Bearer`).
    pub fn accepts_bearer(&self) -> bool {
        self.credentials().jwt.is_some()
    }

    fn credentials(&self) -> Arc<Credentials> {
        Arc::clone(&self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Authenticates the `Authorization` header value: `Basic base64(user:password)` (scheme matched
    /// case-insensitively) or, when configured, `Bearer <jwt>`. A password costs one argon2 verification in
    /// the [`PasswordPool`] unless the same credentials already verified since the users were loaded.
    /// With a source attached, the credentials are read again first when the interval has passed, and
    /// after a miss when [`ReloadPolicy::after_miss`] has (the request is then checked once more).
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthFailure> {
        self.authenticate_from(None, authorization).await
    }

    /// [`Authenticator::authenticate`] for a client at `peer`: its password checks pass the pool's
    /// per-address gate ([`pool`]); one the gate refuses fails like a wrong password.
    pub async fn authenticate_from(
        &self,
        peer: Option<IpAddr>,
        authorization: Option<&str>,
    ) -> Result<Principal, AuthFailure> {
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
            return self.checked(&Presented::Basic { user, password }, peer).await;
        }
        if scheme.eq_ignore_ascii_case("bearer") {
            return self.checked(&Presented::Bearer(credentials), peer).await;
        }
        Err(AuthFailure::BadCredentials)
    }

    /// `presented` checked against the current credentials, read again when due.
    async fn checked(&self, presented: &Presented<'_>, peer: Option<IpAddr>) -> Result<Principal, AuthFailure> {
        let Some(reload) = &self.reload else {
            return self.check(&self.credentials(), presented, peer).await;
        };
        self.refresh(reload, reload.policy.interval).await;
        let before = self.credentials();
        match self.check(&before, presented, peer).await {
            Err(failure) if failure.may_be_stale() => {
                self.refresh(reload, reload.policy.after_miss).await;
                let after = self.credentials();
                if Arc::ptr_eq(&before, &after) { Err(failure) } else { self.check(&after, presented, peer).await }
            }
            answer => answer,
        }
    }

    async fn check(
        &self,
        credentials: &Credentials,
        presented: &Presented<'_>,
        peer: Option<IpAddr>,
    ) -> Result<Principal, AuthFailure> {
        match presented {
            Presented::Basic { user, password } => self.basic(&credentials.users, user, password, peer).await,
            Presented::Bearer(token) => match &credentials.jwt {
                Some(keys) => keys.validator.validate(token).map_err(AuthFailure::BadToken),
                None => Err(AuthFailure::BadCredentials),
            },
        }
    }

    async fn basic(
        &self,
        users: &Users,
        user: &str,
        password: &str,
        peer: Option<IpAddr>,
    ) -> Result<Principal, AuthFailure> {
        let Some(account) = users.accounts.get(user) else {
            self.passwords.verify_from(peer, password, &self.dummy_hash).await;
            return Err(AuthFailure::BadCredentials);
        };
        let entry = &account.entry;
        let tag = hmac::sign(&self.cache_key, format!("{user}\0{password}\0{}", entry.hash).as_bytes());
        if !account.remembers(&tag) {
            if !self.passwords.verify_from(peer, password, &entry.hash).await {
                return Err(AuthFailure::BadCredentials);
            }
            account.remember(tag);
        }
        Ok(Principal { name: entry.user.clone(), role: Some(entry.role), scope: entry.scope() })
    }

    /// Reads the source when `gap` has passed since the last read, one read at a time, and puts what
    /// changed in place. A failed read keeps the credentials in use.
    async fn refresh(&self, reload: &Reload, gap: Duration) {
        if !reload.due(gap) {
            return;
        }
        let _turn = reload.turn.lock().await;
        if !reload.due(gap) {
            return; // read by the request this one waited for
        }
        reload.started();
        match reload.source.read().await {
            Ok(texts) => self.apply(texts),
            Err(error) => tracing::warn!(%error, "reading the credentials again failed; the loaded ones stay in use"),
        }
    }

    /// Replaces the users and the keys whose text changed; a text that does not parse keeps the loaded one.
    fn apply(&self, texts: CredentialTexts) {
        let current = self.credentials();
        let users = if texts.users == current.users.text {
            Arc::clone(&current.users)
        } else {
            match texts.users.as_deref().map(UsersFile::parse).transpose() {
                Ok(file) => Arc::new(Users::of(&file.unwrap_or_default(), texts.users)),
                Err(error) => {
                    tracing::warn!(%error, "the reloaded users file does not parse; the loaded users stay in use");
                    Arc::clone(&current.users)
                }
            }
        };
        let jwt = match (&current.jwt, texts.jwks) {
            (Some(keys), Some(text)) if keys.text.as_ref() != Some(&text) => match keys.validator.with_jwks(&text) {
                Ok(validator) => Some(Arc::new(Keys { text: Some(text), validator })),
                Err(error) => {
                    tracing::warn!(%error, "the reloaded JWKS is unusable; the loaded keys stay in use");
                    Some(Arc::clone(keys))
                }
            },
            (keys, _) => keys.clone(),
        };
        let unchanged = Arc::ptr_eq(&users, &current.users)
            && match (&jwt, &current.jwt) {
                (Some(new), Some(old)) => Arc::ptr_eq(new, old),
                (None, None) => true,
                _ => false,
            };
        if !unchanged {
            *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                Arc::new(Credentials { users, jwt });
        }
    }
}

fn cost_of(phc: &str) -> Option<HashCost> {
    let hash = argon2::password_hash::phc::PasswordHash::new(phc).ok()?;
    let params = argon2::Params::try_from(&hash).ok()?;
    Some(HashCost { memory_kib: params.m_cost(), iterations: params.t_cost(), parallelism: params.p_cost() })
}
