//! Confluent 8 config fields: `compatibilityGroup`, `validateFields` with `confluent:reserved`
//! metadata, and `alias`.

use api_tests::Harness;
use api_tests::schemas::distinct;
use serde_json::{Value, json};

fn one_field() -> String {
    json!({"type": "record", "name": "myrecord", "fields": [{"type": "string", "name": "f1"}]}).to_string()
}

/// Adds a required field: forward compatible only.
fn two_fields() -> String {
    let fields = json!([{"type": "string", "name": "f1"}, {"type": "string", "name": "f2"}]);
    json!({"type": "record", "name": "myrecord", "fields": fields}).to_string()
}

/// Adds an optional field: backward compatible with [`one_field`].
fn optional_second() -> String {
    let fields = json!([{"type": "string", "name": "f1"}, {"type": ["null", "int"], "name": "f2", "default": null}]);
    json!({"type": "record", "name": "myrecord", "fields": fields}).to_string()
}

fn with_properties(schema: &str, properties: Value) -> Value {
    json!({"schema": schema, "metadata": {"properties": properties}})
}

fn messages(response: &api_tests::client::Response) -> Vec<String> {
    let body = response.ok_json(200);
    api_tests::client::strings(&body["messages"])
}

/// Confluent's `testCompatibilityGroup` and `testAddCompatibilityGroup`: a version is checked only
/// against versions with its value of the group property (a missing value is a group too).
async fn compatibility_group_checks_only_versions_of_the_same_group(h: &Harness) {
    h.register_raw("grouped", &with_properties(&one_field(), json!({}))).await.ok_json(200);
    h.register_raw("grouped", &json!({"schema": two_fields()})).await.assert_error(409, 40901);
    let config = json!({"compatibilityGroup": "application.version", "validateFields": false});
    assert_eq!(h.put("/config", &config).await.ok_json(200), config);
    let stored = h.get("/config").await.ok_json(200);
    assert_eq!(stored["compatibilityGroup"], "application.version");
    assert_eq!(stored["validateFields"], false);
    let major = h.register_raw("grouped", &with_properties(&two_fields(), json!({"application.version": "2"}))).await;
    assert_eq!(major.ok_json(200)["version"], 2);
    // Without the property: checked against version 1 alone (backward compatible with it).
    let minor = h.register_raw("grouped", &with_properties(&optional_second(), json!({}))).await;
    assert_eq!(minor.ok_json(200)["version"], 3);
    let checked =
        h.post("/compatibility/subjects/grouped/versions?verbose=true", &json!({"schema": two_fields()})).await;
    assert_eq!(
        messages(&checked).last().map(String::as_str),
        Some("{validateFields: 'false', compatibility: 'BACKWARD'}")
    );
    // Clearing the group restores the plain rule.
    let cleared = h.put("/config", &json!({"compatibilityGroup": null})).await.ok_json(200);
    assert_eq!(cleared, json!({"validateFields": false}));
    let again = with_properties(&two_fields(), json!({"application.version": "2", "other": "x"}));
    h.register_raw("grouped", &again).await.assert_error(409, 40901);
}

/// With `validateFields`, a version may neither drop a field the previous version reserved nor
/// have a top-level field it reserves (Confluent's `RESERVED_FIELD_REMOVED` and
/// `FIELD_CONFLICTS_WITH_RESERVED_FIELD`, in the 409's messages); without it both are allowed.
async fn reserved_fields_are_enforced_with_validate_fields(h: &Harness) {
    let reserved = |fields: &str| json!({"confluent:reserved": fields});
    h.put("/config/reserving", &json!({"compatibility": "NONE", "validateFields": true})).await.ok_json(200);
    assert_eq!(h.get("/config/reserving").await.ok_json(200)["validateFields"], true);
    h.register_raw("reserving", &with_properties(&one_field(), reserved("f2, f3"))).await.ok_json(200);
    let conflict = h.register_raw("reserving", &with_properties(&two_fields(), reserved("f2,f3"))).await;
    let message = conflict.assert_error(409, 40901);
    assert!(message.contains("The new schema has field that conflicts with the reserved field f2."), "{message}");
    assert!(message.contains("{validateFields: 'true', compatibility: 'NONE'}"), "{message}");
    let dropped = h.register_raw("reserving", &with_properties(&one_field(), reserved("f3"))).await;
    let message = dropped.assert_error(409, 40901);
    let removed =
        "The new schema has reserved field f2 removed from its metadata which is present in the old schema's metadata.";
    assert!(message.contains(removed), "{message}");
    let posted = with_properties(&two_fields(), reserved("f3"));
    let verbose = h.post("/compatibility/subjects/reserving/versions/latest?verbose=true", &posted).await;
    let found = messages(&verbose);
    assert_eq!(found, [removed, "{validateFields: 'true', compatibility: 'NONE'}"]);
    // Off: the same registrations are accepted.
    h.put("/config/reserving", &json!({"validateFields": false})).await.ok_json(200);
    h.register_raw("reserving", &with_properties(&two_fields(), reserved("f2"))).await.ok_json(200);
}

