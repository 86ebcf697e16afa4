//! The registry's HTTP applications as the multi-region tests drive them.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use registry_core::{Registry, RegistrySettings, Store};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// A registry answering from its store alone (no answer memory), so every read is the store's and
/// the calls counted are each request's own.
pub fn registry(store: Arc<dyn Store>) -> Registry {
    let settings =
        RegistrySettings { live_id_ttl: Duration::ZERO, lookup_ttl: Duration::ZERO, ..RegistrySettings::default() };
    Registry::new(store, settings)
}

/// The registry's application over `store` ([`registry`]), with the default options.
pub fn app(store: Arc<dyn Store>) -> axum::Router {
    registry_http::app(registry(store), registry_http::AppOptions::default())
}

/// Registers `schema` under `subject` through `app`: the ID, or the error answer.
pub async fn register(app: &axum::Router, subject: &str, schema: &str) -> Result<i64, (StatusCode, Value)> {
    let (status, body) =
        call(app, Method::POST, &format!("/subjects/{subject}/versions"), Some(json!({"schema": schema}))).await;
    match (status, body["id"].as_i64()) {
        (StatusCode::OK, Some(id)) => Ok(id),
        _ => Err((status, body)),
    }
}

/// `app`'s answer to `method path` with the JSON `body`: the status and the JSON (null if none).
pub async fn call(app: &axum::Router, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(path);
    if body.is_some() {
        request = request.header("content-type", "application/vnd.schemaregistry.v1+json");
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let request = request.body(body).unwrap_or_else(|e| panic!("{e}"));
    let response = app.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_else(|e| panic!("{e}"));
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// A schema of its own per `tag`, each compatible with every other (BACKWARD): one record, the
/// tag an optional field.
pub fn schema(tag: &str) -> String {
    let fields = json!([{"name": "f", "type": "string"}, {"name": tag, "type": ["null", "string"], "default": null}]);
    json!({"type": "record", "name": "Event", "fields": fields}).to_string()
}

/// Whether `answer`'s `schema` is `text` (as JSON: the registry answers its canonical form).
pub fn same_schema(answer: &Value, text: &str) -> bool {
    let answered: Option<Value> = answer["schema"].as_str().and_then(|s| serde_json::from_str(s).ok());
    answered.is_some() && answered == serde_json::from_str(text).ok()
}
