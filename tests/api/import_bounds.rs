//! No IMPORT can wedge a context's ID allocation: explicit IDs above 2^30 are refused (422 / 42205),
//! a counter an earlier import pushed to the top of the ID space allocates again, and only a caller
//! whose scope holds a subject's whole context may import explicit IDs there.

use api_tests::Harness;
use api_tests::schemas::{distinct, user_v1};
use registry_core::{Context, SchemaBody, SchemaId, SchemaType};
use reqwest::Method;
use serde_json::{Value, json};

/// The greatest explicit ID an import may bind.
const MAX_IMPORTED: i64 = 1 << 30;

/// An IMPORT of `id` under `subject` (version 1, a schema of its own).
fn import_body(id: i64, tag: usize) -> Value {
    json!({ "schema": distinct(tag), "id": id, "version": 1 })
}

/// Explicit IDs above the bound are refused with a message naming the ID and the bound, whether
/// the counter is far below or at the bound; the bound itself is accepted; registrations in the
/// context, by anyone, go on getting the IDs after the greatest one.
async fn explicit_ids_above_the_bound_are_refused(h: &Harness) {
    let before = h.register("team-b.before", &user_v1()).await;
    h.set_mode(Some("team-a.imp"), "IMPORT", "").await.ok_json(200);
    for hostile in [i64::from(i32::MAX), MAX_IMPORTED + 1] {
        let message = h.register_raw("team-a.imp", &import_body(hostile, 1)).await.assert_error(422, 42205);
        assert!(message.contains(&hostile.to_string()) && message.contains(&MAX_IMPORTED.to_string()), "{message}");
    }
    h.get(&format!("/schemas/ids/{}", i32::MAX)).await.assert_error(404, 40403);
    let after = h.register("team-b.after", &distinct(2)).await;
    assert_eq!(after, before + 1, "the counter did not move");

    assert_eq!(h.register_body("team-a.imp", &import_body(MAX_IMPORTED, 3)).await, MAX_IMPORTED);
    h.set_mode(Some("team-a.imp2"), "IMPORT", "").await.ok_json(200);
    h.register_raw("team-a.imp2", &import_body(MAX_IMPORTED + 1, 5)).await.assert_error(422, 42205);
    assert_eq!(h.register("team-b.later", &distinct(6)).await, MAX_IMPORTED + 1, "allocation continues");
    assert_eq!(h.register("team-b.last", &distinct(7)).await, MAX_IMPORTED + 2);
}

/// The same bound in a named context, through the base-URL form.
async fn the_bound_holds_in_named_contexts(h: &Harness) {
    let base = "/contexts/.team-a";
    let put = h.put(&format!("{base}/mode/imp"), &json!({ "mode": "IMPORT" })).await;
    put.ok_json(200);
    let path = format!("{base}/subjects/imp/versions");
    h.post(&path, &import_body(i64::from(i32::MAX), 1)).await.assert_error(422, 42205);
    let imported = h.post(&path, &import_body(MAX_IMPORTED, 2)).await.ok_json(200);
    assert_eq!(imported["id"], MAX_IMPORTED);
    let next = h.post(&format!("{base}/subjects/new/versions"), &json!({ "schema": distinct(3) })).await.ok_json(200);
    assert_eq!(next["id"], MAX_IMPORTED + 1);
}

/// A store an import wedged before the bound existed (its counter at `i32::MAX`, the ID bound and
/// its subject hard-deleted since): new registrations get IDs again, after the greatest ID at or
/// below the bound, and the ID at the top is not handed out.
async fn a_counter_an_import_pushed_to_the_top_allocates_again(h: &Harness) {
    let first = h.register("team-b.first", &user_v1()).await;
    let body = SchemaBody {
        schema_type: SchemaType::Avro,
        schema: distinct(99),
        references: Vec::new(),
        metadata: None,
        rule_set: None,
    };
    let fingerprint = body.fingerprint();
    h.store().put_body(&fingerprint, &body).await.unwrap_or_else(|e| panic!("put_body: {e}"));
    let top = SchemaId(i32::MAX);
    h.store().bind_id_in(&Context::DEFAULT, top, &fingerprint).await.unwrap_or_else(|e| panic!("bind_id_in: {e}"));

    assert_eq!(h.register("team-b.second", &distinct(1)).await, first + 1);
    assert_eq!(h.register("team-b.third", &distinct(2)).await, first + 2);
    let bound = h.store().fingerprint_for_id_in(&Context::DEFAULT, top).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bound, Some(fingerprint), "the ID at the top keeps its schema");
}

/// An admin scoped to some subjects (`team-a.`) may not import explicit IDs in the default
/// context, whose counter every team shares (403, nothing registered); an unscoped admin may, and
/// so may an admin scoped to a whole context (`:.ctx-a:`) inside it.
async fn only_a_scope_holding_the_whole_context_imports_ids(h: &Harness) {
    let mode = json!({ "mode": "IMPORT" });
    h.send_as("team-a-admin", Method::PUT, "/mode/team-a.imp", Some(&mode)).await.ok_json(200);
    let path = "/subjects/team-a.imp/versions";
    let refused = h.send_as("team-a-admin", Method::POST, path, Some(&import_body(5000, 1))).await;
    let message = refused.assert_error(403, 40301);
    assert_eq!(message, "User is denied operation Import on SchemaRegistry");
    h.send_as("reader", Method::GET, "/schemas/ids/5000", None).await.assert_error(404, 40403);
    h.send_as("reader", Method::GET, path, None).await.assert_error(404, 40401);

    let imported = h.send_as("admin", Method::POST, path, Some(&import_body(5000, 1))).await.ok_json(200);
    assert_eq!(imported["id"], 5000);

    let in_context = "/subjects/:.ctx-a:imp/versions";
    h.send_as("ctx-a-admin", Method::PUT, "/mode/:.ctx-a:imp", Some(&mode)).await.ok_json(200);
    let imported = h.send_as("ctx-a-admin", Method::POST, in_context, Some(&import_body(7, 2))).await.ok_json(200);
    assert_eq!(imported["id"], 7);
    let refused = h.send_as("ctx-a-admin", Method::POST, path, Some(&import_body(6000, 3))).await;
    refused.assert_error(403, 40301);
}

api_tests::api_cases!(
    explicit_ids_above_the_bound_are_refused,
    the_bound_holds_in_named_contexts,
    a_counter_an_import_pushed_to_the_top_allocates_again,
);

mod authenticated {
    use super::*;

    api_tests::api_cases!(authenticated: only_a_scope_holding_the_whole_context_imports_ids);
}
