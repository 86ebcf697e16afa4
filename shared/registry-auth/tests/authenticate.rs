//! `Authenticator`: Basic credentials against a users file, unknown users indistinguishable from wrong
//! passwords, bearer only when configured, configuration sources.

use base64::Engine;
use registry_auth::{
    AuthConfig, AuthFailure, Authenticator, HashCost, Role, Scope, UserEntry, UsersFile, UsersSource, hash_password,
};
use std::sync::Arc;

fn users() -> UsersFile {
    let mut file = UsersFile::default();
    for (user, role, prefixes, password) in
        [("alice", Role::Admin, vec![], "alice-pw"), ("team-a", Role::Write, vec!["team-a.".to_string()], "a:b:c")]
    {
        let hash = hash_password(password, HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
        file.upsert(UserEntry { user: user.into(), role, subject_prefixes: prefixes, hash });
    }
    file
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn authenticator() -> Authenticator {
    Authenticator::new(&users(), None).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn right_password_yields_the_users_role_and_scope() {
    let auth = authenticator();
    let alice = auth.authenticate(Some(&basic("alice", "alice-pw"))).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((alice.name.as_str(), alice.role, alice.scope), ("alice", Some(Role::Admin), Scope::All));
    let team = auth.authenticate(Some(&basic("team-a", "a:b:c"))).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((team.role, team.scope), (Some(Role::Write), Scope::Prefixes(vec!["team-a.".into()])));
    let lower = basic("alice", "alice-pw").replacen("Basic", "basic", 1);
    assert!(auth.authenticate(Some(&lower)).await.is_ok());
}

#[tokio::test]
async fn wrong_password_and_unknown_user_fail_the_same_way() {
    let auth = authenticator();
    let wrong = auth.authenticate(Some(&basic("alice", "nope"))).await;
    let unknown = auth.authenticate(Some(&basic("mallory", "nope"))).await;
    assert_eq!(wrong, Err(AuthFailure::BadCredentials));
    assert_eq!(unknown, wrong);
    assert_eq!(auth.authenticate(None).await, Err(AuthFailure::Missing));
    for header in ["Basic !!!", "Basic", "Digest abc", "Bearer a.b.c", &basic("alice", "").replace(':', "")] {
        assert_eq!(auth.authenticate(Some(header)).await, Err(AuthFailure::BadCredentials), "{header}");
    }
}

#[tokio::test]
async fn a_cached_success_never_admits_another_password() {
    let auth = authenticator();
    for _ in 0..3 {
        assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
        assert_eq!(auth.authenticate(Some(&basic("alice", "alice-pW"))).await, Err(AuthFailure::BadCredentials));
        assert_eq!(auth.authenticate(Some(&basic("team-a", "alice-pw"))).await, Err(AuthFailure::BadCredentials));
    }
}

#[tokio::test]
async fn from_config_reads_each_source_and_fails_closed() {
    let text = users().render();
    assert!(Authenticator::from_config(&AuthConfig::default(), None).map(|a| a.is_none()).unwrap_or(false));
    let inline = AuthConfig { users: Some(UsersSource::Inline(text.clone())), jwt: None };
    let auth = Authenticator::from_config(&inline, None).ok().flatten().unwrap_or_else(|| panic!("auth is on"));
    assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("users.jsonl");
    let file = AuthConfig { users: Some(UsersSource::File(path.clone())), jwt: None };
    assert!(Authenticator::from_config(&file, None).is_err(), "a missing users file must not turn auth off");
    users().save_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(Authenticator::from_config(&file, None).ok().flatten().is_some());

    let secret = AuthConfig { users: Some(UsersSource::Secret("registry/users".into())), jwt: None };
    assert!(Authenticator::from_config(&secret, None).is_err());
    assert!(Authenticator::from_config(&secret, Some(&text)).ok().flatten().is_some());
    let empty = Authenticator::from_config(&secret, Some("")).ok().flatten().unwrap_or_else(|| panic!("auth is on"));
    assert!(empty.authenticate(Some(&basic("alice", "alice-pw"))).await.is_err());
}

/// A cost high enough that verifications overlap in time (a few milliseconds each), still cheap for a test.
const OVERLAPPING: HashCost = HashCost { memory_kib: 4096, iterations: 2, parallelism: 1 };

fn authenticator_at(cost: HashCost, workers: usize) -> Arc<Authenticator> {
    let mut file = UsersFile::default();
    let hash = hash_password("alice-pw", cost).unwrap_or_else(|e| panic!("{e}"));
    file.upsert(UserEntry { user: "alice".into(), role: Role::Admin, subject_prefixes: vec![], hash });
    let auth = Authenticator::new(&file, None).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(auth.with_password_workers(workers))
}

#[tokio::test]
async fn a_valid_user_pays_for_argon2_once_and_wrong_passwords_every_time() {
    let auth = authenticator();
    let pool = auth.password_pool();
    assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
    assert_eq!(pool.verifications(), 1);
    for _ in 0..5 {
        assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
    }
    assert_eq!(pool.verifications(), 1, "remembered credentials skip argon2");
    for attempt in 1..=3 {
        assert!(auth.authenticate(Some(&basic("alice", "wrong"))).await.is_err());
        assert!(auth.authenticate(Some(&basic("mallory", "wrong"))).await.is_err());
        assert_eq!(pool.verifications(), 1 + 2 * attempt, "a failure is never remembered");
    }
    assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
    assert_eq!(pool.verifications(), 7, "wrong passwords do not evict the remembered success");
    assert!(auth.authenticate(Some(&format!("Basic {}", "!!!"))).await.is_err());
    assert!(auth.authenticate(None).await.is_err());
    assert_eq!(pool.verifications(), 7, "an undecodable header costs no argon2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_wrong_passwords_never_run_more_verifications_than_the_pool_allows() {
    let workers = 2;
    let auth = authenticator_at(OVERLAPPING, workers);
    let flood: Vec<_> = (0..12)
        .map(|client| {
            let auth = Arc::clone(&auth);
            let user = if client % 2 == 0 { "alice" } else { "mallory" };
            tokio::spawn(async move { auth.authenticate(Some(&basic(user, &format!("guess-{client}")))).await })
        })
        .collect();
    for attempt in flood {
        assert_eq!(attempt.await.ok(), Some(Err(AuthFailure::BadCredentials)));
    }
    let pool = auth.password_pool();
    assert_eq!(pool.verifications(), 12);
    assert!((1..=workers).contains(&pool.peak_running()), "peak {} over {workers} workers", pool.peak_running());
    assert_eq!(pool.running(), 0);
}

/// Floods the test sends at most: each is a chance for the remembered user's answer to come while
/// part of it is still unverified (a work count, not a time).
const FLOODS: u64 = 20;

#[tokio::test(flavor = "current_thread")]
async fn a_remembered_user_is_answered_while_wrong_passwords_are_being_verified() {
    let auth = authenticator_at(OVERLAPPING, 1);
    assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
    // On a busy machine this thread may not run again until the whole flood is verified, which
    // shows nothing either way: then another flood is sent. A remembered user waiting behind the
    // flood would be answered after every flood was verified, every time.
    for flood_number in 0..FLOODS {
        let verified_before = auth.password_pool().verifications();
        let flood: Vec<_> = (0..6)
            .map(|client| {
                let auth = Arc::clone(&auth);
                let guess = format!("guess-{flood_number}-{client}");
                tokio::spawn(async move { auth.authenticate(Some(&basic("alice", &guess))).await })
            })
            .collect();
        // The only async thread is free while argon2 runs elsewhere: wait until a verification is
        // running (a bounded number of looks, then on regardless).
        for _ in 0..1000 {
            if auth.password_pool().running() > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).await.is_ok());
        let flood_verified = auth.password_pool().verifications() - verified_before;
        for attempt in flood {
            assert_eq!(attempt.await.ok(), Some(Err(AuthFailure::BadCredentials)));
        }
        assert_eq!(auth.password_pool().verifications(), 1 + 6 * (flood_number + 1), "the remembered user costs none");
        if flood_verified < 6 {
            return;
        }
    }
    panic!("in {FLOODS} floods the remembered user was never answered before its flood of 6 was verified");
}
