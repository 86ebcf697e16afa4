//! Key store conformance suite (feature `testkit`): the same cases for every backend.
//!
//! Call [`key_store_cases`] from a backend crate's test. Cases work on a store that already holds
//! data from other cases or runs: every case names its KEKs with [`unique_name`]. Failures panic
//! with a message naming the case.

// A test kit: a failed expectation is an assertion failure, so `expect` is the right tool here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod counting;
mod kek_removal;

pub use counting::CountingKeyStore;
pub use kek_removal::{race_kek_removal_and_deleted_dek_create, race_kek_removal_and_deleted_dek_create_over};

use crate::kms::KmsRegistry;
use crate::model::{Dek, DekAlgorithm, DekSeries, Kek};
use crate::service::{DekRegistry, Page};
use crate::store::{Expect, KekGuard, KeyStore, StoreError, Stored, SubjectPage};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many writers the races start at once.
pub const RACE_TASKS: usize = 16;

/// The key store conformance cases, declared once, in run order; each line is a call of a pub
/// case function of this module: `&store` passes it the store as `&dyn KeyStore`, `store` as
/// `Arc<dyn KeyStore>`. A case added here runs in [`key_store_cases`] (the memory and embedded
/// stores) and in every backend test that instantiates the list through this macro (the DynamoDB
/// one: one test, and one table, per case).
///
/// `key_store_conformance_cases!(callback)` calls `callback! { name => case, ... }`, each `case`
/// a closure that coerces to [`CaseFn`].
#[macro_export]
macro_rules! key_store_conformance_cases {
    ($callback:ident) => {
        $crate::key_store_conformance_cases! { @each $callback
            kek_writes_are_conditional(&store);
            keks_page_in_name_order(&store);
            dek_writes_are_conditional_and_guarded(&store);
            dek_listings_page_and_filter(&store);
            kek_prefix_listing_reads_once_per_prefix(store);
            race_same_dek_version(store);
            race_kek_delete_and_dek_create(store);
            race_kek_removal_and_deleted_dek_create(store);
        }
    };
    (@each $callback:ident $($name:ident($($call:tt)*);)*) => {
        $callback! { $($name => $crate::key_store_conformance_cases!(@case $name($($call)*)),)* }
    };
    (@case $name:ident(&store)) => {
        |store: ::std::sync::Arc<dyn $crate::KeyStore>| -> $crate::testkit::CaseFuture {
            ::std::boxed::Box::pin(async move { $crate::testkit::$name(store.as_ref()).await })
        }
    };
    (@case $name:ident(store)) => {
        |store: ::std::sync::Arc<dyn $crate::KeyStore>| -> $crate::testkit::CaseFuture {
            ::std::boxed::Box::pin($crate::testkit::$name(store))
        }
    };
}

/// A running conformance case.
pub type CaseFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A key store conformance case: runs against the store it is given, panicking with a message
/// naming the case on a failure.
pub type CaseFn = fn(Arc<dyn KeyStore>) -> CaseFuture;

macro_rules! case_table {
    ($($name:ident => $case:expr,)*) => {
        /// Every key store conformance case ([`key_store_conformance_cases!`](crate::key_store_conformance_cases)),
        /// by name, in run order.
        pub const CASES: &[(&str, CaseFn)] = &[$((stringify!($name), $case)),*];
    };
}
crate::key_store_conformance_cases!(case_table);

/// Runs every case of [`CASES`] in sequence on `store`, the races included.
pub async fn key_store_cases(store: Arc<dyn KeyStore>) {
    for (_, case) in CASES {
        case(store.clone()).await;
    }
}

/// A name no other case or run uses (a valid KEK name: letters, digits, `_`, `-`).
pub fn unique_name(case: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("kit_{case}_{nanos}_{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

pub fn kek(name: &str) -> Kek {
    Kek {
        name: name.to_owned(),
        kms_type: "local-kms".to_owned(),
        kms_key_id: "kit-key".to_owned(),
        kms_props: BTreeMap::from([("region".to_owned(), "kit".to_owned())]),
        doc: Some("conformance".to_owned()),
        shared: false,
        ts: 1,
        deleted: false,
    }
}

pub fn dek(kek_name: &str, subject: &str, algorithm: DekAlgorithm, version: i32) -> Dek {
    Dek {
        kek_name: kek_name.to_owned(),
        subject: subject.to_owned(),
        version,
        algorithm,
        encrypted_key_material: format!("d3JhcHBlZA=={version}"),
        ts: 1,
        deleted: false,
        superseded_key_materials: Vec::new(),
    }
}

fn is_conflict<T: std::fmt::Debug>(result: &Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Conflict(_)))
}

