//! 32 concurrent registrations: IDs stay unique per schema and versions stay dense per subject.

use api_tests::Harness;
use api_tests::client::avro;
use api_tests::schemas::{distinct, user_v1};
use futures::future::join_all;
use std::collections::{BTreeSet, HashSet};

const WRITERS: usize = 32;

async fn register_all(h: &Harness, requests: Vec<(String, String)>) -> Vec<(i64, i64)> {
    let calls = requests.iter().map(|(subject, schema)| async move {
        let body = h.register_raw(subject, &avro(schema)).await.ok_json(200);
        let id = body["id"].as_i64().unwrap_or_else(|| panic!("no id: {body}"));
        let version = body["version"].as_i64().unwrap_or_else(|| panic!("no version: {body}"));
        (id, version)
    });
    join_all(calls).await
}

async fn same_schema_one_subject(h: &Harness) {
    let answers = register_all(h, (0..WRITERS).map(|_| ("s".to_string(), user_v1())).collect()).await;
    let distinct_answers: HashSet<(i64, i64)> = answers.into_iter().collect();
    assert_eq!(distinct_answers.len(), 1, "{distinct_answers:?}");
    assert_eq!(h.versions("s", "?deleted=true").await, [1]);
}

async fn different_schemas_one_subject(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    let answers = register_all(h, (0..WRITERS).map(|n| ("s".to_string(), distinct(n))).collect()).await;
    let ids: HashSet<i64> = answers.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), WRITERS, "ids must be unique: {answers:?}");
    let versions: BTreeSet<i64> = answers.iter().map(|(_, version)| *version).collect();
    let expected: BTreeSet<i64> = (1..=WRITERS as i64).collect();
    assert_eq!(versions, expected, "versions must be dense");
    assert_eq!(h.versions("s", "").await, expected.into_iter().collect::<Vec<_>>());
    for (id, version) in answers {
        assert_eq!(h.get_version("s", &version.to_string()).await.ok_json(200)["id"], id);
    }
}

async fn same_schema_many_subjects(h: &Harness) {
    let answers = register_all(h, (0..WRITERS).map(|n| (format!("s{n}"), user_v1())).collect()).await;
    let ids: HashSet<i64> = answers.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), 1, "one schema, one id: {answers:?}");
    assert!(answers.iter().all(|(_, version)| *version == 1));
    assert_eq!(h.subjects("").await.len(), WRITERS);
}

async fn different_schemas_many_subjects(h: &Harness) {
    let answers = register_all(h, (0..WRITERS).map(|n| (format!("s{n}"), distinct(n))).collect()).await;
    let ids: HashSet<i64> = answers.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), WRITERS);
    for (n, (id, _)) in answers.into_iter().enumerate() {
        let found = h.lookup(&format!("s{n}"), &distinct(n)).await.ok_json(200);
        assert_eq!(found["id"], id);
    }
}

async fn mixed_same_and_different(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    let requests = (0..WRITERS).map(|n| ("s".to_string(), distinct(n % 4))).collect();
    let answers = register_all(h, requests).await;
    let pairs: HashSet<(i64, i64)> = answers.into_iter().collect();
    assert_eq!(pairs.len(), 4, "four schemas, four (id, version) pairs: {pairs:?}");
    assert_eq!(h.versions("s", "").await, [1, 2, 3, 4]);
}

api_tests::api_cases!(
    same_schema_one_subject,
    different_schemas_one_subject,
    same_schema_many_subjects,
    different_schemas_many_subjects,
    mixed_same_and_different,
);
