//! AwsStore contract tests on the emulator (moto server; see scripts/emulator-start.sh).
//! Each test gets its own table and bucket.

mod support;

use futures::future::join_all;
use registry_core::{
    CompatibilityLevel, ConfigRecord, DeletedFilter, Mode, SchemaBody, SchemaId, SchemaReference, Scope, Store,
    StoreError, Subject, Version,
};
use registry_store_aws::AwsStore;
use std::collections::BTreeSet;
use support::{body, row, subject, with_store};

/// The register path as the registry runs it against a store: lookup under the subject, body
/// first, then the ID (allocate, or re-read on Conflict), then the next version (retry on Conflict).
async fn register(store: &AwsStore, subject: &Subject, body: &SchemaBody) -> (SchemaId, Version) {
    let fingerprint = body.fingerprint();
    let rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}"));
    if let Some(found) = rows.iter().find(|r| r.fingerprint == fingerprint && !r.deleted) {
        return (found.id, found.version);
    }
    store.put_body(&fingerprint, body).await.unwrap_or_else(|e| panic!("{e}"));
    let id = loop {
        if let Some(id) = store.id_for_fingerprint(&fingerprint).await.unwrap_or_else(|e| panic!("{e}")) {
            break id;
        }
        match store.allocate_id(&fingerprint).await {
            Ok(id) => break id,
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => panic!("{e}"),
        }
    };
    let mut rows = rows;
    loop {
        if let Some(found) = rows.iter().find(|r| r.fingerprint == fingerprint && !r.deleted) {
            return (found.id, found.version);
        }
        let next = rows.last().map_or(1, |r| r.version.0 + 1);
        let new_row = row(subject.as_str(), next, id.0, fingerprint);
        match store.create_version(&new_row).await {
            Ok(()) => return (id, Version(next)),
            Err(StoreError::Conflict(_)) => rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}")),
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test]
async fn bodies_are_put_if_absent_under_their_fingerprint() {
    with_store(|store, sdk| async move {
        let b = body("\"string\"");
        let fp = b.fingerprint();
        assert_eq!(store.get_body(&fp).await.ok(), Some(None));
        store.put_body(&fp, &b).await.unwrap_or_else(|e| panic!("{e}"));
        store.put_body(&fp, &b).await.unwrap_or_else(|e| panic!("second put must succeed: {e}"));
        assert_eq!(store.get_body(&fp).await.ok(), Some(Some(b)));
        let s3 = aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(&sdk).force_path_style(true).build());
        let head = s3.head_object().bucket(store.config().bucket).key(format!("schemas/{}", fp.to_hex())).send().await;
        assert!(head.is_ok(), "body must live at schemas/<sha256 hex>");
    })
    .await;
}

