//! The rest of the analysis endpoints (AxonOps Schema Registry's API): similar schemas, quality
//! score, subject-name strategies and patterns, evolution advice, migration steps and statistics,
//! on every backend, inside a context through the base-URL form, and with authentication on, a
//! scoped user seeing only its own subjects.

use api_tests::Harness;
use reqwest::Method;
use serde_json::{Value, json};

const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"shop","doc":"An order","fields":[{"name":"customer_id","type":"long","doc":"who"},{"name":"total","type":"double","doc":"how much"},{"name":"note","type":"string","default":""}]}"#;
const REFUND: &str = r#"{"type":"record","name":"Refund","namespace":"shop","fields":[{"name":"customerId","type":"long"},{"name":"total","type":"double"}]}"#;
const PROTO: &str =
    "syntax = \"proto3\";\npackage billing;\nmessage Invoice {\n  string customer_id = 1;\n  string sku = 2;\n}\n";

async fn seed(h: &Harness) {
    h.register("orders-value", ORDER).await;
    h.register("refunds-value", REFUND).await;
    h.register_body("invoices-value", &json!({"schemaType": "PROTOBUF", "schema": PROTO})).await;
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// Field-set similarity by snake_case names, above the threshold, the source itself left out.
async fn similar_schemas_by_shared_fields(h: &Harness) {
    seed(h).await;
    let answer = h.post("/schemas/similar", &json!({"subject": "refunds-value"})).await.ok_json(200);
    assert_eq!(answer["subject"], "refunds-value", "{answer}");
    let similar = answer["similar"].as_array().cloned().unwrap_or_default();
    let subjects: Vec<&str> = similar.iter().filter_map(|s| s["subject"].as_str()).collect();
    assert_eq!(subjects, ["invoices-value", "orders-value"], "{answer}");
    let orders = &similar[1];
    assert_eq!(strings(&orders["shared_fields"]), ["customer_id", "total"], "{answer}");
    assert!((orders["similarity"].as_f64().unwrap_or(0.0) - 2.0 / 3.0).abs() < 1e-9, "{answer}");
    let strict = h.post("/schemas/similar", &json!({"subject": "refunds-value", "threshold": 0.5})).await.ok_json(200);
    assert_eq!(strict["count"], 1, "{strict}");
    h.post("/schemas/similar", &json!({})).await.assert_error(400, 400);
    h.post("/schemas/similar", &json!({"subject": "nothing-value"})).await.assert_error(404, 40401);
}

/// A posted schema or a subject's latest version, scored; a documented schema scores higher.
async fn quality_of_a_posted_schema_and_of_a_subject(h: &Harness) {
    seed(h).await;
    let documented = h.post("/schemas/quality", &json!({"subject": "orders-value"})).await.ok_json(200);
    let bare = h.post("/schemas/quality", &json!({"schema": REFUND})).await.ok_json(200);
    for answer in [&documented, &bare] {
        assert!(answer["overall_score"].as_u64().is_some() && answer["grade"].as_str().is_some(), "{answer}");
        assert!(answer["categories"].as_object().is_some_and(|c| !c.is_empty()), "{answer}");
    }
    assert!(documented["overall_score"].as_u64() > bare["overall_score"].as_u64(), "{documented} vs {bare}");
    let proto = json!({"schema": PROTO, "schemaType": "PROTOBUF"});
    h.post("/schemas/quality", &proto).await.ok_json(200);
    h.post("/schemas/quality", &json!({"schema": "{not avro"})).await.assert_error(422, 42201);
    h.post("/schemas/quality", &json!({})).await.assert_error(400, 400);
    // An empty field counts as absent (AxonOps reads them as Go strings): the subject is scored.
    let empty_schema = json!({"schema": "", "subject": "orders-value"});
    assert_eq!(h.post("/schemas/quality", &empty_schema).await.ok_json(200), documented);
    h.post("/schemas/quality", &json!({"schema": "", "subject": ""})).await.assert_error(400, 400);
}

/// Subject names under Kafka's naming strategies, and subjects matched by regex, glob and fuzzy.
async fn subject_names_and_patterns(h: &Harness) {
    seed(h).await;
    let ok = h.post("/subjects/validate", &json!({"subject": "orders-value"})).await.ok_json(200);
    assert_eq!((ok["valid"].as_bool(), ok["strategy"].as_str()), (Some(true), Some("topic_name")), "{ok}");
    let bad = h.post("/subjects/validate", &json!({"subject": "orders"})).await.ok_json(200);
    assert_eq!((bad["valid"].as_bool(), bad["suggestion"].as_str()), (Some(false), Some("orders-value")), "{bad}");
    let record = json!({"subject": "com.shop.Order", "strategy": "record_name"});
    assert_eq!(h.post("/subjects/validate", &record).await.ok_json(200)["valid"], true);
    let regex = h.post("/subjects/match", &json!({"pattern": "^(orders|refunds)-"})).await.ok_json(200);
    assert_eq!(strings(&regex["matches"]), ["orders-value", "refunds-value"], "{regex}");
    let glob = h.post("/subjects/match", &json!({"pattern": "*VOICE*", "mode": "glob"})).await.ok_json(200);
    assert_eq!(strings(&glob["matches"]), ["invoices-value"], "{glob}");
    let fuzzy = h.post("/subjects/match", &json!({"pattern": "order-value", "mode": "fuzzy"})).await.ok_json(200);
    assert_eq!(strings(&fuzzy["matches"]), ["orders-value"], "{fuzzy}");
    let paged = h.post("/subjects/match", &json!({"pattern": ".", "max_subjects": 2})).await.ok_json(200);
    assert_eq!((paged["count"].as_i64(), paged["next_cursor"].as_str()), (Some(2), Some("orders-value")), "{paged}");
    h.post("/subjects/match", &json!({"pattern": "("})).await.assert_error(400, 400);
    h.post("/subjects/match", &json!({"pattern": "a", "mode": "soundex"})).await.assert_error(400, 400);
}

/// Advice on proposed changes at the subject's level, and the steps to a target schema.
async fn evolution_and_migration(h: &Harness) {
    seed(h).await;
    let changes = json!({"changes": [{"action": "add", "field": "email", "type": "string"}]});
    let advice = h.post("/subjects/orders-value/evolve", &changes).await.ok_json(200);
    assert_eq!(
        (
            advice["current_version"].as_i64(),
            advice["compatibility_level"].as_str(),
            advice["changes_requested"].as_i64()
        ),
        (Some(1), Some("BACKWARD"), Some(1)),
        "{advice}"
    );
    assert!(advice["message"].as_str().is_some_and(|m| m.contains("default")), "{advice}");
    let target = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"customer_id","type":"long"},{"name":"email","type":"string"}]}"#;
    let plan = h.post("/subjects/orders-value/migrate", &json!({"target_schema": target})).await.ok_json(200);
    assert_eq!(
        strings(&plan["steps"]),
        [
            "Add field 'email' (type: string) with a default value",
            "Remove field 'total' (may require compatibility level change)",
            "Remove field 'note' (may require compatibility level change)",
        ],
        "{plan}"
    );
    assert_eq!(plan["step_count"], 3);
    h.post("/subjects/orders-value/migrate", &json!({})).await.assert_error(400, 400);
    h.post("/subjects/nothing-value/evolve", &json!({})).await.assert_error(404, 40401);
}

