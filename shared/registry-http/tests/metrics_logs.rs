//! Operability through the router: metrics counted for a scripted sequence of requests, the
//! `/metrics` exposition, the churn guard's 429, and the per-request JSON log line (fields,
//! request id, the principal of every write, no schema bodies or credentials).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use base64::Engine;
use http_body_util::BodyExt;
use registry_auth::{Authenticator, HashCost, Role, UserEntry, UsersFile, hash_password};
use registry_core::{ChurnSettings, MemoryStore, Registry, RegistrySettings};
use registry_http::observability::{REQUEST_ID_HEADER, RequestId};
use registry_http::{AppOptions, app, observability};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

const V1: &str = "application/vnd.schemaregistry.v1+json";
const USER_V1: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"}]}"#;
const USER_V2: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"email","type":"string","default":""}]}"#;
const USER_BAD: &str =
    r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"age","type":"int"}]}"#;

/// The tests of this file run one at a time: they read process-wide state (the metrics registry)
/// and capture logs through a thread-local subscriber, whose callsite interest another test
/// registering the same callsites at that moment could leave cached as "never" (a lost line).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

fn registry(settings: RegistrySettings) -> Registry {
    Registry::new(Arc::new(MemoryStore::new()), settings)
}

async fn send(app: &Router, method: Method, path: &str, body: Option<Value>, auth: Option<&str>) -> Reply {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(auth) = auth {
        request = request.header(header::AUTHORIZATION, auth);
    }
    let request = match body {
        Some(body) => request.header(header::CONTENT_TYPE, V1).body(Body::from(body.to_string())),
        None => request.body(Body::empty()),
    };
    let response = app.clone().oneshot(request.unwrap()).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Reply { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() }
}

fn schema(text: &str) -> Option<Value> {
    Some(json!({ "schema": text }))
}

/// The value of the sample `name` (with its exact label set) in exposition `text`.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn a_scripted_sequence_is_counted_by_operation_status_and_outcome() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let app = app(registry(RegistrySettings::default()), AppOptions::default());
    let register = "/subjects/orders-value/versions";
    assert_eq!(send(&app, Method::POST, register, schema(USER_V1), None).await.status, StatusCode::OK);
    assert_eq!(send(&app, Method::POST, register, schema(USER_V1), None).await.status, StatusCode::OK);
    assert_eq!(send(&app, Method::POST, register, schema(USER_BAD), None).await.status, StatusCode::CONFLICT);
    assert_eq!(send(&app, Method::POST, register, schema(USER_V2), None).await.status, StatusCode::OK);
    assert_eq!(send(&app, Method::POST, "/subjects/orders-value", schema(USER_V1), None).await.status, StatusCode::OK);
    assert_eq!(send(&app, Method::GET, "/schemas/ids/99", None, None).await.status, StatusCode::NOT_FOUND);

    let reply = send(&app, Method::GET, "/metrics", None, None).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = reply.body;
    let requests = |operation: &str, status: u16| {
        sample(&text, &format!("schema_registry_requests_total{{operation=\"{operation}\",status=\"{status}\"}}"))
    };
    assert_eq!(requests("register_schema", 200), Some(3.0), "{text}");
    assert_eq!(requests("register_schema", 409), Some(1.0));
    assert_eq!(requests("look_up_schema_under_subject", 200), Some(1.0));
    assert_eq!(requests("get_schemas_by_id", 404), Some(1.0));
    assert_eq!(requests("get_metrics", 200), None, "the scrape itself is counted after it answers");
    let registrations =
        |outcome: &str| sample(&text, &format!("schema_registry_registrations_total{{outcome=\"{outcome}\"}}"));
    assert_eq!(registrations("new_id"), Some(2.0));
    assert_eq!(registrations("existing"), Some(1.0));
    assert_eq!(registrations("new_version"), Some(0.0));
    assert_eq!(sample(&text, "schema_registry_compatibility_rejections_total"), Some(1.0));
    assert_eq!(sample(&text, "schema_registry_max_schema_id"), Some(2.0));
    assert_eq!(sample(&text, "schema_registry_churn_exceeded_total"), Some(0.0));
    let count =
        sample(&text, "schema_registry_request_duration_seconds_count{operation=\"register_schema\",status=\"200\"}");
    assert_eq!(count, Some(3.0));

    let again = send(&app, Method::GET, "/metrics", None, None).await.body;
    assert_eq!(requests_in(&again, "get_metrics", 200), Some(1.0));
}

