//! The Lambda side of the registry: the handler that `main` hands to `lambda_http`, and its config.
//!
//! The handler is [`registry_http::router`] behind one request rewrite, [`strip_stage`]: API
//! Gateway puts a named stage in front of the path (`/prod/subjects`), which the router must
//! not see. Function URL and `$default`-stage events pass through unchanged, so `%2F` in a
//! subject (`/subjects/pkg1%2Fmsg1.proto/versions`) reaches the router still encoded.
//!
//! Why the rewrite lives here and not only in `AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH` (which the
//! Terraform module also sets): `lambda_http` reads that variable per request and it only stops
//! the library from *adding* the stage to REST API paths; HTTP API events carry the stage in
//! `rawPath` themselves. Stripping by the event's own `requestContext.stage` is right with or
//! without the variable, and testable without touching the process environment.

pub mod auth;
pub mod config;

pub use config::{ConfigError, LambdaConfig};

use axum::http::Uri;
use axum::http::uri::PathAndQuery;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use registry_core::Registry;
use registry_http::AppState;
use tower::util::MapRequest;

/// The service `main` runs: the router behind [`strip_stage`].
pub type Handler = MapRequest<axum::Router, fn(Request) -> Request>;

/// The full Confluent API over `registry`, accepting `lambda_http` requests.
pub fn handler(registry: Registry) -> Handler {
    handler_with(registry, None)
}

/// [`handler`] behind `registry_http::auth::protect` when `authenticator` is set ([`auth::authenticator`]).
pub fn handler_with(
    registry: Registry,
    authenticator: Option<std::sync::Arc<registry_auth::Authenticator>>,
) -> Handler {
    let router = registry_http::router(AppState { registry });
    let router = match authenticator {
        Some(authenticator) => registry_http::auth::protect(router, authenticator),
        None => router,
    };
    MapRequest::new(router, strip_stage as fn(Request) -> Request)
}

/// Removes `/{stage}` from the front of the path when the event came from a named API Gateway
/// stage (REST or HTTP API) and the path starts with it. Function URL events (stage `$default`)
/// and paths without the prefix are returned unchanged; the query string is kept.
pub fn strip_stage(mut request: Request) -> Request {
    let stage = match request.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(context)) => context.stage.clone(),
        Some(RequestContext::ApiGatewayV1(context)) => context.stage.clone(),
        _ => None,
    };
    let Some(stage) = stage.filter(|stage| !stage.is_empty() && stage != "$default") else {
        return request;
    };
    let uri = request.uri();
    let Some(rest) = uri.path().strip_prefix('/').and_then(|path| path.strip_prefix(stage.as_str())) else {
        return request;
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return request;
    }
    let path = if rest.is_empty() { "/" } else { rest };
    let path_and_query = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_string(),
    };
    let mut parts = uri.clone().into_parts();
    let Ok(path_and_query) = PathAndQuery::try_from(path_and_query) else {
        return request;
    };
    parts.path_and_query = Some(path_and_query);
    if let Ok(uri) = Uri::from_parts(parts) {
        *request.uri_mut() = uri;
    }
    request
}
