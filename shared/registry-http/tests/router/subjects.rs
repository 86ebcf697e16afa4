//! `/subjects` listing, lookup (`POST /subjects/{s}`) and subject delete.

use crate::support::{Api, USER_V1, USER_V2, keys};
use serde_json::json;

#[tokio::test]
async fn empty_registry_lists_no_subjects() {
    assert_eq!(Api::new().get("/subjects").await.ok(), json!([]));
}

#[tokio::test]
async fn subjects_are_listed_sorted() {
    let api = Api::new();
    for subject in ["orders-value", "alpha", "orders-key"] {
        api.register(subject, "\"string\"").await;
    }
    assert_eq!(api.get("/subjects").await.ok(), json!(["alpha", "orders-key", "orders-value"]));
}

#[tokio::test]
async fn subject_prefix_filters_and_wildcard_lists_all() {
    let api = Api::new();
    for subject in ["orders-value", "alpha", "orders-key"] {
        api.register(subject, "\"string\"").await;
    }
    assert_eq!(api.get("/subjects?subjectPrefix=orders").await.ok(), json!(["orders-key", "orders-value"]));
    assert_eq!(api.get("/subjects?subjectPrefix=:*:").await.ok().as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn offset_and_limit_page_the_subjects() {
    let api = Api::new();
    for subject in ["a", "b", "c", "d"] {
        api.register(subject, "\"string\"").await;
    }
    assert_eq!(api.get("/subjects?offset=1&limit=2").await.ok(), json!(["b", "c"]));
    assert_eq!(api.get("/subjects?offset=3").await.ok(), json!(["d"]));
    assert_eq!(api.get("/subjects?limit=0").await.ok(), json!(["a", "b", "c", "d"]));
    api.get("/subjects?offset=x").await.error(404, 404);
}

#[tokio::test]
async fn deleted_and_deleted_only_select_soft_deleted_subjects() {
    let api = Api::new();
    api.register("live", "\"string\"").await;
    api.register("gone", "\"int\"").await;
    api.delete("/subjects/gone").await.ok();
    assert_eq!(api.get("/subjects").await.ok(), json!(["live"]));
    assert_eq!(api.get("/subjects?deleted=true").await.ok(), json!(["gone", "live"]));
    assert_eq!(api.get("/subjects?deletedOnly=true").await.ok(), json!(["gone"]));
    assert_eq!(api.get("/subjects?deleted=true&deletedOnly=true").await.ok(), json!(["gone"]));
}

#[tokio::test]
async fn percent_encoded_slash_stays_in_one_subject() {
    let api = Api::new();
    let registered = api.register("pkg1%2Fmsg1.proto", "\"string\"").await;
    assert_eq!(api.get("/subjects").await.ok(), json!(["pkg1/msg1.proto"]));
    assert_eq!(api.get("/subjects/pkg1%2Fmsg1.proto/versions").await.ok(), json!([1]));
    let version = api.get("/subjects/pkg1%2Fmsg1.proto/versions/1").await.ok();
    assert_eq!(version["subject"], "pkg1/msg1.proto");
    assert_eq!(version["id"], registered["id"]);
}

#[tokio::test]
async fn lookup_answers_the_schema_object() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let found = api.post("/subjects/users", json!({ "schema": USER_V1 })).await.ok();
    assert_eq!(keys(&found), ["guid", "id", "schema", "schemaType", "subject", "version"]);
    assert_eq!(found["subject"], "users");
    assert_eq!(found["version"], 1);
    assert_eq!(found["id"], id);
    assert_eq!(found["schemaType"], "AVRO");
    assert_eq!(found["schema"], USER_V1);
    assert!(found.get("references").is_none(), "empty references are omitted");
}

#[tokio::test]
async fn lookup_matches_whitespace_variants() {
    let api = Api::new();
    let id = api.register_id("users", USER_V1).await;
    let spaced = r#"{ "type": "record", "name": "User", "fields": [ {"name": "id", "type": "int"} ] }"#;
    assert_eq!(api.post("/subjects/users", json!({ "schema": spaced })).await.ok()["id"], id);
}

#[tokio::test]
async fn lookup_of_unknown_subject_is_40401() {
    let message = Api::new().post("/subjects/nobody", json!({"schema": "\"string\""})).await.error(404, 40401);
    assert_eq!(message, "Subject 'nobody' not found.");
}

#[tokio::test]
async fn lookup_of_unregistered_schema_is_40403() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let message = api.post("/subjects/users", json!({ "schema": USER_V2 })).await.error(404, 40403);
    assert_eq!(message, "Schema not found");
}

#[tokio::test]
async fn lookup_of_invalid_schema_is_42201() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    api.post("/subjects/users", json!({"schema": "{\"type\":\"recrod\"}"})).await.error(422, 42201);
}

#[tokio::test]
async fn lookup_with_deleted_finds_soft_deleted_versions() {
    let api = Api::with_two_users().await;
    api.delete("/subjects/users/versions/1").await.ok();
    api.post("/subjects/users", json!({ "schema": USER_V1 })).await.error(404, 40403);
    let found = api.post("/subjects/users?deleted=true", json!({ "schema": USER_V1 })).await.ok();
    assert_eq!(found["version"], 1);
}

#[tokio::test]
async fn soft_delete_returns_live_versions_then_40404() {
    let api = Api::with_two_users().await;
    assert_eq!(api.delete("/subjects/users").await.ok(), json!([1, 2]));
    let message = api.delete("/subjects/users").await.error(404, 40404);
    assert_eq!(message, "Subject 'users' was soft deleted.Set permanent=true to delete permanently");
    api.get("/subjects/users/versions").await.error(404, 40401);
}

#[tokio::test]
async fn permanent_delete_needs_a_soft_delete_first() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let message = api.delete("/subjects/users?permanent=true").await.error(404, 40405);
    assert_eq!(message, "Subject 'users' was not deleted first before being permanently deleted");
    api.delete("/subjects/users").await.ok();
    assert_eq!(api.delete("/subjects/users?permanent=true").await.ok(), json!([1]));
    assert_eq!(api.get("/subjects?deleted=true").await.ok(), json!([]));
    assert_eq!(api.register("users", USER_V1).await["version"], 1);
}

#[tokio::test]
async fn deleting_an_unknown_subject_is_40401() {
    let api = Api::new();
    api.delete("/subjects/nobody").await.error(404, 40401);
    api.delete("/subjects/nobody?permanent=true").await.error(404, 40401);
}
