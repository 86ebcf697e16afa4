//! The analysis endpoints (AxonOps Schema Registry's API): field, type and text search over the
//! latest versions in pages with a cursor, diff, history, export, dependencies, validation,
//! normal form, complexity and multi-subject compatibility, on every backend; and with
//! authentication on, a scoped user searching only its own subjects.

use api_tests::Harness;
use reqwest::Method;
use serde_json::{Value, json};

const ORDER_V1: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"customer_id","type":"long"},{"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}"#;
const ORDER_V2: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"customerId","type":"long"},{"name":"total","type":"double"},{"name":"note","type":"string","default":""}]}"#;
const PROTO: &str = "syntax = \"proto3\";\npackage billing;\nmessage Invoice {\n  int64 customer_id = 1;\n  Line line = 2;\n  message Line { string sku = 1; }\n}\n";
const JSON_SCHEMA: &str = r#"{"type":"object","properties":{"CustomerId":{"type":"integer"},"address":{"type":"object","properties":{"street":{"type":"string"}}}}}"#;

async fn seed(h: &Harness) {
    h.register("orders-value", ORDER_V1).await;
    h.register_body("invoices-value", &json!({"schemaType": "PROTOBUF", "schema": PROTO})).await;
    h.register_body("people-value", &json!({"schemaType": "JSON", "schema": JSON_SCHEMA})).await;
}

fn pairs(matches: &Value, keys: [&str; 3]) -> Vec<(String, String, String)> {
    let text = |m: &Value, k: &str| m[k].as_str().unwrap_or_default().to_string();
    let mut out: Vec<_> = matches
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|m| (text(m, keys[0]), text(m, keys[1]), text(m, keys[2])))
        .collect();
    out.sort();
    out
}

fn triple(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.to_string(), b.to_string(), c.to_string())
}

/// `customer_id` in its three spellings, in the three formats, with paths and types.
async fn field_search_matches_naming_variants_in_every_format(h: &Harness) {
    seed(h).await;
    let answer = h.post("/schemas/search/field", &json!({"field": "customerId"})).await.ok_json(200);
    assert_eq!(
        (answer["field"].as_str(), answer["mode"].as_str(), answer["count"].as_i64()),
        (Some("customerId"), Some("exact"), Some(3)),
        "{answer}"
    );
    assert_eq!(
        pairs(&answer["matches"], ["subject", "field_path", "field_type"]),
        [
            triple("invoices-value", "customer_id", "int64"),
            triple("orders-value", "customer_id", "long"),
            triple("people-value", "CustomerId", "integer"),
        ]
    );
    assert_eq!(answer["subjects_scanned"], 3);
    assert!(answer.get("next_cursor").is_none(), "{answer}");
    let nested =
        h.post("/schemas/search/field", &json!({"field": "^s(ku|treet)$", "mode": "regex"})).await.ok_json(200);
    assert_eq!(
        pairs(&nested["matches"], ["subject", "field_path", "field_type"]),
        [triple("invoices-value", "line.sku", "string"), triple("people-value", "address.street", "string")]
    );
    let fuzzy = h
        .post("/schemas/search/field", &json!({"field": "custmer_id", "mode": "fuzzy", "threshold": 0.85}))
        .await
        .ok_json(200);
    assert_eq!(fuzzy["count"], 2, "{fuzzy}");
    h.post("/schemas/search/field", &json!({"field": "(", "mode": "regex"})).await.assert_error(400, 400);
    h.post("/schemas/search/field", &json!({"field": "a", "mode": "glob"})).await.assert_error(400, 400);
}

async fn type_and_text_search(h: &Harness) {
    seed(h).await;
    let decimal = h.post("/schemas/search/type", &json!({"type_pattern": "DECIMAL"})).await.ok_json(200);
    assert_eq!(
        pairs(&decimal["matches"], ["subject", "field_name", "field_type"]),
        [triple("orders-value", "total", "decimal")]
    );
    let ints =
        h.post("/schemas/search/type", &json!({"type_pattern": "^int(eger|64)$", "regex": true})).await.ok_json(200);
    assert_eq!(
        pairs(&ints["matches"], ["subject", "field_name", "field_type"]),
        [triple("invoices-value", "customer_id", "int64"), triple("people-value", "CustomerId", "integer")]
    );
    let text = h.post("/schemas/search", &json!({"query": "BILLING"})).await.ok_json(200);
    assert_eq!(text["matches"], json!([{"subject": "invoices-value", "version": 1, "schema_type": "PROTOBUF"}]));
    h.post("/schemas/search", &json!({"query": "[", "regex": true})).await.assert_error(400, 400);
}