/// Reserved fields are checked against JSON Schema root properties and Protobuf top-level message
/// fields; strict validation refuses a JSON Schema root property named `$$...` (42201).
async fn reserved_fields_apply_to_json_schema_and_protobuf(h: &Harness) {
    h.put("/config", &json!({"validateFields": true})).await.ok_json(200);
    let json_schema = json!({"type": "object", "properties": {"id": {"type": "string"}}}).to_string();
    let posted =
        json!({"schemaType": "JSON", "schema": json_schema, "metadata": {"properties": {"confluent:reserved": "id"}}});
    let message = h.register_raw("json-reserving", &posted).await.assert_error(409, 40901);
    assert!(message.contains("conflicts with the reserved field id."), "{message}");
    let dollars = json!({"type": "object", "properties": {"$$id": {"type": "string"}}}).to_string();
    h.register_raw("json-reserving", &json!({"schemaType": "JSON", "schema": dollars})).await.assert_error(422, 42201);
    let proto =
        "syntax = \"proto3\";\nmessage Order {\n  string id = 1;\n  oneof choice {\n    string code = 2;\n  }\n}\n";
    let reserving = |fields: &str| json!({"schemaType": "PROTOBUF", "schema": proto, "metadata": {"properties": {"confluent:reserved": fields}}});
    let message = h.register_raw("proto-reserving", &reserving("id")).await.assert_error(409, 40901);
    assert!(message.contains("conflicts with the reserved field id."), "{message}");
    // A oneof member is not a top-level field to Confluent (Wire's `MessageElement.getFields()`).
    h.register_raw("proto-reserving", &reserving("code")).await.ok_json(200);
}

/// Confluent's `testSubjectAlias`, `testSubjectAliasWithContext` and `testGlobalAliasNotUsed`, and
/// the other subject requests: a subject whose config has `alias` is read and written through its
/// target, and the answers name the target.
async fn an_alias_is_read_and_written_through_its_target(h: &Harness) {
    let id = h.register("orders-value", &one_field()).await;
    let alias = json!({"alias": "orders-value"});
    assert_eq!(h.put("/config/orders", &alias).await.ok_json(200), alias);
    assert_eq!(h.get("/config/orders").await.ok_json(200), alias);
    assert_eq!(h.versions("orders", "").await, [1]);
    let version = h.get("/subjects/orders/versions/1").await.ok_json(200);
    assert_eq!((&version["subject"], &version["id"]), (&json!("orders-value"), &json!(id)));
    let found = h.lookup("orders", &one_field()).await.ok_json(200);
    assert_eq!((&found["subject"], &found["version"]), (&json!("orders-value"), &json!(1)));
    let registered = h.register_raw("orders", &json!({"schema": optional_second()})).await.ok_json(200);
    assert_eq!(registered["version"], 2);
    assert_eq!(h.versions("orders-value", "").await, [1, 2]);
    assert!(h.subjects("").await.iter().all(|subject| subject != "orders"), "an alias has no versions of its own");
    h.register_raw("orders", &json!({"schema": two_fields()})).await.assert_error(409, 40901);
    let checked = h.post("/compatibility/subjects/orders/versions/latest", &json!({"schema": two_fields()})).await;
    assert_eq!(checked.ok_json(200)["is_compatible"], false);
    h.get(&format!("/schemas/ids/{id}?subject=orders")).await.ok_json(200);
    assert_eq!(h.delete("/subjects/orders/versions/2").await.ok_json(200), 2);
    assert_eq!(h.versions("orders-value", "").await, [1]);
    // A global alias is not followed (Confluent's `testGlobalAliasNotUsed`).
    h.put("/config", &json!({"alias": "orders-value"})).await.ok_json(200);
    h.get("/subjects/payments/versions/1").await.assert_error(404, 40401);
    // Removing the alias ends it.
    assert_eq!(h.put("/config/orders", &json!({"alias": null})).await.ok_json(200), json!({}));
    h.get("/subjects/orders/versions/1").await.assert_error(404, 40401);
}

