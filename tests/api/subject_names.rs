//! Subject names a storage key could trip over: key separators, non-ASCII text and long names
//! round-trip through register, list, lookup and delete on every backend. Names longer than
//! 1000 bytes (`Subject::MAX_BYTES`: DynamoDB caps a sort key at 1024 bytes and the AWS store
//! keys rows by subject) are refused the same way on every backend: 422 / 42208, never a 500.

use api_tests::Harness;
use api_tests::client::enc;
use api_tests::schemas::distinct;

fn names() -> Vec<String> {
    vec![
        "a#V#0000000001".to_string(),
        "S#orders".to_string(),
        "GLOBAL".to_string(),
        "ünïcødé-välue-名前".to_string(),
        "x".repeat(1000),
    ]
}

async fn awkward_subject_names_round_trip(h: &Harness) {
    let names = names();
    let mut ids = Vec::new();
    for (n, name) in names.iter().enumerate() {
        ids.push(h.register(name, &distinct(n)).await);
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(h.subjects("").await, sorted);
    for (n, name) in names.iter().enumerate() {
        assert_eq!(h.versions(name, "").await, [1], "{name}");
        assert_eq!(h.lookup(name, &distinct(n)).await.ok_json(200)["id"], ids[n], "{name}");
        let path = format!("/subjects/{}/versions/1", enc(name));
        assert_eq!(h.get(&path).await.ok_json(200)["subject"], name.as_str());
    }
    for name in &names {
        h.delete_subject(name, false).await.ok_json(200);
        h.delete_subject(name, true).await.ok_json(200);
    }
    assert!(h.subjects("?deleted=true").await.is_empty());
}

async fn subject_over_1000_bytes_is_42208(h: &Harness) {
    let name = "x".repeat(1001);
    let register = h.register_raw(&name, &serde_json::json!({"schema": distinct(1)})).await;
    let message = register.assert_error(422, 42208);
    assert!(message.starts_with("The specified subject 'xxx"), "{message}");
    h.lookup(&name, &distinct(1)).await.assert_error(422, 42208);
    assert!(h.subjects("?deleted=true").await.is_empty(), "nothing was stored");
}

api_tests::api_cases!(awkward_subject_names_round_trip, subject_over_1000_bytes_is_42208);