async fn kek_revision(store: &dyn KeyStore, name: &str) -> u64 {
    store.kek(name).await.expect("read KEK").expect("KEK exists").revision
}

pub async fn kek_writes_are_conditional(store: &dyn KeyStore) {
    let name = unique_name("kek_writes");
    let mut kek = kek(&name);
    assert_eq!(store.kek(&name).await.unwrap(), None, "kek_writes: absent at first");
    assert_eq!(store.put_kek(&kek, Expect::Absent).await.unwrap(), 1, "kek_writes: create gives revision 1");
    assert!(is_conflict(&store.put_kek(&kek, Expect::Absent).await), "kek_writes: second create conflicts");
    assert_eq!(store.kek(&name).await.unwrap(), Some(Stored { value: kek.clone(), revision: 1 }));

    kek.deleted = true;
    kek.doc = None;
    assert_eq!(store.put_kek(&kek, Expect::Revision(1)).await.unwrap(), 2, "kek_writes: update at revision");
    assert!(is_conflict(&store.put_kek(&kek, Expect::Revision(1)).await), "kek_writes: stale update conflicts");
    assert_eq!(store.kek(&name).await.unwrap().map(|s| s.value), Some(kek.clone()), "kek_writes: fields kept");

    assert!(is_conflict(&store.remove_kek(&name, 1).await), "kek_writes: stale remove conflicts");
    store.remove_kek(&name, 2).await.unwrap();
    assert_eq!(store.kek(&name).await.unwrap(), None, "kek_writes: removed");
    assert!(is_conflict(&store.remove_kek(&name, 2).await), "kek_writes: removing a missing KEK conflicts");
}

pub async fn keks_page_in_name_order(store: &dyn KeyStore) {
    let prefix = unique_name("keks_page");
    for suffix in ["c", "a", "b"] {
        store.put_kek(&kek(&format!("{prefix}{suffix}")), Expect::Absent).await.unwrap();
    }
    let first = store.keks(Some(&prefix), 2).await.unwrap();
    let names: Vec<_> = first.iter().map(|k| k.value.name.clone()).collect();
    assert_eq!(names, [format!("{prefix}a"), format!("{prefix}b")], "keks_page: first page");
    let next = store.keks(Some(&names[1]), 1).await.unwrap();
    assert_eq!(next[0].value.name, format!("{prefix}c"), "keks_page: next page starts after the cursor");
}

pub async fn dek_writes_are_conditional_and_guarded(store: &dyn KeyStore) {
    let name = unique_name("dek_writes");
    store.put_kek(&kek(&name), Expect::Absent).await.unwrap();
    let mut first = dek(&name, "orders-value", DekAlgorithm::Aes256Gcm, 1);

    assert_eq!(store.put_dek(&first, Expect::Absent, KekGuard::Live).await.unwrap(), 1, "dek_writes: create");
    assert_eq!(kek_revision(store, &name).await, 2, "dek_writes: a guarded DEK write bumps the KEK revision");
    assert!(
        is_conflict(&store.put_dek(&first, Expect::Absent, KekGuard::Live).await),
        "dek_writes: the same version twice conflicts"
    );
    assert_eq!(kek_revision(store, &name).await, 2, "dek_writes: a lost write leaves the KEK alone");
    let same_version_other_algorithm = dek(&name, "orders-value", DekAlgorithm::Aes256Siv, 1);
    store.put_dek(&same_version_other_algorithm, Expect::Absent, KekGuard::Live).await.unwrap();
    assert_eq!(store.dek(&first.id()).await.unwrap().map(|s| s.value), Some(first.clone()));

    first.deleted = true;
    assert_eq!(store.put_dek(&first, Expect::Revision(1), KekGuard::Unchecked).await.unwrap(), 2);
    assert_eq!(kek_revision(store, &name).await, 3, "dek_writes: an unchecked write leaves the KEK alone");
    assert!(is_conflict(&store.put_dek(&first, Expect::Revision(1), KekGuard::Unchecked).await));

    // A deleted KEK refuses guarded DEK writes, and so does a missing one.
    let mut deleted_kek = kek(&name);
    deleted_kek.deleted = true;
    store.put_kek(&deleted_kek, Expect::Revision(3)).await.unwrap();
    let second = dek(&name, "orders-value", DekAlgorithm::Aes256Gcm, 2);
    assert!(is_conflict(&store.put_dek(&second, Expect::Absent, KekGuard::Live).await), "dek_writes: KEK deleted");
    assert_eq!(store.dek(&second.id()).await.unwrap(), None, "dek_writes: nothing written under a deleted KEK");
    let orphan = dek(&unique_name("missing"), "s", DekAlgorithm::Aes256Gcm, 1);
    assert!(is_conflict(&store.put_dek(&orphan, Expect::Absent, KekGuard::Live).await), "dek_writes: no KEK");

    assert!(is_conflict(&store.remove_dek(&first.id(), 1).await), "dek_writes: stale remove conflicts");
    store.remove_dek(&first.id(), 2).await.unwrap();
    assert_eq!(store.dek(&first.id()).await.unwrap(), None, "dek_writes: removed");
}

