//! `/subjects/{s}/versions` resource: register, listing, one version, raw schema, referrers, delete.

use crate::support::{Api, USER_BAD, USER_V1, USER_V2, keys};
use serde_json::json;

const BASE: &str = r#"{"type":"record","name":"Base","namespace":"n","fields":[{"name":"x","type":"int"}]}"#;
const TOP: &str = r#"{"type":"record","name":"Top","namespace":"n","fields":[{"name":"b","type":"Base"}]}"#;

async fn register_with_reference(api: &Api) -> serde_json::Value {
    api.register("base", BASE).await;
    let body = json!({"schema": TOP, "references": [{"name": "n.Base", "subject": "base", "version": 1}]});
    api.post("/subjects/top/versions", body).await.ok()
}

#[tokio::test]
async fn register_answers_the_stored_schema_without_subject() {
    let api = Api::new();
    let answer = api.register("users", USER_V1).await;
    assert_eq!(keys(&answer), ["guid", "id", "schema", "schemaType", "version"]);
    assert!(answer["id"].as_i64().is_some_and(|id| id > 0));
    assert_eq!(answer["version"], 1);
    assert_eq!(answer["schemaType"], "AVRO");
    assert_eq!(answer["schema"], USER_V1);
}

#[tokio::test]
async fn re_registering_returns_the_same_id_and_version() {
    let api = Api::new();
    let first = api.register("users", USER_V1).await;
    let again = api.register("users", USER_V1).await;
    assert_eq!((&first["id"], &first["version"]), (&again["id"], &again["version"]));
    assert_eq!(api.get("/subjects/users/versions").await.ok(), json!([1]));
}

#[tokio::test]
async fn same_schema_in_another_subject_shares_the_id() {
    let api = Api::new();
    api.register("other", "\"long\"").await;
    let first = api.register("a", USER_V1).await;
    let second = api.register("b", USER_V1).await;
    assert_eq!(first["id"], second["id"]);
    assert_eq!(second["version"], 1);
}

#[tokio::test]
async fn new_versions_count_up() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let second = api.register("users", USER_V2).await;
    assert_eq!(second["version"], 2);
    assert_eq!(api.get("/subjects/users/versions").await.ok(), json!([1, 2]));
}

#[tokio::test]
async fn incompatible_schema_is_409_40901() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let reply = api.post("/subjects/users/versions", json!({ "schema": USER_BAD })).await;
    let message = reply.error(409, 40901);
    assert!(
        message.starts_with("Schema being registered is incompatible with an earlier schema for subject \"users\""),
        "{message}"
    );
}

#[tokio::test]
async fn incompatible_schema_is_the_bare_409_when_configured_so() {
    let registry = registry_core::Registry::new(
        std::sync::Arc::new(registry_core::MemoryStore::new()),
        registry_core::RegistrySettings::default(),
    );
    let options = registry_http::AppOptions {
        incompatible_error_code: registry_http::error::IncompatibleErrorCode::Legacy,
        ..registry_http::AppOptions::default()
    };
    let api = Api::with_router(registry_http::app(registry, options));
    api.register("users", USER_V1).await;
    let reply = api.post("/subjects/users/versions", json!({ "schema": USER_BAD })).await;
    let message = reply.error(409, 409);
    assert!(message.starts_with("Schema being registered is incompatible"), "{message}");
    // Other errors keep their codes.
    api.post("/subjects/users/versions", json!({"schema": "not json"})).await.error(422, 42201);
    api.post("/compatibility/subjects/users/versions/1", json!({ "schema": USER_BAD })).await.ok();
}

#[tokio::test]
async fn invalid_or_empty_schemas_are_42201() {
    let api = Api::new();
    api.post("/subjects/users/versions", json!({"schema": "{\"type\":\"recrod\"}"})).await.error(422, 42201);
    api.post("/subjects/users/versions", json!({"schema": "not json at all"})).await.error(422, 42201);
    api.post("/subjects/users/versions", json!({})).await.error(422, 42201);
    api.post("/subjects/users/versions", json!({"schema": ""})).await.error(422, 42201);
}

#[tokio::test]
async fn json_schemas_report_their_type() {
    let api = Api::new();
    let schema = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let answer = api.post("/subjects/j/versions", json!({"schema": schema, "schemaType": "JSON"})).await.ok();
    assert_eq!(answer["schemaType"], "JSON");
    assert_eq!(api.get("/subjects/j/versions/1").await.ok()["schemaType"], "JSON");
}

