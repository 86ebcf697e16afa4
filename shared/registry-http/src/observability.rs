//! Per-request observability and response media type negotiation: one log line and one metrics
//! sample per request, the request id, and the `Accept` choice.
//!
//! The log line (`tracing` event, target `registry_http::request`, level `info`; `error` with the
//! 5xx detail the body never carries) has the fields `operation` (Confluent's operation name in
//! snake_case, as the handlers' spans: [`operation`]), `subject` (percent-decoded, when the path
//! names one), `method`, `status`, `error_code` (error answers), `latency_ms` and `request_id`.
//! Nothing else from the request is logged: no bodies, no headers, no query strings, so schema
//! texts and credentials never reach the log.
//!
//! The request id is, in order: a [`RequestId`] extension put on the request by the caller (the
//! Lambda request id), a well-formed `X-Request-Id` header from the client, or a fresh id. It is
//! echoed in the `X-Request-Id` response header.
//!
//! [`observe`] is the outermost layer of `crate::app`, so every answer is recorded exactly once.

use crate::error::{ErrorCode, ErrorDetail};
use crate::extract::{MEDIA_V1, negotiate};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::Response;
use registry_core::Registry;
use registry_core::metrics::Metrics;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The request and response header carrying the request id.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The `tracing` target of the per-request log line.
pub const REQUEST_LOG_TARGET: &str = "registry_http::request";

/// A request id chosen by the caller (the Lambda request id); wins over the client's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// What the per-request record saw, attached to the response as an extension (for the Lambda's
/// EMF line). Present on every answer of `crate::app`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// Confluent's operation name ([`operation`]).
    pub operation: &'static str,
    /// The subject named in the path, percent-decoded.
    pub subject: Option<String>,
    /// The status answered.
    pub status: u16,
    /// Time to the response head, in milliseconds.
    pub latency_ms: f64,
    /// The request id (also in the `X-Request-Id` response header).
    pub request_id: String,
}

/// Runs the request, then swaps the default media type for the negotiated one on successful JSON
/// answers (errors always keep `application/vnd.schemaregistry.v1+json`), and records the request
/// (log line, metrics, `X-Request-Id`). The outermost layer of `app`, so every answer is recorded once,
/// authentication's refusals included.
pub async fn observe(State(registry): State<Registry>, request: Request, next: Next) -> Response {
    let media = negotiate(request.headers());
    let started = Instant::now();
    let facts = Facts::of(&request);
    let mut response = next.run(request).await;
    if response.status().is_success() && media != MEDIA_V1 {
        let is_default = response.headers().get(header::CONTENT_TYPE).is_some_and(|value| value == MEDIA_V1);
        if is_default {
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
        }
    }
    facts.finish(registry.metrics(), started, &mut response);
    response
}

/// What the record needs from the request, taken before the request is consumed.
struct Facts {
    method: Method,
    operation: &'static str,
    subject: Option<String>,
    request_id: String,
}

impl Facts {
    fn of(request: &Request) -> Facts {
        let path = request.uri().path();
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map(|id| id.0.clone())
            .or_else(|| client_request_id(request.headers().get(&REQUEST_ID_HEADER)))
            .unwrap_or_else(fresh_request_id);
        Facts {
            method: request.method().clone(),
            operation: operation(request.method(), path),
            subject: subject(path),
            request_id,
        }
    }

    fn finish(self, metrics: &Metrics, started: Instant, response: &mut Response) {
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let status = response.status();
        let error_code = response.extensions().get::<ErrorCode>().map(|code| code.0);
        metrics.record_request(self.operation, status.as_u16(), latency_ms);
        if error_code == Some(50002) {
            metrics.record_store_throttle();
        }
        if let Ok(value) = HeaderValue::from_str(&self.request_id) {
            response.headers_mut().insert(REQUEST_ID_HEADER, value);
        }
        let subject = self.subject.as_deref().unwrap_or("");
        let (operation, method, request_id) = (self.operation, self.method.as_str(), self.request_id.as_str());
        let status_code = status.as_u16();
        if status.is_server_error() {
            let detail = response.extensions().get::<ErrorDetail>().map(|detail| detail.0.as_str()).unwrap_or("");
            tracing::error!(
                target: REQUEST_LOG_TARGET, operation, subject, method, status = status_code, error_code,
                latency_ms, request_id, detail, "request failed"
            );
        } else {
            tracing::info!(
                target: REQUEST_LOG_TARGET, operation, subject, method, status = status_code, error_code,
                latency_ms, request_id, "request served"
            );
        }
        response.extensions_mut().insert(RequestRecord {
            operation: self.operation,
            subject: self.subject,
            status: status_code,
            latency_ms,
            request_id: self.request_id,
        });
    }
}

