//! Each endpoint declared once, where its route is: Confluent's operation name and the access it
//! needs ([`declare`]). A guard on each route reads the declaration to
//! - authorize the caller (the authentication layer outside the router said who it is, [`Caller`]):
//!   401 without valid credentials, 403 when the role or the subject scope does not allow it;
//! - hand the handler a [`Permit`], with which it checks what only the typed request shows (an
//!   IMPORT registration, a hard delete) and scopes its store queries;
//! - name the request's `tracing` span, and tell observability which operation, subject and
//!   principal it served ([`Served`]).

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::Method;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use registry_auth::{Decision, Operation, Principal, Scope, authorize};
use tracing::Instrument;

/// What access an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Open to everyone, even with authentication on (the health check `GET /`).
    Open,
    /// The caller must be allowed this operation (on the path's subject, when it names one).
    Requires(Operation),
    /// Paths and methods the API does not serve: `Read` for `GET`/`HEAD`, `Configure` otherwise, so
    /// only an admin learns which methods exist.
    Unserved,
}

/// One endpoint: Confluent's operation name (its `@DocumentedName`, snake_case) and its access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub operation: &'static str,
    pub access: Access,
}

/// `method` (one handler on one path) declared as the endpoint `operation` with `access`.
pub fn declare(operation: &'static str, access: Access, method: MethodRouter<AppState>) -> MethodRouter<AppState> {
    method.layer(axum::middleware::from_fn_with_state(Endpoint { operation, access }, guard))
}

/// Who is calling, as the authentication layer found it; absent when authentication is off.
#[derive(Debug, Clone)]
pub enum Caller {
    /// No `Authorization` header.
    Anonymous,
    /// Credentials that did not verify; `bearer` when tokens are accepted (for the challenge).
    Rejected { bearer: bool },
    /// Verified credentials.
    Known(Principal),
}

/// The caller a handler runs for: `None` inside when authentication is off (everything allowed).
#[derive(Debug, Clone, Default)]
pub struct Permit(Option<Principal>);

impl Permit {
    /// `Ok` when the caller may perform `operation` on `subject` (403 otherwise). Handlers call it
    /// for what only the parsed request shows, so the decision and the execution read the same value.
    pub fn require(&self, operation: Operation, subject: Option<&str>) -> Result<(), ApiError> {
        match &self.0 {
            Some(principal) if authorize(principal, operation, subject) == Decision::Deny => {
                tracing::info!(principal = %principal.name, operation = operation.as_str(), "access denied");
                Err(ApiError::Forbidden { operation, subject: subject.map(str::to_string) })
            }
            _ => Ok(()),
        }
    }

    /// The subjects the caller may see (`All` when authentication is off).
    pub fn scope(&self) -> &Scope {
        const ALL: &Scope = &Scope::All;
        self.0.as_ref().map_or(ALL, |principal| &principal.scope)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Permit {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Permit>().cloned().unwrap_or_default())
    }
}

/// What observability records about an answer, attached to it by the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The endpoint's operation name.
    pub operation: &'static str,
    /// The subject the path names, percent-decoded.
    pub subject: Option<String>,
    /// Who made the request (authenticated principals only): the audit trail of writes.
    pub principal: Option<String>,
}

async fn guard(State(endpoint): State<Endpoint>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let subject = path_subject(&mut parts).await;
    let operation = match endpoint.access {
        Access::Open => None,
        Access::Requires(operation) => Some(operation),
        Access::Unserved if parts.method == Method::GET || parts.method == Method::HEAD => Some(Operation::Read),
        Access::Unserved => Some(Operation::Configure),
    };
    let caller = parts.extensions.get::<Caller>().cloned();
    let decided = match (caller, operation) {
        (None, _) | (_, None) => Ok(Permit(None)),
        (Some(Caller::Anonymous), Some(_)) => Err(ApiError::Unauthorized { bearer: false }),
        (Some(Caller::Rejected { bearer }), Some(_)) => Err(ApiError::Unauthorized { bearer }),
        (Some(Caller::Known(principal)), Some(operation)) => {
            let permit = Permit(Some(principal));
            permit.require(operation, subject.as_deref()).map(|()| permit)
        }
    };
    let served = |permit: &Permit| Served {
        operation: endpoint.operation,
        subject: subject.clone(),
        principal: permit.0.as_ref().map(|principal| principal.name.clone()),
    };
    let permit = match decided {
        Ok(permit) => permit,
        Err(error) => {
            let mut response = error.into_response();
            response.extensions_mut().insert(served(&Permit(None)));
            return response;
        }
    };
    let record = served(&permit);
    parts.extensions.insert(permit);
    let span = tracing::info_span!("request", operation = endpoint.operation, subject = subject.as_deref());
    let mut response = next.run(Request::from_parts(parts, body)).instrument(span).await;
    response.extensions_mut().insert(record);
    response
}

/// The percent-decoded `{subject}` of the matched route, if it has one.
async fn path_subject(parts: &mut Parts) -> Option<String> {
    let params = RawPathParams::from_request_parts(parts, &()).await.ok()?;
    params.iter().find(|(name, _)| *name == "subject").map(|(_, value)| value.to_string()).filter(|s| !s.is_empty())
}
