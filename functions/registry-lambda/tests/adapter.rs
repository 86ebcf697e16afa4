//! Event-fixture tests: API Gateway (HTTP API v2, REST) and Function URL events from
//! `tests/events/*.json` → `lambda_http::request::from_str` → the function's handler over a
//! `MemoryStore` → status, `error_code`, body and content type as Confluent clients expect them.

use axum::body::Body;
use axum::http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use lambda_http::request::from_str;
use registry_core::{MemoryStore, Registry, RegistrySettings};
use registry_http::AppOptions;
use registry_lambda::{Handler, handler};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const V1: &str = "application/vnd.schemaregistry.v1+json";

fn event(name: &str) -> String {
    let path = format!("{}/tests/events/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn request(name: &str) -> lambda_http::Request {
    from_str(&event(name)).unwrap_or_else(|e| panic!("{name}: not a Lambda HTTP event: {e}"))
}

fn fresh() -> Handler {
    handler(Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default()), AppOptions::default(), None)
}

/// What a client sees: status, content type and the body parsed as JSON.
struct Answer {
    status: StatusCode,
    content_type: String,
    body: Value,
}

impl Answer {
    fn error_code(&self) -> Option<i64> {
        self.body.get("error_code").and_then(Value::as_i64)
    }
    fn message(&self) -> &str {
        self.body.get("message").and_then(Value::as_str).unwrap_or_default()
    }
}

async fn read(response: Response<Body>) -> Answer {
    let status = response.status();
    let content_type =
        response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let bytes = response.into_body().collect().await.unwrap_or_else(|e| panic!("body: {e}")).to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    Answer { status, content_type, body }
}

async fn send(handler: &Handler, name: &str) -> Answer {
    let response = handler.clone().oneshot(request(name)).await.unwrap_or_else(|never| match never {});
    read(response).await
}

async fn send_ok(handler: &Handler, name: &str) -> Answer {
    let answer = send(handler, name).await;
    assert_eq!(answer.status, StatusCode::OK, "{name}: {}", answer.body);
    assert_eq!(answer.content_type, V1, "{name}");
    answer
}

/// The registry after `orders-value` (id 1) and `payments-value` (id 2, base64 body) were registered.
async fn seeded() -> Handler {
    let handler = fresh();
    assert_eq!(send_ok(&handler, "apigw_v2_register").await.body["id"], 1);
    assert_eq!(send_ok(&handler, "function_url_register_base64").await.body["id"], 2);
    handler
}

fn schema_json(answer: &Answer) -> Value {
    let text = answer.body["schema"].as_str().unwrap_or_else(|| panic!("no schema text in {}", answer.body));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("stored Avro text is not JSON: {e}"))
}

