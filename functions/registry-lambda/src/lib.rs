//! The Lambda side of the registry: the handler that `main` hands to `lambda_http`, and its config.
//!
//! The handler is [`registry_http::app`] (its EMF line the access line, [`emf::EmfLine`]) behind
//! one request rewrite, [`strip_stage`]: API
//! Gateway puts a named stage in front of the path (`/prod/subjects`), which the router must
//! not see. Function URL and `$default`-stage events pass through unchanged, so `%2F` in a
//! subject (`/subjects/pkg1%2Fmsg1.proto/versions`) reaches the router still encoded.
//!
//! Why the rewrite lives here and not only in `AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH` (which the
//! Terraform module also sets): `lambda_http` reads that variable per request and it only stops
//! the library from *adding* the stage to REST API paths; HTTP API events carry the stage in
//! `rawPath` themselves. Stripping by the event's own `requestContext.stage` is right with or
//! without the variable, and testable without touching the process environment.

pub mod api;
pub mod auth;
pub mod auth_origin;
pub mod config;
pub mod emf;
pub mod exporter;
pub mod exporter_engine;
pub mod runtime_loop;
pub mod stream;

/// The exporter records in the registry's table (moved to the store crate; the API uses them too).
pub use registry_store_aws::exporter_store;

pub use config::LambdaConfig;

use axum::http::Uri;
use axum::http::uri::PathAndQuery;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use registry_core::Registry;
use registry_http::AppOptions;
use registry_http::observability::AnswerLine;
use registry_http::request_limits::HostDeadline;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tower::util::MapRequest;

/// The service `main` runs: `registry_http::app` behind [`prepare`].
pub type Handler = MapRequest<axum::Router, fn(Request) -> Request>;

/// The full Confluent API over `registry`, assembled by `registry_http::app` exactly as
/// `registry serve` assembles it, accepting `lambda_http` requests; with `emf`, one CloudWatch EMF
/// line per answer on stdout, in place of the access line ([`emf`]).
pub fn handler(registry: Registry, options: AppOptions, emf: Option<emf::EmfConfig>) -> Handler {
    guarded_handler(registry, options, emf.map(emf::Emf::new), None)
}

/// [`handler`] with its EMF emitter given (a multi-region function's reports its regional counters
/// too), and with `origin` every request without CloudFront's origin header answered 403 before
/// anything else sees it ([`auth_origin`]).
pub fn guarded_handler(
    registry: Registry,
    mut options: AppOptions,
    emf: Option<emf::Emf>,
    origin: Option<Arc<auth_origin::OriginGuard>>,
) -> Handler {
    let line = emf.map(|emf| (emf, Arc::new(emf::EmfLine::default())));
    options.answer_line = line.as_ref().map(|(_, line)| Arc::clone(line) as Arc<dyn AnswerLine>);
    let app = registry_http::app(registry.clone(), options);
    if let Some((emf, line)) = line {
        line.start(emf, registry);
    }
    guarded_app_handler(app, origin)
}

/// The service `main` runs over an application already assembled (with its EMF line among its
/// options, [`emf::EmfLine`]): with `origin` every request without CloudFront's origin header
/// answered 403 before anything else sees it ([`auth_origin`]), each request prepared by [`prepare`].
pub fn guarded_app_handler(app: axum::Router, origin: Option<Arc<auth_origin::OriginGuard>>) -> Handler {
    let app = match origin {
        Some(guard) => auth_origin::layer(app, guard),
        None => app,
    };
    MapRequest::new(app, prepare as fn(Request) -> Request)
}

/// [`strip_stage`], then the Lambda request id as the request's
/// [`registry_http::observability::RequestId`] (logged and echoed in `X-Request-Id`) and the
/// invocation's deadline as its [`HostDeadline`] (the request's time budget ends a margin before it,
/// [`registry_http::request_limits::until_deadline`]; [`host_deadline`] says which deadlines count).
pub fn prepare(request: Request) -> Request {
    let mut request = strip_stage(request);
    let context = request.lambda_context_ref();
    let id = context.map(|context| context.request_id.clone()).filter(|id| !id.is_empty());
    // A context without a deadline (0: tests, local adapters) sets none.
    let deadline = context
        .filter(|context| context.deadline > 0)
        .and_then(|context| host_deadline(context.deadline(), SystemTime::now()));
    if let Some(id) = id {
        request.extensions_mut().insert(registry_http::observability::RequestId(id));
    }
    if let Some(deadline) = deadline {
        request.extensions_mut().insert(deadline);
    }
    request
}

/// Lambda's longest function timeout: no invocation handed to a function has a deadline further
/// away than this from its start, nor one that passed longer ago.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(900);

/// The invocation's wall-clock `deadline` (`Lambda-Runtime-Deadline-Ms`), read at `now`, as an
/// instant of this process's monotonic clock. A deadline that has passed is kept (the request is
/// answered 504 at once, with no work started); one that passed more than [`MAX_TIMEOUT`] ago is no
/// invocation's deadline and sets none (the request runs until it answers, as under `registry
/// serve`): `cargo lambda watch`'s runtime emulator sends the constant `600000` for every invocation
/// (ten minutes after 1970-01-01, meant as ten minutes), which read as a deadline would answer every
/// request 504.
pub fn host_deadline(deadline: SystemTime, now: SystemTime) -> Option<HostDeadline> {
    match deadline.duration_since(now) {
        Ok(remaining) => Some(HostDeadline(Instant::now() + remaining)),
        Err(passed) if passed.duration() <= MAX_TIMEOUT => Some(HostDeadline(Instant::now())),
        Err(_) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                let deadline_ms = deadline.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_millis();
                tracing::warn!(
                    deadline_ms = deadline_ms as u64,
                    "the invocation's deadline passed more than 15 minutes ago: no Lambda deadline, ignored \
                     (logged once)"
                );
            });
            None
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_ahead_or_just_passed_counts_and_one_from_long_ago_does_not() {
        let now = SystemTime::now();
        // Taken before the conversion: the 30 s count from a later instant, however slow the machine.
        let before = Instant::now();
        let ahead = host_deadline(now + Duration::from_secs(30), now).map(|HostDeadline(at)| at);
        assert!(ahead.is_some_and(|at| at >= before + Duration::from_secs(30)), "{ahead:?}");
        let passed = host_deadline(now - Duration::from_secs(5), now).map(|HostDeadline(at)| at);
        assert!(passed.is_some_and(|at| at <= Instant::now()), "a deadline just passed: no time left");
        assert!(host_deadline(now - MAX_TIMEOUT, now).is_some(), "15 minutes late still counts");
        // What `cargo lambda watch` sends for every invocation.
        let cargo_lambda = SystemTime::UNIX_EPOCH + Duration::from_millis(600_000);
        assert_eq!(host_deadline(cargo_lambda, now), None);
        assert_eq!(host_deadline(now - MAX_TIMEOUT - Duration::from_secs(1), now), None);
    }
}
