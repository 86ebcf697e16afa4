//! JSON Schema end to end: register, 409 on an incompatible change at the subject's level, verbose
//! compatibility messages with Confluent's change-type names, references, and normalize.

use api_tests::Harness;
use api_tests::client::{enc, typed};
use serde_json::{Value, json};

const CLOSED_V1: &str = r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#;
const CLOSED_V2: &str =
    r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},"additionalProperties":false}"#;
const OPEN_V1: &str = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
const OPEN_V2: &str = r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}"#;

async fn register_json(h: &Harness, subject: &str, schema: &str) -> i64 {
    h.register_body(subject, &typed("JSON", schema)).await
}

async fn check_json(h: &Harness, subject: &str, schema: &str) -> Value {
    let path = format!("/compatibility/subjects/{}/versions/latest?verbose=true", enc(subject));
    h.post(&path, &typed("JSON", schema)).await.ok_json(200)
}

async fn optional_property_added_to_closed_model_is_backward(h: &Harness) {
    register_json(h, "j", CLOSED_V1).await;
    register_json(h, "j", CLOSED_V2).await;
    assert_eq!(h.versions("j", "").await, [1, 2]);
}

async fn property_added_to_open_model_is_rejected_with_409(h: &Harness) {
    register_json(h, "j", OPEN_V1).await;
    let response = h.register_raw("j", &typed("JSON", OPEN_V2)).await;
    assert_eq!(response.status, 409, "{}", response.text);
    let message = response.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"), "{message}");
    assert_eq!(h.versions("j", "").await, [1]);
}

async fn forward_level_accepts_what_backward_rejects(h: &Harness) {
    h.set_config(Some("j"), "FORWARD").await.ok_json(200);
    register_json(h, "j", OPEN_V1).await;
    register_json(h, "j", OPEN_V2).await;
    let closed = h.register_raw("j2", &typed("JSON", CLOSED_V1)).await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    h.set_config(Some("j2"), "FULL").await.ok_json(200);
    let response = h.register_raw("j2", &typed("JSON", CLOSED_V2)).await;
    assert_eq!(response.status, 409, "{}", response.text);
}

async fn verbose_messages_name_the_change_type(h: &Harness) {
    register_json(h, "j", CLOSED_V1).await;
    let narrowed = r#"{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":false}"#;
    let body = check_json(h, "j", narrowed).await;
    assert_eq!(body["is_compatible"], json!(false), "{body}");
    let messages: Vec<&str> =
        body["messages"].as_array().map(|m| m.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let expected = "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/properties/a' is different between the new schema and the old schema\"}";
    assert_eq!(messages.first().copied(), Some(expected), "{body}");
    assert!(messages.iter().any(|m| m.starts_with("{oldSchemaVersion: 1}")), "{body}");
    assert_eq!(check_json(h, "j", CLOSED_V2).await["is_compatible"], json!(true));
}

async fn referenced_schema_changes_are_checked(h: &Harness) {
    let v1 = r#"{"type":"object","properties":{"street":{"type":"string"}}}"#;
    register_json(h, "address", v1).await;
    let main = r#"{"type":"object","properties":{"home":{"$ref":"address.json"}}}"#;
    let reference = |version: i64| json!([{ "name": "address.json", "subject": "address", "version": version }]);
    let body = json!({ "schemaType": "JSON", "schema": main, "references": reference(1) });
    h.register_body("order", &body).await;
    h.set_config(Some("address"), "NONE").await.ok_json(200);
    register_json(h, "address", r#"{"type":"object","properties":{"street":{"type":"number"}}}"#).await;
    let updated = json!({ "schemaType": "JSON", "schema": main, "references": reference(2) });
    let response = h.register_raw("order", &updated).await;
    assert_eq!(response.status, 409, "{}", response.text);
    assert!(response.text.contains("#/properties/home/properties/street"), "{}", response.text);
}

async fn normalize_dedupes_key_order_variants(h: &Harness) {
    let first = r#"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}}"#;
    let second = r#"{"properties":{"a":{"type":"number"},"b":{"type":"string"}},"type":"object"}"#;
    let register = |schema: &'static str| async move {
        h.post("/subjects/n/versions?normalize=true", &typed("JSON", schema)).await.ok_json(200)["id"].clone()
    };
    let id = register(first).await;
    assert!(id.is_i64(), "{id}");
    assert_eq!(register(second).await, id);
    assert_eq!(h.versions("n", "").await, [1]);
}

/// Confluent's `JsonSchemaTest.testRecursiveMetaSchemaReference` (commit 5d7e0dfa9f5) through the API: a
/// `$ref` to the draft-07 meta-schema registers (the bundled copy, no fetch), as does one to draft-04 over
/// `http`; the schema reads back as stored.
async fn a_ref_to_a_bundled_meta_schema_registers(h: &Harness) {
    let draft7 = r#"{"$schema":"https://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"$ref":"https://json-schema.org/draft-07/schema#"}}}"#;
    let id = register_json(h, "meta-ref", draft7).await;
    assert_eq!(h.get(&format!("/schemas/ids/{id}/schema")).await.text, draft7);
    let draft4 = r#"{"type":"object","properties":{"y":{"$ref":"http://json-schema.org/draft-04/schema#"}}}"#;
    register_json(h, "meta-ref-4", draft4).await;
    let unknown = r#"{"type":"object","properties":{"z":{"$ref":"https://json-schema.org/draft-05/schema#"}}}"#;
    h.register_raw("meta-ref-5", &typed("JSON", unknown)).await.assert_error(422, 42201);
}

/// Confluent's recursive "trade" schema (`SchemaDiffTest`, 350fdb61080): twelve product types, each with
/// two properties that are a `oneOf` of all twelve; the `Asset` type's `id` is of `asset_id_type`.
fn trade_schema(asset_id_type: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/json-compat/recursive-trade.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let mut schema: Value = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"));
    schema["definitions"]["Asset"]["properties"]["id"]["type"] = json!(asset_id_type);
    schema.to_string()
}

/// One deep type change in the recursive trade schema is incompatible, as Confluent answers since its diff is
/// memoized (350fdb61080, 33657e5b611), within the default work budget (it used to answer 42201 for the
/// budget), and the unchanged schema still checks compatible.
async fn a_deep_change_in_a_recursive_union_is_found_within_the_budget(h: &Harness) {
    let subject = "trade-value";
    register_json(h, subject, &trade_schema("string")).await;
    let verdict = check_json(h, subject, &trade_schema("number")).await;
    assert_eq!(verdict["is_compatible"], false, "{verdict}");
    assert!(verdict["messages"].to_string().contains("COMBINED_TYPE_SUBSCHEMAS_CHANGED"), "{verdict}");
    let message = h.register_raw(subject, &typed("JSON", &trade_schema("number"))).await.assert_error(409, 40901);
    assert!(message.contains("COMBINED_TYPE_SUBSCHEMAS_CHANGED"), "{message}");
    assert_eq!(check_json(h, subject, &trade_schema("string")).await["is_compatible"], true);
}

api_tests::api_cases!(
    a_deep_change_in_a_recursive_union_is_found_within_the_budget,
    a_ref_to_a_bundled_meta_schema_registers,
    optional_property_added_to_closed_model_is_backward,
    property_added_to_open_model_is_rejected_with_409,
    forward_level_accepts_what_backward_rejects,
    verbose_messages_name_the_change_type,
    referenced_schema_changes_are_checked,
    normalize_dedupes_key_order_variants,
);
