//! Reading the users file and the JWKS again while the process runs, so that a removed user, a changed
//! password or a signing key rotated out reaches every running host, not only new ones.
//!
//! When: before a request once [`ReloadPolicy::interval`] has passed since the last read (so a revocation
//! takes effect within the interval, on every host: a Lambda instance that lives for hours included), and
//! after an authentication miss (unknown user, wrong password, unknown key or bad signature) once
//! [`ReloadPolicy::after_miss`] has passed since the last read (so a user or key just added works at once,
//! while a flood of wrong passwords reads the source at most once per `after_miss`). One read at a time;
//! requests arriving meanwhile wait for it and then use what it found.
//!
//! A read that fails (the secret cannot be fetched, the file or the JWKS does not parse) keeps the loaded
//! credentials, logs a warning and is retried after the interval: a Secrets Manager outage does not lock
//! every client out, and a bad edit of the users file does not open or close the registry.
//!
//! This crate does no network I/O: a host that keeps its users or keys in Secrets Manager reads them
//! through its [`SecretReader`].

use crate::config::{AuthConfig, JwksSource, UsersSource};
use crate::error::AuthError;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A boxed future of this module's traits.
pub type ReadFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

/// The texts an [`crate::Authenticator`] is built from. `None`: not configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CredentialTexts {
    /// The users file.
    pub users: Option<String>,
    /// The issuer's JWKS document.
    pub jwks: Option<String>,
}

/// Where the current users file and JWKS are read from.
pub trait CredentialSource: Send + Sync + Debug {
    /// The texts as they are now.
    fn read(&self) -> ReadFuture<'_, CredentialTexts>;
}

/// Fetches a secret's string value (Secrets Manager in the Lambda host).
pub trait SecretReader: Send + Sync + Debug {
    /// The current value of `secret_id`; an error when it cannot be fetched or has no string value.
    fn read_secret<'a>(&'a self, secret_id: &'a str) -> ReadFuture<'a, String>;
}

/// The sources an [`AuthConfig`] names: files are read again, inline text stays as it is, secrets are
/// fetched through the host's [`SecretReader`] (an error without one).
#[derive(Debug, Clone)]
pub struct ConfiguredSource {
    config: AuthConfig,
    secrets: Option<Arc<dyn SecretReader>>,
}

impl ConfiguredSource {
    /// The sources of `config`, secrets read through `secrets`.
    pub fn new(config: AuthConfig, secrets: Option<Arc<dyn SecretReader>>) -> ConfiguredSource {
        ConfiguredSource { config, secrets }
    }

    /// The configuration read from.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    async fn secret(&self, what: &str, secret_id: &str) -> Result<String, AuthError> {
        match &self.secrets {
            Some(reader) => reader.read_secret(secret_id).await,
            None => Err(AuthError::Config(format!("the {what} secret {secret_id:?} cannot be read by this host"))),
        }
    }
}

fn file(path: &std::path::Path) -> Result<String, AuthError> {
    std::fs::read_to_string(path)
        .map_err(|error| AuthError::Io { path: path.display().to_string(), reason: error.to_string() })
}

impl CredentialSource for ConfiguredSource {
    fn read(&self) -> ReadFuture<'_, CredentialTexts> {
        Box::pin(async move {
            let users = match &self.config.users {
                None => None,
                Some(UsersSource::File(path)) => Some(file(path)?),
                Some(UsersSource::Inline(text)) => Some(text.clone()),
                Some(UsersSource::Secret(secret_id)) => Some(self.secret("users", secret_id).await?),
            };
            let jwks = match self.config.jwt.as_ref().map(|jwt| &jwt.jwks) {
                None => None,
                Some(JwksSource::File(path)) => Some(file(path)?),
                Some(JwksSource::Inline(text)) => Some(text.clone()),
                Some(JwksSource::Secret(secret_id)) => Some(self.secret("JWKS", secret_id).await?),
            };
            Ok(CredentialTexts { users, jwks })
        })
    }
}

/// How often the credentials are read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadPolicy {
    /// Before a request, read again once this long has passed since the last read: the longest a
    /// removed user, a changed password or a removed key keeps working on a running host.
    pub interval: Duration,
    /// After an authentication miss, read again once this long has passed since the last read.
    pub after_miss: Duration,
}

impl ReloadPolicy {
    /// The default interval (`REGISTRY_AUTH_RELOAD_SECONDS`).
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
    /// The shortest gap between reads caused by misses, unless the interval is shorter.
    pub const MISS_GAP: Duration = Duration::from_secs(5);

    /// Reads every `interval`, and after a miss at most every [`ReloadPolicy::MISS_GAP`] (or `interval`
    /// when shorter).
    pub fn every(interval: Duration) -> ReloadPolicy {
        ReloadPolicy { interval, after_miss: interval.min(Self::MISS_GAP) }
    }
}

/// The time source of the reload schedule ([`std::time::Instant::now`] unless a test injects another).
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// A source, its schedule and the time of the last read.
pub(crate) struct Reload {
    pub(crate) source: Arc<dyn CredentialSource>,
    pub(crate) policy: ReloadPolicy,
    clock: Clock,
    last_read: Mutex<Instant>,
    /// One read at a time.
    pub(crate) turn: tokio::sync::Mutex<()>,
    reads: AtomicU64,
}

impl Debug for Reload {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Reload")
            .field("source", &self.source)
            .field("policy", &self.policy)
            .field("reads", &self.reads())
            .finish_non_exhaustive()
    }
}

impl Reload {
    /// A schedule whose last read is now (the texts the authenticator was just built from).
    pub(crate) fn new(source: Arc<dyn CredentialSource>, policy: ReloadPolicy, clock: Clock) -> Reload {
        let now = clock();
        Reload {
            source,
            policy,
            clock,
            last_read: Mutex::new(now),
            turn: tokio::sync::Mutex::new(()),
            reads: AtomicU64::new(0),
        }
    }

    /// The same schedule timed by `clock`, its last read now.
    pub(crate) fn with_clock(self, clock: Clock) -> Reload {
        Reload::new(self.source, self.policy, clock)
    }

    /// Whether `gap` has passed since the last read. A zero interval means never.
    pub(crate) fn due(&self, gap: Duration) -> bool {
        if self.policy.interval.is_zero() {
            return false;
        }
        let last = *self.last_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        (self.clock)().saturating_duration_since(last) >= gap
    }

    /// Records a read starting now.
    pub(crate) fn started(&self) {
        *self.last_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = (self.clock)();
        self.reads.fetch_add(1, Ordering::SeqCst);
    }

    /// Reads of the source since start-up (the initial one not counted).
    pub(crate) fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }
}