pub async fn dek_listings_page_and_filter(store: &dyn KeyStore) {
    let name = unique_name("dek_lists");
    store.put_kek(&kek(&name), Expect::Absent).await.unwrap();
    let other = unique_name("dek_lists_other");
    store.put_kek(&kek(&other), Expect::Absent).await.unwrap();
    assert!(!store.has_deks(&name, true).await.unwrap(), "dek_lists: a new KEK has no DEKs");

    for version in 1..=3 {
        store
            .put_dek(&dek(&name, "a", DekAlgorithm::Aes256Gcm, version), Expect::Absent, KekGuard::Live)
            .await
            .unwrap();
    }
    store.put_dek(&dek(&name, "b", DekAlgorithm::Aes128Gcm, 1), Expect::Absent, KekGuard::Live).await.unwrap();
    let mut deleted = dek(&name, "c", DekAlgorithm::Aes256Gcm, 1);
    deleted.deleted = true;
    store.put_dek(&deleted, Expect::Absent, KekGuard::Unchecked).await.unwrap();
    let mut latest_deleted = dek(&name, "a", DekAlgorithm::Aes256Gcm, 4);
    latest_deleted.deleted = true;
    store.put_dek(&latest_deleted, Expect::Absent, KekGuard::Unchecked).await.unwrap();
    store.put_dek(&dek(&other, "a", DekAlgorithm::Aes256Gcm, 9), Expect::Absent, KekGuard::Live).await.unwrap();

    let versions = |deks: Vec<Stored<Dek>>| deks.into_iter().map(|d| d.value.version).collect::<Vec<_>>();
    let series = |subject, algorithm| DekSeries { kek_name: &name, subject, algorithm };
    let all = store.deks(series("a", DekAlgorithm::Aes256Gcm), 0, 10).await.unwrap();
    assert_eq!(versions(all), [1, 2, 3, 4], "dek_lists: versions ascending, deleted included");
    let page = store.deks(series("a", DekAlgorithm::Aes256Gcm), 1, 2).await.unwrap();
    assert_eq!(versions(page), [2, 3], "dek_lists: a page after a version");
    assert!(store.deks(series("a", DekAlgorithm::Aes256Siv), 0, 10).await.unwrap().is_empty(), "per algorithm");

    let latest = |include_deleted| store.latest_dek(series("a", DekAlgorithm::Aes256Gcm), include_deleted);
    assert_eq!(latest(false).await.unwrap().map(|d| d.value.version), Some(3), "dek_lists: latest live");
    assert_eq!(latest(true).await.unwrap().map(|d| d.value.version), Some(4), "dek_lists: latest with deleted");
    assert_eq!(store.latest_dek(series("b", DekAlgorithm::Aes256Gcm), true).await.unwrap(), None);

    let subjects = |after, limit, include_deleted| {
        store.dek_subjects(SubjectPage { kek_name: &name, prefix: "", after, limit, include_deleted })
    };
    assert_eq!(subjects(None, 10, false).await.unwrap(), ["a", "b"], "dek_lists: live subjects");
    assert_eq!(subjects(None, 10, true).await.unwrap(), ["a", "b", "c"], "dek_lists: with deleted");
    assert_eq!(subjects(None, 1, true).await.unwrap(), ["a"], "dek_lists: limit");
    assert_eq!(subjects(Some("a"), 10, true).await.unwrap(), ["b", "c"], "dek_lists: after a cursor");
    let with_prefix = |prefix, after| {
        store.dek_subjects(SubjectPage { kek_name: &name, prefix, after, limit: 10, include_deleted: true })
    };
    assert_eq!(with_prefix("b", None).await.unwrap(), ["b"], "dek_lists: a prefix equal to a subject");
    assert_eq!(with_prefix("", Some("b")).await.unwrap(), ["c"], "dek_lists: an empty prefix");
    assert!(with_prefix("b", Some("b")).await.unwrap().is_empty(), "dek_lists: a prefix and a cursor past it");
    assert!(with_prefix("bb", None).await.unwrap().is_empty(), "dek_lists: a prefix longer than a subject");
    assert!(store.has_deks(&name, false).await.unwrap());

    // Only deleted DEKs left: live listings are empty, deleted ones are not.
    for version in 1..=3 {
        let mut gone = dek(&name, "a", DekAlgorithm::Aes256Gcm, version);
        gone.deleted = true;
        store.put_dek(&gone, Expect::Revision(1), KekGuard::Unchecked).await.unwrap();
    }
    let mut gone = dek(&name, "b", DekAlgorithm::Aes128Gcm, 1);
    gone.deleted = true;
    store.put_dek(&gone, Expect::Revision(1), KekGuard::Unchecked).await.unwrap();
    assert!(!store.has_deks(&name, false).await.unwrap(), "dek_lists: no live DEK left");
    assert!(store.has_deks(&name, true).await.unwrap(), "dek_lists: deleted DEKs still count");
    assert_eq!(store.latest_dek(series("a", DekAlgorithm::Aes256Gcm), false).await.unwrap(), None);
}