/// Counts over the latest versions, a field's types across subjects, and the fields in common.
async fn statistics_consistency_and_patterns(h: &Harness) {
    seed(h).await;
    h.register("orders-value", r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"customer_id","type":"long"},{"name":"total","type":"double"},{"name":"note","type":"string","default":""},{"name":"x","type":"int","default":0}]}"#).await;
    let stats = h.get("/statistics").await.ok_json(200);
    assert_eq!((stats["subject_count"].as_i64(), stats["version_count"].as_i64()), (Some(3), Some(4)), "{stats}");
    assert_eq!(stats["type_counts"], json!({"AVRO": 2, "PROTOBUF": 1}), "{stats}");
    let field = h.get("/statistics/fields/customer_id").await.ok_json(200);
    assert_eq!(field["consistent"], false, "long in Avro, string in Protobuf: {field}");
    assert_eq!(field["type_counts"], json!({"long": 2, "string": 1}), "{field}");
    let patterns = h.get("/statistics/patterns").await.ok_json(200);
    assert_eq!(
        patterns["common_fields"],
        json!([{"field": "customer_id", "count": 3}, {"field": "total", "count": 2}]),
        "{patterns}"
    );
    let paged = h.get("/statistics?max_subjects=1").await.ok_json(200);
    assert_eq!((paged["subject_count"].as_i64(), paged["next_cursor"].as_str()), (Some(1), Some("invoices-value")));
}

