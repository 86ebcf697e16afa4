//! Observability: one `request` span per request carrying the declared Confluent operation, and
//! 5xx answers logged at ERROR with the detail their body leaves out.

use crate::store_failures::broken_store;
use crate::support::Api;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::Attributes;
use tracing::{Event, Id, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Records spans (name and `operation` field) and ERROR events' `detail` fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

/// The value of one named field.
struct FieldVisitor(&'static str, Option<String>);

impl Visit for FieldVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.0 {
            self.1 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == self.0 {
            self.1 = Some(format!("{value:?}"));
        }
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        let mut visitor = FieldVisitor("operation", None);
        attrs.record(&mut visitor);
        let operation = visitor.1.unwrap_or_default();
        self.0.lock().unwrap().push(format!("span {} {operation}", attrs.metadata().name()));
    }
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::ERROR {
            let mut visitor = FieldVisitor("detail", None);
            event.record(&mut visitor);
            self.0.lock().unwrap().push(format!("error {}", visitor.1.unwrap_or_default()));
        }
    }
}

impl Capture {
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn each_request_gets_a_span_carrying_its_operation() {
    let capture = Capture::default();
    let _guard = tracing_subscriber::registry().with(capture.clone()).set_default();
    let api = Api::new();
    api.get("/config").await.ok();
    api.get("/subjects").await.ok();
    api.delete("/subjects/nobody").await.error(404, 40401);
    let lines = capture.lines();
    for operation in ["get_top_level_config", "get_all_subjects", "delete_subject"] {
        assert!(lines.contains(&format!("span request {operation}")), "{operation} missing in {lines:?}");
    }
    assert!(!lines.iter().any(|line| line.starts_with("error")), "4xx are not errors: {lines:?}");
}

#[tokio::test]
async fn server_errors_are_logged_with_their_detail() {
    let capture = Capture::default();
    let _guard = tracing_subscriber::registry().with(capture.clone()).set_default();
    let api = Api::over(broken_store(true));
    api.get("/config").await.error(500, 50002);
    let lines = capture.lines();
    assert!(lines.iter().any(|line| line.starts_with("error ") && line.contains("throttled by arn:")), "{lines:?}");
}

/// Each answer's record says whether its endpoint may write (what wakes schema linking): writes
/// and MCP calls do, reads do not, lookups and compatibility tests (`POST`s) included.
#[tokio::test]
async fn each_answer_says_whether_its_endpoint_may_write() {
    use axum::body::Body;
    use axum::http::Request;
    use registry_http::observability::{AnswerLine, RequestRecord};
    use tower::ServiceExt;
    /// The last answer's record.
    #[derive(Debug, Default)]
    struct Last(std::sync::Mutex<Option<RequestRecord>>);
    impl AnswerLine for Last {
        fn answered(&self, record: &RequestRecord) {
            *self.0.lock().unwrap() = Some(record.clone());
        }
    }
    let registry = registry_core::Registry::new(
        Arc::new(registry_core::MemoryStore::new()),
        registry_core::RegistrySettings::default(),
    );
    let last = Arc::new(Last::default());
    let options = registry_http::AppOptions { mcp: true, answer_line: Some(last.clone()), ..Default::default() };
    let app = registry_http::app(registry, options);
    let schema = serde_json::json!({ "schema": "\"string\"" }).to_string();
    let cases = [
        ("POST", "/subjects/s/versions", true),
        ("POST", "/subjects/s", false),
        ("POST", "/compatibility/subjects/s/versions/latest", false),
        ("GET", "/schemas/ids/1", false),
        ("PUT", "/config/s", true),
        ("DELETE", "/subjects/s", true),
        ("POST", "/mcp", true),
    ];
    for (method, uri, writes) in cases {
        let body = match uri {
            "/config/s" => serde_json::json!({ "compatibility": "NONE" }).to_string(),
            "/mcp" => serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string(),
            _ => schema.clone(),
        };
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .body(if method == "GET" || method == "DELETE" { Body::empty() } else { Body::from(body) })
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let record = last.0.lock().unwrap().take().unwrap();
        // The MCP call is not a whole session (400 here): its endpoint's record is what counts.
        assert!(uri == "/mcp" || response.status().is_success(), "{method} {uri}: {}", response.status());
        assert_eq!(record.writes, writes, "{method} {uri} ({})", record.operation);
    }
}

/// What `AppOptions::written` is told (schema linking's runner wakes on it): each successful write,
/// not a read, a lookup, or a write that failed.
#[tokio::test]
async fn only_successful_writes_are_told() {
    use axum::body::Body;
    use axum::http::Request;
    use std::time::Duration;
    use tower::ServiceExt;
    let registry = registry_core::Registry::new(
        Arc::new(registry_core::MemoryStore::new()),
        registry_core::RegistrySettings::default(),
    );
    let written = Arc::new(tokio::sync::Notify::new());
    let options = registry_http::AppOptions { written: Some(Arc::clone(&written)), ..Default::default() };
    let app = registry_http::app(registry, options);
    let schema = serde_json::json!({ "schema": "\"string\"" }).to_string();
    let cases = [
        ("POST", "/subjects/s", schema.as_str(), 404, false),
        ("POST", "/subjects/s/versions", "{\"schema\":\"{\"}", 422, false),
        ("POST", "/subjects/s/versions", schema.as_str(), 200, true),
        ("GET", "/schemas/ids/1", "", 200, false),
        ("POST", "/subjects/s", schema.as_str(), 200, false),
        ("DELETE", "/subjects/s", "", 200, true),
    ];
    for (method, uri, body, status, told) in cases {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{method} {uri}");
        // A notification given is kept as a permit: `notified` completes at once.
        let was_told = tokio::time::timeout(Duration::from_millis(20), written.notified()).await.is_ok();
        assert_eq!(was_told, told, "{method} {uri}");
    }
}