#[tokio::test]
async fn concurrent_allocations_never_share_an_id() {
    with_store(|store, _| async move {
        let bodies: Vec<SchemaBody> =
            (0..64).map(|i| body(&format!("{{\"type\":\"fixed\",\"name\":\"f{i}\",\"size\":1}}"))).collect();
        let tasks = bodies.iter().map(|b| {
            let store = store.clone();
            let fp = b.fingerprint();
            async move {
                loop {
                    match store.allocate_id(&fp).await {
                        Ok(id) => return (fp, id),
                        Err(StoreError::Conflict(_)) => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        });
        let allocated = join_all(tasks).await;
        let ids: BTreeSet<SchemaId> = allocated.iter().map(|(_, id)| *id).collect();
        assert_eq!(ids.len(), bodies.len(), "duplicate ids: {allocated:?}");
        for (fp, id) in &allocated {
            assert_eq!(store.id_for_fingerprint(fp).await.ok(), Some(Some(*id)));
            assert_eq!(store.fingerprint_for_id(*id).await.ok(), Some(Some(*fp)));
        }
        assert_eq!(store.max_id().await.ok(), Some(ids.last().copied()));
        let again = store.allocate_id(&allocated[0].0).await;
        assert!(matches!(again, Err(StoreError::Conflict(_))), "a bound fingerprint must not get a second id");
    })
    .await;
}

#[tokio::test]
async fn bind_id_raises_the_counter_and_refuses_a_different_schema() {
    with_store(|store, _| async move {
        let (a, b, c) = (body("\"a\"").fingerprint(), body("\"b\"").fingerprint(), body("\"c\"").fingerprint());
        store.bind_id(SchemaId(10), &a).await.unwrap_or_else(|e| panic!("{e}"));
        store.bind_id(SchemaId(10), &a).await.unwrap_or_else(|e| panic!("rebinding the same pair: {e}"));
        assert!(matches!(store.bind_id(SchemaId(10), &b).await, Err(StoreError::Conflict(_))));
        assert_eq!(store.max_id().await.ok(), Some(Some(SchemaId(10))));
        store.bind_id(SchemaId(5), &b).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.max_id().await.ok(), Some(Some(SchemaId(10))), "a lower bind never lowers the counter");
        assert_eq!(store.allocate_id(&c).await.ok(), Some(SchemaId(11)));
        store.bind_id(SchemaId(20), &a).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.id_for_fingerprint(&a).await.ok(), Some(Some(SchemaId(10))), "first binding kept");
        assert_eq!(store.fingerprint_for_id(SchemaId(20)).await.ok(), Some(Some(a)));
    })
    .await;
}

#[tokio::test]
async fn racing_registrations_get_one_id_per_schema_and_dense_versions() {
    with_store(|store, _| async move {
        let target = subject("race-value");
        let distinct: Vec<SchemaBody> =
            (0..8).map(|i| body(&format!("{{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"S{i}\"]}}"))).collect();
        let tasks = (0..64).map(|i| {
            let store = store.clone();
            let target = target.clone();
            let b = distinct[i % distinct.len()].clone();
            async move { (b.fingerprint(), register(&store, &target, &b).await) }
        });
        let results = join_all(tasks).await;
        let rows = store.versions(&target).await.unwrap_or_else(|e| panic!("{e}"));
        let versions: Vec<i32> = rows.iter().map(|r| r.version.0).collect();
        assert_eq!(versions, (1..=distinct.len() as i32).collect::<Vec<_>>(), "versions must be dense");
        for (fp, (id, version)) in &results {
            let stored = rows.iter().find(|r| r.version == *version).unwrap_or_else(|| panic!("no row {version}"));
            assert_eq!((stored.fingerprint, stored.id), (*fp, *id));
        }
        let ids: BTreeSet<SchemaId> = rows.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), distinct.len(), "one id per distinct schema");
    })
    .await;
}

#[tokio::test]
async fn a_version_number_is_taken_once() {
    with_store(|store, _| async move {
        let fp = body("\"int\"").fingerprint();
        let attempts = (0..8).map(|i| {
            let store = store.clone();
            async move { store.create_version(&row("once", 1, i + 1, fp)).await }
        });
        let outcomes = join_all(attempts).await;
        assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1);
        assert!(outcomes.iter().filter_map(|o| o.as_ref().err()).all(|e| matches!(e, StoreError::Conflict(_))));
        assert_eq!(store.versions(&subject("once")).await.map(|rows| rows.len()).ok(), Some(1));
    })
    .await;
}

#[tokio::test]
async fn deletes_keep_listings_and_indexes_in_step() {
    with_store(|store, _| async move {
        let fp = body("\"long\"").fingerprint();
        for (name, version) in [("a-value", 1), ("a-value", 2), ("b-value", 1), ("c-key", 1)] {
            store.create_version(&row(name, version, 1, fp)).await.unwrap_or_else(|e| panic!("{e}"));
        }
        let names = |subjects: Vec<Subject>| subjects.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>();
        let list = |filter| {
            let store = store.clone();
            async move { names(store.list_subjects("", filter, None, 100).await.unwrap_or_else(|e| panic!("{e}"))) }
        };
        assert_eq!(list(DeletedFilter::LiveOnly).await, ["a-value", "b-value", "c-key"]);
        store.set_version_deleted(&subject("b-value"), Version(1), true).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            store.set_version_deleted(&subject("b-value"), Version(1), true).await,
            Err(StoreError::Conflict(_))
        ));
        store.set_version_deleted(&subject("a-value"), Version(1), true).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list(DeletedFilter::LiveOnly).await, ["a-value", "c-key"]);
        assert_eq!(list(DeletedFilter::DeletedOnly).await, ["b-value"]);
        assert_eq!(list(DeletedFilter::IncludeDeleted).await, ["a-value", "b-value", "c-key"]);
        let with_id: Vec<(String, i32)> = store
            .rows_with_id(SchemaId(1))
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| (r.subject.to_string(), r.version.0))
            .collect();
        assert_eq!(with_id, [("a-value".into(), 1), ("a-value".into(), 2), ("b-value".into(), 1), ("c-key".into(), 1)]);
        store.delete_version(&subject("b-value"), Version(1)).await.unwrap_or_else(|e| panic!("{e}"));
        store.delete_version(&subject("b-value"), Version(1)).await.unwrap_or_else(|e| panic!("already gone: {e}"));
        assert_eq!(list(DeletedFilter::IncludeDeleted).await, ["a-value", "c-key"]);
        assert_eq!(store.rows_with_id(SchemaId(1)).await.map(|rows| rows.len()).ok(), Some(3));
        store.set_version_deleted(&subject("a-value"), Version(1), false).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            store.get_version(&subject("a-value"), Version(1)).await.ok().flatten().map(|r| r.deleted),
            Some(false)
        );
    })
    .await;
}