/// Confluent's `AliasFilter` rewrites every `/subjects/{alias}/...` and `?subject={alias}`, whatever
/// the aliasing subject holds: its own versions are out of reach until the alias is removed, while
/// `/config/{alias}` and the subject listing still show the subject itself.
async fn an_alias_is_followed_even_over_versions_of_its_own(h: &Harness) {
    let own = h.register("legacy", &one_field()).await;
    let target = h.register("current", &distinct(1)).await;
    h.put("/config/legacy", &json!({"alias": "current"})).await.ok_json(200);
    assert_eq!(h.versions("legacy", "").await, [1]);
    let latest = h.get("/subjects/legacy/versions/latest").await.ok_json(200);
    assert_eq!((&latest["subject"], &latest["id"]), (&json!("current"), &json!(target)));
    h.lookup("legacy", &one_field()).await.assert_error(404, 40403);
    assert_eq!(h.lookup("legacy", &distinct(1)).await.ok_json(200)["subject"], "current");
    let checked = h.post("/compatibility/subjects/legacy/versions/latest", &json!({"schema": distinct(2)})).await;
    assert_eq!(checked.ok_json(200)["is_compatible"], false, "checked against the target's latest");
    h.put("/config/current", &json!({"compatibility": "NONE"})).await.ok_json(200);
    let registered = h.register_raw("legacy", &json!({"schema": distinct(2)})).await.ok_json(200);
    assert_eq!(registered["version"], 2, "registered as the target's next version");
    assert_eq!(h.versions("current", "").await, [1, 2]);
    assert_eq!(h.get("/config/legacy").await.ok_json(200)["alias"], "current", "config is the subject's own");
    assert!(h.subjects("").await.contains(&"legacy".to_string()), "the subject keeps its own versions");
    // Qualified: the alias resolves in the aliasing subject's context.
    h.register(":.team:legacy", &one_field()).await;
    h.register(":.team:current", &distinct(3)).await;
    h.put("/config/:.team:legacy", &json!({"alias": "current"})).await.ok_json(200);
    let qualified = h.get("/subjects/:.team:legacy/versions/1").await.ok_json(200);
    assert_eq!((&qualified["subject"], &qualified["schema"]), (&json!(":.team:current"), &json!(distinct(3))));
    // `?subject=` of a by-ID read follows it too: the ID is read in the target's context.
    let in_team = qualified["id"].as_i64().unwrap_or_default();
    assert_eq!(in_team, target, "both contexts gave their second schema the same number");
    h.put("/config/legacy", &json!({"alias": ":.team:current"})).await.ok_json(200);
    let by_id = h.get(&format!("/schemas/ids/{in_team}?subject=legacy")).await.ok_json(200);
    assert_eq!(by_id["schema"], distinct(3), "read in .team, where the alias points");
    assert_eq!(h.get(&format!("/schemas/ids/{target}")).await.ok_json(200)["schema"], distinct(1));
    // Without the alias the subject's own versions answer again.
    h.put("/config/legacy", &json!({"alias": null})).await.ok_json(200);
    assert_eq!(h.get("/subjects/legacy/versions/1").await.ok_json(200)["id"], own);
}

/// An unqualified alias names a subject in the aliasing subject's context; a qualified one any.
async fn an_alias_resolves_in_its_subjects_context(h: &Harness) {
    h.register(":.team:orders-value", &one_field()).await;
    h.put("/config/:.team:orders", &json!({"alias": "orders-value"})).await.ok_json(200);
    let version = h.get("/subjects/:.team:orders/versions/1").await.ok_json(200);
    assert_eq!(version["subject"], ":.team:orders-value");
    h.put("/config/:.other:orders", &json!({"alias": ":.team:orders-value"})).await.ok_json(200);
    let through_context = h.get("/contexts/.other/subjects/orders/versions/1").await.ok_json(200);
    assert_eq!(through_context["schema"], version["schema"]);
}

api_tests::api_cases!(
    an_alias_is_read_and_written_through_its_target,
    an_alias_is_followed_even_over_versions_of_its_own,
    an_alias_resolves_in_its_subjects_context,
    compatibility_group_checks_only_versions_of_the_same_group,
    reserved_fields_are_enforced_with_validate_fields,
    reserved_fields_apply_to_json_schema_and_protobuf,
);
