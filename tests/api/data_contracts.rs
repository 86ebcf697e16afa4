//! Data contracts end to end: metadata/ruleSet round trips, identity, 42210, config defaults and
//! overrides, `/subjects/{s}/metadata`, `guid` and `/schemas/guids/{guid}`.

use api_tests::Harness;
use api_tests::schemas::{user_v1, user_v2_with_default};
use serde_json::{Value, json};

fn rules() -> Value {
    json!({"domainRules": [{"name": "checkId", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "message.id > 0", "disabled": false}]})
}

fn owned(schema: &str, owner: &str) -> Value {
    json!({"schema": schema, "metadata": {"properties": {"owner": owner}}, "ruleSet": rules()})
}

async fn contracts_round_trip_on_every_read(h: &Harness) {
    let registered = h.register_raw("users", &owned(&user_v1(), "team-a")).await.ok_json(200);
    let id = registered["id"].as_i64().unwrap_or_default();
    let lookup = h.post("/subjects/users", &owned(&user_v1(), "team-a")).await.ok_json(200);
    let version = h.get("/subjects/users/versions/1").await.ok_json(200);
    let by_id = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    for answer in [&registered, &lookup, &version, &by_id] {
        assert_eq!(answer["metadata"], json!({"properties": {"owner": "team-a"}}), "{answer}");
        assert_eq!(answer["ruleSet"], rules(), "{answer}");
        assert_eq!(answer["guid"], registered["guid"], "{answer}");
    }
}

async fn other_metadata_is_a_new_version_and_id(h: &Harness) {
    let first = h.register_raw("users", &owned(&user_v1(), "team-a")).await.ok_json(200);
    let second = h.register_raw("users", &owned(&user_v1(), "team-b")).await.ok_json(200);
    assert_eq!(second["version"], 2);
    assert_ne!(second["id"], first["id"]);
    let again = h.register_raw("users", &owned(&user_v1(), "team-a")).await.ok_json(200);
    assert_eq!((again["version"].clone(), again["id"].clone()), (json!(1), first["id"].clone()));
}

async fn invalid_rule_set_is_42210(h: &Harness) {
    let body = json!({"schema": user_v1(), "ruleSet": {"domainRules": [{"name": "bad.name", "type": "CEL"}]}});
    let message = h.register_raw("users", &body).await.assert_error(422, 42210);
    assert_eq!(message, "Illegal character in rule name: bad.name");
    let several = json!({"name": "check", "type": "CEL", "mode": "WRITE", "onFailure": "ERROR,NONE"});
    let body = json!({"schema": user_v1(), "ruleSet": {"domainRules": [several]}});
    let message = h.register_raw("users", &body).await.assert_error(422, 42210);
    assert_eq!(message, "Multiple actions only valid with WRITEREAD and UPDOWN");
    h.get("/subjects/users/versions").await.assert_error(404, 40401);
    // Dashes are legal after the first character (Confluent since its DEK registry).
    let body = json!({"schema": user_v1(), "ruleSet": {"domainRules": [{"name": "good-name", "type": "CEL"}]}});
    h.register_raw("users", &body).await.ok_json(200);
}

async fn config_defaults_and_overrides_apply_and_persist(h: &Harness) {
    let config = json!({"defaultMetadata": {"properties": {"owner": "platform"}}, "overrideRuleSet": rules()});
    h.put("/config", &config).await.ok_json(200);
    let stored = h.get("/config").await.ok_json(200);
    assert_eq!(stored["defaultMetadata"], config["defaultMetadata"]);
    assert_eq!(stored["overrideRuleSet"], rules());
    let registered = h.register_raw("users", &json!({"schema": user_v1()})).await.ok_json(200);
    assert_eq!(registered["metadata"], json!({"properties": {"owner": "platform"}}));
    assert_eq!(registered["ruleSet"], rules());
}

async fn latest_with_metadata_and_guid_lookup(h: &Harness) {
    h.register_raw("users", &owned(&user_v1(), "a")).await.ok_json(200);
    let v2 = h.register_raw("users", &owned(&user_v2_with_default(), "b")).await.ok_json(200);
    assert_eq!(h.get("/subjects/users/metadata?key=owner&value=a").await.ok_json(200)["version"], 1);
    assert_eq!(h.get("/subjects/users/metadata?key=owner&value=b").await.ok_json(200)["version"], 2);
    h.get("/subjects/users/metadata?key=owner&value=z").await.assert_error(404, 40403);
    let guid = v2["guid"].as_str().unwrap_or_default().to_string();
    let found = h.get(&format!("/schemas/guids/{guid}")).await.ok_json(200);
    assert_eq!(found["schema"], v2["schema"]);
    assert_eq!(found["metadata"], v2["metadata"]);
}

async fn guid_lookup_follows_deletes_and_re_registration(h: &Harness) {
    h.get("/schemas/guids/00000000-0000-0000-0000-000000000000").await.assert_error(404, 40403);
    let first = h.register_raw("guided", &json!({"schema": user_v1()})).await.ok_json(200);
    let path = format!("/schemas/guids/{}", first["guid"].as_str().unwrap_or_default());
    assert_eq!(h.get(&path).await.ok_json(200)["schema"], first["schema"]);
    h.delete_subject("guided", false).await.ok_json(200);
    assert_eq!(h.get(&path).await.ok_json(200)["schema"], first["schema"], "soft-deleted: still found");
    h.delete_subject("guided", true).await.ok_json(200);
    h.get(&path).await.assert_error(404, 40403);
    let again = h.register_raw("guided", &json!({"schema": user_v1()})).await.ok_json(200);
    assert_ne!(again["id"], first["id"], "registered again after a hard delete: a new id");
    assert_eq!(again["guid"], first["guid"]);
    let found = h.get(&path).await.ok_json(200);
    assert_eq!((&found["schema"], &found["guid"]), (&again["schema"], &again["guid"]));
}

