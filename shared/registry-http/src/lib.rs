//! The one HTTP router: Confluent's REST API over a [`Registry`], used by the local server and by Lambda.
//!
//! Wire rules, all as Confluent Schema Registry 8.x:
//! - Request bodies may be `application/vnd.schemaregistry.v1+json`, `application/vnd.schemaregistry+json`,
//!   `application/json`, `application/octet-stream` or have no `Content-Type` (all parsed as JSON); anything
//!   else is 415. Bodies are limited to [`MAX_BODY_BYTES`] (4 MiB); larger ones are 413 with an error body.
//! - Responses are `application/vnd.schemaregistry.v1+json` unless `Accept` prefers `application/json` or
//!   `application/vnd.schemaregistry+json`. Errors are always `{"error_code","message"}` in the v1 type.
//! - Subjects are one percent-decoded path segment (`pkg1%2Fmsg1.proto`); versions follow `VersionId`.
//! - Unknown paths, wrong methods, and non-int IDs get the framework's 404/405 bodies (`HTTP 404 Not Found`).
//! - The register answer is the stored schema object without `subject` (`RegisterSchemaResponse` has none).
//! - Stored-schema objects carry CP 8.x's `schemaType` (AVRO too), `ts` (registration time, ms) and
//!   `deleted: true` for soft-deleted versions; empty `references` and absent `metadata`/`ruleSet` are omitted.
//! - `GET /subjects`, `GET /schemas` and `GET /subjects/{s}/versions` are streamed page by page from the
//!   store ([`routes::json_stream`]): their memory does not grow with the length of the list. The first page
//!   is read before the status is sent, so the common failures (store down, bad parameters, an unknown
//!   subject) still get their proper status and error body; a store failure on a later page can no longer
//!   change the status, so the server logs it and aborts the body (the client sees a truncated answer,
//!   never a well-formed partial list).
//! - `GET /schemas/ids/{id}` and `/schemas/ids/{id}/schema` carry a strong `ETag` and a configurable
//!   `Cache-Control`, and answer a matching `If-None-Match` with 304; every other answer is
//!   `Cache-Control: no-store` ([`http_cache`]). Their answers, and lookup answers from the
//!   registry's lookup memory, are kept rendered ([`rendered`]): a repeated one is not serialized again.
//! - Every answer is logged as one line and counted ([`observability`]; request id in `X-Request-Id`);
//!   `GET /metrics` serves the counts in the Prometheus text format ([`metrics`]).

pub mod auth;
mod context_path;
pub mod dto;
pub mod endpoint;
pub mod error;
pub mod extract;
pub mod http_cache;
pub mod metrics;
pub mod observability;
pub mod regional;
pub mod rendered;
pub mod request_limits;
pub mod routes;

use axum::routing;
use error::ApiError;
use http_cache::HttpConfig;
use registry_auth::Authenticator;
use registry_core::Registry;
use registry_dek::DekRegistry;
use registry_exporter::ExporterService;
use routes::{compatibility, config, contracts, deks, metadata, schemas, subjects, versions};
use std::sync::Arc;

/// Largest accepted request body in bytes (4 MiB); schemas themselves are further limited by the
/// registry's `max_schema_bytes` (42209).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What every handler gets, shared by every request (cloning it is one reference count).
#[derive(Debug, Clone)]
pub struct AppState(Arc<Services>);

/// The services behind [`AppState`]: the registry service, the DEK registry and the exporters when
/// the host has them, the HTTP caching settings and the rendered by-ID answers.
#[derive(Debug)]
pub struct Services {
    pub registry: Registry,
    pub deks: Option<Arc<DekRegistry>>,
    pub exporters: Option<Arc<ExporterService>>,
    /// The authenticator, when authentication is on: `GET /metrics` reports its password checks.
    pub authenticator: Option<Arc<Authenticator>>,
    /// The by-ID `Cache-Control` ([`http_cache`]).
    pub http: HttpConfig,
    /// By-ID answers kept rendered ([`rendered`]).
    pub rendered: rendered::RenderedAnswers,
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// How [`app`] is assembled: the HTTP caching settings and, when set, the authenticator every
/// request but the health check must pass. The default serves everyone with the default caching.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// The by-ID `Cache-Control` ([`http_cache`]).
    pub http: HttpConfig,
    /// Authentication and authorization ([`auth`]); `None` serves everyone (`make run`).
    pub authenticator: Option<Arc<Authenticator>>,
    /// Time budget of one request, up to its response head (504 after it; [`request_limits::within`]).
    /// The Lambda function bounds each request by its invocation's deadline; `registry serve` sets none
    /// and bounds the client's time on the connection instead.
    pub request_budget: request_limits::RequestBudget,
    /// The `error_code` of incompatible-schema answers ([`error::IncompatibleErrorCode`]).
    pub incompatible_error_code: error::IncompatibleErrorCode,
    /// The DEK registry (`/dek-registry/v1/...`, [`routes::deks`]); `None`: those paths are 404.
    pub deks: Option<Arc<DekRegistry>>,
    /// Schema linking (`/exporters`, [`routes::exporters`]); `None`: those paths are 404.
    pub exporters: Option<Arc<ExporterService>>,
    /// The MCP server at `/mcp` ([`registry_mcp`]); off: `/mcp` is 404 as any unserved path.
    pub mcp: bool,
    /// The host's own line per answer, written instead of the access line
    /// ([`observability::AnswerLine`]: the Lambda function's EMF line); `None`: the access line.
    pub answer_line: Option<Arc<dyn observability::AnswerLine>>,
    /// Told after each successful answer of an endpoint that may write
    /// ([`observability::RequestRecord::writes`]): schema linking's runner wakes on it.
    pub written: Option<Arc<tokio::sync::Notify>>,
}