/// `GET /keks?subjectPrefix=...`: each (KEK, prefix) costs one store read, of the KEK's subjects
/// that start with the prefix (a subject equal to it included), however many subjects, algorithms
/// and versions the KEK holds; a KEK stops at its first matching prefix.
pub async fn kek_prefix_listing_reads_once_per_prefix(store: Arc<dyn KeyStore>) {
    let (matching, other) = (unique_name("prefix_matching"), unique_name("prefix_other"));
    for name in [&matching, &other] {
        store.put_kek(&kek(name), Expect::Absent).await.unwrap();
    }
    for algorithm in DekAlgorithm::ALL {
        for version in 1..=3 {
            let key = dek(&matching, "team-a.orders", algorithm, version);
            store.put_dek(&key, Expect::Absent, KekGuard::Live).await.unwrap();
        }
    }
    for subject in ["team-a", "team-b.x", "team-d.a", "team-d.b"] {
        store
            .put_dek(&dek(&matching, subject, DekAlgorithm::Aes256Gcm, 1), Expect::Absent, KekGuard::Live)
            .await
            .unwrap();
    }
    let mut deleted = dek(&matching, "team-c.y", DekAlgorithm::Aes256Gcm, 1);
    deleted.deleted = true;
    store.put_dek(&deleted, Expect::Absent, KekGuard::Unchecked).await.unwrap();
    store.put_dek(&dek(&other, "other", DekAlgorithm::Aes256Gcm, 1), Expect::Absent, KekGuard::Live).await.unwrap();

    let counting = Arc::new(CountingKeyStore::new(store));
    let registry = DekRegistry::new(counting.clone(), KmsRegistry::new());
    let listed = |prefixes: &'static [&'static str], include_deleted: bool| {
        let (registry, counting, matching, other) = (&registry, &counting, &matching, &other);
        async move {
            let (before, before_other) = (counting.reads_of(matching), counting.reads_of(other));
            let prefixes: Vec<String> = prefixes.iter().map(|prefix| prefix.to_string()).collect();
            let names = registry.kek_names(&prefixes, include_deleted, Page::default()).await.unwrap();
            assert!(!names.contains(other), "kek_prefix_listing: {other} has no subject with {prefixes:?}");
            let reads = (counting.reads_of(matching) - before, counting.reads_of(other) - before_other);
            (names.contains(matching), reads)
        }
    };
    // Misses: a deleted-only subject, a prefix after every subject, one sorting between two
    // subjects, one longer than a subject it starts like.
    let misses: &[&str] = &["team-c.", "team-z.", "team-aa", "team-b.xy"];
    assert_eq!(listed(misses, false).await, (false, (4, 4)), "kek_prefix_listing: one read per (KEK, prefix)");
    assert_eq!(listed(&["team-z.", "team-a."], false).await, (true, (2, 2)), "kek_prefix_listing: a prefix match");
    assert_eq!(listed(&["team-b.x"], false).await, (true, (1, 1)), "kek_prefix_listing: a subject equal to the prefix");
    assert_eq!(listed(&["team-d.b"], false).await, (true, (1, 1)), "kek_prefix_listing: the last subject");
    assert_eq!(listed(&["team-c."], true).await, (true, (1, 1)), "kek_prefix_listing: deleted DEKs when asked");
}

