//! Revocation on a running host: the users file and the JWKS read again on the reload schedule, timed by
//! a hand-advanced clock (no test waits for wall-clock time).

mod support;

use base64::Engine;
use registry_auth::{
    AuthConfig, AuthError, AuthFailure, Authenticator, ConfiguredSource, CredentialSource, CredentialTexts, HashCost,
    JwksSource, JwtConfig, ReloadPolicy, Role, SecretReader, TokenRejection, UserEntry, UsersFile, UsersSource,
    hash_password,
};
use registry_core::testkit::ManualClock;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Key, jwks};

const INTERVAL: Duration = Duration::from_secs(60);
const ISSUER: &str = "https://idp.example.com";
const AUDIENCE: &str = "schema-registry";

/// The host's clock, moved by the test.
fn host_clock(clock: &ManualClock) -> registry_auth::Clock {
    let clock = clock.clone();
    Arc::new(move || clock.now())
}

/// Texts the test edits, as a secret store would hold them; `failing` makes reads fail.
#[derive(Debug, Default)]
struct Secrets {
    values: Mutex<std::collections::HashMap<String, String>>,
    failing: std::sync::atomic::AtomicBool,
}

impl Secrets {
    fn set(&self, id: &str, text: String) {
        self.values.lock().unwrap_or_else(|e| e.into_inner()).insert(id.into(), text);
    }
}

impl SecretReader for Secrets {
    fn read_secret<'a>(&'a self, secret_id: &'a str) -> registry_auth::reload::ReadFuture<'a, String> {
        Box::pin(async move {
            if self.failing.load(Ordering::SeqCst) {
                return Err(AuthError::Config("secret store unreachable".into()));
            }
            self.values
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(secret_id)
                .cloned()
                .ok_or_else(|| AuthError::Config(format!("no secret {secret_id}")))
        })
    }
}

fn users(entries: &[(&str, &str)]) -> String {
    let mut file = UsersFile::default();
    for (user, password) in entries {
        let hash = hash_password(password, HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
        file.upsert(UserEntry { user: (*user).into(), role: Role::Write, subject_prefixes: vec![], hash });
    }
    file.render()
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

struct Host {
    secrets: Arc<Secrets>,
    clock: ManualClock,
    auth: Authenticator,
}

async fn host(config: AuthConfig, secrets: Arc<Secrets>) -> Host {
    let clock = ManualClock::new();
    let reader: Arc<dyn SecretReader> = secrets.clone();
    let auth = Authenticator::load(&config, Some(reader), ReloadPolicy::every(INTERVAL))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("auth is on"))
        .with_clock(host_clock(&clock));
    Host { secrets, clock, auth }
}

async fn users_host(text: String) -> Host {
    let secrets = Arc::new(Secrets::default());
    secrets.set("users", text);
    host(AuthConfig { users: Some(UsersSource::Secret("users".into())), jwt: None }, secrets).await
}

impl Host {
    async fn admits(&self, user: &str, password: &str) -> bool {
        self.auth.authenticate(Some(&basic(user, password))).await.is_ok()
    }
}

#[tokio::test]
async fn a_removed_user_is_refused_once_the_interval_has_passed() {
    let host = users_host(users(&[("alice", "alice-pw"), ("bob", "bob-pw")])).await;
    assert!(host.admits("alice", "alice-pw").await);
    host.secrets.set("users", users(&[("bob", "bob-pw")]));
    host.clock.advance(INTERVAL - Duration::from_secs(1));
    assert!(host.admits("alice", "alice-pw").await, "within the interval the loaded users stay");
    assert_eq!(host.auth.credential_reads(), 0);
    host.clock.advance(Duration::from_secs(1));
    assert!(!host.admits("alice", "alice-pw").await, "removed users are refused after the interval");
    assert!(host.admits("bob", "bob-pw").await);
    assert_eq!(host.auth.credential_reads(), 1, "one read per interval, whatever the number of requests");
}

#[tokio::test]
async fn a_changed_password_stops_working_and_the_new_one_works_at_once() {
    let host = users_host(users(&[("alice", "old-pw")])).await;
    assert!(host.admits("alice", "old-pw").await);
    host.secrets.set("users", users(&[("alice", "new-pw")]));
    host.clock.advance(ReloadPolicy::MISS_GAP);
    assert!(host.admits("alice", "new-pw").await, "a miss reads the users again");
    assert_eq!(host.auth.credential_reads(), 1);
    assert!(!host.admits("alice", "old-pw").await, "the remembered old password went with the old users");
}

#[tokio::test]
async fn remembered_verifications_are_dropped_when_the_users_change() {
    let host = users_host(users(&[("alice", "alice-pw")])).await;
    let pool = host.auth.password_pool();
    assert!(host.admits("alice", "alice-pw").await);
    assert!(host.admits("alice", "alice-pw").await);
    assert_eq!(pool.verifications(), 1);
    host.clock.advance(INTERVAL);
    assert!(host.admits("alice", "alice-pw").await);
    assert_eq!(pool.verifications(), 1, "an unchanged users file keeps what verified");
    host.secrets.set("users", users(&[("alice", "alice-pw"), ("carol", "carol-pw")]));
    host.clock.advance(INTERVAL);
    assert!(host.admits("alice", "alice-pw").await);
    assert_eq!(pool.verifications(), 2, "a changed users file verifies every password again");
}

#[tokio::test]
async fn misses_read_the_source_at_most_once_per_gap() {
    let host = users_host(users(&[("alice", "alice-pw")])).await;
    host.clock.advance(ReloadPolicy::MISS_GAP);
    for _ in 0..10 {
        assert!(!host.admits("mallory", "guess").await);
    }
    assert_eq!(host.auth.credential_reads(), 1, "a flood of wrong passwords reads the source once per gap");
    host.clock.advance(ReloadPolicy::MISS_GAP);
    assert!(!host.admits("mallory", "guess").await);
    assert_eq!(host.auth.credential_reads(), 2);
}

#[tokio::test]
async fn a_failed_or_unparsable_read_keeps_the_loaded_users() {
    let host = users_host(users(&[("alice", "alice-pw")])).await;
    host.secrets.failing.store(true, Ordering::SeqCst);
    host.clock.advance(INTERVAL);
    assert!(host.admits("alice", "alice-pw").await);
    host.secrets.failing.store(false, Ordering::SeqCst);
    host.secrets.set("users", "not a users file".into());
    host.clock.advance(INTERVAL);
    assert!(host.admits("alice", "alice-pw").await);
    assert_eq!(host.auth.credential_reads(), 2);
}

#[tokio::test]
async fn a_zero_interval_never_reads_again() {
    let secrets = Arc::new(Secrets::default());
    secrets.set("users", users(&[("alice", "alice-pw")]));
    let config = AuthConfig { users: Some(UsersSource::Secret("users".into())), jwt: None };
    let reader: Arc<dyn SecretReader> = secrets.clone();
    let clock = ManualClock::new();
    let auth = Authenticator::load(&config, Some(reader), ReloadPolicy::every(Duration::ZERO))
        .await
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("auth is on"))
        .with_clock(host_clock(&clock));
    secrets.set("users", users(&[]));
    clock.advance(INTERVAL * 10);
    assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
    assert_eq!(auth.credential_reads(), 0);
}

