//! `/config` and `/mode`, global and per subject.

use crate::support::{Api, USER_V1};
use serde_json::json;

#[tokio::test]
async fn global_config_defaults_to_backward() {
    assert_eq!(Api::new().get("/config").await.ok(), json!({"compatibilityLevel": "BACKWARD"}));
}

#[tokio::test]
async fn put_global_config_echoes_with_the_put_key() {
    let api = Api::new();
    assert_eq!(api.put("/config", json!({"compatibility": "full"})).await.ok(), json!({"compatibility": "FULL"}));
    assert_eq!(api.get("/config").await.ok(), json!({"compatibilityLevel": "FULL"}));
}

#[tokio::test]
async fn delete_global_config_returns_it_and_restores_the_default() {
    let api = Api::new();
    api.put("/config", json!({"compatibility": "NONE"})).await.ok();
    assert_eq!(api.delete("/config").await.ok()["compatibilityLevel"], "NONE");
    assert_eq!(api.get("/config").await.ok(), json!({"compatibilityLevel": "BACKWARD"}));
}

#[tokio::test]
async fn unset_subject_config_is_40408_unless_default_to_global() {
    let api = Api::new();
    let message = api.get("/config/users").await.error(404, 40408);
    assert_eq!(message, "Subject 'users' does not have subject-level compatibility configured");
    let effective = api.get("/config/users?defaultToGlobal=true").await.ok();
    assert_eq!(effective["compatibilityLevel"], "BACKWARD");
}

#[tokio::test]
async fn subject_config_round_trip_and_delete() {
    let api = Api::new();
    let echoed = api.put("/config/users", json!({"compatibility": "forward_transitive"})).await.ok();
    assert_eq!(echoed, json!({"compatibility": "FORWARD_TRANSITIVE"}));
    assert_eq!(api.get("/config/users").await.ok(), json!({"compatibilityLevel": "FORWARD_TRANSITIVE"}));
    assert_eq!(api.get("/config").await.ok()["compatibilityLevel"], "BACKWARD");
    assert_eq!(api.delete("/config/users").await.ok()["compatibilityLevel"], "FORWARD_TRANSITIVE");
    api.get("/config/users").await.error(404, 40408);
    let message = api.delete("/config/users").await.error(404, 40401);
    assert_eq!(message, "Subject 'users' not found.");
}

#[tokio::test]
async fn normalize_is_stored_and_returned() {
    let api = Api::new();
    let echoed = api.put("/config/users", json!({"compatibility": "NONE", "normalize": true})).await.ok();
    assert_eq!(echoed, json!({"compatibility": "NONE", "normalize": true}));
    assert_eq!(api.get("/config/users").await.ok(), json!({"compatibilityLevel": "NONE", "normalize": true}));
}

#[tokio::test]
async fn subject_config_governs_registration() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    api.put("/config/users", json!({"compatibility": "NONE"})).await.ok();
    api.register("users", "\"string\"").await;
    assert_eq!(api.get("/subjects/users/versions").await.ok(), json!([1, 2]));
}

#[tokio::test]
async fn global_mode_defaults_to_readwrite_and_can_change() {
    let api = Api::new();
    assert_eq!(api.get("/mode").await.ok(), json!({"mode": "READWRITE"}));
    assert_eq!(api.put("/mode", json!({"mode": "readonly"})).await.ok(), json!({"mode": "READONLY"}));
    assert_eq!(api.get("/mode").await.ok(), json!({"mode": "READONLY"}));
    api.post("/subjects/users/versions", json!({ "schema": USER_V1 })).await.error(422, 42205);
}

#[tokio::test]
async fn unset_subject_mode_is_40409_unless_default_to_global() {
    let api = Api::new();
    let message = api.get("/mode/users").await.error(404, 40409);
    assert_eq!(message, "Subject 'users' does not have subject-level mode configured");
    assert_eq!(api.get("/mode/users?defaultToGlobal=true").await.ok(), json!({"mode": "READWRITE"}));
}

#[tokio::test]
async fn subject_mode_round_trip_and_delete() {
    let api = Api::new();
    assert_eq!(api.put("/mode/users", json!({"mode": "READONLY_OVERRIDE"})).await.ok()["mode"], "READONLY_OVERRIDE");
    assert_eq!(api.get("/mode/users").await.ok(), json!({"mode": "READONLY_OVERRIDE"}));
    assert_eq!(api.delete("/mode/users").await.ok(), json!({"mode": "READONLY_OVERRIDE"}));
    api.delete("/mode/users").await.error(404, 40401);
}

#[tokio::test]
async fn import_with_live_versions_needs_force() {
    let api = Api::new();
    api.register("users", USER_V1).await;
    let message = api.put("/mode/users", json!({"mode": "IMPORT"})).await.error(422, 42205);
    assert!(message.contains("Cannot import since found existing subjects"), "{message}");
    assert_eq!(api.put("/mode/users?force=true", json!({"mode": "IMPORT"})).await.ok(), json!({"mode": "IMPORT"}));
}

#[tokio::test]
async fn readonly_subject_refuses_config_writes() {
    let api = Api::new();
    api.put("/mode/users", json!({"mode": "READONLY"})).await.ok();
    api.put("/config/users", json!({"compatibility": "NONE"})).await.error(422, 42205);
}
