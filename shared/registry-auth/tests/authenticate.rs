//! `Authenticator`: Basic credentials against a users file, unknown users indistinguishable from wrong
//! passwords, bearer only when configured, configuration sources.

use base64::Engine;
use registry_auth::{
    AuthConfig, AuthFailure, Authenticator, HashCost, Role, Scope, UserEntry, UsersFile, UsersSource, hash_password,
};

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

#[test]
fn right_password_yields_the_users_role_and_scope() {
    let auth = authenticator();
    let alice = auth.authenticate(Some(&basic("alice", "alice-pw"))).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((alice.name.as_str(), alice.role, alice.scope), ("alice", Some(Role::Admin), Scope::All));
    let team = auth.authenticate(Some(&basic("team-a", "a:b:c"))).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((team.role, team.scope), (Some(Role::Write), Scope::Prefixes(vec!["team-a.".into()])));
    let lower = basic("alice", "alice-pw").replacen("Basic", "basic", 1);
    assert!(auth.authenticate(Some(&lower)).is_ok());
}

#[test]
fn wrong_password_and_unknown_user_fail_the_same_way() {
    let auth = authenticator();
    let wrong = auth.authenticate(Some(&basic("alice", "nope")));
    let unknown = auth.authenticate(Some(&basic("mallory", "nope")));
    assert_eq!(wrong, Err(AuthFailure::BadCredentials));
    assert_eq!(unknown, wrong);
    assert_eq!(auth.authenticate(None), Err(AuthFailure::Missing));
    for header in ["Basic !!!", "Basic", "Digest abc", "Bearer a.b.c", &basic("alice", "").replace(':', "")] {
        assert_eq!(auth.authenticate(Some(header)), Err(AuthFailure::BadCredentials), "{header}");
    }
}

#[test]
fn a_cached_success_never_admits_another_password() {
    let auth = authenticator();
    for _ in 0..3 {
        assert!(auth.authenticate(Some(&basic("alice", "alice-pw"))).is_ok());
        assert_eq!(auth.authenticate(Some(&basic("alice", "alice-pW"))), Err(AuthFailure::BadCredentials));
        assert_eq!(auth.authenticate(Some(&basic("team-a", "alice-pw"))), Err(AuthFailure::BadCredentials));
    }
}

#[test]
fn from_config_reads_each_source_and_fails_closed() {
    let text = users().render();
    assert!(Authenticator::from_config(&AuthConfig::default(), None).map(|a| a.is_none()).unwrap_or(false));
    let inline = AuthConfig { users: Some(UsersSource::Inline(text.clone())), jwt: None };
    let auth = Authenticator::from_config(&inline, None).ok().flatten();
    assert!(auth.is_some_and(|auth| auth.authenticate(Some(&basic("alice", "alice-pw"))).is_ok()));

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("users.jsonl");
    let file = AuthConfig { users: Some(UsersSource::File(path.clone())), jwt: None };
    assert!(Authenticator::from_config(&file, None).is_err(), "a missing users file must not turn auth off");
    users().save_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(Authenticator::from_config(&file, None).ok().flatten().is_some());

    let secret = AuthConfig { users: Some(UsersSource::Secret("registry/users".into())), jwt: None };
    assert!(Authenticator::from_config(&secret, None).is_err());
    assert!(Authenticator::from_config(&secret, Some(&text)).ok().flatten().is_some());
    let empty = Authenticator::from_config(&secret, Some("")).ok().flatten();
    assert!(empty.is_some_and(|auth| auth.authenticate(Some(&basic("alice", "alice-pw"))).is_err()));
}
