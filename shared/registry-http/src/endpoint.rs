//! Each endpoint declared once, where its route is ([`endpoint`]): Confluent's operation name and
//! the access it needs. A guard on each route reads the declaration to
//! - authorize the caller the authentication layer identified ([`Caller`]): 401 without valid
//!   credentials, 403 when the role or the subject scope does not allow the operation on the
//!   subject the path names;
//! - hand the handler a [`Permit`], with which it authorizes what only its typed request shows (an
//!   IMPORT registration, a hard delete) and scopes its listings, so the decision and the execution
//!   read the same value;
//! - open the request's `tracing` span (`request`, with the `operation` and `subject` fields; at
//!   `debug`: every line a request logs at `info` and above names its subject itself, and the
//!   access line its operation, so the default level pays for no span per request) and tell
//!   observability what was served and for whom ([`Served`]).
//!
//! Paths and methods the API does not serve are declared too ([`Access::Unserved`], on the
//! router's fallbacks): with authentication on they need `read` for `GET`/`HEAD` and `admin`
//! otherwise, so a new route is never open by accident and only an admin learns which methods exist.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use registry_auth::{Decision, Operation, Principal, Scope, authorize};
use registry_core::{Access as RegistryAccess, Registry, RegistryError, SubjectGuard, SubjectScope};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tracing::Instrument;

/// What access an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Open to everyone, even with authentication on (the health check `GET /`).
    Open,
    /// The caller must be allowed this operation (on the path's subject, when it names one).
    Requires(Operation),
    /// What the API does not serve: `Read` for `GET`/`HEAD`, `Configure` (admin) otherwise.
    Unserved,
    /// The caller must be allowed to read; the service makes requests of its own on the caller's
    /// behalf, each authorized by its own route, and they may write (the MCP server's tools).
    Delegates,
}

/// Every `GET`, lookups and compatibility tests.
pub const READ: Access = Access::Requires(Operation::Read);
/// Registrations; the handler asks for `Import` when the body carries an explicit ID.
pub const REGISTER: Access = Access::Requires(Operation::Register);
/// Deletes; the handler asks for `HardDelete` when `permanent=true`.
pub const DELETE: Access = Access::Requires(Operation::SoftDelete);
/// Config and mode changes.
pub const CONFIGURE: Access = Access::Requires(Operation::Configure);

/// One endpoint: Confluent's operation name (its `@DocumentedName`, snake_case) and its access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub operation: &'static str,
    pub access: Access,
}

/// The operation name of whatever the router does not serve.
pub const UNKNOWN_OPERATION: &str = "unknown";

/// `handler` declared as the endpoint `operation` needing `access`.
///
/// A handler is named as its operation (Confluent's `@DocumentedName` in snake_case), so a route
/// declares it with [`named!`]`(READ, module::handler)`; `endpoint` itself names the few that differ.
pub fn endpoint<H, T>(operation: &'static str, access: Access, handler: H) -> Guarded<H>
where
    H: Handler<T, AppState, Future: Unpin>,
    T: 'static,
{
    Guarded { endpoint: Endpoint { operation, access }, handler, early: None }
}

/// An answer an endpoint may give from what the request's head shows and the process holds, once
/// the guard let the request through and before the handler's extractors run; `None` leaves the
/// request to the handler. It must answer as the handler would: it is a shortcut, not a rule.
pub type EarlyAnswer = fn(&Parts, &AppState) -> Option<Response>;

/// A handler behind its endpoint's guard ([`endpoint`]): the guard's decision is made when the
/// handler is called, and the handler's own future is awaited in place, so a guarded request costs
/// no service, future or request move beyond the handler's own.
#[derive(Debug, Clone)]
pub struct Guarded<H> {
    endpoint: Endpoint,
    handler: H,
    early: Option<EarlyAnswer>,
}

impl<H> Guarded<H> {
    /// This endpoint, answering from `early` when it can ([`EarlyAnswer`]): a hit on the hottest
    /// reads then costs no extraction of the request (the path segment, the query, the permit).
    pub fn answering_early(self, early: EarlyAnswer) -> Guarded<H> {
        Guarded { early: Some(early), ..self }
    }
}

impl<H, T> Handler<T, AppState> for Guarded<H>
where
    H: Handler<T, AppState, Future: Unpin>,
    T: 'static,
{
    type Future = GuardedAnswer<H::Future>;

    fn call(self, request: Request, state: AppState) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        let (served, decided) = decide(self.endpoint, &mut parts);
        let answer = match decided {
            Ok(granted) => match self.early.and_then(|early| early(&parts, &state)) {
                Some(answer) => Answer::Ready(Some(answer)),
                None => {
                    parts.extensions.insert(granted);
                    let span = request_span(&served);
                    let answer = span.in_scope(|| self.handler.call(Request::from_parts(parts, body), state));
                    Answer::Running(answer, span)
                }
            },
            Err(refusal) => Answer::Ready(Some(refusal)),
        };
        GuardedAnswer { answer, served: Some(served) }
    }
}

