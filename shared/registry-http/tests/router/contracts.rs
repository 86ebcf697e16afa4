//! Data contracts: metadata/ruleSet round trips and identity, 42210, config defaults and
//! overrides, `/subjects/{s}/metadata`, `guid` and `/schemas/guids/{guid}`, the ownership policy.

use crate::support::{Api, USER_V1, USER_V2};
use registry_core::{MemoryStore, Registry, RegistrySettings};
use registry_http::{AppOptions, app};
use serde_json::{Value, json};
use std::sync::Arc;

fn rules() -> Value {
    json!({"domainRules": [{"name": "checkId", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "message.id > 0"}]})
}

#[tokio::test]
async fn metadata_and_rule_set_round_trip_in_confluents_normal_form() {
    let api = Api::new();
    let metadata = json!({"properties": {"owner": "team-a"}, "tags": {"User.id": ["PII"]}, "sensitive": ["id"]});
    let body = json!({"schema": USER_V1, "metadata": metadata, "ruleSet": rules()});
    let registered = api.post("/subjects/users/versions", body).await.ok();
    let stored_rules = json!({"domainRules": [{"name": "checkId", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "message.id > 0", "disabled": false}]});
    let expected_metadata =
        json!({"tags": {"User.id": ["PII"]}, "properties": {"owner": "team-a"}, "sensitive": ["id"]});
    assert_eq!(registered["metadata"], expected_metadata);
    assert_eq!(registered["ruleSet"], stored_rules);
    let id = registered["id"].as_i64().unwrap();
    for answer in [
        api.get("/subjects/users/versions/1").await.ok(),
        api.get(&format!("/schemas/ids/{id}")).await.ok(),
        api.post("/subjects/users", json!({"schema": USER_V1, "metadata": expected_metadata, "ruleSet": stored_rules}))
            .await
            .ok(),
    ] {
        assert_eq!(answer["metadata"], expected_metadata, "{answer}");
        assert_eq!(answer["ruleSet"], stored_rules, "{answer}");
        assert_eq!(answer["guid"], registered["guid"], "{answer}");
    }
}

#[tokio::test]
async fn same_schema_with_other_metadata_is_a_new_version_and_id() {
    let api = Api::new();
    let first = api.post("/subjects/users/versions", json!({"schema": USER_V1})).await.ok();
    let owned = json!({"schema": USER_V1, "metadata": {"properties": {"owner": "team-a"}}});
    let second = api.post("/subjects/users/versions", owned.clone()).await.ok();
    assert_eq!(second["version"], 2);
    assert_ne!(second["id"], first["id"]);
    assert_ne!(second["guid"], first["guid"]);
    let again = api.post("/subjects/users/versions", owned).await.ok();
    assert_eq!((again["version"].clone(), again["id"].clone()), (json!(2), second["id"].clone()));
    // A bare re-registration is the version with exactly that identity (Confluent's lookup-first).
    let bare = api.post("/subjects/users/versions", json!({"schema": USER_V1})).await.ok();
    assert_eq!((bare["version"].clone(), bare["id"].clone()), (json!(1), first["id"].clone()));
    // A new schema without metadata inherits the latest version's.
    let evolved = api.post("/subjects/users/versions", json!({"schema": USER_V2})).await.ok();
    assert_eq!(evolved["version"], 3);
    assert_eq!(evolved["metadata"], json!({"properties": {"owner": "team-a"}}));
}

#[tokio::test]
async fn invalid_rule_sets_are_42210_with_confluents_message() {
    let api = Api::new();
    let cases = [
        (json!({"domainRules": [{"type": "CEL"}]}), "Missing rule name"),
        (json!({"domainRules": [{"name": "a"}]}), "Missing rule type"),
        (
            json!({"migrationRules": [{"name": "m", "type": "JSONATA", "mode": "WRITE"}]}),
            "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN",
        ),
        (
            json!({"domainRules": [{"name": "a", "type": "CEL"}, {"name": "a", "type": "CEL"}]}),
            "Found rule with duplicate name 'a'",
        ),
    ];
    for (rule_set, message) in cases {
        let reply = api.post("/subjects/users/versions", json!({"schema": USER_V1, "ruleSet": rule_set})).await;
        assert_eq!(reply.error(422, 42210), message);
        let reply = api.put("/config/users", json!({"defaultRuleSet": rule_set})).await;
        assert_eq!(reply.error(422, 42210), message);
    }
    let reply = api
        .post(
            "/subjects/users/versions",
            json!({"schema": USER_V1, "ruleSet": {"domainRules": [{"name": "a", "type": "CEL", "kind": "NOPE"}]}}),
        )
        .await;
    assert_eq!(reply.status, 400, "a rule set of another shape is a malformed body");
}

