//! `/schemas` listing, everything by schema ID, and `/contexts`.

use crate::support::{Api, USER_V1, keys};
use serde_json::json;

#[tokio::test]
async fn schema_by_id_answers_type_and_text() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let found = api.get(&format!("/schemas/ids/{id}")).await.ok();
    assert_eq!(keys(&found), ["guid", "schema", "schemaType"]);
    assert_eq!(found["schemaType"], "AVRO");
    assert_eq!(found["schema"], USER_V1);
}

#[tokio::test]
async fn fetch_max_id_adds_max_id() {
    let api = Api::new();
    let first = api.register_id("a", USER_V1).await;
    let second = api.register_id("b", "\"string\"").await;
    let found = api.get(&format!("/schemas/ids/{first}?fetchMaxId=true")).await.ok();
    assert_eq!(found["maxId"].as_i64(), Some(first.max(second)));
    assert!(api.get(&format!("/schemas/ids/{first}?fetchMaxId=false")).await.ok().get("maxId").is_none());
}

#[tokio::test]
async fn format_and_subject_parameters_do_not_change_the_answer() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let plain = api.get(&format!("/schemas/ids/{id}")).await.ok();
    assert_eq!(api.get(&format!("/schemas/ids/{id}?format=nope&subject=other")).await.ok(), plain);
}

#[tokio::test]
async fn unknown_ids_are_40403_with_the_id() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    for id in ["0", "-1", "99999"] {
        let message = api.get(&format!("/schemas/ids/{id}")).await.error(404, 40403);
        assert_eq!(message, format!("Schema {id} not found"));
        api.get(&format!("/schemas/ids/{id}/schema")).await.error(404, 40403);
    }
}

#[tokio::test]
async fn schema_only_by_id_is_the_raw_text() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let reply = api.get(&format!("/schemas/ids/{id}/schema")).await;
    assert_eq!(reply.status.as_u16(), 200);
    assert_eq!(reply.text(), USER_V1);
}

#[tokio::test]
async fn soft_deleted_ids_still_resolve() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    api.delete("/subjects/users").await.ok();
    assert_eq!(api.get(&format!("/schemas/ids/{id}")).await.ok()["schema"], USER_V1);
}

#[tokio::test]
async fn subjects_and_versions_by_id() {
    let api = Api::new();
    let id = api.register_id("b", USER_V1).await;
    api.register("a", USER_V1).await;
    assert_eq!(api.get(&format!("/schemas/ids/{id}/subjects")).await.ok(), json!(["a", "b"]));
    let versions = api.get(&format!("/schemas/ids/{id}/versions")).await.ok();
    assert_eq!(versions, json!([{"subject": "a", "version": 1}, {"subject": "b", "version": 1}]));
    assert_eq!(api.get(&format!("/schemas/ids/{id}/subjects?offset=1")).await.ok(), json!(["b"]));
}

#[tokio::test]
async fn subjects_by_id_hide_soft_deleted_rows_unless_asked() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    api.delete("/subjects/users").await.ok();
    assert_eq!(api.get(&format!("/schemas/ids/{id}/subjects")).await.ok(), json!([]));
    assert_eq!(api.get(&format!("/schemas/ids/{id}/subjects?deleted=true")).await.ok(), json!(["users"]));
    assert_eq!(
        api.get(&format!("/schemas/ids/{id}/versions?deleted=true")).await.ok().as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn listings_by_unknown_id_are_40403_without_the_id() {
    let api = Api::new();
    for suffix in ["subjects", "versions"] {
        let message = api.get(&format!("/schemas/ids/4242/{suffix}")).await.error(404, 40403);
        assert_eq!(message, "Schema not found");
    }
}

#[tokio::test]
async fn schemas_listing_carries_subjects_and_filters() {
    let api = Api::with_two_users().await;
    api.register("plain", "\"string\"").await;
    let all = api.get("/schemas").await.ok();
    let pairs: Vec<(String, i64)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["subject"].as_str().unwrap().to_string(), s["version"].as_i64().unwrap()))
        .collect();
    assert_eq!(pairs, [("plain".into(), 1), ("users".into(), 1), ("users".into(), 2)]);
    assert_eq!(keys(&all[0]), ["guid", "id", "schema", "schemaType", "subject", "version"]);
    let latest = api.get("/schemas?subjectPrefix=users&latestOnly=true").await.ok();
    assert_eq!(latest.as_array().map(Vec::len), Some(1));
    assert_eq!(latest[0]["version"], 2);
    assert_eq!(api.get("/schemas?offset=1&limit=1").await.ok().as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn contexts_list_the_default_context() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    assert_eq!(api.get("/contexts").await.ok(), json!(["."]));
}

#[tokio::test]
async fn format_serialized_answers_protobuf_as_a_base64_descriptor_and_is_not_cached_as_the_text() {
    let api = Api::new();
    let proto = "syntax = \"proto3\";\npackage ops;\n\nmessage Beat {\n  int64 at = 1;\n}";
    let body = json!({"schemaType": "PROTOBUF", "schema": proto});
    let id = api.post("/subjects/beats/versions", body).await.ok()["id"].as_i64().unwrap_or_default();

    let plain = api.get(&format!("/schemas/ids/{id}")).await.ok();
    assert!(plain["schema"].as_str().is_some_and(|stored| stored.contains("message Beat")));
    let uri = format!("/schemas/ids/{id}?subject=beats&format=serialized");
    let serialized = api.get(&uri).await.ok();
    assert_eq!(serialized["schemaType"], "PROTOBUF");
    let descriptor = serialized["schema"].as_str().unwrap_or_default().to_string();
    assert!(!descriptor.is_empty() && !descriptor.contains(char::is_whitespace), "{descriptor}");

    // The text's validators must not answer for the rendering: `If-None-Match: *` still gets 200.
    let conditional = api.raw(axum::http::Method::GET, &uri, None, &[("if-none-match", "*")], "").await;
    assert_eq!(conditional.ok()["schema"], descriptor.as_str());

    let posted_back = json!({"schemaType": "PROTOBUF", "schema": descriptor});
    assert_eq!(api.post("/subjects/beats/versions", posted_back).await.ok()["id"].as_i64(), Some(id));
}