#[tokio::test]
async fn version_listing_of_unknown_subject_is_40401() {
    let message = Api::new().get("/subjects/nobody/versions").await.error(404, 40401);
    assert_eq!(message, "Subject 'nobody' not found.");
}

#[tokio::test]
async fn deleted_versions_are_listed_on_request() {
    let api = Api::with_two_users().await;
    api.delete("/subjects/users/versions/1").await.ok();
    assert_eq!(api.get("/subjects/users/versions").await.ok(), json!([2]));
    assert_eq!(api.get("/subjects/users/versions?deleted=true").await.ok(), json!([1, 2]));
    assert_eq!(api.get("/subjects/users/versions?deletedOnly=true").await.ok(), json!([1]));
    assert_eq!(api.get("/subjects/users/versions?deletedAsNegative=true").await.ok(), json!([-1, 2]));
    assert_eq!(api.get("/subjects/users/versions?deleted=true&offset=1&limit=1").await.ok(), json!([2]));
}

#[tokio::test]
async fn get_version_answers_the_schema_object() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let version = api.get("/subjects/users/versions/1").await.ok();
    assert_eq!(keys(&version), ["guid", "id", "schema", "schemaType", "subject", "version"]);
    assert_eq!((version["subject"].as_str(), version["version"].as_i64()), (Some("users"), Some(1)));
    assert_eq!(version["id"], id);
    assert_eq!(version["schema"], USER_V1);
}

#[tokio::test]
async fn latest_and_minus_one_are_the_highest_live_version() {
    let api = Api::with_two_users().await;
    for selector in ["latest", "LATEST", "-1"] {
        assert_eq!(api.get(&format!("/subjects/users/versions/{selector}")).await.ok()["version"], 2, "{selector}");
    }
    api.delete("/subjects/users/versions/2").await.ok();
    assert_eq!(api.get("/subjects/users/versions/latest").await.ok()["version"], 1);
}

#[tokio::test]
async fn missing_version_is_40402_and_missing_subject_40401() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let message = api.get("/subjects/users/versions/7").await.error(404, 40402);
    assert_eq!(message, "Version 7 not found.");
    api.get("/subjects/nobody/versions/1").await.error(404, 40401);
    api.get("/subjects/nobody/versions/latest").await.error(404, 40401);
}

#[tokio::test]
async fn soft_deleted_version_is_hidden_unless_deleted_is_set() {
    let api = Api::with_two_users().await;
    api.delete("/subjects/users/versions/1").await.ok();
    api.get("/subjects/users/versions/1").await.error(404, 40402);
    let found = api.get("/subjects/users/versions/1?deleted=true").await.ok();
    assert_eq!(found["version"], 1);
    assert_eq!(found["deleted"], true, "CP 8.x marks soft-deleted versions");
    assert!(api.get("/subjects/users/versions/2").await.ok().get("deleted").is_none());
}

#[tokio::test]
async fn schema_only_returns_the_raw_text() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    api.register("plain", "\"string\"").await;
    let reply = api.get("/subjects/users/versions/1/schema").await;
    assert_eq!(reply.status.as_u16(), 200);
    assert_eq!(reply.text(), USER_V1);
    assert_eq!(api.get("/subjects/plain/versions/latest/schema").await.text(), "\"string\"");
    api.get("/subjects/users/versions/9/schema").await.error(404, 40402);
    api.get("/subjects/nobody/versions/1/schema").await.error(404, 40401);
}

#[tokio::test]
async fn delete_version_returns_a_bare_int() {
    let api = Api::with_two_users().await;
    let reply = api.delete("/subjects/users/versions/latest").await;
    assert_eq!(reply.ok(), json!(2));
    assert_eq!(reply.text(), "2");
}

#[tokio::test]
async fn delete_version_error_order() {
    let api = Api::with_two_users().await;
    let live = api.delete("/subjects/users/versions/1?permanent=true").await.error(404, 40407);
    assert_eq!(live, "Subject 'users' Version 1 was not deleted first before being permanently deleted");
    api.delete("/subjects/users/versions/1").await.ok();
    let twice = api.delete("/subjects/users/versions/1").await.error(404, 40406);
    assert_eq!(twice, "Subject 'users' Version 1 was soft deleted.Set permanent=true to delete permanently");
    assert_eq!(api.delete("/subjects/users/versions/1?permanent=true").await.ok(), json!(1));
    api.delete("/subjects/users/versions/1").await.error(404, 40402);
    api.delete("/subjects/nobody/versions/1").await.error(404, 40401);
}