/// Confluent's operation name (its `@DocumentedName`, snake_case, as the handlers' spans) for a
/// method and path; `unknown` for anything the router does not serve.
pub fn operation(method: &Method, path: &str) -> &'static str {
    let segments: Vec<&str> = path.trim_start_matches('/').trim_end_matches('/').split('/').collect();
    let m = method.as_str();
    match (m, segments.as_slice()) {
        ("GET" | "POST", [""]) => "get_root",
        ("GET", ["metrics"]) => "get_metrics",
        ("GET", ["schemas"]) => "get_schemas",
        ("GET", ["schemas", "types"]) => "get_schema_types",
        ("GET", ["schemas", "ids", _]) => "get_schemas_by_id",
        ("GET", ["schemas", "ids", _, "schema"]) => "get_only_schema_by_id",
        ("GET", ["schemas", "ids", _, "subjects"]) => "get_all_subjects_by_id",
        ("GET", ["schemas", "ids", _, "versions"]) => "get_all_versions_by_id",
        ("GET", ["schemas", "guids", _]) => "get_schema_by_guid",
        ("GET", ["contexts"]) => "list_contexts",
        ("GET", ["subjects"]) => "get_all_subjects",
        ("POST", ["subjects", _]) => "look_up_schema_under_subject",
        ("DELETE", ["subjects", _]) => "delete_subject",
        ("GET", ["subjects", _, "metadata"]) => "get_latest_with_metadata",
        ("GET", ["subjects", _, "versions"]) => "get_all_versions",
        ("POST", ["subjects", _, "versions"]) => "register_schema",
        ("GET", ["subjects", _, "versions", _]) => "get_schema_by_version",
        ("DELETE", ["subjects", _, "versions", _]) => "delete_schema_version",
        ("GET", ["subjects", _, "versions", _, "schema"]) => "get_schema_only",
        ("GET", ["subjects", _, "versions", _, "referencedby"]) => "get_referenced_by",
        ("POST", ["compatibility", "subjects", _, "versions"]) => "test_compatibility_for_subject",
        ("POST", ["compatibility", "subjects", _, "versions", _]) => "test_compatibility_by_subject_name",
        ("GET", ["config"]) => "get_top_level_config",
        ("PUT", ["config"]) => "update_top_level_config",
        ("DELETE", ["config"]) => "delete_top_level_config",
        ("GET", ["config", _]) => "get_subject_level_config",
        ("PUT", ["config", _]) => "update_subject_level_config",
        ("DELETE", ["config", _]) => "delete_subject_config",
        ("GET", ["mode"]) => "get_top_level_mode",
        ("PUT", ["mode"]) => "update_top_level_mode",
        ("DELETE", ["mode"]) => "delete_top_level_mode",
        ("GET", ["mode", _]) => "get_mode",
        ("PUT", ["mode", _]) => "update_subject_mode",
        ("DELETE", ["mode", _]) => "delete_subject_mode",
        _ => "unknown",
    }
}

/// The percent-decoded subject a path names (`/subjects/{s}/...`, `/compatibility/subjects/{s}/...`,
/// `/config/{s}`, `/mode/{s}`).
pub fn subject(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let raw = match segments.as_slice() {
        ["subjects", subject, ..] | ["compatibility", "subjects", subject, ..] | ["config" | "mode", subject] => {
            subject
        }
        _ => return None,
    };
    Some(percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned()).filter(|s| !s.is_empty())
}

/// A client's `X-Request-Id` when it is short and plain (at most 128 of `[A-Za-z0-9._:-]`), so a
/// header can never forge log structure.
fn client_request_id(value: Option<&HeaderValue>) -> Option<String> {
    let text = value?.to_str().ok()?;
    let plain = !text.is_empty()
        && text.len() <= 128
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    plain.then(|| text.to_string())
}

/// 32 hex digits: a per-process random prefix and a counter (unique within the process, and
/// across processes with overwhelming probability).
fn fresh_request_id() -> String {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = *PREFIX.get_or_init(|| RandomState::new().hash_one(std::process::id()));
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix:016x}{:016x}", RandomState::new().hash_one(n) ^ n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_follow_confluent_names() {
        let cases = [
            (Method::POST, "/subjects/orders-value/versions", "register_schema"),
            (Method::POST, "/subjects/orders-value", "look_up_schema_under_subject"),
            (Method::GET, "/schemas/ids/7", "get_schemas_by_id"),
            (Method::GET, "/subjects/a%2Fb/versions/latest/schema", "get_schema_only"),
            (Method::POST, "/compatibility/subjects/s/versions/latest", "test_compatibility_by_subject_name"),
            (Method::PUT, "/config/s", "update_subject_level_config"),
            (Method::DELETE, "/mode", "delete_top_level_mode"),
            (Method::GET, "/metrics", "get_metrics"),
            (Method::PATCH, "/subjects", "unknown"),
            (Method::GET, "/nope/at/all", "unknown"),
        ];
        for (method, path, expected) in cases {
            assert_eq!(operation(&method, path), expected, "{method} {path}");
        }
    }

    #[test]
    fn subjects_are_decoded_from_the_path() {
        assert_eq!(subject("/subjects/pkg1%2Fmsg1.proto/versions").as_deref(), Some("pkg1/msg1.proto"));
        assert_eq!(subject("/compatibility/subjects/s/versions/1").as_deref(), Some("s"));
        assert_eq!(subject("/config/s").as_deref(), Some("s"));
        assert_eq!(subject("/config"), None);
        assert_eq!(subject("/schemas/ids/1"), None);
    }

    #[test]
    fn client_request_ids_must_be_plain() {
        let plain = HeaderValue::from_static("abc-123_x.y:z");
        assert_eq!(client_request_id(Some(&plain)).as_deref(), Some("abc-123_x.y:z"));
        let forged = HeaderValue::from_static("a\" level=error");
        assert_eq!(client_request_id(Some(&forged)), None);
        let long = HeaderValue::from_str(&"a".repeat(129)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(client_request_id(Some(&long)), None);
    }

    #[test]
    fn fresh_request_ids_are_unique() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| fresh_request_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.len() == 32));
    }
}