#[tokio::test]
async fn a_users_file_on_disk_is_read_again() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("users.jsonl");
    std::fs::write(&path, users(&[("alice", "alice-pw")])).unwrap_or_else(|e| panic!("{e}"));
    let config = AuthConfig { users: Some(UsersSource::File(path.clone())), jwt: None };
    let host = host(config, Arc::new(Secrets::default())).await;
    assert!(host.admits("alice", "alice-pw").await);
    std::fs::write(&path, users(&[])).unwrap_or_else(|e| panic!("{e}"));
    host.clock.advance(INTERVAL);
    assert!(!host.admits("alice", "alice-pw").await);
}

#[tokio::test]
async fn a_secret_source_needs_a_reader() {
    let source = ConfiguredSource::new(AuthConfig { users: Some(UsersSource::Secret("u".into())), jwt: None }, None);
    assert!(source.read().await.is_err());
    let config = AuthConfig { users: Some(UsersSource::Secret("u".into())), jwt: None };
    assert!(Authenticator::load(&config, None, ReloadPolicy::every(INTERVAL)).await.is_err(), "fails closed");
    let inline = ConfiguredSource::new(AuthConfig { users: Some(UsersSource::Inline("x".into())), jwt: None }, None);
    assert_eq!(inline.read().await.ok(), Some(CredentialTexts { users: Some("x".into()), jwks: None }));
}

/// A token `key` signs for a reader, valid for ten minutes.
fn token(key: &Key) -> String {
    let now = support::now();
    key.sign(&json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "svc", "exp": now + 600, "scope": "registry:read"}))
}

#[tokio::test]
async fn a_rotated_out_key_stops_verifying_and_a_new_key_verifies_at_once() {
    let (old, new) = (Key::ec("old"), Key::ec("new"));
    let secrets = Arc::new(Secrets::default());
    secrets.set("jwks", jwks(&[&old]));
    let jwt = JwtConfig {
        issuer: ISSUER.into(),
        audience: AUDIENCE.into(),
        jwks: JwksSource::Secret("jwks".into()),
        role_claim: "scope".into(),
    };
    let host = host(AuthConfig { users: None, jwt: Some(jwt) }, secrets).await;
    let bearer = |key: &Key| format!("Bearer {}", token(key));
    assert!(host.auth.authenticate(Some(&bearer(&old))).await.is_ok());
    assert_eq!(
        host.auth.authenticate(Some(&bearer(&new))).await.err(),
        Some(AuthFailure::BadToken(TokenRejection::UnknownKey))
    );
    host.secrets.set("jwks", jwks(&[&old, &new]));
    host.clock.advance(ReloadPolicy::MISS_GAP);
    assert!(host.auth.authenticate(Some(&bearer(&new))).await.is_ok(), "an unknown key reads the JWKS again");
    host.secrets.set("jwks", jwks(&[&new]));
    host.clock.advance(INTERVAL);
    assert_eq!(
        host.auth.authenticate(Some(&bearer(&old))).await.err(),
        Some(AuthFailure::BadToken(TokenRejection::UnknownKey)),
        "a key rotated out stops verifying after the interval"
    );
    assert!(host.auth.authenticate(Some(&bearer(&new))).await.is_ok());
}