fn requests_in(text: &str, operation: &str, status: u16) -> Option<f64> {
    sample(text, &format!("schema_registry_requests_total{{operation=\"{operation}\",status=\"{status}\"}}"))
}

#[tokio::test]
async fn the_churn_guard_answers_429_only_for_new_versions_over_the_limit() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let settings = RegistrySettings { churn: ChurnSettings { max_per_hour: 1, enforce: true }, ..Default::default() };
    let app = app(registry(settings), AppOptions::default());
    let register = "/subjects/orders-value/versions";
    assert_eq!(send(&app, Method::POST, register, schema(USER_V1), None).await.status, StatusCode::OK);
    let refused = send(&app, Method::POST, register, schema(USER_V2), None).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some(V1));
    let body: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(body["error_code"], 42901);
    assert!(body["message"].as_str().unwrap().contains("orders-value"), "{body}");
    let again = send(&app, Method::POST, register, schema(USER_V1), None).await;
    assert_eq!(again.status, StatusCode::OK, "re-registration is never refused");
    let text = send(&app, Method::GET, "/metrics", None, None).await.body;
    assert_eq!(sample(&text, "schema_registry_churn_refused_total"), Some(1.0));
    assert_eq!(requests_in(&text, "register_schema", 429), Some(1.0));
}

/// A `MakeWriter` into a shared buffer.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The request log lines (JSON), in order.
    fn requests(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
            .filter(|line| line["target"] == observability::REQUEST_LOG_TARGET)
            .collect()
    }
}

fn json_logs() -> (Buffer, tracing::subscriber::DefaultGuard) {
    let buffer = Buffer::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::TRACE)
        .with_current_span(true)
        .with_span_list(true)
        .with_writer(buffer.clone())
        .finish();
    (buffer, tracing::subscriber::set_default(subscriber))
}

fn protected(registry: Registry, password: &str) -> Router {
    let mut users = UsersFile::default();
    for (user, role) in [("writer", Role::Write), ("admin", Role::Admin)] {
        let hash = hash_password(password, HashCost::TEST).unwrap();
        users.upsert(UserEntry { user: user.into(), role, subject_prefixes: Vec::new(), hash });
    }
    let authenticator = Arc::new(Authenticator::new(&users, None).unwrap());
    app(registry, AppOptions { authenticator: Some(authenticator), ..AppOptions::default() })
}

