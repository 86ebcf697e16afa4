//! Hostile schemas through the real server: each class of super-linear input gets a 422 / 42201 naming
//! the budget it exceeded (or its correct answer when it fits), never a 5xx, a crash or a stall, and
//! stored data stays as it was. Sizes are moderate; where a class needs a large input to reach the
//! default budget, a second server on the same store runs with lowered budgets.

use api_tests::Harness;
use api_tests::client::typed;
use registry_core::{Limits, RegistrySettings};
use registry_schema::bombs;
use serde_json::json;

/// A second server over `h`'s store with `limits` and one schema worker.
async fn tight(h: &Harness, limits: Limits) -> Harness {
    let settings = RegistrySettings { limits, schema_workers: 1, ..RegistrySettings::default() };
    Harness::serve(h.backend().clone(), h.store().clone(), settings).await
}

/// Registers `old` under `subject`, then checks and registers `new`: both must answer 422 / 42201
/// naming `variable`, and the subject must still hold `old` alone.
async fn refused_after_v1(h: &Harness, subject: &str, schema_type: &str, (old, new): (String, String), variable: &str) {
    let id = h.register_body(subject, &typed(schema_type, &old)).await;
    let path = format!("/compatibility/subjects/{subject}/versions/latest");
    let message = h.post(&path, &typed(schema_type, &new)).await.assert_error(422, 42201);
    assert!(message.contains(variable), "{message}");
    let message = h.register_raw(subject, &typed(schema_type, &new)).await.assert_error(422, 42201);
    assert!(message.contains(variable), "{message}");
    assert_eq!(h.versions(subject, "").await, [1], "nothing was added");
    let stored = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(stored["schema"].as_str().map(str::len), Some(old.len()), "v1 unchanged");
}

async fn an_avro_dag_is_refused_at_the_work_budget(h: &Harness) {
    refused_after_v1(h, "avro-dag", "AVRO", bombs::avro_dag(22), "REGISTRY_SCHEMA_MAX_WORK").await;
}

async fn a_json_schema_ref_dag_is_refused_at_the_work_budget(h: &Harness) {
    refused_after_v1(h, "json-dag", "JSON", bombs::json_ref_dag(22), "REGISTRY_SCHEMA_MAX_WORK").await;
}

async fn a_wide_one_of_is_refused_at_the_work_budget(h: &Harness) {
    let small = tight(h, Limits { max_work: 5_000, ..Limits::default() }).await;
    refused_after_v1(&small, "one-of", "JSON", bombs::json_wide_one_of(150), "REGISTRY_SCHEMA_MAX_WORK").await;
    small.stop().await;
}

async fn protobuf_files_over_the_node_budget_are_refused_and_large_real_ones_accepted(h: &Harness) {
    // Default budgets: 40,002 statements of eight nodes each are over 100,000, refused before the compiler.
    let bombs = [("mutual", bombs::protobuf_mutual_messages(10_000)), ("wide", bombs::protobuf_wide_message(40_000))];
    for (subject, (text, _)) in bombs {
        let message = h.register_raw(subject, &typed("PROTOBUF", &text)).await.assert_error(422, 42201);
        assert!(message.contains("REGISTRY_SCHEMA_MAX_NODES") && message.contains("Protobuf statement"), "{message}");
        h.get(&format!("/subjects/{subject}/versions")).await.assert_error(404, 40401);
    }
    let (old, new) = bombs::protobuf_large_api(500);
    h.register_body("api", &typed("PROTOBUF", &old)).await;
    let checked = h.post("/compatibility/subjects/api/versions/latest", &typed("PROTOBUF", &new)).await.ok_json(200);
    assert_eq!(checked["is_compatible"], json!(true), "every message gained a field");
    h.register_body("api", &typed("PROTOBUF", &new)).await;
    assert_eq!(h.versions("api", "").await, [1, 2]);
}

