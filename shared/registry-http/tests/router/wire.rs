//! Wire details with stored data: request media types on register, `Accept` on stored answers,
//! and optional fields (`metadata`, `references`) on every schema shape.

use crate::support::{Api, JSON, USER_V1, V1};
use axum::body::Body;
use axum::http::Method;
use serde_json::json;

#[tokio::test]
async fn register_accepts_every_consumed_media_type_and_none() {
    let api = Api::new();
    let body = json!({ "schema": USER_V1 }).to_string();
    let types =
        [Some(V1), Some("application/vnd.schemaregistry+json"), Some(JSON), Some("application/octet-stream"), None];
    let mut ids = Vec::new();
    for content_type in types {
        let reply = api.raw(Method::POST, "/subjects/users/versions", content_type, &[], body.clone()).await;
        ids.push(reply.ok()["id"].clone());
    }
    assert!(ids.windows(2).all(|pair| pair[0] == pair[1]), "{ids:?}");
}

#[tokio::test]
async fn unknown_request_fields_are_ignored() {
    let api = Api::new();
    let body = json!({"schema": "\"string\"", "schemaTagsToAdd": [], "whatever": {"x": 1}});
    api.post("/subjects/users/versions", body).await.ok();
}

#[tokio::test]
async fn accept_json_applies_to_stored_answers_and_raw_schemas() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    for uri in ["/subjects/users/versions/1", "/subjects/users/versions/1/schema", "/subjects", "/config"] {
        let reply = api.raw(Method::GET, uri, None, &[("accept", JSON)], Body::empty()).await;
        assert_eq!(reply.status.as_u16(), 200, "{uri}");
        assert_eq!(reply.content_type.as_deref(), Some(JSON), "{uri}");
    }
    let missing = api.raw(Method::GET, "/subjects/users/versions/9", None, &[("accept", JSON)], Body::empty()).await;
    missing.error(404, 40402);
}

#[tokio::test]
async fn metadata_is_echoed_on_register_and_reads() {
    let api = Api::new();
    let metadata = json!({"properties": {"owner": "team-a"}});
    let body = json!({"schema": USER_V1, "metadata": metadata});
    let registered = api.post("/subjects/users/versions", body).await.ok();
    assert_eq!(registered["metadata"], metadata);
    assert_eq!(api.get("/subjects/users/versions/1").await.ok()["metadata"], metadata);
    let id = registered["id"].as_i64().unwrap();
    assert_eq!(api.get(&format!("/schemas/ids/{id}")).await.ok()["metadata"], metadata);
}

#[tokio::test]
async fn references_appear_on_schema_by_id() {
    let api = Api::new();
    api.register("base", r#"{"type":"record","name":"Base","namespace":"n","fields":[{"name":"x","type":"int"}]}"#)
        .await;
    let top = r#"{"type":"record","name":"Top","namespace":"n","fields":[{"name":"b","type":"Base"}]}"#;
    let references = json!([{"name": "n.Base", "subject": "base", "version": 1}]);
    let id = api.post("/subjects/top/versions", json!({"schema": top, "references": references})).await.ok()["id"]
        .as_i64()
        .unwrap();
    assert_eq!(api.get(&format!("/schemas/ids/{id}")).await.ok()["references"], references);
    let found = api.post("/subjects/top", json!({"schema": top, "references": references})).await.ok();
    assert_eq!(found["references"], references);
}

#[tokio::test]
async fn normalize_parameter_is_accepted_on_register_lookup_and_compatibility() {
    let api = Api::new();
    let registered = api.post("/subjects/users/versions?normalize=true", json!({ "schema": USER_V1 })).await.ok();
    let found = api.post("/subjects/users?normalize=true", json!({ "schema": USER_V1 })).await.ok();
    assert_eq!(found["id"], registered["id"]);
    let uri = "/compatibility/subjects/users/versions/latest?normalize=true";
    assert_eq!(api.post(uri, json!({ "schema": USER_V1 })).await.ok(), json!({"is_compatible": true}));
}

#[tokio::test]
async fn protobuf_subjects_with_slashes_register_and_read_back() {
    let api = Api::new();
    let proto = "syntax = \"proto3\";\npackage pkg1;\n\nmessage Msg1 {\n  string name = 1;\n}\n";
    let body = json!({"schema": proto, "schemaType": "PROTOBUF"});
    let registered = api.post("/subjects/pkg1%2Fmsg1.proto/versions", body).await.ok();
    assert_eq!(registered["schemaType"], "PROTOBUF");
    let version = api.get("/subjects/pkg1%2Fmsg1.proto/versions/latest").await.ok();
    assert_eq!(
        (version["subject"].as_str(), version["schemaType"].as_str()),
        (Some("pkg1/msg1.proto"), Some("PROTOBUF"))
    );
}
