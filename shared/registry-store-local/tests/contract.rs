//! Each `Store` method's contract on `LocalStore`: conditional writes, indexes, paging, filters, reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{body, reference, row, store, subject};
use registry_core::{
    CompatibilityLevel, ConfigRecord, DeletedFilter, MemoryStore, Mode, SchemaId, Scope, Store, StoreError, Version,
};
use registry_store_local::LocalStore;

#[tokio::test]
async fn bodies_are_put_if_absent() {
    let (_dir, store) = store();
    let (first, second) = (body(1), body(2));
    let fp = first.fingerprint();
    assert_eq!(store.get_body(&fp).await.unwrap(), None);
    store.put_body(&fp, &first).await.unwrap();
    store.put_body(&fp, &second).await.unwrap();
    assert_eq!(store.get_body(&fp).await.unwrap(), Some(first));
}

#[tokio::test]
async fn bodies_keep_references_and_data_contract_parts() {
    let (_dir, store) = store();
    let mut full = body(1);
    full.references = vec![reference("a", 1), reference("b", 3)];
    full.metadata = Some(serde_json::json!({"properties": {"owner": "team-a"}}));
    full.rule_set = Some(serde_json::json!({"domainRules": []}));
    store.put_body(&full.fingerprint(), &full).await.unwrap();
    assert_eq!(store.get_body(&full.fingerprint()).await.unwrap(), Some(full));
}

#[tokio::test]
async fn allocate_id_counts_up_and_conflicts_on_a_bound_fingerprint() {
    let (_dir, store) = store();
    assert_eq!(store.max_id().await.unwrap(), None);
    let (a, b) = (body(1).fingerprint(), body(2).fingerprint());
    assert_eq!(store.allocate_id(&a).await.unwrap(), SchemaId(1));
    assert_eq!(store.allocate_id(&b).await.unwrap(), SchemaId(2));
    assert!(matches!(store.allocate_id(&a).await, Err(StoreError::Conflict(_))));
    assert_eq!(store.id_for_fingerprint(&a).await.unwrap(), Some(SchemaId(1)));
    assert_eq!(store.fingerprint_for_id(SchemaId(2)).await.unwrap(), Some(b));
    assert_eq!(store.fingerprint_for_id(SchemaId(3)).await.unwrap(), None);
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(2)));
}

#[tokio::test]
async fn bind_id_is_idempotent_conflicts_on_another_fingerprint_and_raises_the_counter() {
    let (_dir, store) = store();
    let (a, b, c) = (body(1).fingerprint(), body(2).fingerprint(), body(3).fingerprint());
    store.bind_id(SchemaId(10), &a).await.unwrap();
    store.bind_id(SchemaId(10), &a).await.unwrap();
    assert!(matches!(store.bind_id(SchemaId(10), &b).await, Err(StoreError::Conflict(_))));
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(10)));
    assert_eq!(store.allocate_id(&b).await.unwrap(), SchemaId(11));
    // A second id for the same schema: id → fingerprint is bound, fingerprint → id keeps the first.
    store.bind_id(SchemaId(5), &a).await.unwrap();
    assert_eq!(store.fingerprint_for_id(SchemaId(5)).await.unwrap(), Some(a));
    assert_eq!(store.id_for_fingerprint(&a).await.unwrap(), Some(SchemaId(10)));
    assert_eq!(store.max_id().await.unwrap(), Some(SchemaId(11)));
    assert_eq!(store.allocate_id(&c).await.unwrap(), SchemaId(12));
}

#[tokio::test]
async fn create_version_is_create_if_absent_and_feeds_every_index() {
    let (_dir, store) = store();
    let s = subject("orders-value");
    store.create_version(&row("orders-value", 2, 7, 2)).await.unwrap();
    store.create_version(&row("orders-value", 1, 7, 1)).await.unwrap();
    store.create_version(&row("a-first", 1, 7, 1)).await.unwrap();
    let clash = row("orders-value", 1, 8, 3);
    assert!(matches!(store.create_version(&clash).await, Err(StoreError::Conflict(_))));
    let versions: Vec<i32> = store.versions(&s).await.unwrap().iter().map(|r| r.version.0).collect();
    assert_eq!(versions, [1, 2]);
    assert_eq!(store.get_version(&s, Version(1)).await.unwrap(), Some(row("orders-value", 1, 7, 1)));
    assert_eq!(store.get_version(&s, Version(3)).await.unwrap(), None);
    let by_id: Vec<(String, i32)> = store
        .rows_with_id(SchemaId(7))
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.subject.to_string(), r.version.0))
        .collect();
    assert_eq!(by_id, [("a-first".into(), 1), ("orders-value".into(), 1), ("orders-value".into(), 2)]);
    let all = store.list_subjects("", DeletedFilter::LiveOnly, None, 10).await.unwrap();
    assert_eq!(all, [subject("a-first"), s]);
}