/// Under `/contexts/.team/...` the scans and the subjects named in bodies are the context's.
async fn inside_a_context(h: &Harness) {
    seed(h).await;
    h.register(":.team:orders-value", ORDER).await;
    h.register(":.team:refunds-value", REFUND).await;
    let matched = h.post("/contexts/.team/subjects/match", &json!({"pattern": "value$"})).await.ok_json(200);
    assert_eq!(strings(&matched["matches"]), [":.team:orders-value", ":.team:refunds-value"], "{matched}");
    let similar = h.post("/contexts/.team/schemas/similar", &json!({"subject": "refunds-value"})).await.ok_json(200);
    let subjects: Vec<&str> =
        similar["similar"].as_array().into_iter().flatten().filter_map(|s| s["subject"].as_str()).collect();
    assert_eq!(subjects, [":.team:orders-value"], "{similar}");
    let stats = h.get("/contexts/.team/statistics").await.ok_json(200);
    assert_eq!(stats["subject_count"], 2, "{stats}");
    let evolve = h.post("/contexts/.team/subjects/orders-value/evolve", &json!({})).await.ok_json(200);
    assert_eq!(evolve["subject"], ":.team:orders-value", "{evolve}");
}

api_tests::api_cases!(
    similar_schemas_by_shared_fields,
    quality_of_a_posted_schema_and_of_a_subject,
    subject_names_and_patterns,
    evolution_and_migration,
    statistics_consistency_and_patterns,
    inside_a_context,
);

/// With authentication on.
mod scoped {
    use super::*;

    /// `team-a` (scoped to `team-a.`) compares, matches and counts only its own subjects, and is
    /// refused another team's subject named in the path or the body.
    async fn scoped_users_analyse_only_their_subjects(h: &Harness) {
        for (subject, schema) in [("team-a.orders", ORDER), ("team-a.refunds", REFUND), ("team-b.orders", ORDER)] {
            let body = json!({"schema": schema});
            h.send_as("admin", Method::POST, &format!("/subjects/{subject}/versions"), Some(&body)).await.ok_json(200);
        }
        let similar = json!({"subject": "team-a.refunds"});
        let mine = h.send_as("team-a", Method::POST, "/schemas/similar", Some(&similar)).await.ok_json(200);
        let subjects: Vec<&str> =
            mine["similar"].as_array().into_iter().flatten().filter_map(|s| s["subject"].as_str()).collect();
        assert_eq!(subjects, ["team-a.orders"], "{mine}");
        let matched = h
            .send_as("team-a", Method::POST, "/subjects/match", Some(&json!({"pattern": "orders"})))
            .await
            .ok_json(200);
        assert_eq!(strings(&matched["matches"]), ["team-a.orders"], "{matched}");
        let stats = h.send_as("team-a", Method::GET, "/statistics", None).await.ok_json(200);
        assert_eq!(stats["subject_count"], 2, "{stats}");
        let theirs = json!({"subject": "team-b.orders"});
        h.send_as("team-a", Method::POST, "/schemas/similar", Some(&theirs)).await.assert_error(403, 40301);
        h.send_as("team-a", Method::POST, "/schemas/quality", Some(&theirs)).await.assert_error(403, 40301);
        h.send_as("team-a", Method::POST, "/subjects/team-b.orders/evolve", Some(&json!({})))
            .await
            .assert_error(403, 40301);
        let target = json!({"target_schema": REFUND});
        h.send_as("team-a", Method::POST, "/subjects/team-b.orders/migrate", Some(&target))
            .await
            .assert_error(403, 40301);
    }

    api_tests::api_cases!(authenticated: scoped_users_analyse_only_their_subjects);
}
