//! Authentication and authorization in front of the router: HTTP Basic (and Bearer JWT when configured)
//! checked by `registry-auth`, then the role/subject-scope decision per request.
//!
//! - `GET /` (and `POST /`) stay open for health checks; every other request must authenticate.
//! - 401: `WWW-Authenticate: Basic realm="schema-registry"` (plus `Bearer realm=...` when tokens are
//!   accepted) and `{"error_code":40101,"message":"Unauthorized"}`, the same for a missing header, an
//!   unknown user, a wrong password or a bad token.
//! - 403: `{"error_code":40301,"message":"User is denied operation <Op> on Subject: <s>"}` (or `on
//!   SchemaRegistry` for registry-wide operations).
//! - Operations: every `GET`, `POST /subjects/{s}` (lookup) and `POST /compatibility/...` need `read`;
//!   `POST /subjects/{s}/versions` and soft `DELETE`s need `write`; `PUT`/`DELETE` on `/config` and `/mode`,
//!   `DELETE ...?permanent=true` and registrations carrying an explicit `"id" >= 0` (IMPORT) need `admin`.
//!   Any other method on an unknown path needs `admin` (so a new route is never open by accident).
//! - Subject scopes: a request naming a subject outside the principal's prefixes is 403. For scoped
//!   principals, `GET /subjects`, `GET /schemas`, `GET /schemas/ids/{id}/subjects` and `.../versions` are
//!   filtered to in-scope subjects (the answer is buffered for them; unscoped principals keep streaming).
//!   Schema bodies by ID (`GET /schemas/ids/{id}`) stay readable by any authenticated reader: IDs are
//!   registry-wide and deserializers need them.

use crate::extract::MEDIA_V1;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use registry_auth::{Authenticator, Decision, Operation, Principal, Role, Scope, authorize};
use serde_json::Value;
use std::sync::Arc;

/// The realm named in `WWW-Authenticate` challenges.
pub const REALM: &str = "schema-registry";

/// `router` behind authentication and authorization by `authenticator`. Without this wrapper the
/// router serves everyone (the `make run` default when no users file is configured).
pub fn protect(router: axum::Router, authenticator: Arc<Authenticator>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(authenticator, require))
}

/// What a request asks for, as access control sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The operation (before the IMPORT body check on registrations).
    pub operation: Operation,
    /// The subject named in the path, percent-decoded.
    pub subject: Option<String>,
    /// A listing whose answer is filtered for scoped principals.
    pub listing: bool,
}

/// Classifies a request; `None` for the open health-check endpoint `GET /`.
pub fn classify(method: &Method, uri: &Uri) -> Option<Action> {
    let segments: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
    let read = method == Method::GET || method == Method::HEAD;
    let subject = |raw: &str| Some(percent_encoding::percent_decode_str(raw).decode_utf8_lossy().into_owned());
    let action = |operation, subject| Some(Action { operation, subject, listing: false });
    let delete = if permanent(uri) { Operation::HardDelete } else { Operation::SoftDelete };
    match (segments.as_slice(), read) {
        ([""], _) if read || method == Method::POST => None,
        (["subjects"] | ["schemas"] | ["schemas", "ids", _, "subjects" | "versions"], true) => {
            Some(Action { operation: Operation::Read, subject: None, listing: true })
        }
        (["subjects", name, ..] | ["config" | "mode", name], true) => action(Operation::Read, subject(name)),
        (_, true) => action(Operation::Read, None),
        (["subjects", name], false) if method == Method::POST => action(Operation::Read, subject(name)),
        (["subjects", name, "versions"], false) if method == Method::POST => action(Operation::Register, subject(name)),
        (["subjects", name] | ["subjects", name, "versions", _], false) if method == Method::DELETE => {
            action(delete, subject(name))
        }
        (["compatibility", "subjects", name, "versions", ..], false) if method == Method::POST => {
            action(Operation::Read, subject(name))
        }
        (["config" | "mode"], false) if method == Method::PUT || method == Method::DELETE => {
            action(Operation::Configure, None)
        }
        (["config" | "mode", name], false) if method == Method::PUT || method == Method::DELETE => {
            action(Operation::Configure, subject(name))
        }
        _ => action(Operation::Configure, None),
    }
}

/// `permanent` as the handlers read it: the first value, `true` in any case.
fn permanent(uri: &Uri) -> bool {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .ok()
        .and_then(|query| query.0.into_iter().find(|(key, _)| key == "permanent"))
        .is_some_and(|(_, value)| value.trim().eq_ignore_ascii_case("true"))
}

async fn require(State(authenticator): State<Arc<Authenticator>>, request: Request, next: Next) -> Response {
    let Some(action) = classify(request.method(), request.uri()) else {
        return next.run(request).await;
    };
    let authorization = request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
    let principal = match authenticator.authenticate(authorization).await {
        Ok(principal) => principal,
        Err(failure) => {
            tracing::debug!(?failure, "authentication failed");
            return unauthorized(authenticator.accepts_bearer());
        }
    };
    let (request, operation) = match action.operation {
        Operation::Register if principal.role != Some(Role::Admin) => match peek_import(request).await {
            Ok((request, true)) => (request, Operation::Import),
            Ok((request, false)) => (request, Operation::Register),
            Err(response) => return response,
        },
        operation => (request, operation),
    };
    if authorize(&principal, operation, action.subject.as_deref()) == Decision::Deny {
        tracing::info!(principal = %principal.name, operation = operation.as_str(), "access denied");
        return forbidden(operation, action.subject.as_deref());
    }
    let response = next.run(request).await;
    match &principal.scope {
        Scope::Prefixes(_) if action.listing && response.status() == StatusCode::OK => {
            filter_listing(response, &principal).await
        }
        _ => response,
    }
}

/// Buffers a registration body to see whether it carries an explicit `"id" >= 0` (Confluent's IMPORT
/// path; Java clients send `-1` for "none"). The body is put back unchanged.
async fn peek_import(request: Request) -> Result<(Request, bool), Response> {
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, crate::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => return Err(crate::error::ApiError::PayloadTooLarge.into_response()),
    };
    let import = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|body| body.get("id").and_then(Value::as_i64))
        .is_some_and(|id| id >= 0);
    Ok((Request::from_parts(parts, Body::from(bytes)), import))
}

async fn filter_listing(response: Response, principal: &Principal) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return crate::error::ApiError::Internal("listing body unreadable".into()).into_response();
    };
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let visible = |item: &Value| {
        let subject = item.as_str().or_else(|| item.get("subject").and_then(Value::as_str));
        subject.is_some_and(|subject| principal.scope.contains(subject))
    };
    let kept: Vec<Value> = items.into_iter().filter(visible).collect();
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    match serde_json::to_vec(&kept) {
        Ok(body) => Response::from_parts(parts, Body::from(body)),
        Err(error) => crate::error::ApiError::Internal(error.to_string()).into_response(),
    }
}

fn error_response(status: StatusCode, error_code: u32, message: &str) -> Response {
    let body = serde_json::json!({ "error_code": error_code, "message": message }).to_string();
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_V1));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn unauthorized(bearer: bool) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, 40101, "Unauthorized");
    let headers = response.headers_mut();
    headers.append(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"schema-registry\""));
    if bearer {
        headers.append(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"schema-registry\""));
    }
    response
}

fn forbidden(operation: Operation, subject: Option<&str>) -> Response {
    let target = match subject {
        Some(subject) => format!("Subject: {subject}"),
        None => "SchemaRegistry".to_string(),
    };
    let message = format!("User is denied operation {} on {target}", operation.as_str());
    error_response(StatusCode::FORBIDDEN, 40301, &message)
}