#[tokio::test]
async fn referrers_follow_references_sorted_by_id_and_drop_on_hard_delete() {
    let (_dir, store) = store();
    store.create_version(&row("base", 1, 1, 1)).await.unwrap();
    let mut late = row("z-user", 1, 9, 2);
    late.references = vec![reference("base", 1), reference("other", 4)];
    let mut early = row("y-user", 3, 4, 3);
    early.references = vec![reference("base", 1)];
    early.deleted = true;
    let mut unrelated = row("x-user", 1, 2, 4);
    unrelated.references = vec![reference("base", 2)];
    for r in [&late, &early, &unrelated] {
        store.create_version(r).await.unwrap();
    }
    assert_eq!(store.referrers(&subject("base"), Version(1)).await.unwrap(), [early.clone(), late.clone()]);
    assert_eq!(store.referrers(&subject("other"), Version(4)).await.unwrap(), [late.clone()]);
    store.delete_version(&late.subject, late.version).await.unwrap();
    assert_eq!(store.referrers(&subject("base"), Version(1)).await.unwrap(), [early]);
    assert!(store.referrers(&subject("other"), Version(4)).await.unwrap().is_empty());
}

#[tokio::test]
async fn set_version_deleted_conflicts_when_missing_or_already_in_that_state() {
    let (_dir, store) = store();
    let s = subject("s");
    assert!(matches!(store.set_version_deleted(&s, Version(1), true).await, Err(StoreError::Conflict(_))));
    store.create_version(&row("s", 1, 1, 1)).await.unwrap();
    assert!(matches!(store.set_version_deleted(&s, Version(1), false).await, Err(StoreError::Conflict(_))));
    store.set_version_deleted(&s, Version(1), true).await.unwrap();
    assert!(store.get_version(&s, Version(1)).await.unwrap().is_some_and(|r| r.deleted));
    assert!(matches!(store.set_version_deleted(&s, Version(1), true).await, Err(StoreError::Conflict(_))));
    store.set_version_deleted(&s, Version(1), false).await.unwrap();
    assert!(store.get_version(&s, Version(1)).await.unwrap().is_some_and(|r| !r.deleted));
}

#[tokio::test]
async fn delete_version_is_idempotent_and_leaves_ids_bound() {
    let (_dir, store) = store();
    let s = subject("s");
    let fp = body(1).fingerprint();
    let id = store.allocate_id(&fp).await.unwrap();
    store.create_version(&row("s", 1, id.0, 1)).await.unwrap();
    store.delete_version(&s, Version(1)).await.unwrap();
    store.delete_version(&s, Version(1)).await.unwrap();
    assert_eq!(store.get_version(&s, Version(1)).await.unwrap(), None);
    assert!(store.rows_with_id(id).await.unwrap().is_empty());
    assert!(store.list_subjects("", DeletedFilter::IncludeDeleted, None, 10).await.unwrap().is_empty());
    assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(fp));
    // The hard-deleted version number may be created again.
    store.create_version(&row("s", 1, id.0, 1)).await.unwrap();
}

#[tokio::test]
async fn soft_delete_versions_is_all_or_nothing() {
    let (_dir, store) = store();
    let s = subject("s");
    for v in 1..=3 {
        store.create_version(&row("s", v, v, v as usize)).await.unwrap();
    }
    store.set_version_deleted(&s, Version(3), true).await.unwrap();
    let refused = store.soft_delete_versions(&s, &[Version(1), Version(2), Version(3)]).await;
    assert!(matches!(refused, Err(StoreError::Conflict(_))));
    let live: Vec<i32> = store.versions(&s).await.unwrap().iter().filter(|r| !r.deleted).map(|r| r.version.0).collect();
    assert_eq!(live, [1, 2]);
    store.soft_delete_versions(&s, &[Version(1), Version(2)]).await.unwrap();
    assert!(store.versions(&s).await.unwrap().iter().all(|r| r.deleted));
    assert_eq!(store.list_subjects("", DeletedFilter::DeletedOnly, None, 10).await.unwrap(), [s]);
}

#[tokio::test]
async fn hard_delete_versions_removes_rows_and_optionally_the_subject_settings() {
    let (_dir, store) = store();
    let s = subject("s");
    let scope = Scope::Subject(s.clone());
    store.put_mode(&scope, Mode::ReadOnly).await.unwrap();
    store.put_config(&scope, &ConfigRecord::default()).await.unwrap();
    for v in 1..=2 {
        store.create_version(&row("s", v, v, v as usize)).await.unwrap();
    }
    store.hard_delete_versions(&s, &[Version(1), Version(5)], false).await.unwrap();
    assert_eq!(store.versions(&s).await.unwrap().len(), 1);
    assert_eq!(store.get_mode(&scope).await.unwrap(), Some(Mode::ReadOnly));
    store.hard_delete_versions(&s, &[Version(2)], true).await.unwrap();
    assert!(store.versions(&s).await.unwrap().is_empty());
    assert_eq!(store.get_mode(&scope).await.unwrap(), None);
    assert_eq!(store.get_config(&scope).await.unwrap(), None);
}