#[tokio::test]
async fn config_defaults_and_overrides_merge_around_the_request() {
    let api = Api::new();
    let config = json!({
        "defaultMetadata": {"properties": {"owner": "platform", "tier": "2"}},
        "overrideMetadata": {"properties": {"tier": "1"}},
        "overrideRuleSet": rules(),
    });
    let put = api.put("/config/users", config).await.ok();
    assert_eq!(put["overrideMetadata"], json!({"properties": {"tier": "1"}}));
    let got = api.get("/config/users").await.ok();
    assert_eq!(got["defaultMetadata"], json!({"properties": {"owner": "platform", "tier": "2"}}));
    assert_eq!(got["overrideRuleSet"]["domainRules"][0]["name"], "checkId");
    let body = json!({"schema": USER_V1, "metadata": {"properties": {"owner": "team-a", "tier": "3"}}});
    let registered = api.post("/subjects/users/versions", body).await.ok();
    assert_eq!(registered["metadata"], json!({"properties": {"owner": "team-a", "tier": "1"}}));
    assert_eq!(registered["ruleSet"]["domainRules"][0]["name"], "checkId");
    let defaulted = api.post("/subjects/other/versions", json!({"schema": USER_V1})).await.ok();
    assert!(defaulted.get("metadata").is_none(), "subject config only applies to its subject: {defaulted}");
}

#[tokio::test]
async fn latest_with_metadata_finds_the_highest_matching_version() {
    let api = Api::new();
    let with = |schema: &str, owner: &str| json!({"schema": schema, "metadata": {"properties": {"owner": owner}}});
    api.post("/subjects/users/versions", with(USER_V1, "a")).await.ok();
    api.post("/subjects/users/versions", with(USER_V2, "b")).await.ok();
    let found = api.get("/subjects/users/metadata?key=owner&value=a").await.ok();
    assert_eq!(found["version"], 1);
    assert_eq!(found["subject"], "users");
    let found = api.get("/subjects/users/metadata?key=owner&value=b").await.ok();
    assert_eq!(found["version"], 2);
    api.get("/subjects/users/metadata?key=owner&value=c").await.error(404, 40403);
    api.get("/subjects/nobody/metadata?key=owner&value=a").await.error(404, 40401);
}

#[tokio::test]
async fn schemas_are_found_by_guid() {
    let api = Api::new();
    let registered = api.post("/subjects/users/versions", json!({"schema": "\"string\""})).await.ok();
    // Confluent's MD5 over the stored text `"string"`, printed as a UUID (computed independently).
    assert_eq!(registered["guid"], "095d71cf-1255-6b9d-5e33-0ad575b3df5d");
    let found = api.get("/schemas/guids/095d71cf-1255-6b9d-5e33-0ad575b3df5d").await.ok();
    assert_eq!(found["schema"], "\"string\"");
    assert_eq!(found["guid"], registered["guid"]);
    api.get("/schemas/guids/00000000-0000-0000-0000-000000000000").await.error(404, 40403);
    api.get("/schemas/guids/not-a-guid").await.error(404, 404);
}

#[tokio::test]
async fn a_hard_deleted_then_re_registered_schema_resolves_by_guid_again() {
    let api = Api::new();
    let first = api.post("/subjects/users/versions", json!({"schema": USER_V1})).await.ok();
    let path = format!("/schemas/guids/{}", first["guid"].as_str().unwrap());
    assert_eq!(api.get(&path).await.ok()["schema"], USER_V1);
    api.delete("/subjects/users").await.ok();
    assert_eq!(api.get(&path).await.ok()["schema"], USER_V1, "soft-deleted: still resolvable, as by id");
    api.delete("/subjects/users?permanent=true").await.ok();
    api.get(&path).await.error(404, 40403);
    let again = api.post("/subjects/users/versions", json!({"schema": USER_V1})).await.ok();
    assert_ne!(again["id"], first["id"], "a hard-deleted schema registered again gets a new id");
    assert_eq!(again["guid"], first["guid"]);
    let found = api.get(&path).await.ok();
    assert_eq!((found["schema"].clone(), found["guid"].clone()), (json!(USER_V1), first["guid"].clone()));
    // The id the guid resolves to is the new one: its subjects are the re-registration's.
    let subjects = api.get(&format!("/schemas/ids/{}/subjects", again["id"])).await.ok();
    assert_eq!(subjects, json!(["users"]));
    api.get(&format!("/schemas/ids/{}", first["id"])).await.error(404, 40403);
}

#[tokio::test]
async fn ownership_policy_refuses_new_subjects_without_the_owner_property() {
    let settings = RegistrySettings { require_owner: Some("owner".into()), ..RegistrySettings::default() };
    let registry = Registry::new(Arc::new(MemoryStore::new()), settings);
    let api = Api::with_router(app(registry, AppOptions::default()));
    let message = api.post("/subjects/users/versions", json!({"schema": USER_V1})).await.error(422, 42201);
    assert!(message.contains("'users'") && message.contains("'owner'"), "{message}");
    let owned = json!({"schema": USER_V1, "metadata": {"properties": {"owner": "team-a"}}});
    assert_eq!(api.post("/subjects/users/versions", owned).await.ok()["version"], 1);
    // Later versions inherit the owner, so the policy only gates new subjects.
    assert_eq!(api.post("/subjects/users/versions", json!({"schema": USER_V2})).await.ok()["version"], 2);
}