/// [`RACE_TASKS`] writers create the same DEK version: exactly one wins, and the KEK revision
/// rose by exactly one.
pub async fn race_same_dek_version(store: Arc<dyn KeyStore>) {
    let name = unique_name("race_dek");
    store.put_kek(&kek(&name), Expect::Absent).await.unwrap();
    let mut tasks = Vec::new();
    for writer in 0..RACE_TASKS {
        let store = store.clone();
        let mut dek = dek(&name, "race-value", DekAlgorithm::Aes256Gcm, 1);
        dek.encrypted_key_material = format!("writer{writer}");
        tasks.push(tokio::spawn(async move { store.put_dek(&dek, Expect::Absent, KekGuard::Live).await }));
    }
    let mut winners = 0;
    for task in tasks {
        match task.await.expect("writer task") {
            Ok(_) => winners += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(other) => panic!("race_dek: unexpected error {other}"),
        }
    }
    assert_eq!(winners, 1, "race_dek: one writer wins");
    assert_eq!(kek_revision(store.as_ref(), &name).await, 2, "race_dek: the KEK moved once");
    let series = DekSeries { kek_name: &name, subject: "race-value", algorithm: DekAlgorithm::Aes256Gcm };
    let versions = store.deks(series, 0, 10).await.unwrap();
    assert_eq!(versions.len(), 1, "race_dek: one version stored");
}

/// A KEK soft delete (read, check for live DEKs, conditional write, as the service does it) races
/// a DEK creation under the KEK, many rounds: never a deleted KEK with a live DEK under it.
pub async fn race_kek_delete_and_dek_create(store: Arc<dyn KeyStore>) {
    for round in 0..RACE_TASKS {
        let name = unique_name("race_kek");
        store.put_kek(&kek(&name), Expect::Absent).await.unwrap();
        let deleter = {
            let store = store.clone();
            let name = name.clone();
            tokio::spawn(async move {
                let stored = store.kek(&name).await?.expect("KEK exists");
                if store.has_deks(&name, false).await? {
                    return Ok(false);
                }
                let mut deleted = stored.value;
                deleted.deleted = true;
                store.put_kek(&deleted, Expect::Revision(stored.revision)).await.map(|_| true)
            })
        };
        let creator = {
            let store = store.clone();
            let dek = dek(&name, "race", DekAlgorithm::Aes256Gcm, 1);
            tokio::spawn(async move { store.put_dek(&dek, Expect::Absent, KekGuard::Live).await })
        };
        let deleted = matches!(deleter.await.expect("deleter task"), Ok(true));
        let created = creator.await.expect("creator task").is_ok();
        assert!(deleted || created, "race_kek round {round}: one of the two must succeed");
        let kek_deleted = store.kek(&name).await.unwrap().expect("KEK kept").value.deleted;
        let live_dek = store.has_deks(&name, false).await.unwrap();
        assert!(!(kek_deleted && live_dek), "race_kek round {round}: a deleted KEK has a live DEK");
        assert_eq!(kek_deleted, deleted, "race_kek round {round}: the KEK is deleted iff the delete won");
        assert_eq!(live_dek, created, "race_kek round {round}: the DEK exists iff its create won");
    }
}
