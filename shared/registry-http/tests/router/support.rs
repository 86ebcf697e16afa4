//! Shared helpers: one in-memory app per test, request builders and reply assertions.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use registry_core::{MemoryStore, Registry, RegistrySettings, Store};
use registry_http::{AppOptions, app};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

pub const V1: &str = "application/vnd.schemaregistry.v1+json";
pub const GENERIC: &str = "application/vnd.schemaregistry+json";
pub const JSON: &str = "application/json";

/// A compact Avro record with one int field (already in Confluent's canonical form).
pub const USER_V1: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"}]}"#;
/// USER_V1 plus a field with a default: compatible with USER_V1 under every level.
pub const USER_V2: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"email","type":"string","default":""}]}"#;
/// USER_V1 plus a field without default: not BACKWARD compatible with USER_V1.
pub const USER_BAD: &str =
    r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"age","type":"int"}]}"#;

/// One answer, fully buffered.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (panics with the body text when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts a 200 in the v1 media type and returns the JSON body.
    #[track_caller]
    pub fn ok(&self) -> Value {
        assert_eq!(self.status, StatusCode::OK, "body: {}", self.text());
        assert_eq!(self.content_type.as_deref(), Some(V1));
        self.json()
    }

    /// Asserts a Confluent error: status, `error_code`, v1 media type, exactly two fields, and returns the message.
    #[track_caller]
    pub fn error(&self, status: u16, error_code: u64) -> String {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.text());
        assert_eq!(self.content_type.as_deref(), Some(V1), "errors use the v1 media type");
        let body = self.json();
        assert_eq!(body["error_code"].as_u64(), Some(error_code), "body: {body}");
        let object = body.as_object().expect("error body is an object");
        assert_eq!(object.len(), 2, "only error_code and message: {body}");
        body["message"].as_str().expect("message is a string").to_string()
    }
}

/// The router over a fresh `MemoryStore`.
#[derive(Clone)]
pub struct Api {
    router: Router,
}

impl Api {
    pub fn new() -> Api {
        Api::over(MemoryStore::new())
    }

    /// A new router whose subject `users` holds [`USER_V1`] and [`USER_V2`] as versions 1 and 2.
    pub async fn with_two_users() -> Api {
        let api = Api::new();
        api.register("users", USER_V1).await;
        api.register("users", USER_V2).await;
        api
    }

    /// The router over `store` with default settings.
    pub fn over(store: impl Store + 'static) -> Api {
        let registry = Registry::new(Arc::new(store), RegistrySettings::default());
        Api { router: app(registry, AppOptions::default()) }
    }

    /// An API over an already built router (custom registry settings).
    pub fn with_router(router: Router) -> Api {
        Api { router }
    }

    pub async fn call(&self, request: Request<Body>) -> Reply {
        let response = self.router.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let content_type =
            response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let body = response.into_body().collect().await.expect("body").to_bytes();
        Reply { status, content_type, body }
    }

    /// A request with an optional `Content-Type` and extra headers.
    pub async fn raw(
        &self,
        method: Method,
        uri: &str,
        content_type: Option<&str>,
        headers: &[(&str, &str)],
        body: impl Into<Body>,
    ) -> Reply {
        let mut builder = Request::builder().method(method).uri(uri);
        if let Some(content_type) = content_type {
            builder = builder.header(header::CONTENT_TYPE, content_type);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        self.call(builder.body(body.into()).expect("request")).await
    }

    pub async fn get(&self, uri: &str) -> Reply {
        self.raw(Method::GET, uri, None, &[], Body::empty()).await
    }

    pub async fn delete(&self, uri: &str) -> Reply {
        self.raw(Method::DELETE, uri, None, &[], Body::empty()).await
    }

    pub async fn post(&self, uri: &str, body: Value) -> Reply {
        self.raw(Method::POST, uri, Some(V1), &[], body.to_string()).await
    }

    pub async fn put(&self, uri: &str, body: Value) -> Reply {
        self.raw(Method::PUT, uri, Some(V1), &[], body.to_string()).await
    }

    /// Registers an Avro `schema` under `subject` (path-encoded) and returns the answer body.
    pub async fn register(&self, subject: &str, schema: &str) -> Value {
        self.post(&format!("/subjects/{subject}/versions"), json!({ "schema": schema })).await.ok()
    }

    /// Registers and returns the ID.
    pub async fn register_id(&self, subject: &str, schema: &str) -> i64 {
        self.register(subject, schema).await["id"].as_i64().expect("id")
    }
}

/// The object's field names, sorted, without the optional `ts` (CP 8.x registration time).
pub fn keys(value: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        value.as_object().map(|o| o.keys().filter(|k| *k != "ts").cloned().collect()).unwrap_or_default();
    names.sort();
    names
}