/// The whole application over `registry`, the one composition every host uses (`registry serve`,
/// the Lambda function, the in-process admin client and the tests). From the outside in: the
/// edge ([`observability::EdgeLayer`]: the URI, header and declared-body limits of [`request_limits`],
/// the request time budget when set, the response media type, the default `Cache-Control`, one log
/// line and metrics sample per answer, auth refusals included), authentication and authorization,
/// then the routes (request bodies are read up to [`MAX_BODY_BYTES`]: [`extract::ConfluentJson`]).
pub fn app(registry: Registry, options: AppOptions) -> axum::Router {
    let http = match options.authenticator {
        Some(_) => options.http.for_authenticated(),
        None => options.http,
    };
    let state = AppState(Arc::new(Services {
        registry: registry.clone(),
        deks: options.deks,
        exporters: options.exporters,
        authenticator: options.authenticator.clone(),
        http,
        rendered: rendered::RenderedAnswers::default(),
    }));
    let routes = routes(state);
    let routes = match options.mcp {
        true => {
            // Each tool's request goes to the same routes, behind this same authentication.
            let service = registry_mcp::service(routes.clone(), endpoint::caller_only);
            routes.route("/mcp", endpoint::endpoint_service("mcp", endpoint::Access::Delegates, service))
        }
        false => routes,
    };
    let routes = match options.authenticator {
        Some(authenticator) => auth::protect(routes, authenticator),
        None => routes,
    };
    let routes = match options.incompatible_error_code {
        error::IncompatibleErrorCode::Current => routes,
        error::IncompatibleErrorCode::Legacy => {
            routes.layer(axum::middleware::from_fn(error::legacy_incompatible_code))
        }
    };
    let edge = observability::Edge {
        registry,
        answer_line: options.answer_line,
        written: options.written,
        budget: options.request_budget,
    };
    routes.layer(observability::EdgeLayer(Arc::new(edge)))
}

/// [`api_routes`], also under the base-URL form `/contexts/{context}/...` ([`context_path`]), which
/// serves the same routes with the context applied to the request.
fn routes(state: AppState) -> axum::Router {
    let api = api_routes(state);
    let qualified = api.clone();
    api.route(
        "/contexts/{context}/{*rest}",
        routing::any(move |request: axum::extract::Request| context_path::forward(qualified.clone(), request)),
    )
}

/// Every endpoint of the Confluent API, each declared once with its operation name and access
/// ([`endpoint`]), with the framework error bodies.
fn api_routes(state: AppState) -> axum::Router {
    use endpoint::{Access, DELETE, READ, REGISTER, UNKNOWN_OPERATION, endpoint as declare, named};
    use routing::{get, post};
    let root = declare("get_root", Access::Open, routes::root);
    // One handler, two of Confluent's operations.
    let against_subject = declare("test_compatibility_for_subject", READ, compatibility::test_compatibility);
    let against_version = declare("test_compatibility_by_subject_name", READ, compatibility::test_compatibility);
    axum::Router::new()
        .route("/", get(root.clone()).post(root))
        .route("/schemas", get(named!(READ, schemas::get_schemas)))
        .route("/schemas/types", get(named!(READ, schemas::get_schema_types)))
        .route(
            "/schemas/ids/{id}",
            get(named!(READ, schemas::get_schemas_by_id).answering_early(schemas::remembered_by_id)),
        )
        .route(
            "/schemas/ids/{id}/schema",
            get(named!(READ, schemas::get_only_schema_by_id).answering_early(schemas::remembered_text_by_id)),
        )
        .route("/schemas/ids/{id}/subjects", get(named!(READ, schemas::get_all_subjects_by_id)))
        .route("/schemas/ids/{id}/versions", get(named!(READ, schemas::get_all_versions_by_id)))
        .route("/schemas/guids/{guid}", get(named!(READ, contracts::get_schema_by_guid)))
        .route("/subjects/{subject}/metadata", get(named!(READ, contracts::get_latest_with_metadata)))
        .route("/contexts", get(named!(READ, schemas::list_contexts)))
        .route("/contexts/{context}", routing::delete(named!(DELETE, schemas::delete_context)))
        .route("/metrics", get(named!(READ, metrics::get_metrics)))
        .route("/v1/metadata/id", get(named!(READ, metadata::get_cluster_id)))
        .route("/v1/metadata/version", get(named!(READ, metadata::get_schema_registry_server_version)))
        .route("/subjects", get(named!(READ, subjects::get_all_subjects)))
        .route(
            "/subjects/{subject}",
            post(named!(READ, subjects::look_up_schema_under_subject)).delete(named!(DELETE, subjects::delete_subject)),
        )
        .route(
            "/subjects/{subject}/versions",
            get(named!(READ, versions::get_all_versions)).post(named!(REGISTER, versions::register_schema)),
        )
        .route(
            "/subjects/{subject}/versions/{version}",
            get(named!(READ, versions::get_schema_by_version)).delete(named!(DELETE, versions::delete_schema_version)),
        )
        .route("/subjects/{subject}/versions/{version}/schema", get(named!(READ, versions::get_schema_only)))
        .route("/subjects/{subject}/versions/{version}/referencedby", get(named!(READ, versions::get_referenced_by)))
        .route("/compatibility/subjects/{subject}/versions", post(against_subject))
        .route("/compatibility/subjects/{subject}/versions/{version}", post(against_version))
        .merge(config::routes())
        .merge(routes::catalog::routes())
        .merge(dek_routes(state.deks.is_some()))
        .merge(exporter_routes(state.exporters.is_some()))
        .fallback(declare(UNKNOWN_OPERATION, Access::Unserved, not_found))
        .method_not_allowed_fallback(declare(UNKNOWN_OPERATION, Access::Unserved, method_not_allowed))
        .with_state(state)
}