/// The answer of a [`Guarded`] handler: the handler's (in the request's span), or the guard's
/// refusal or early answer; either carries what was [`Served`].
pub struct GuardedAnswer<F> {
    answer: Answer<F>,
    served: Option<Served>,
}

enum Answer<F> {
    Running(F, tracing::Span),
    /// Answered without the handler: the guard's refusal, or the endpoint's [`EarlyAnswer`].
    Ready(Option<Response>),
}

impl<F: Future<Output = Response> + Unpin> Future for GuardedAnswer<F> {
    type Output = Response;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = &mut *self;
        let response = match &mut this.answer {
            Answer::Running(answer, span) => {
                let _entered = span.enter();
                std::task::ready!(Pin::new(answer).poll(cx))
            }
            Answer::Ready(answer) => {
                answer.take().unwrap_or_else(|| ApiError::Http(StatusCode::INTERNAL_SERVER_ERROR).into_response())
            }
        };
        if let Some(served) = this.served.take() {
            crate::observability::served::tell(served);
        }
        Poll::Ready(response)
    }
}

/// [`endpoint`] for a handler named as its operation: `named!(READ, schemas::get_schemas)` is
/// `endpoint("get_schemas", READ, schemas::get_schemas)`.
macro_rules! named {
    ($access:expr, $module:ident :: $handler:ident) => {
        $crate::endpoint::endpoint(stringify!($handler), $access, $module::$handler)
    };
}
pub(crate) use named;

/// Who is calling, as the authentication layer found it; absent when authentication is off.
/// `service` declared as the endpoint `operation` needing `access`, as [`endpoint`] declares a
/// handler: its guard authorizes the caller before the service sees the request.
pub fn endpoint_service<S>(operation: &'static str, access: Access, service: S) -> axum::routing::MethodRouter
where
    S: tower::Service<Request, Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    S::Response: IntoResponse + 'static,
    S::Future: Send + 'static,
{
    axum::routing::any_service(service)
        .layer(axum::middleware::from_fn_with_state(Endpoint { operation, access }, guard))
}

/// Only the caller of a request's extensions: what a request made on its behalf (an MCP tool's)
/// carries, so that nothing else of the outer request's routing reaches the inner route.
pub fn caller_only(extensions: &axum::http::Extensions) -> axum::http::Extensions {
    let mut carried = axum::http::Extensions::new();
    if let Some(caller) = extensions.get::<Caller>() {
        carried.insert(caller.clone());
    }
    carried
}

#[derive(Debug, Clone)]
pub enum Caller {
    /// No credentials, or credentials that did not verify; `bearer` when tokens are accepted (for
    /// the challenge).
    Unauthenticated { bearer: bool },
    /// Verified credentials.
    Known(Principal),
}

/// The caller a handler runs for; `None` inside when authentication is off (everything allowed).
#[derive(Debug, Clone)]
pub struct Permit(Option<Principal>);

impl Permit {
    /// `Ok` when the caller may perform `operation` on `subject` (403 otherwise).
    pub fn require(&self, operation: Operation, subject: Option<&str>) -> Result<(), ApiError> {
        match &self.0 {
            Some(principal) if authorize(principal, operation, subject) == Decision::Deny => {
                tracing::info!(principal = %principal.name, operation = operation.as_str(), "access denied");
                Err(RegistryError::Forbidden { operation, subject: subject.map(str::to_string) }.into())
            }
            _ => Ok(()),
        }
    }

    /// `registry` acting for this caller: every subject a request reaches indirectly (alias
    /// targets, context-fallback candidates, referenced subjects) is authorized by the same
    /// decision as the path's subject ([`registry_core::access`]).
    pub fn acting(&self, registry: &Registry) -> Registry {
        match &self.0 {
            None => registry.clone(),
            Some(principal) => {
                registry.acting_for(RegistryAccess::guarded(Arc::new(PrincipalGuard(principal.clone()))))
            }
        }
    }

    /// The subjects the caller's listings name (`All` when authentication is off).
    pub fn subjects(&self) -> SubjectScope {
        match self.0.as_ref().map(|principal| &principal.scope) {
            None | Some(Scope::All) => SubjectScope::All,
            Some(Scope::Prefixes(prefixes)) => SubjectScope::prefixes(prefixes.iter().cloned()),
        }
    }
}

/// The registry's authorization port over an authenticated principal: [`authorize`] decides.
#[derive(Debug)]
struct PrincipalGuard(Principal);

impl SubjectGuard for PrincipalGuard {
    fn allows(&self, operation: Operation, subject: Option<&str>) -> bool {
        let allowed = authorize(&self.0, operation, subject) == Decision::Allow;
        if !allowed {
            tracing::debug!(principal = %self.0.name, operation = operation.as_str(), subject, "access denied");
        }
        allowed
    }

    fn reads_every_subject(&self) -> bool {
        self.0.scope == Scope::All && authorize(&self.0, Operation::Read, None) == Decision::Allow
    }
}

/// What the guard puts on a request it lets through: the caller's [`Permit`] and the endpoint
/// (one extension: the request's extension table stays at its first size).
#[derive(Debug, Clone)]
struct Granted {
    permit: Permit,
    endpoint: Endpoint,
}

/// The endpoint whose guard let the request of `extensions` through.
pub fn granted_endpoint(extensions: &axum::http::Extensions) -> Option<Endpoint> {
    extensions.get::<Granted>().map(|granted| granted.endpoint)
}

/// Only a declared endpoint's guard puts a [`Permit`] on the request: a handler that asks for one
/// on an undeclared route fails closed (500) instead of serving everyone.
impl<S: Send + Sync> FromRequestParts<S> for Permit {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Granted>()
            .map(|granted| granted.permit.clone())
            .ok_or_else(|| ApiError::Internal("route without a declaration".into()))
    }
}

