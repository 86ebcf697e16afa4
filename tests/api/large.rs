//! Subjects bigger than one storage write: deleting more versions (and reference edges) than one
//! DynamoDB transaction holds (100 items) must still delete all of them, on every backend.

use api_tests::Harness;
use api_tests::client::numbers;
use api_tests::schemas::{distinct, record, user_v1};
use serde_json::{Value, json};

/// Versions whose soft delete (one item per version plus the subject counts) overflows one
/// transaction; their hard delete (row and rows-by-id edge per version) does too.
const MANY: usize = 100;
/// Referring versions whose hard delete (row, rows-by-id edge and referrer edge per version)
/// overflows one transaction.
const REFERRERS: usize = 40;

fn order(n: usize) -> Value {
    let schema = record(&format!("Order{n}"), &[("user", r#""User""#)]);
    json!({"schema": schema, "references": [{"name": "User", "subject": "user", "version": 1}]})
}

async fn subject_with_more_versions_than_one_transaction(h: &Harness) {
    h.set_config(Some("big"), "NONE").await.ok_json(200);
    let mut ids = Vec::with_capacity(MANY);
    for n in 0..MANY {
        ids.push(h.register("big", &distinct(n)).await);
    }
    let every: Vec<i64> = (1..=MANY as i64).collect();
    assert_eq!(h.versions("big", "").await, every);

    assert_eq!(numbers(&h.delete_subject("big", false).await.ok_json(200)), every);
    assert!(h.subjects("").await.is_empty());
    assert_eq!(h.versions("big", "?deleted=true").await, every, "every version soft-deleted, none lost");
    assert_eq!(numbers(&h.delete_subject("big", true).await.ok_json(200)), every);
    assert!(h.subjects("?deleted=true").await.is_empty());
    h.get("/subjects/big/versions?deleted=true").await.assert_error(404, 40401);
    for id in [ids[0], ids[MANY / 2], ids[MANY - 1]] {
        h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
    }
    let again = h.register("big", &distinct(0)).await;
    assert!(again > ids[MANY - 1], "a hard-deleted ID is never reissued: {again}");
    assert_eq!(h.versions("big", "").await, [1]);
}

async fn hard_delete_removes_every_reference_edge(h: &Harness) {
    h.register("user", &user_v1()).await;
    h.set_config(Some("orders"), "NONE").await.ok_json(200);
    let mut ids = Vec::with_capacity(REFERRERS);
    for n in 0..REFERRERS {
        ids.push(h.register_body("orders", &order(n)).await);
    }
    let mut listed = numbers(&h.get("/subjects/user/versions/1/referencedby").await.ok_json(200));
    listed.sort_unstable();
    assert_eq!(listed, ids, "every referrer listed");
    h.delete_version("user", "1", false).await.assert_error(422, 42206);

    h.delete_subject("orders", false).await.ok_json(200);
    h.delete_subject("orders", true).await.ok_json(200);
    assert_eq!(h.get("/subjects/user/versions/1/referencedby").await.ok_json(200), json!([]));
    assert_eq!(h.delete_version("user", "1", false).await.ok_json(200), json!(1));
}

api_tests::api_cases!(subject_with_more_versions_than_one_transaction, hard_delete_removes_every_reference_edge);