#[tokio::test]
async fn one_log_line_per_request_with_its_fields_and_no_bodies_or_credentials() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let (logs, _guard) = json_logs();
    let password = "pa55-w0rd-never-logged";
    let app = protected(registry(RegistrySettings::default()), password);
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("writer:{password}"));
    let authorization = format!("Basic {credentials}");
    let marker = "FieldNameThatMustNotBeLogged";
    let body = format!(r#"{{"type":"record","name":"User","fields":[{{"name":"{marker}","type":"int"}}]}}"#);

    let reply = send(&app, Method::POST, "/subjects/team%2Forders/versions", schema(&body), Some(&authorization)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let denied = send(&app, Method::POST, "/subjects/team%2Forders/versions", schema(&body), None).await;
    assert_eq!(denied.status, StatusCode::UNAUTHORIZED);

    let lines = logs.requests();
    assert_eq!(lines.len(), 2, "one line per request: {lines:#?}");
    let served = &lines[0]["fields"];
    assert_eq!(served["operation"], "register_schema");
    assert_eq!(served["subject"], "team/orders");
    assert_eq!(served["method"], "POST");
    assert_eq!(served["status"], 200);
    assert_eq!(served["principal"], "writer");
    assert!(served["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{served}");
    let echoed = reply.headers.get(&REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).unwrap();
    assert_eq!(served["request_id"], echoed, "the response echoes the logged request id");
    assert_eq!(lines[0]["level"], "INFO");
    let refused = &lines[1]["fields"];
    assert_eq!((refused["operation"].as_str(), refused["status"].as_u64()), (Some("register_schema"), Some(401)));
    assert_ne!(refused["request_id"], served["request_id"]);
    assert_eq!(refused["principal"], "anonymous", "no credentials verified");

    let everything = logs.text();
    for secret in [marker, password, credentials.as_str(), "Basic "] {
        assert!(!everything.contains(secret), "{secret:?} leaked into the log:\n{everything}");
    }
    let metrics = send(&app, Method::GET, "/metrics", None, Some(&authorization)).await.body;
    assert_eq!(requests_in(&metrics, "register_schema", 200), Some(1.0), "counted once, not per layer");
    assert_eq!(requests_in(&metrics, "register_schema", 401), Some(1.0), "auth refusals are counted");
}

#[tokio::test]
async fn the_caller_s_request_id_wins_and_a_plain_client_id_is_kept() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let (logs, _guard) = json_logs();
    let app = app(registry(RegistrySettings::default()), AppOptions::default());
    let mut request =
        Request::builder().uri("/subjects").header(&REQUEST_ID_HEADER, "client-1").body(Body::empty()).unwrap();
    request.extensions_mut().insert(RequestId("lambda-abc".into()));
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.headers().get(&REQUEST_ID_HEADER).unwrap(), "lambda-abc");
    let request =
        Request::builder().uri("/subjects").header(&REQUEST_ID_HEADER, "client-1").body(Body::empty()).unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert_eq!(response.headers().get(&REQUEST_ID_HEADER).unwrap(), "client-1");
    let ids: Vec<Value> = logs.requests().iter().map(|line| line["fields"]["request_id"].clone()).collect();
    assert_eq!(ids, vec![json!("lambda-abc"), json!("client-1")]);
}

/// The audit trail: every kind of write logs who made it (`anonymous` with authentication off).
#[tokio::test]
async fn every_write_names_its_principal() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let (logs, _guard) = json_logs();
    let password = "audit-pass";
    let registry = registry(RegistrySettings::default());
    let admin = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("admin:{password}")));
    let writes: [(Method, &str, Option<Value>); 9] = [
        (Method::POST, "/subjects/audited/versions", schema(USER_V1)),
        (Method::PUT, "/config/audited", Some(json!({ "compatibility": "NONE" }))),
        (Method::PUT, "/mode", Some(json!({ "mode": "READWRITE" }))),
        (Method::PUT, "/mode/imported", Some(json!({ "mode": "IMPORT" }))),
        (Method::POST, "/subjects/imported/versions", Some(json!({ "schema": USER_V2, "id": 50, "version": 1 }))),
        (Method::DELETE, "/config/audited", None),
        (Method::DELETE, "/subjects/audited/versions/1", None),
        (Method::DELETE, "/subjects/audited?permanent=true", None),
        (Method::DELETE, "/mode/imported", None),
    ];
    let protected = protected(registry.clone(), password);
    for (method, path, body) in writes {
        let reply = send(&protected, method.clone(), path, body, Some(&admin)).await;
        assert_eq!(reply.status, StatusCode::OK, "{method} {path}: {}", reply.body);
    }
    let open = app(registry, AppOptions::default());
    send(&open, Method::PUT, "/config/audited", Some(json!({ "compatibility": "FULL" })), None).await;

    let lines = logs.requests();
    let principals: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| (line["fields"]["operation"].as_str().unwrap(), line["fields"]["principal"].as_str().unwrap()))
        .collect();
    assert_eq!(
        principals,
        [
            ("register_schema", "admin"),
            ("update_subject_level_config", "admin"),
            ("update_top_level_mode", "admin"),
            ("update_subject_mode", "admin"),
            ("register_schema", "admin"),
            ("delete_subject_config", "admin"),
            ("delete_schema_version", "admin"),
            ("delete_subject", "admin"),
            ("delete_subject_mode", "admin"),
            ("update_subject_level_config", "anonymous"),
        ]
    );
}