#[tokio::test]
async fn references_are_echoed_and_indexed() {
    let api = Api::new();
    let top = register_with_reference(&api).await;
    assert_eq!(top["references"], json!([{"name": "n.Base", "subject": "base", "version": 1}]));
    let version = api.get("/subjects/top/versions/1").await.ok();
    assert_eq!(version["references"], top["references"]);
    assert_eq!(api.get("/subjects/base/versions/1/referencedby").await.ok(), json!([top["id"]]));
    assert_eq!(api.get("/subjects/top/versions/1/referencedby").await.ok(), json!([]));
}

#[tokio::test]
async fn referenced_versions_cannot_be_deleted() {
    let api = Api::new();
    register_with_reference(&api).await;
    let message = api.delete("/subjects/base/versions/1").await.error(422, 42206);
    assert!(message.starts_with("One or more references exist to the schema"), "{message}");
    api.delete("/subjects/base").await.error(422, 42206);
}

#[tokio::test]
async fn unknown_reference_is_42201() {
    let api = Api::new();
    let body = json!({"schema": TOP, "references": [{"name": "n.Base", "subject": "missing", "version": 1}]});
    api.post("/subjects/top/versions", body).await.error(422, 42201);
}

#[tokio::test]
async fn readonly_mode_refuses_new_schemas_but_answers_existing_ones() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    api.put("/mode/users", json!({"mode": "READONLY"})).await.ok();
    api.post("/subjects/users/versions", json!({ "schema": USER_V2 })).await.error(422, 42205);
    assert_eq!(api.register_id("users", USER_V1).await, id);
    api.delete("/subjects/users/versions/1").await.error(422, 42205);
}

#[tokio::test]
async fn import_mode_takes_explicit_ids_and_versions() {
    let api = Api::new();
    api.put("/mode/imported", json!({"mode": "IMPORT"})).await.ok();
    let body = json!({"schema": USER_V1, "id": 500, "version": 3});
    let answer = api.post("/subjects/imported/versions", body).await.ok();
    assert_eq!((answer["id"].as_i64(), answer["version"].as_i64()), (Some(500), Some(3)));
    api.post("/subjects/imported/versions", json!({ "schema": USER_V2 })).await.error(422, 42205);
    api.post("/subjects/elsewhere/versions", json!({"schema": USER_V2, "id": 77})).await.error(422, 42205);
}

const BEAT_PROTO: &str = "syntax = \"proto3\";\npackage ops;\n\nmessage Beat {\n  int64 at = 1;\n}";

#[tokio::test]
async fn format_serialized_answers_a_base64_descriptor_for_protobuf_only() {
    let api = Api::new();
    let body = json!({"schemaType": "PROTOBUF", "schema": BEAT_PROTO});
    let id = api.post("/subjects/beats/versions", body).await.ok()["id"].as_i64();

    let plain = api.get("/subjects/beats/versions/latest").await.ok();
    let stored = plain["schema"].as_str().unwrap_or_default().to_string();
    assert!(stored.contains("message Beat"), "{stored}");
    let serialized = api.get("/subjects/beats/versions/latest?format=serialized").await.ok();
    let descriptor = serialized["schema"].as_str().unwrap_or_default().to_string();
    assert!(!descriptor.is_empty() && !descriptor.contains(char::is_whitespace), "{descriptor}");
    assert_eq!((serialized["id"].as_i64(), &serialized["version"]), (id, &json!(1)));

    // Posting the serialized form back (as confluent-kafka's serializer does) finds the same schema.
    let lookup = api.post("/subjects/beats", json!({"schemaType": "PROTOBUF", "schema": descriptor})).await.ok();
    assert_eq!((lookup["id"].as_i64(), &lookup["version"]), (id, &json!(1)));

    let unknown = api.get("/subjects/beats/versions/1?format=nope").await.ok();
    assert_eq!(unknown["schema"], stored.as_str(), "an unknown format answers the stored text");
    api.register("users", USER_V1).await;
    let avro = api.get("/subjects/users/versions/1?format=serialized").await.ok();
    assert_eq!(avro["schema"], USER_V1);
}