/// A scan stops at `max_subjects` and answers a cursor; following it visits every subject once.
async fn search_pages_through_subjects_with_a_cursor(h: &Harness) {
    for n in 0..5 {
        let schema = format!(r#"{{"type":"record","name":"R{n}","fields":[{{"name":"shared_field","type":"int"}}]}}"#);
        h.register(&format!("s{n}"), &schema).await;
    }
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    let mut requests = 0;
    loop {
        let body = json!({"field": "shared_field", "max_subjects": 2, "cursor": cursor});
        let answer = h.post("/schemas/search/field", &body).await.ok_json(200);
        requests += 1;
        assert!(answer["subjects_scanned"].as_i64().unwrap_or(99) <= 2, "{answer}");
        seen.extend(pairs(&answer["matches"], ["subject", "field_name", "field_type"]).into_iter().map(|m| m.0));
        match answer.get("next_cursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
        assert!(requests < 10, "the cursor advances");
    }
    assert_eq!(seen, ["s0", "s1", "s2", "s3", "s4"]);
    assert_eq!(requests, 3);
    let limited = h.post("/schemas/search/field", &json!({"field": "shared_field", "limit": 1})).await.ok_json(200);
    assert_eq!((limited["count"].as_i64(), limited["next_cursor"].as_str()), (Some(1), Some("s0")), "{limited}");
}

async fn diff_history_and_export(h: &Harness) {
    h.set_config(Some("orders-value"), "NONE").await.ok_json(200);
    let id1 = h.register("orders-value", ORDER_V1).await;
    let id2 = h.register("orders-value", ORDER_V2).await;
    let diff = h.post("/subjects/orders-value/diff", &json!({"version1": 1, "version2": 2})).await.ok_json(200);
    assert_eq!(
        diff,
        json!({"subject": "orders-value", "version1": 1, "version2": 2,
            "added": [{"field": "note", "type": "string"}], "removed": [],
            "changed": [{"field": "total", "old_type": "decimal", "new_type": "double"}]})
    );
    let to_latest = h.post("/subjects/orders-value/diff", &json!({"version1": 1})).await.ok_json(200);
    assert_eq!(to_latest["version2"], 2);
    h.post("/subjects/orders-value/diff", &json!({"version1": 9})).await.assert_error(404, 40402);
    h.post("/subjects/nobody/diff", &json!({})).await.assert_error(404, 40401);

    let history = h.get("/subjects/orders-value/history").await.ok_json(200);
    assert_eq!((history["count"].as_i64(), history["history"][1]["schema_id"].as_i64()), (Some(2), Some(id2)));
    assert_eq!(history["history"][0]["schema_type"], "AVRO");
    let export = h.get("/subjects/orders-value/export").await.ok_json(200);
    assert_eq!(export["count"], 2);
    assert_eq!(
        (export["versions"][0]["id"].as_i64(), export["versions"][0]["schema"].as_str()),
        (Some(id1), Some(ORDER_V1))
    );
    let one = h.get("/subjects/orders-value/versions/latest/export").await.ok_json(200);
    assert_eq!((one["version"].as_i64(), one["schema_type"].as_str()), (Some(2), Some("AVRO")));
}

/// A referenced type's fields are searched through the referring schema, in each format (an Avro
/// named type, a JSON Schema `$ref` to a referenced document, a message of an imported Protobuf
/// file); the dependency graph names the referrer.
async fn references_in_search_and_dependencies(h: &Harness) {
    let address =
        r#"{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"street","type":"string"}]}"#;
    h.register("address", address).await;
    let customer =
        r#"{"type":"record","name":"Customer","namespace":"shop","fields":[{"name":"home","type":"shop.Address"}]}"#;
    let refs = json!([{"name": "shop.Address", "subject": "address", "version": 1}]);
    let id = h.register_body("customer-value", &json!({"schema": customer, "references": refs})).await;
    let place = r#"{"type":"object","properties":{"street":{"type":"string"}}}"#;
    h.register_body("place-json", &json!({"schemaType": "JSON", "schema": place})).await;
    let shipment = r#"{"type":"object","properties":{"to":{"$ref":"place.json"}}}"#;
    let refs = json!([{"name": "place.json", "subject": "place-json", "version": 1}]);
    h.register_body("shipment-value", &json!({"schemaType": "JSON", "schema": shipment, "references": refs})).await;
    let place = "syntax = \"proto3\";\npackage geo;\nmessage Place { string street = 1; }\n";
    h.register_body("place-proto", &json!({"schemaType": "PROTOBUF", "schema": place})).await;
    let parcel = "syntax = \"proto3\";\npackage post;\nimport \"place.proto\";\nmessage Parcel { geo.Place to = 1; }\n";
    let refs = json!([{"name": "place.proto", "subject": "place-proto", "version": 1}]);
    h.register_body("parcel-value", &json!({"schemaType": "PROTOBUF", "schema": parcel, "references": refs})).await;
    let street = h.post("/schemas/search/field", &json!({"field": "street"})).await.ok_json(200);
    assert_eq!(
        pairs(&street["matches"], ["subject", "field_path", "field_type"]),
        [
            triple("address", "street", "string"),
            triple("customer-value", "home.street", "string"),
            triple("parcel-value", "to.street", "string"),
            triple("place-json", "street", "string"),
            triple("place-proto", "street", "string"),
            triple("shipment-value", "to.street", "string"),
        ]
    );
    let graph = h.get("/subjects/address/versions/1/dependencies").await.ok_json(200);
    assert_eq!(graph["referenced_by"], json!([{"subject": "customer-value", "version": 1}]), "{graph}");
    let own = h.get("/subjects/customer-value/versions/1/dependencies").await.ok_json(200);
    assert_eq!(
        (own["schema_id"].as_i64(), own["references"].clone()),
        (Some(id), json!([{"subject": "address", "version": 1}]))
    );
    let diff = h.post("/subjects/customer-value/diff", &json!({})).await.ok_json(200);
    assert_eq!((diff["added"].clone(), diff["changed"].clone()), (json!([]), json!([])));
}

async fn validate_normalize_and_complexity(h: &Harness) {
    let valid = h.post("/schemas/validate", &json!({"schema": ORDER_V1})).await.ok_json(200);
    assert_eq!(valid, json!({"is_valid": true, "schema_type": "AVRO"}));
    let bad_default = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}"#;
    let invalid = h.post("/schemas/validate", &json!({"schema": bad_default})).await.ok_json(200);
    assert_eq!(invalid["is_valid"], false);
    assert!(invalid["error"].as_str().is_some_and(|e| !e.is_empty()), "{invalid}");
    let a = h.post("/schemas/normalize", &json!({"schema": JSON_SCHEMA, "schemaType": "JSON"})).await.ok_json(200);
    let reordered = r#"{"properties":{"address":{"properties":{"street":{"type":"string"}},"type":"object"},"CustomerId":{"type":"integer"}},"type":"object"}"#;
    let b = h.post("/schemas/normalize", &json!({"schema": reordered, "schemaType": "JSON"})).await.ok_json(200);
    assert_eq!((a["fingerprint"].as_str().map(str::len), a["schema_type"].as_str()), (Some(64), Some("JSON")));
    assert_eq!(a["fingerprint"], b["fingerprint"], "{a} {b}");
    h.post("/schemas/normalize", &json!({"schema": "{"})).await.assert_error(422, 42201);
    h.post("/schemas/validate", &json!({"schemaType": "AVRO"})).await.assert_error(400, 400);

    let posted = h.post("/schemas/complexity", &json!({"schema": PROTO, "schemaType": "PROTOBUF"})).await.ok_json(200);
    assert_eq!(posted, json!({"schema_type": "PROTOBUF", "field_count": 3, "max_depth": 2, "grade": "A"}));
    h.register("orders-value", ORDER_V1).await;
    let stored = h.post("/schemas/complexity", &json!({"subject": "orders-value"})).await.ok_json(200);
    assert_eq!((stored["field_count"].as_i64(), stored["grade"].as_str()), (Some(2), Some("A")));
    h.post("/schemas/complexity", &json!({"subject": "nobody"})).await.assert_error(404, 40401);
    h.post("/schemas/complexity", &json!({})).await.assert_error(400, 400);
}

async fn compatibility_against_several_subjects(h: &Harness) {
    h.register("orders-value", ORDER_V1).await;
    h.register("copy-value", ORDER_V1).await;
    h.set_config(Some("copy-value"), "FULL").await.ok_json(200);
    let without_total =
        r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"customer_id","type":"long"}]}"#;
    let body = json!({"schema": without_total, "subjects": ["orders-value", "copy-value", "missing-value"]});
    let answer = h.post("/compatibility/check", &body).await.ok_json(200);
    let results = answer["results"].as_array().cloned().unwrap_or_default();
    let verdicts: Vec<(String, bool)> = results
        .iter()
        .map(|r| (r["subject"].as_str().unwrap_or_default().to_string(), r["is_compatible"].as_bool().unwrap_or(false)))
        .collect();
    // Removing a field: BACKWARD (the default level) allows it, FULL does not (old readers need it);
    // a subject without versions has nothing to be incompatible with, as the per-subject test answers.
    assert_eq!(
        verdicts,
        [("orders-value".to_string(), true), ("copy-value".to_string(), false), ("missing-value".to_string(), true)],
        "{answer}"
    );
    assert!(results[1]["messages"].as_array().is_some_and(|m| !m.is_empty()), "{answer}");
    h.post("/compatibility/check", &json!({"subjects": []})).await.assert_error(400, 400);
}