/// A host's own line per answer ([`observability::AnswerLine`]), recording what it is handed.
#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<observability::RequestRecord>>);

impl observability::AnswerLine for Recorded {
    fn answered(&self, record: &observability::RequestRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

impl Recorded {
    fn records(&self) -> Vec<observability::RequestRecord> {
        self.0.lock().unwrap().clone()
    }
}

fn with_line(options: AppOptions, line: &Arc<Recorded>) -> AppOptions {
    AppOptions { answer_line: Some(Arc::clone(line) as Arc<dyn observability::AnswerLine>), ..options }
}

/// The Lambda function's EMF line is its access line: a host's answer line is handed every answer
/// with the access line's fields, and the access line is not written as well (one line per answer).
#[tokio::test]
async fn a_host_s_answer_line_replaces_the_access_line_with_the_same_fields() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let (logs, _guard) = json_logs();
    let password = "line-pass";
    let line = Arc::new(Recorded::default());
    let mut users = UsersFile::default();
    users.upsert(UserEntry::with_password("writer", Role::Write, &[], password, HashCost::TEST).unwrap());
    let authenticator = Arc::new(Authenticator::new(&users, None).unwrap());
    let options = with_line(AppOptions { authenticator: Some(authenticator), ..AppOptions::default() }, &line);
    let app = app(registry(RegistrySettings::default()), options);
    let writer = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("writer:{password}")));

    let registered = send(&app, Method::POST, "/subjects/orders/versions", schema(USER_V1), Some(&writer)).await;
    assert_eq!(registered.status, StatusCode::OK, "{}", registered.body);
    let refused = send(&app, Method::POST, "/subjects/orders/versions", schema(USER_BAD), Some(&writer)).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    send(&app, Method::GET, "/subjects", None, None).await;

    let records = line.records();
    let fields: Vec<_> = records
        .iter()
        .map(|r| (r.operation, r.subject.as_deref(), r.method.as_str(), r.status, r.principal.as_deref(), r.error_code))
        .collect();
    assert_eq!(
        fields,
        [
            ("register_schema", Some("orders"), "POST", 200, Some("writer"), None),
            ("register_schema", Some("orders"), "POST", 409, Some("writer"), Some(40901)),
            ("get_all_subjects", None, "GET", 401, None, Some(40101)),
        ]
    );
    let echoed = registered.headers.get(&REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).unwrap();
    assert_eq!(records[0].request_id, echoed);
    assert!(logs.requests().is_empty(), "no access line besides the host's: {:#?}", logs.requests());
}

/// In a read region, a local 404 the home region answers again is not the request's answer: the
/// host's line is handed the home's answer only, so each request is one line (one EMF `Requests`).
#[tokio::test]
async fn a_read_region_hands_the_host_s_line_one_answer_per_request() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let line = Arc::new(Recorded::default());
    let home_registry = registry(RegistrySettings::default());
    let home = app(home_registry.clone(), with_line(AppOptions::default(), &line));
    let local = app(registry(RegistrySettings::default()), with_line(AppOptions::default(), &line));
    let region = registry_http::regional::app(local, home.clone());
    let registered = send(&home, Method::POST, "/subjects/orders/versions", schema(USER_V1), None).await;
    let id = serde_json::from_str::<Value>(&registered.body).unwrap()["id"].as_u64().unwrap();
    line.0.lock().unwrap().clear();

    // Not replicated yet: the local replica answers 404, the home answers.
    let found = send(&region, Method::GET, &format!("/schemas/ids/{id}"), None, None).await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    // Unknown everywhere: the home's 404 is the answer.
    let unknown = send(&region, Method::GET, "/schemas/ids/999", None, None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    // A write goes to the home only.
    send(&region, Method::PUT, "/config/orders", Some(json!({ "compatibility": "NONE" })), None).await;

    let answered: Vec<(&str, u16)> = line.records().iter().map(|r| (r.operation, r.status)).collect();
    assert_eq!(
        answered,
        [("get_schemas_by_id", 200), ("get_schemas_by_id", 404), ("update_subject_level_config", 200)],
        "one answer per request"
    );
}
