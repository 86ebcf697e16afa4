//! `/compatibility/subjects/{s}/versions[/{v}]`.

use crate::support::{Api, USER_BAD, USER_V1, USER_V2};
use serde_json::json;

#[tokio::test]
async fn compatible_schema_answers_is_compatible_only() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let reply = api.post("/compatibility/subjects/users/versions/latest", json!({ "schema": USER_V2 })).await;
    assert_eq!(reply.ok(), json!({"is_compatible": true}));
}

#[tokio::test]
async fn verbose_adds_messages_even_when_empty() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let reply = api.post("/compatibility/subjects/users/versions/1?verbose=true", json!({ "schema": USER_V2 })).await;
    assert_eq!(reply.ok(), json!({"is_compatible": true, "messages": []}));
}

#[tokio::test]
async fn incompatible_schema_is_reported_not_refused() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let uri = "/compatibility/subjects/users/versions/latest";
    assert_eq!(api.post(uri, json!({ "schema": USER_BAD })).await.ok(), json!({"is_compatible": false}));
    let verbose = api.post(&format!("{uri}?verbose=true"), json!({ "schema": USER_BAD })).await.ok();
    assert_eq!(verbose["is_compatible"], false);
    assert!(verbose["messages"].as_array().is_some_and(|m| !m.is_empty()), "{verbose}");
    assert_eq!(api.get("/subjects/users/versions").await.ok(), json!([1]), "never registers");
}

#[tokio::test]
async fn missing_numbered_version_is_40402_but_latest_is_compatible() {
    let api = Api::new();
    let body = json!({"schema": "\"string\""});
    api.post("/compatibility/subjects/nobody/versions/3", body.clone()).await.error(404, 40402);
    let latest = api.post("/compatibility/subjects/nobody/versions/latest", body).await.ok();
    assert_eq!(latest["is_compatible"], true);
}

#[tokio::test]
async fn subject_wide_check_uses_every_live_version_for_transitive_levels() {
    let api = Api::new();
    api.put("/config/users", json!({"compatibility": "NONE"})).await.ok();
    api.register("users", USER_V1).await;
    api.register("users", "\"string\"").await;
    api.put("/config/users", json!({"compatibility": "BACKWARD_TRANSITIVE"})).await.ok();
    let reply = api.post("/compatibility/subjects/users/versions", json!({"schema": "\"string\""})).await.ok();
    assert_eq!(reply["is_compatible"], false);
    api.put("/config/users", json!({"compatibility": "BACKWARD"})).await.ok();
    let reply = api.post("/compatibility/subjects/users/versions", json!({"schema": "\"string\""})).await.ok();
    assert_eq!(reply["is_compatible"], true);
}

#[tokio::test]
async fn invalid_schema_is_42201_or_a_verbose_false() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let bad = json!({"schema": "{\"type\":\"recrod\"}"});
    api.post("/compatibility/subjects/users/versions/latest", bad.clone()).await.error(422, 42201);
    let verbose = api.post("/compatibility/subjects/users/versions/latest?verbose=true", bad).await.ok();
    assert_eq!(verbose["is_compatible"], false);
    assert!(verbose["messages"].as_array().is_some_and(|m| !m.is_empty()));
}