#[tokio::test]
async fn config_and_mode_are_per_scope_and_delete_returns_the_old_value() {
    let (_dir, store) = store();
    let (global, subj) = (Scope::Global, Scope::Subject(subject("s")));
    let config = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::FullTransitive),
        normalize: Some(true),
        ..ConfigRecord::default()
    };
    assert_eq!(store.get_config(&global).await.unwrap(), None);
    store.put_config(&global, &config).await.unwrap();
    store.put_config(&subj, &ConfigRecord::default()).await.unwrap();
    store.put_config(&subj, &ConfigRecord { normalize: Some(false), ..ConfigRecord::default() }).await.unwrap();
    assert_eq!(store.get_config(&global).await.unwrap(), Some(config.clone()));
    assert_eq!(store.delete_config(&global).await.unwrap(), Some(config));
    assert_eq!(store.delete_config(&global).await.unwrap(), None);
    assert_eq!(store.get_config(&subj).await.unwrap().and_then(|c| c.normalize), Some(false));

    store.put_mode(&global, Mode::Import).await.unwrap();
    store.put_mode(&subj, Mode::ReadOnlyOverride).await.unwrap();
    store.put_mode(&global, Mode::ReadOnly).await.unwrap();
    assert_eq!(store.get_mode(&global).await.unwrap(), Some(Mode::ReadOnly));
    assert_eq!(store.delete_mode(&subj).await.unwrap(), Some(Mode::ReadOnlyOverride));
    assert_eq!(store.get_mode(&subj).await.unwrap(), None);
}

/// Applies the same rows and deletes to `MemoryStore` (the reference) and `LocalStore`.
async fn populate(stores: [&dyn Store; 2]) {
    let names = ["a", "ab", "abc", "abd", "b", "b/1", "ba", "c", "c.d", "cc", "d", "é", "z"];
    for store in stores {
        for (i, name) in names.iter().enumerate() {
            for v in 1..=((i % 3) as i32 + 1) {
                store.create_version(&row(name, v, v, i)).await.unwrap();
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
                    let want = memory.list_subjects(prefix, filter, after.as_ref(), limit).await.unwrap();
                    let got = local.list_subjects(prefix, filter, after.as_ref(), limit).await.unwrap();
                    assert_eq!(got, want, "{filter:?} prefix={prefix:?} after={after:?} limit={limit}");
                }
            }
        }
    }
    let deleted_only = local.list_subjects("", DeletedFilter::DeletedOnly, None, 100).await.unwrap();
    assert_eq!(deleted_only, ["ab", "c.d", "d"].map(subject));
}

#[tokio::test]
async fn keyset_paging_visits_every_live_subject_once() {
    let (_dir, store) = store();
    for i in 0..57 {
        store.create_version(&row(&format!("s-{i:03}"), 1, i, 0)).await.unwrap();
        if i % 4 == 0 {
            store.set_version_deleted(&subject(&format!("s-{i:03}")), Version(1), true).await.unwrap();
        }
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.list_subjects("s-", DeletedFilter::LiveOnly, after.as_ref(), 10).await.unwrap();
        let Some(last) = page.last().cloned() else { break };
        assert!(page.len() <= 10);
        seen.extend(page);
        after = Some(last);
    }
    let want: Vec<_> = (0..57).filter(|i| i % 4 != 0).map(|i| subject(&format!("s-{i:03}"))).collect();
    assert_eq!(seen, want);
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
        store.create_version(&r).await.unwrap();
        store.create_version(&row("gone", 1, id.0, 1)).await.unwrap();
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
    assert_eq!(store.list_subjects("", DeletedFilter::LiveOnly, None, 10).await.unwrap(), [subject("s")]);
    assert_eq!(store.list_subjects("", DeletedFilter::DeletedOnly, None, 10).await.unwrap(), [subject("gone")]);
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
    let page = store.list_subjects("seed-", DeletedFilter::LiveOnly, Some(&subject("seed-0297")), 10).await.unwrap();
    assert_eq!(page, [subject("seed-0298"), subject("seed-0299")]);
    // Re-seeding the same rows replaces them instead of double counting.
    store.insert_unchecked(&[], &rows[..1]).await.unwrap();
    store.set_version_deleted(&subject("seed-0000"), Version(1), true).await.unwrap();
    assert_eq!(store.list_subjects("seed-0000", DeletedFilter::DeletedOnly, None, 10).await.unwrap().len(), 1);
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