fn order_schema() -> Value {
    json!({"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]})
}

#[tokio::test]
async fn register_then_get_by_id_lookup_and_list() {
    let handler = fresh();
    let registered = send_ok(&handler, "apigw_v2_register").await;
    assert_eq!(registered.body["id"], 1);
    assert_eq!(registered.body["version"], 1);

    let by_id = send_ok(&handler, "apigw_v2_get_schema_by_id").await;
    assert_eq!(schema_json(&by_id), order_schema());

    let lookup = send_ok(&handler, "function_url_lookup").await;
    assert_eq!(
        (&lookup.body["subject"], &lookup.body["version"], &lookup.body["id"]),
        (&json!("orders-value"), &json!(1), &json!(1))
    );
    assert_eq!(schema_json(&lookup), order_schema());

    for list in ["apigw_v2_list_subjects", "function_url_list_subjects"] {
        assert_eq!(send_ok(&handler, list).await.body, json!(["orders-value"]), "{list}");
    }
}

#[tokio::test]
async fn a_base64_encoded_body_is_decoded() {
    let raw = event("function_url_register_base64");
    assert!(raw.contains("\"isBase64Encoded\": true"), "the fixture must really be base64-encoded");
    let handler = seeded().await;
    let subjects = send_ok(&handler, "function_url_list_subjects").await;
    assert_eq!(subjects.body, json!(["orders-value", "payments-value"]));
}

#[tokio::test]
async fn a_percent_encoded_slash_stays_inside_one_subject() {
    let request = request("function_url_register_protobuf_slash");
    assert_eq!(request.uri().path(), "/subjects/pkg1%2Fmsg1.proto/versions", "lambda_http keeps %2F encoded");
    let handler = fresh();
    assert_eq!(send_ok(&handler, "function_url_register_protobuf_slash").await.body["id"], 1);
    assert_eq!(send_ok(&handler, "function_url_versions_slash").await.body, json!([1]));
    assert_eq!(send_ok(&handler, "function_url_list_subjects").await.body, json!(["pkg1/msg1.proto"]));
}

#[tokio::test]
async fn an_api_gateway_stage_prefix_is_stripped() {
    // lambda_http keeps the stage in HTTP API paths (rawPath carries it) and, unless
    // AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH is set, adds it to REST API paths; the handler
    // strips it either way, by the event's requestContext.stage.
    assert_eq!(request("apigw_v2_stage_prefix").uri().path(), "/prod/subjects");
    if std::env::var_os("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH").is_none() {
        assert_eq!(request("apigw_rest_stage_prefix").uri().path(), "/prod/subjects/orders-value/versions/latest");
    }
    let handler = seeded().await;
    let http_api = send_ok(&handler, "apigw_v2_stage_prefix").await;
    assert_eq!(http_api.body, json!(["orders-value"]), "query string kept after stripping");
    let rest_api = send_ok(&handler, "apigw_rest_stage_prefix").await;
    assert_eq!((&rest_api.body["subject"], &rest_api.body["version"]), (&json!("orders-value"), &json!(1)));
}

#[tokio::test]
async fn every_error_path_has_confluents_status_code_and_body() {
    let handler = seeded().await;
    let cases: &[(&str, StatusCode, i64, &str)] = &[
        ("function_url_error_subject_not_found", StatusCode::NOT_FOUND, 40401, "Subject 'missing-value' not found."),
        ("function_url_error_version_not_found", StatusCode::NOT_FOUND, 40402, "Version 99 not found."),
        ("apigw_v2_error_schema_not_found", StatusCode::NOT_FOUND, 40403, "Schema 999 not found"),
        ("function_url_error_lookup_not_found", StatusCode::NOT_FOUND, 40403, "Schema not found"),
        ("apigw_v2_error_invalid_schema", StatusCode::UNPROCESSABLE_ENTITY, 42201, ""),
        ("function_url_error_invalid_version", StatusCode::UNPROCESSABLE_ENTITY, 42202, "The specified version '0'"),
        ("apigw_v2_error_incompatible", StatusCode::CONFLICT, 40901, "Schema being registered is incompatible"),
        ("function_url_error_unknown_path", StatusCode::NOT_FOUND, 404, "HTTP 404 Not Found"),
        ("function_url_error_method_not_allowed", StatusCode::METHOD_NOT_ALLOWED, 405, "HTTP 405 Method Not Allowed"),
        (
            "function_url_error_unsupported_media_type",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            415,
            "HTTP 415 Unsupported Media Type",
        ),
        ("function_url_error_malformed_json", StatusCode::BAD_REQUEST, 400, ""),
    ];
    for (name, status, error_code, message) in cases {
        let answer = send(&handler, name).await;
        assert_eq!(answer.status, *status, "{name}: {}", answer.body);
        assert_eq!(answer.error_code(), Some(*error_code), "{name}: {}", answer.body);
        assert!(answer.message().starts_with(message), "{name}: message {:?}", answer.message());
        assert!(!answer.message().is_empty(), "{name}: empty message");
        assert_eq!(answer.content_type, V1, "{name}: errors use the v1 media type");
    }
    // Nothing above changed the registry.
    assert_eq!(send_ok(&handler, "function_url_list_subjects").await.body, json!(["orders-value", "payments-value"]));
}

#[tokio::test]
async fn a_request_still_working_near_its_deadline_answers_504_with_confluents_body() {
    use lambda_http::{Context, RequestExt};
    use registry_core::testkit::{HookedStore, StoreCall};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    // Given a store whose reads never finish (each yields to the runtime for ever)
    struct Stuck;
    impl registry_core::testkit::StoreHook for Stuck {
        fn before(&self, _call: StoreCall) -> registry_core::StoreResult<()> {
            Ok(())
        }
        fn yields(&self, call: StoreCall) -> usize {
            if call.is_write() { 0 } else { usize::MAX }
        }
    }
    let store = HookedStore::new(Arc::new(MemoryStore::new()), Stuck);
    let registry = Registry::new(Arc::new(store), RegistrySettings::default());
    let margin = Duration::from_secs(1);
    let options = AppOptions {
        request_budget: registry_http::request_limits::RequestBudget { fixed: None, deadline_margin: margin },
        ..AppOptions::default()
    };
    let handler = handler(registry, options, None);
    // When an invocation whose deadline is the margin plus 200 ms away reads by ID
    let mut context = Context::default();
    let deadline = SystemTime::now() + margin + Duration::from_millis(200);
    context.deadline = deadline.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let request = request("apigw_v2_get_schema_by_id").with_lambda_context(context);
    // (without a budget it would never answer: the bound below only turns a hang into a failure)
    let response = tokio::time::timeout(Duration::from_secs(120), handler.oneshot(request))
        .await
        .unwrap_or_else(|_| panic!("no answer: the invocation's deadline did not bound the request"))
        .unwrap_or_else(|never| match never {});
    // Then it answers 504 with Confluent's body (the runtime would kill it at the deadline)
    let answer = read(response).await;
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT, "{}", answer.body);
    assert_eq!((answer.error_code(), answer.message()), (Some(504), "HTTP 504 Gateway Timeout"));
}
