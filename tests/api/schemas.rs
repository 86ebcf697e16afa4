//! `/schemas`, `/schemas/ids/{id}[/schema|/subjects|/versions]`, `/schemas/types`, `/contexts`.

use api_tests::Harness;
use api_tests::client::{strings, typed};
use api_tests::schemas::{distinct, user_v1, user_v2_with_default};
use serde_json::json;

async fn schema_by_id(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    let got = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(got["schema"], user_v1());
    assert!(got.get("references").is_none(), "empty references are omitted: {got}");
    assert!(got.get("maxId").is_none(), "maxId only with fetchMaxId: {got}");
}

async fn schema_by_unknown_id_is_40403(h: &Harness) {
    for id in ["0", "-1", "99999"] {
        let message = h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
        assert_eq!(message, format!("Schema {id} not found"));
    }
}

async fn schema_by_non_integer_id_is_framework_404(h: &Harness) {
    for id in ["abc", "1.5", "2147483648"] {
        let message = h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 404);
        assert_eq!(message, "HTTP 404 Not Found");
    }
}

async fn schema_by_id_fetch_max_id(h: &Harness) {
    let first = h.register("a", &distinct(1)).await;
    let second = h.register("b", &distinct(2)).await;
    let got = h.get(&format!("/schemas/ids/{first}?fetchMaxId=true")).await.ok_json(200);
    assert_eq!(got["maxId"], second.max(first));
}

async fn schema_only_by_id(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    let raw = h.get(&format!("/schemas/ids/{id}/schema")).await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.text, user_v1());
    h.get("/schemas/ids/424242/schema").await.assert_error(404, 40403);
}

async fn subjects_for_id(h: &Harness) {
    let id = h.register("b", &user_v1()).await;
    h.register("a", &user_v1()).await;
    h.register("c", &distinct(3)).await;
    assert_eq!(strings(&h.get(&format!("/schemas/ids/{id}/subjects")).await.ok_json(200)), ["a", "b"]);
    let message = h.get("/schemas/ids/31337/subjects").await.assert_error(404, 40403);
    assert_eq!(message, "Schema not found");
}

async fn subjects_for_id_skip_soft_deleted(h: &Harness) {
    let id = h.register("a", &user_v1()).await;
    h.register("b", &user_v1()).await;
    h.delete_subject("a", false).await.ok_json(200);
    assert_eq!(strings(&h.get(&format!("/schemas/ids/{id}/subjects")).await.ok_json(200)), ["b"]);
    let all = h.get(&format!("/schemas/ids/{id}/subjects?deleted=true")).await.ok_json(200);
    assert_eq!(strings(&all), ["a", "b"]);
    h.delete_subject("b", false).await.ok_json(200);
    assert_eq!(h.get(&format!("/schemas/ids/{id}/subjects")).await.ok_json(200), json!([]));
}

async fn versions_for_id(h: &Harness) {
    let id = h.register("a", &user_v1()).await;
    h.set_config(Some("b"), "NONE").await.ok_json(200);
    h.register("b", &distinct(1)).await;
    h.register("b", &user_v1()).await;
    let got = h.get(&format!("/schemas/ids/{id}/versions")).await.ok_json(200);
    assert_eq!(got, json!([{"subject": "a", "version": 1}, {"subject": "b", "version": 2}]));
    h.get("/schemas/ids/4040/versions").await.assert_error(404, 40403);
}

async fn versions_for_id_with_deleted(h: &Harness) {
    let id = h.register("a", &user_v1()).await;
    h.delete_version("a", "1", false).await.ok_json(200);
    assert_eq!(h.get(&format!("/schemas/ids/{id}/versions")).await.ok_json(200), json!([]));
    let all = h.get(&format!("/schemas/ids/{id}/versions?deleted=true")).await.ok_json(200);
    assert_eq!(all, json!([{"subject": "a", "version": 1}]));
}

async fn schema_types(h: &Harness) {
    let mut types = strings(&h.get("/schemas/types").await.ok_json(200));
    types.sort();
    assert_eq!(types, ["AVRO", "JSON", "PROTOBUF"]);
}

async fn list_schemas_sorted_by_subject_then_version(h: &Harness) {
    h.register("b", &user_v1()).await;
    h.register("a", &user_v1()).await;
    h.register("a", &user_v2_with_default()).await;
    let all = h.get("/schemas").await.ok_json(200);
    let keys: Vec<(String, i64)> = all
        .as_array()
        .unwrap_or_else(|| panic!("{all}"))
        .iter()
        .map(|s| (s["subject"].as_str().unwrap_or_default().to_string(), s["version"].as_i64().unwrap_or_default()))
        .collect();
    assert_eq!(keys, [("a".to_string(), 1), ("a".to_string(), 2), ("b".to_string(), 1)]);
}

async fn list_schemas_latest_only_and_prefix(h: &Harness) {
    h.register("orders", &user_v1()).await;
    h.register("orders", &user_v2_with_default()).await;
    h.register("payments", &distinct(1)).await;
    let latest = h.get("/schemas?latestOnly=true&subjectPrefix=ord").await.ok_json(200);
    assert_eq!(latest.as_array().map(Vec::len), Some(1), "{latest}");
    assert_eq!(latest[0]["version"], 2);
    assert_eq!(latest[0]["schema"], user_v2_with_default());
}

async fn list_schemas_deleted_flag(h: &Harness) {
    h.register("a", &user_v1()).await;
    h.register("b", &distinct(1)).await;
    h.delete_subject("a", false).await.ok_json(200);
    let live = h.get("/schemas").await.ok_json(200);
    assert_eq!(live.as_array().map(Vec::len), Some(1), "{live}");
    let all = h.get("/schemas?deleted=true").await.ok_json(200);
    assert_eq!(all.as_array().map(Vec::len), Some(2), "{all}");
}