api_tests::api_cases!(
    field_search_matches_naming_variants_in_every_format,
    type_and_text_search,
    search_pages_through_subjects_with_a_cursor,
    diff_history_and_export,
    references_in_search_and_dependencies,
    validate_normalize_and_complexity,
    compatibility_against_several_subjects,
);

/// With authentication on.
mod scoped {
    use super::*;

    /// `team-a` (scoped to `team-a.`) searches only its own subjects, and is refused the analysis
    /// of another team's subject.
    async fn scoped_users_search_only_their_subjects(h: &Harness) {
        for subject in ["team-a.orders", "team-b.orders"] {
            let body = json!({"schema": ORDER_V1});
            h.send_as("admin", Method::POST, &format!("/subjects/{subject}/versions"), Some(&body)).await.ok_json(200);
        }
        let search = json!({"field": "customer_id"});
        let mine = h.send_as("team-a", Method::POST, "/schemas/search/field", Some(&search)).await.ok_json(200);
        assert_eq!(
            pairs(&mine["matches"], ["subject", "field_name", "field_type"]),
            [triple("team-a.orders", "customer_id", "long")]
        );
        let text =
            h.send_as("team-a", Method::POST, "/schemas/search", Some(&json!({"query": "Order"}))).await.ok_json(200);
        assert_eq!(text["count"], 1, "{text}");
        let all = h.send_as("reader", Method::POST, "/schemas/search/field", Some(&search)).await.ok_json(200);
        assert_eq!(all["count"], 2, "{all}");
        h.send_as("team-a", Method::POST, "/subjects/team-b.orders/diff", Some(&json!({})))
            .await
            .assert_error(403, 40301);
        h.send_as("team-a", Method::GET, "/subjects/team-b.orders/export", None).await.assert_error(403, 40301);
        let complexity = json!({"subject": "team-b.orders"});
        h.send_as("team-a", Method::POST, "/schemas/complexity", Some(&complexity)).await.assert_error(403, 40301);
        let check = json!({"schema": ORDER_V1, "subjects": ["team-b.orders"]});
        let refused = h.send_as("team-a", Method::POST, "/compatibility/check", Some(&check)).await.ok_json(200);
        assert_eq!(refused["results"][0]["is_compatible"], false, "{refused}");
    }

    api_tests::api_cases!(authenticated: scoped_users_search_only_their_subjects);
}