/// The DEK registry's endpoints ([`routes::deks`] says who may call which), when `served`.
fn dek_routes(served: bool) -> axum::Router<AppState> {
    use endpoint::{CONFIGURE, DELETE, READ, REGISTER, named};
    use routing::{get, post};
    if !served {
        return axum::Router::new();
    }
    const KEKS: &str = "/dek-registry/v1/keks";
    axum::Router::new()
        .route(KEKS, get(named!(READ, deks::get_kek_names)).post(named!(CONFIGURE, deks::create_kek)))
        .route(
            &format!("{KEKS}/{{name}}"),
            get(named!(READ, deks::get_kek))
                .put(named!(CONFIGURE, deks::put_kek))
                .delete(named!(CONFIGURE, deks::delete_kek)),
        )
        .route(&format!("{KEKS}/{{name}}/undelete"), post(named!(CONFIGURE, deks::undelete_kek)))
        .route(&format!("{KEKS}/{{name}}/test"), post(named!(CONFIGURE, deks::test_kek)))
        .route(
            &format!("{KEKS}/{{name}}/deks"),
            // The deprecated create names its subject in the body: the handler judges it there.
            get(named!(READ, deks::get_dek_subjects)).post(named!(READ, deks::create_dek)),
        )
        .route(
            &format!("{KEKS}/{{name}}/deks/{{subject}}"),
            get(named!(READ, deks::get_dek))
                .post(named!(REGISTER, deks::create_dek_with_subject))
                .delete(named!(DELETE, deks::delete_dek_versions)),
        )
        .route(&format!("{KEKS}/{{name}}/deks/{{subject}}/versions"), get(named!(READ, deks::get_dek_versions)))
        .route(
            &format!("{KEKS}/{{name}}/deks/{{subject}}/versions/{{version}}"),
            get(named!(READ, deks::get_dek_by_version)).delete(named!(DELETE, deks::delete_dek_version)),
        )
        .route(&format!("{KEKS}/{{name}}/deks/{{subject}}/undelete"), post(named!(DELETE, deks::undelete_dek_versions)))
        .route(
            &format!("{KEKS}/{{name}}/deks/{{subject}}/versions/{{version}}/undelete"),
            post(named!(DELETE, deks::undelete_dek_version)),
        )
}

/// Schema linking's endpoints ([`routes::exporters`]), all for `admin`, when `served`.
fn exporter_routes(served: bool) -> axum::Router<AppState> {
    use endpoint::{CONFIGURE, named};
    use routes::exporters as x;
    use routing::{get, put};
    if !served {
        return axum::Router::new();
    }
    axum::Router::new()
        .route("/exporters", get(named!(CONFIGURE, x::list_exporters)).post(named!(CONFIGURE, x::create_exporter)))
        .route(
            "/exporters/{name}",
            get(named!(CONFIGURE, x::get_exporter))
                .put(named!(CONFIGURE, x::update_exporter))
                .delete(named!(CONFIGURE, x::delete_exporter)),
        )
        .route("/exporters/{name}/status", get(named!(CONFIGURE, x::get_exporter_status)))
        .route(
            "/exporters/{name}/config",
            get(named!(CONFIGURE, x::get_exporter_config)).put(named!(CONFIGURE, x::update_exporter_config)),
        )
        .route("/exporters/{name}/pause", put(named!(CONFIGURE, x::pause_exporter)))
        .route("/exporters/{name}/resume", put(named!(CONFIGURE, x::resume_exporter)))
        .route("/exporters/{name}/reset", put(named!(CONFIGURE, x::reset_exporter)))
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
