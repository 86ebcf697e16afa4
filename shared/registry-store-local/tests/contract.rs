//! What only `LocalStore` has: reopening, bulk loading, its data directory, and subject listings
//! (SQL prefix ranges) against the reference store. The per-method contract is `registry_core::testkit`
//! (tests/conformance.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{body, reference, row, store, subject};
use registry_core::testkit::StoreTestExt;
use registry_core::{ConfigRecord, DeletedFilter, MemoryStore, Mode, SchemaId, Scope, Store, SubjectsPage, Version};
use registry_store_local::LocalStore;

/// Applies the same rows and deletes to `MemoryStore` (the reference) and `LocalStore`.
async fn populate(stores: [&dyn Store; 2]) {
    let names = ["a", "ab", "abc", "abd", "b", "b/1", "ba", "c", "c.d", "cc", "d", "é", "z"];
    for store in stores {
        for (i, name) in names.iter().enumerate() {
            for v in 1..=((i % 3) as i32 + 1) {
                store
                    .create_version(
                        &row(name, v, v, i),
                        &registry_core::Preconditions::default(),
                        &registry_core::CommitHints::default(),
                    )
                    .await
                    .unwrap();
            }
        }
        for name in ["ab", "c.d", "d"] {
            for r in store.versions(&subject(name)).await.unwrap() {
                store.set_version_deleted(&r.subject, r.version, true).await.unwrap();
            }
        }
        store.set_version_deleted(&subject("abc"), Version(1), true).await.unwrap();
        store.delete_version(&subject("z"), Version(1)).await.unwrap();
        store.delete_version(&subject("é"), Version(1)).await.unwrap();
    }
}

#[tokio::test]
async fn list_subjects_pages_and_filters_like_the_reference_store() {
    let (_dir, local) = store();
    let memory = MemoryStore::new();
    populate([&memory, &local]).await;
    let filters = [DeletedFilter::LiveOnly, DeletedFilter::IncludeDeleted, DeletedFilter::DeletedOnly];
    for filter in filters {
        for prefix in ["", "a", "ab", "b", "c", "é", "x", "\u{10FFFF}"] {
            for after in [None, Some("a"), Some("abc"), Some("b/1"), Some("c"), Some("0"), Some("zz")] {
                let after = after.map(subject);
                for limit in [0, 1, 2, 5, 100] {
                    let page = SubjectsPage { prefix, filter, after: after.as_ref(), limit };
                    let want = memory.list_subjects(page).await.unwrap();
                    let got = local.list_subjects(page).await.unwrap();
                    assert_eq!(got, want, "{filter:?} prefix={prefix:?} after={after:?} limit={limit}");
                }
            }
        }
    }
    let page = SubjectsPage { prefix: "", filter: DeletedFilter::DeletedOnly, after: None, limit: 100 };
    let deleted_only = local.list_subjects(page).await.unwrap();
    assert_eq!(deleted_only, ["ab", "c.d", "d"].map(subject));
}

#[tokio::test]
async fn everything_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let fp = body(1).fingerprint();
    {
        let store = LocalStore::open(dir.path()).unwrap();
        store.put_body(&fp, &body(1)).await.unwrap();
        let id = store.allocate_id(&fp).await.unwrap();
        store.bind_id(SchemaId(40), &body(2).fingerprint()).await.unwrap();
        let mut r = row("s", 1, id.0, 1);
        r.references = vec![reference("base", 2)];
        store
            .create_version(&r, &registry_core::Preconditions::default(), &registry_core::CommitHints::default())
            .await
            .unwrap();
        store
            .create_version(
                &row("gone", 1, id.0, 1),
                &registry_core::Preconditions::default(),
                &registry_core::CommitHints::default(),
            )
            .await
            .unwrap();
        store.set_version_deleted(&subject("gone"), Version(1), true).await.unwrap();
        store.put_config(&Scope::Global, &ConfigRecord { normalize: Some(true), ..Default::default() }).await.unwrap();
        store.put_mode(&Scope::Subject(subject("s")), Mode::ReadOnly).await.unwrap();
    }
    let store = LocalStore::open(dir.path()).unwrap();
    assert_eq!(store.get_body(&fp).await.unwrap(), Some(body(1)));
    assert_eq!(store.id_for_fingerprint(&fp).await.unwrap(), Some(SchemaId(1)));
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(40)));
    assert_eq!(store.allocate_id(&body(3).fingerprint()).await.unwrap(), SchemaId(41));
    assert_eq!(store.referrers(&subject("base"), Version(2)).await.unwrap().len(), 1);
    let live = SubjectsPage { prefix: "", filter: DeletedFilter::LiveOnly, after: None, limit: 10 };
    assert_eq!(store.list_subjects(live).await.unwrap(), [subject("s")]);
    let deleted = SubjectsPage { filter: DeletedFilter::DeletedOnly, ..live };
    assert_eq!(store.list_subjects(deleted).await.unwrap(), [subject("gone")]);
    assert_eq!(store.get_config(&Scope::Global).await.unwrap().and_then(|c| c.normalize), Some(true));
    assert_eq!(store.get_mode(&Scope::Subject(subject("s"))).await.unwrap(), Some(Mode::ReadOnly));
}

#[tokio::test]
async fn insert_unchecked_seeds_bodies_ids_and_rows_in_one_go() {
    let (_dir, store) = store();
    let bodies: Vec<_> = (0..3).map(|n| (body(n).fingerprint(), body(n))).collect();
    let rows: Vec<_> = (0..300).map(|i| row(&format!("seed-{i:04}"), 1, (i % 3) as i32 + 100, i % 3)).collect();
    store.insert_unchecked(&bodies, &rows).await.unwrap();
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(102)));
    assert_eq!(store.fingerprint_for_id(SchemaId(101)).await.unwrap(), Some(body(1).fingerprint()));
    assert_eq!(store.get_body(&body(2).fingerprint()).await.unwrap(), Some(body(2)));
    let guid = registry_core::Guid::of(&body(2));
    assert_eq!(store.fingerprint_for_guid(&guid).await.unwrap(), Some(body(2).fingerprint()), "guid indexed");
    assert_eq!(store.rows_with_id(SchemaId(100)).await.unwrap().len(), 100);
    let after = subject("seed-0297");
    let page = SubjectsPage { prefix: "seed-", filter: DeletedFilter::LiveOnly, after: Some(&after), limit: 10 };
    let page = store.list_subjects(page).await.unwrap();
    assert_eq!(page, [subject("seed-0298"), subject("seed-0299")]);
    // Re-seeding the same rows replaces them instead of double counting.
    store.insert_unchecked(&[], &rows[..1]).await.unwrap();
    store.set_version_deleted(&subject("seed-0000"), Version(1), true).await.unwrap();
    let page = SubjectsPage { prefix: "seed-0000", filter: DeletedFilter::DeletedOnly, after: None, limit: 10 };
    assert_eq!(store.list_subjects(page).await.unwrap().len(), 1);
    assert_eq!(store.allocate_id(&body(9).fingerprint()).await.unwrap(), SchemaId(103));
}

#[tokio::test]
async fn open_creates_missing_directories_and_refuses_a_file_in_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/data");
    let store = LocalStore::open(&nested).unwrap();
    assert!(store.database_path().starts_with(&nested) && store.database_path().exists());
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(LocalStore::open(&file).is_err());
}