async fn wide_unions_and_enums_get_their_correct_answers(h: &Harness) {
    let (old, new) = bombs::avro_wide_union(2_000);
    h.register("union", &old).await;
    let reordered = h.check("union", Some("latest"), &new, "").await.ok_json(200);
    assert_eq!(reordered["is_compatible"], json!(true), "a reordered union reads the same data");
    let (old, new) = bombs::avro_wide_enum(20_000);
    h.register("enum", &old).await;
    let narrowed = h.check("enum", Some("latest"), &new, "?verbose=true").await.ok_json(200);
    assert_eq!(narrowed["is_compatible"], json!(false), "the new enum lacks a symbol");
}

async fn nesting_and_size_beyond_the_budgets_are_refused(h: &Harness) {
    let mut deep = r#""int""#.to_string();
    for _ in 0..150 {
        deep = format!(r#"{{"type":"array","items":{deep}}}"#);
    }
    let message = h.register_raw("deep", &typed("AVRO", &deep)).await.assert_error(422, 42201);
    assert!(message.contains("REGISTRY_SCHEMA_MAX_DEPTH"), "{message}");
    let values: Vec<String> = (0..100_001).map(|i| i.to_string()).collect();
    let wide = format!(r#"{{"enum":[{}]}}"#, values.join(","));
    let message = h.register_raw("wide", &typed("JSON", &wide)).await.assert_error(422, 42201);
    assert!(message.contains("REGISTRY_SCHEMA_MAX_NODES"), "{message}");
}

async fn a_cheap_read_is_answered_while_heavy_checks_queue(h: &Harness) {
    let (old, new) = bombs::avro_dag(22);
    h.register("queue", &old).await;
    // One worker: four heavy checks queue behind each other, each until the work budget stops it.
    let small = tight(h, Limits::default()).await;
    let base = small.base_url().to_string();
    let heavy: Vec<_> = (0..4)
        .map(|_| {
            let (client, url) = (small.http().clone(), format!("{base}/compatibility/subjects/queue/versions/latest"));
            let body = typed("AVRO", &new);
            tokio::spawn(async move { client.post(url).json(&body).send().await.map(|r| r.status().as_u16()) })
        })
        .collect();
    tokio::task::yield_now().await;
    let types = small.get("/schemas/types").await.ok_json(200);
    assert_eq!(types, json!(["JSON", "PROTOBUF", "AVRO"]));
    let waiting = heavy.iter().filter(|task| !task.is_finished()).count();
    assert!(waiting > 0, "the read was answered while heavy checks were still queued");
    for task in heavy {
        assert_eq!(task.await.ok().and_then(Result::ok), Some(422));
    }
    small.stop().await;
}

async fn long_numbers_keep_every_digit_and_their_own_id(h: &Harness) {
    let texts = [r#"{"const":12345678901234567890123}"#, r#"{"const":12345678901234567890124}"#];
    h.set_config(Some("digits"), "NONE").await.ok_json(200);
    let mut ids = Vec::new();
    for text in texts {
        let id = h.register_body("digits", &typed("JSON", text)).await;
        let stored = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
        assert_eq!(stored["schema"], json!(text), "stored with every digit");
        let raw = h.get(&format!("/schemas/ids/{id}/schema")).await;
        assert_eq!(raw.text, text);
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1], "two different numbers are two schemas");
    assert_eq!(h.versions("digits", "").await, [1, 2]);
    let found = h.post("/subjects/digits", &typed("JSON", texts[0])).await.ok_json(200);
    assert_eq!(found["id"], json!(ids[0]), "the lookup finds the exact one");
}

api_tests::api_cases!(
    long_numbers_keep_every_digit_and_their_own_id,
    an_avro_dag_is_refused_at_the_work_budget,
    a_json_schema_ref_dag_is_refused_at_the_work_budget,
    a_wide_one_of_is_refused_at_the_work_budget,
    protobuf_files_over_the_node_budget_are_refused_and_large_real_ones_accepted,
    wide_unions_and_enums_get_their_correct_answers,
    nesting_and_size_beyond_the_budgets_are_refused,
    a_cheap_read_is_answered_while_heavy_checks_queue,
);
