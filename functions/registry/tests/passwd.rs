//! `registry passwd` through the real binary: add, replace, verify; refusals; `serve` fails closed on a
//! broken users source.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_auth::{Role, UsersFile, verify_password};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn passwd(file: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_registry"))
        .arg("passwd")
        .args(args)
        .env("REGISTRY_USERS_FILE", file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A refused command may exit before it reads the password: the pipe is then closed, which is
    // not the test's business (it looks at the exit status and the file).
    if let Err(error) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "writing the password: {error}");
    }
    child.wait_with_output().unwrap()
}

#[test]
fn add_replace_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.jsonl");

    let added = passwd(&file, &["alice", "--role", "write", "--subject-prefix", "team-a."], "first secret\n");
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let other = passwd(&file, &["bob", "--role", "read"], "bob pw");
    assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
    let logs = format!("{}{}", String::from_utf8_lossy(&added.stderr), String::from_utf8_lossy(&added.stdout));
    assert!(!logs.contains("first secret"), "the password is never printed: {logs}");

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("first secret"));
    let users = UsersFile::parse(&text).unwrap();
    let alice = users.get("alice").unwrap();
    assert_eq!((alice.role, alice.subject_prefixes.as_slice()), (Role::Write, ["team-a.".to_string()].as_slice()));
    assert!(verify_password("first secret", &alice.hash));
    assert!(!verify_password("first secret\n", &alice.hash));

    let replaced = passwd(&file, &["alice", "--role", "ADMIN"], "second secret\r\n");
    assert!(replaced.status.success(), "{}", String::from_utf8_lossy(&replaced.stderr));
    let users = UsersFile::load(&file, false).unwrap();
    let names: Vec<&str> = users.entries().iter().map(|entry| entry.user.as_str()).collect();
    assert_eq!(names, ["alice", "bob"], "replaced in place, bob kept");
    let alice = users.get("alice").unwrap();
    assert_eq!(alice.role, Role::Admin);
    assert!(alice.subject_prefixes.is_empty());
    assert!(verify_password("second secret", &alice.hash));
    assert!(!verify_password("first secret", &alice.hash));
    assert!(verify_password("bob pw", &users.get("bob").unwrap().hash));
}

#[test]
fn refusals_leave_the_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.jsonl");
    for (args, stdin) in [
        (&["alice", "--role", "root"][..], "pw\n"),
        (&["al:ice", "--role", "read"][..], "pw\n"),
        (&["alice", "--role", "read"][..], "\n"),
        (&["alice", "--role", "read", "--subject-prefix", ""][..], "pw\n"),
        (&["alice"][..], "pw\n"),
    ] {
        let output = passwd(&file, args, stdin);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(!file.exists(), "{args:?} wrote the file");
    }
}

#[test]
fn serve_refuses_to_start_with_an_unreadable_users_file() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_registry"))
        .args(["serve", "--backend", "memory", "--port", "0", "--bind", "127.0.0.1"])
        .env("REGISTRY_USERS_FILE", dir.path().join("missing.jsonl"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.jsonl"));
}
