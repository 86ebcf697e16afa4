//! Crash safety: a child process writes in a loop, printing each acknowledged write, and is
//! SIGKILLed mid-stream; after reopening, every acknowledged write must be there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{body, row, subject};
use registry_core::testkit::StoreTestExt;
use registry_core::{SchemaId, Store, Version};
use registry_store_local::LocalStore;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_DIR_VAR: &str = "REGISTRY_STORE_LOCAL_CRASH_CHILD_DIR";
const TEST_NAME: &str = "a_killed_process_loses_no_acknowledged_write";
const ACKS_BEFORE_KILL: usize = 150;

/// The child's loop: body, id, version, then `ack <n> <id>` on stdout. An orphan cannot run on: its
/// next ack fails once the parent's end of the pipe is gone (and it stops after 100 000 writes in
/// any case), whatever the time, so a slow disk only makes the parent wait longer for its acks.
fn child(dir: &Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = LocalStore::open(dir).unwrap();
        let mut out = std::io::stdout().lock();
        for n in 0..100_000 {
            let schema = body(n);
            store.put_body(&schema.fingerprint(), &schema).await.unwrap();
            let id = store.allocate_id(&schema.fingerprint()).await.unwrap();
            store
                .create_version(
                    &row(&format!("crash-{n}"), 1, id.0, n),
                    &registry_core::Preconditions::default(),
                    &registry_core::CommitHints::default(),
                )
                .await
                .unwrap();
            writeln!(out, "ack {n} {}", id.0).unwrap();
            out.flush().unwrap();
        }
    });
}

#[test]
fn a_killed_process_loses_no_acknowledged_write() {
    if let Some(dir) = std::env::var_os(CHILD_DIR_VAR) {
        child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut process = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_VAR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    let mut killed = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        let Some(rest) = line.strip_prefix("ack ") else { continue };
        let (n, id) = rest.split_once(' ').unwrap();
        acked.push((n.parse::<usize>().unwrap(), SchemaId(id.parse().unwrap())));
        if acked.len() == ACKS_BEFORE_KILL {
            process.kill().unwrap(); // SIGKILL on Unix
            killed = true;
        }
    }
    let status = process.wait().unwrap();
    assert!(killed && !status.success(), "the child ended by itself after {} acks ({status})", acked.len());

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = LocalStore::open(dir.path()).unwrap();
        for (n, id) in &acked {
            let fingerprint = body(*n).fingerprint();
            assert_eq!(store.get_body(&fingerprint).await.unwrap(), Some(body(*n)), "body {n}");
            assert_eq!(store.fingerprint_for_id(*id).await.unwrap(), Some(fingerprint), "id {id}");
            let stored = store.get_version(&subject(&format!("crash-{n}")), Version(1)).await.unwrap();
            assert_eq!(stored.map(|r| r.id), Some(*id), "version of crash-{n}");
        }
        // The counter never falls behind an acknowledged id, so the next one is fresh.
        let max_acked = acked.iter().map(|(_, id)| *id).max().unwrap();
        let next = store.allocate_id(&body(1_000_000).fingerprint()).await.unwrap();
        assert!(next > max_acked);
    });
}
