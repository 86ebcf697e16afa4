//! The DEK registry's key store on DynamoDB (the emulator): the key store conformance suite
//! (`registry_dek::testkit`, races included; one test and one table per case), and AWS calls per
//! DEK operation as the service makes them. Prints the figures
//! (`cargo test -p registry-store-aws --test deks -- --nocapture`).

mod support;

use registry_dek::testkit::{dek, kek, unique_name};
use registry_dek::{DekAlgorithm, DekSeries, Expect, KekGuard, KeyStore, SubjectPage};
use std::sync::Arc;
use support::{calls_of, with_store};

/// One test per case of [`registry_dek::key_store_conformance_cases`], on a table and bucket of
/// its own.
macro_rules! dynamodb_key_store_cases {
    ($($name:ident => $case:expr,)*) => {
        mod key_store_conformance {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let case: registry_dek::testkit::CaseFn = $case;
                    with_store(|store, _| async move { case(Arc::new(store)).await }).await;
                }
            )*
        }
    };
}
registry_dek::key_store_conformance_cases!(dynamodb_key_store_cases);

#[tokio::test]
async fn each_dek_operation_costs_a_constant_few_calls() {
    with_store(|store, _| async move {
        let name = unique_name("calls");
        let (create_kek, created) = calls_of(&store, store.put_kek(&kek(&name), Expect::Absent)).await;
        created.unwrap_or_else(|e| panic!("{e}"));
        // Other subjects, versions and deleted versions under the KEK must not change the costs.
        for other in 0..20 {
            let other_dek = dek(&name, &format!("other-{other}"), DekAlgorithm::Aes256Gcm, 1);
            store.put_dek(&other_dek, Expect::Absent, KekGuard::Live).await.unwrap_or_else(|e| panic!("{e}"));
        }
        for version in 1..=5 {
            let mut old = dek(&name, "orders-value", DekAlgorithm::Aes256Gcm, version);
            old.deleted = version == 5;
            store.put_dek(&old, Expect::Absent, KekGuard::Unchecked).await.unwrap_or_else(|e| panic!("{e}"));
        }

        let series = DekSeries { kek_name: &name, subject: "orders-value", algorithm: DekAlgorithm::Aes256Gcm };
        // A client's get-latest: the KEK, then the subject's latest live version.
        let (get_latest, latest) = calls_of(&store, async {
            let kek = store.kek(&name).await.unwrap_or_else(|e| panic!("{e}"));
            assert!(kek.is_some());
            store.latest_dek(series, false).await
        })
        .await;
        assert_eq!(latest.unwrap_or_else(|e| panic!("{e}")).map(|d| d.value.version), Some(4));

        let next = dek(&name, "orders-value", DekAlgorithm::Aes256Gcm, 6);
        let (create_dek, created) = calls_of(&store, store.put_dek(&next, Expect::Absent, KekGuard::Live)).await;
        created.unwrap_or_else(|e| panic!("{e}"));
        let (get_version, got) = calls_of(&store, store.dek(&next.id())).await;
        assert!(got.unwrap_or_else(|e| panic!("{e}")).is_some());
        let (list_versions, versions) = calls_of(&store, store.deks(series, 0, 100)).await;
        assert_eq!(versions.unwrap_or_else(|e| panic!("{e}")).len(), 6);
        let page = SubjectPage { kek_name: &name, prefix: "", after: None, limit: 100, include_deleted: false };
        let (list_subjects, subjects) = calls_of(&store, store.dek_subjects(page)).await;
        assert_eq!(subjects.unwrap_or_else(|e| panic!("{e}")).len(), 21);
        // `GET /keks?subjectPrefix=...` asks this once per (KEK, prefix): a hit, and a miss
        // between subjects.
        let mut by_prefix = Vec::new();
        for prefix in ["orders-", "other-1", "other-10x"] {
            let page = SubjectPage { kek_name: &name, prefix, after: None, limit: 1, include_deleted: false };
            let (calls, subjects) = calls_of(&store, store.dek_subjects(page)).await;
            by_prefix.push((calls, subjects.unwrap_or_else(|e| panic!("{e}"))));
        }
        let expected = [(1, vec!["orders-value".to_string()]), (1, vec!["other-1".to_string()]), (1, Vec::new())];
        assert_eq!(by_prefix, expected, "subjects by prefix: one Query page each");
        let (has_live, has) = calls_of(&store, store.has_deks(&name, false)).await;
        assert!(has.unwrap_or_else(|e| panic!("{e}")));

        println!(
            "AWS calls: create KEK {create_kek}, get latest DEK (KEK + latest) {get_latest}, create DEK {create_dek}, \
             get DEK version {get_version}, list versions {list_versions}, list subjects {list_subjects}, \
             KEK has live DEKs {has_live}"
        );
        assert_eq!(create_kek, 1, "create KEK: one conditional PutItem");
        assert_eq!(get_latest, 2, "get latest DEK: GetItem of the KEK, one Query page of the subject's versions");
        assert_eq!(create_dek, 1, "create DEK: one TransactWriteItems with the KEK guard");
        assert_eq!(get_version, 1, "get a DEK version: one GetItem");
        assert_eq!(list_versions, 1, "list versions: one Query page");
        assert_eq!(list_subjects, 1, "list subjects: one Query page");
        assert_eq!(has_live, 1, "KEK has live DEKs: one Query page");
    })
    .await;
}