#[tokio::test]
async fn subject_pages_follow_prefix_and_keyset() {
    with_store(|store, _| async move {
        let fp = body("\"bytes\"").fingerprint();
        let all = ["orders-key", "orders-value", "orders2-value", "payments-value", "x"];
        for name in all {
            store.create_version(&row(name, 1, 1, fp)).await.unwrap_or_else(|e| panic!("{e}"));
        }
        let page = |prefix: &'static str, after: Option<&'static str>, limit| {
            let store = store.clone();
            async move {
                let after = after.map(subject);
                let got = store.list_subjects(prefix, DeletedFilter::LiveOnly, after.as_ref(), limit).await;
                got.unwrap_or_else(|e| panic!("{e}")).iter().map(|s| s.to_string()).collect::<Vec<_>>()
            }
        };
        assert_eq!(page("orders", None, 2).await, ["orders-key", "orders-value"]);
        assert_eq!(page("orders", Some("orders-value"), 2).await, ["orders2-value"]);
        assert_eq!(page("orders", Some("a"), 10).await, ["orders-key", "orders-value", "orders2-value"]);
        assert_eq!(page("", Some("orders2-value"), 10).await, ["payments-value", "x"]);
        assert!(page("zzz", None, 10).await.is_empty());
        assert!(page("", None, 0).await.is_empty());
    })
    .await;
}

#[tokio::test]
async fn referrers_are_indexed_by_referenced_version() {
    with_store(|store, _| async move {
        let fp = body("\"null\"").fingerprint();
        store.create_version(&row("base", 1, 1, fp)).await.unwrap_or_else(|e| panic!("{e}"));
        let reference = SchemaReference { name: "Base".into(), subject: "base".into(), version: 1 };
        for (name, id) in [("user-b", 3), ("user-a", 2)] {
            let mut referring = row(name, 1, id, fp);
            referring.references = vec![reference.clone(), reference.clone()];
            store.create_version(&referring).await.unwrap_or_else(|e| panic!("{e}"));
        }
        let got = store.referrers(&subject("base"), Version(1)).await.unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(i32, String)> = got.iter().map(|r| (r.id.0, r.subject.to_string())).collect();
        assert_eq!(got, [(2, "user-a".to_string()), (3, "user-b".to_string())]);
        assert!(store.referrers(&subject("base"), Version(2)).await.unwrap_or_default().is_empty());
        store.delete_version(&subject("user-a"), Version(1)).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.referrers(&subject("base"), Version(1)).await.map(|r| r.len()).ok(), Some(1));
    })
    .await;
}

#[tokio::test]
async fn config_and_mode_replace_and_delete_per_scope() {
    with_store(|store, _| async move {
        let scope = Scope::Subject(subject("orders-value"));
        let config = ConfigRecord {
            compatibility_level: Some(CompatibilityLevel::Full),
            normalize: Some(true),
            ..ConfigRecord::default()
        };
        assert_eq!(store.get_config(&scope).await.ok(), Some(None));
        store.put_config(&scope, &config).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.get_config(&scope).await.ok(), Some(Some(config.clone())));
        assert_eq!(store.get_config(&Scope::Global).await.ok(), Some(None));
        assert_eq!(store.delete_config(&scope).await.ok(), Some(Some(config)));
        assert_eq!(store.delete_config(&scope).await.ok(), Some(None));
        store.put_mode(&Scope::Global, Mode::Import).await.unwrap_or_else(|e| panic!("{e}"));
        store.put_mode(&Scope::Global, Mode::ReadOnly).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.get_mode(&Scope::Global).await.ok(), Some(Some(Mode::ReadOnly)));
        assert_eq!(store.get_mode(&scope).await.ok(), Some(None));
        assert_eq!(store.delete_mode(&Scope::Global).await.ok(), Some(Some(Mode::ReadOnly)));
    })
    .await;
}