async fn json_schema_registered_with_type(h: &Harness) {
    let text = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let id = h.register_body("json-value", &typed("JSON", text)).await;
    let got = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(got["schemaType"], "JSON");
    let version = h.get_version("json-value", "1").await.ok_json(200);
    assert_eq!(version["schemaType"], "JSON");
    let same = h.post("/subjects/json-value", &typed("JSON", text)).await.ok_json(200);
    assert_eq!(same["id"], id);
}

async fn protobuf_schema_registered_with_type(h: &Harness) {
    let text = "syntax = \"proto3\";\npackage demo;\n\nmessage Ping {\n  string id = 1;\n}\n";
    let id = h.register_body("demo/ping.proto", &typed("PROTOBUF", text)).await;
    let got = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(got["schemaType"], "PROTOBUF");
    assert!(got["schema"].as_str().is_some_and(|s| s.contains("message Ping")), "{got}");
}

async fn invalid_json_schema_is_42201(h: &Harness) {
    h.register_raw("j", &typed("JSON", "{not json")).await.assert_error(422, 42201);
}

async fn invalid_protobuf_is_42201(h: &Harness) {
    h.register_raw("p", &typed("PROTOBUF", "message {")).await.assert_error(422, 42201);
}

async fn contexts_default(h: &Harness) {
    assert_eq!(h.get("/contexts").await.ok_json(200), json!(["."]));
}

/// `?findTags=` (Confluent's `SchemasResource.getSchema` and `SubjectVersionsResource.getSchemaByVersion`):
/// `schemaTags` lists the records and fields whose inline tags include one of the asked (repeatable;
/// `*` for all), each with all its tags; none matching, or no `findTags`, leaves the field out.
async fn find_tags_lists_the_tagged_records_and_fields(h: &Harness) {
    let avro = r#"{"type":"record","name":"Customer","namespace":"acme","confluent:tags":["PII"],"fields":[{"name":"email","type":"string","confluent:tags":["PII","CONTACT"]},{"name":"tier","type":"int","confluent:tags":["INTERNAL"]}]}"#;
    let id = h.register("customers-value", avro).await;
    let record = json!({"schemaEntity": {"entityPath": "acme.Customer", "entityType": "SR_RECORD"}, "tags": ["PII"]});
    let email = json!({"schemaEntity": {"entityPath": "acme.Customer.email", "entityType": "SR_FIELD"}, "tags": ["PII", "CONTACT"]});
    let tier =
        json!({"schemaEntity": {"entityPath": "acme.Customer.tier", "entityType": "SR_FIELD"}, "tags": ["INTERNAL"]});
    let by_id = h.get(&format!("/schemas/ids/{id}?findTags=PII")).await.ok_json(200);
    assert_eq!(by_id["schemaTags"], json!([record, email]), "{by_id}");
    let all = h.get(&format!("/schemas/ids/{id}?findTags=*")).await.ok_json(200);
    assert_eq!(all["schemaTags"], json!([record, email, tier]), "{all}");
    let none = h.get(&format!("/schemas/ids/{id}?findTags=NOPE")).await.ok_json(200);
    assert!(none.get("schemaTags").is_none(), "{none}");
    assert!(h.get(&format!("/schemas/ids/{id}")).await.ok_json(200).get("schemaTags").is_none());
    let version = h.get("/subjects/customers-value/versions/1?findTags=CONTACT&findTags=INTERNAL").await.ok_json(200);
    assert_eq!(version["schemaTags"], json!([email, tier]), "{version}");
    let latest = h.get("/subjects/customers-value/versions/latest?findTags=INTERNAL").await.ok_json(200);
    assert_eq!(latest["schemaTags"], json!([tier]), "{latest}");

    let proto = "syntax = \"proto3\";\npackage acme;\nimport \"confluent/meta.proto\";\n\nmessage Order {\n  string card = 1 [(confluent.field_meta) = { tags: [\"PCI\"] }];\n}\n";
    let id = h.register_body("orders-value", &typed("PROTOBUF", proto)).await;
    let by_id = h.get(&format!("/schemas/ids/{id}?findTags=PCI")).await.ok_json(200);
    let card = json!({"schemaEntity": {"entityPath": "Order.card", "entityType": "SR_FIELD"}, "tags": ["PCI"]});
    assert_eq!(by_id["schemaTags"], json!([card]), "{by_id}");
    let json_schema = r#"{"type":"object","properties":{"ssn":{"type":"string","confluent:tags":["PII"]}}}"#;
    h.register_body("people-value", &typed("JSON", json_schema)).await;
    let version = h.get("/subjects/people-value/versions/1?findTags=PII").await.ok_json(200);
    let ssn = json!({"schemaEntity": {"entityPath": "object.ssn", "entityType": "SR_FIELD"}, "tags": ["PII"]});
    assert_eq!(version["schemaTags"], json!([ssn]), "{version}");
}

api_tests::api_cases!(
    find_tags_lists_the_tagged_records_and_fields,
    schema_by_id,
    schema_by_unknown_id_is_40403,
    schema_by_non_integer_id_is_framework_404,
    schema_by_id_fetch_max_id,
    schema_only_by_id,
    subjects_for_id,
    subjects_for_id_skip_soft_deleted,
    versions_for_id,
    versions_for_id_with_deleted,
    schema_types,
    list_schemas_sorted_by_subject_then_version,
    list_schemas_latest_only_and_prefix,
    list_schemas_deleted_flag,
    json_schema_registered_with_type,
    protobuf_schema_registered_with_type,
    invalid_json_schema_is_42201,
    invalid_protobuf_is_42201,
    contexts_default,
);