/// What observability records about an answer, told to the edge by the guard
/// ([`crate::observability`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The endpoint's operation name.
    pub operation: &'static str,
    /// The subject the path names, percent-decoded.
    pub subject: Option<String>,
    /// Who made the request when the credentials verified (the audit trail of writes).
    pub principal: Option<String>,
    /// The endpoint may change what the registry holds (its access is not a read, or it
    /// delegates to requests that may write).
    pub writes: bool,
}

/// The guard of a service endpoint ([`endpoint_service`]), as [`Guarded`] decides for a handler.
async fn guard(State(endpoint): State<Endpoint>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let (served, decided) = decide(endpoint, &mut parts);
    let response = match decided {
        Ok(granted) => {
            parts.extensions.insert(granted);
            next.run(Request::from_parts(parts, body)).instrument(request_span(&served)).await
        }
        Err(refusal) => refusal,
    };
    crate::observability::served::tell(served);
    response
}

/// The guard's decision on a request to `endpoint`: what observability records of it, and either
/// the [`Permit`] and the [`Endpoint`] to put on the request for the handler, or the refusal (401/403).
fn decide(endpoint: Endpoint, parts: &mut Parts) -> (Served, Result<Granted, Response>) {
    let subject = path_subject(parts);
    let operation = match endpoint.access {
        Access::Open => None,
        Access::Requires(operation) => Some(operation),
        Access::Delegates => Some(Operation::Read),
        Access::Unserved if parts.method == Method::GET || parts.method == Method::HEAD => Some(Operation::Read),
        Access::Unserved => Some(Operation::Configure),
    };
    // What the API does not serve is judged registry-wide, whatever its path looks like.
    let checked_subject = if endpoint.access == Access::Unserved { None } else { subject.as_deref() };
    let caller = parts.extensions.get::<Caller>().cloned();
    let principal = match &caller {
        Some(Caller::Known(principal)) => Some(principal.name.clone()),
        _ => None,
    };
    let decided = match (caller, operation) {
        (None, _) | (_, None) => Ok(Permit(None)),
        (Some(Caller::Unauthenticated { bearer }), Some(_)) => Err(ApiError::Unauthorized { bearer }),
        (Some(Caller::Known(principal)), Some(operation)) => {
            let permit = Permit(Some(principal));
            permit.require(operation, checked_subject).map(|()| permit)
        }
    };
    let writes = match endpoint.access {
        Access::Requires(operation) => operation != Operation::Read,
        Access::Delegates => true,
        Access::Open | Access::Unserved => false,
    };
    let served = Served { operation: endpoint.operation, subject, principal, writes };
    let decided = decided.map(|permit| Granted { permit, endpoint }).map_err(IntoResponse::into_response);
    (served, decided)
}

/// The request's `tracing` span (disabled, and so free, below `debug`).
fn request_span(served: &Served) -> tracing::Span {
    tracing::debug_span!("request", operation = served.operation, subject = served.subject.as_deref())
}

/// The percent-decoded `{subject}` of the matched route, if it has one (and it decodes).
fn path_subject(parts: &mut Parts) -> Option<String> {
    // Only a route whose path names a subject has one: the others are not searched.
    let matched = parts.extensions.get::<MatchedPath>()?;
    if !matched.as_str().contains("{subject}") {
        return None;
    }
    // Reading the path parameters awaits nothing.
    let params = RawPathParams::from_request_parts(parts, &()).now_or_never()?.ok()?;
    params.iter().find(|(name, _)| *name == "subject").map(|(_, value)| value.to_string()).filter(|s| !s.is_empty())
}