async fn config_fields_not_implemented_are_refused_not_dropped(h: &Harness) {
    for (path, body, field) in [
        ("/config", json!({"compatibilityPolicy": "LOGICAL"}), "compatibilityPolicy"),
        ("/config/orders-value", json!({"aliasForDeks": "orders"}), "aliasForDeks"),
        ("/config", json!({"compatibility": "FULL", "validateNewSchemas": true}), "validateNewSchemas"),
        ("/config", json!({"validateRules": true}), "validateRules"),
    ] {
        let message = h.put(path, &body).await.assert_error(422, 42205);
        assert_eq!(message, format!("Config field '{field}' is not supported by this registry"), "{path} {body}");
    }
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "BACKWARD", "nothing applied");
    // What the registry does anyway is accepted.
    let accepted = json!({"compatibility": "FULL", "aliasForDeks": ""});
    assert_eq!(h.put("/config", &accepted).await.ok_json(200), json!({"compatibility": "FULL"}));
}

/// `PUT /config` merges as Confluent's `ConfigValue.update`: named fields replace, `null` clears,
/// fields left out keep their value, and `{}` answers the config as it is.
async fn config_updates_merge_into_the_stored_config(h: &Harness) {
    let metadata = json!({"properties": {"owner": "platform"}});
    h.put("/config/orders-value", &json!({"compatibility": "FULL", "defaultMetadata": metadata})).await.ok_json(200);
    let normalized = h.put("/config/orders-value", &json!({"normalize": true})).await.ok_json(200);
    assert_eq!(normalized, json!({"compatibility": "FULL", "normalize": true, "defaultMetadata": metadata}));
    assert_eq!(h.put("/config/orders-value", &json!({})).await.ok_json(200), normalized);
    let stored = h.get("/config/orders-value").await.ok_json(200);
    assert_eq!(stored, json!({"compatibilityLevel": "FULL", "normalize": true, "defaultMetadata": metadata}));
    let cleared = h.put("/config/orders-value", &json!({"defaultMetadata": null, "compatibility": "NONE"})).await;
    assert_eq!(cleared.ok_json(200), json!({"compatibility": "NONE", "normalize": true}));
    // The global config: `{}` on an unset one stores nothing the answer shows, and the default applies.
    assert_eq!(h.put("/config", &json!({})).await.ok_json(200), json!({}));
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "BACKWARD");
}

/// Confluent's `Config.mergeConfigs` (`getConfigInScope`): a subject with a config of its own takes the
/// data-contract defaults and overrides from it alone, never the global ones, while `normalize` is
/// inherited (`testGlobalNormalizeInheritedWhenSubjectConfigSet`); a subject without one gets the global
/// config whole.
async fn a_subjects_own_config_takes_no_global_contract_defaults(h: &Harness) {
    let global = json!({"defaultMetadata": {"properties": {"owner": "platform"}}, "overrideRuleSet": rules(), "normalize": true});
    h.put("/config", &global).await.ok_json(200);
    h.put("/config/own", &json!({"compatibility": "BACKWARD"})).await.ok_json(200);
    let own = h.register_raw("own", &json!({"schema": user_v1()})).await.ok_json(200);
    assert_eq!((&own["metadata"], &own["ruleSet"]), (&Value::Null, &Value::Null), "{own}");
    let other = h.register_raw("other", &json!({"schema": user_v1()})).await.ok_json(200);
    assert_eq!(other["metadata"], json!({"properties": {"owner": "platform"}}));
    assert_eq!(other["ruleSet"], rules());
    let in_scope = h.get("/config/own?defaultToGlobal=true").await.ok_json(200);
    assert_eq!(in_scope["normalize"], true, "{in_scope}");
    assert_eq!(
        (&in_scope["defaultMetadata"], &in_scope["overrideRuleSet"]),
        (&Value::Null, &Value::Null),
        "{in_scope}"
    );
    // Confluent's testGlobalNormalizeInheritedWhenSubjectConfigSet: the inherited normalize validates
    // Avro defaults strictly, so an int field with a string default is 42201 on test and register.
    let bad_default = r#"{"type":"record","name":"myrecord","fields":[{"type":"int","default":"foo","name":"f"}]}"#;
    h.put("/config/testSubject", &json!({"compatibility": "BACKWARD"})).await.ok_json(200);
    let tested = h.post("/compatibility/subjects/testSubject/versions/latest", &json!({"schema": bad_default})).await;
    tested.assert_error(422, 42201);
    h.register_raw("testSubject", &json!({"schema": bad_default})).await.assert_error(422, 42201);
}

api_tests::api_cases!(
    config_updates_merge_into_the_stored_config,
    config_fields_not_implemented_are_refused_not_dropped,
    guid_lookup_follows_deletes_and_re_registration,
    contracts_round_trip_on_every_read,
    other_metadata_is_a_new_version_and_id,
    invalid_rule_set_is_42210,
    config_defaults_and_overrides_apply_and_persist,
    latest_with_metadata_and_guid_lookup,
    a_subjects_own_config_takes_no_global_contract_defaults,
);
