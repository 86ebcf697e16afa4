//! Authentication in front of the router: HTTP Basic (and Bearer JWT when configured) checked by
//! `registry-auth`, turned into a [`Caller`] on every request. Authorization is decided per route
//! ([`crate::endpoint`]): from the endpoint's declaration, then by the handler from its typed request.
//!
//! - `GET /` (and `POST /`) stay open for health checks; every other request must authenticate.
//! - 401: `WWW-Authenticate: Basic realm="schema-registry"` (plus `Bearer realm=...` when tokens are
//!   accepted) and `{"error_code":40101,"message":"Unauthorized"}`, the same for a missing header, an
//!   unknown user, a wrong password or a bad token.
//! - 403: `{"error_code":40301,"message":"User is denied operation <Op> on Subject: <s>"}` (or `on
//!   SchemaRegistry` for registry-wide operations).
//! - Operations: every `GET`, `POST /subjects/{s}` (lookup) and `POST /compatibility/...` need `read`;
//!   `POST /subjects/{s}/versions` and soft `DELETE`s need `write`; `PUT`/`DELETE` on `/config` and `/mode`,
//!   `DELETE ...?permanent=true` and registrations carrying an explicit `"id" >= 0` (IMPORT, decided from
//!   the parsed request the handler registers) need `admin`. Any other method on an unknown path needs
//!   `admin` (so a new route is never open by accident).
//! - Subjects reached indirectly are authorized by the registry itself, on the same decision
//!   ([`crate::endpoint::Permit::acting`], `registry_core::access`): an alias target when the alias
//!   is set (admin on the target) and whenever it is followed (the request's operation; an IMPORT
//!   on the target's whole context), every subject a reference resolved by the request names
//!   (read; posted or stored, direct or nested), a by-ID request's `?subject=` (read), and each
//!   context-fallback candidate of an unqualified read (read; one the caller may not read is
//!   skipped, answered as if absent).
//! - Subject scopes: a request naming a subject outside the principal's prefixes is 403. For scoped
//!   principals, `GET /subjects`, `GET /schemas`, `GET /schemas/ids/{id}/subjects` and `.../versions`
//!   list only in-scope subjects, before `offset`/`limit` and still streamed. Schema bodies by ID
//!   (`GET /schemas/ids/{id}`) stay readable by any authenticated reader: IDs are registry-wide and
//!   deserializers need them.

use crate::endpoint::Caller;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use registry_auth::Authenticator;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

/// The realm named in `WWW-Authenticate` challenges.
pub const REALM: &str = "schema-registry";

/// `router` behind authentication by `authenticator`: every request carries a [`Caller`], which the
/// endpoints' guards authorize. Without this layer the router serves everyone (the `make run`
/// default when no users file is configured).
pub fn protect(router: axum::Router, authenticator: Arc<Authenticator>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(authenticator, identify))
}

async fn identify(State(authenticator): State<Arc<Authenticator>>, mut request: Request, next: Next) -> Response {
    let authorization = request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
    let caller = match authorization {
        None => Caller::Unauthenticated { bearer: authenticator.accepts_bearer() },
        Some(authorization) => match authenticator.authenticate_from(peer(&request), Some(authorization)).await {
            Ok(principal) => Caller::Known(principal),
            Err(failure) => {
                tracing::debug!(?failure, "authentication failed");
                Caller::Unauthenticated { bearer: authenticator.accepts_bearer() }
            }
        },
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The client's address when the server put it on the request (`registry serve` does; the Lambda
/// function's front end owns the connections), as [`client_address`].
fn peer(request: &Request) -> Option<IpAddr> {
    let ConnectInfo(address) = request.extensions().get::<ConnectInfo<std::net::SocketAddr>>()?;
    Some(client_address(address.ip()))
}

/// The address one client host is counted under in per-address limits: IPv4 (also when mapped into
/// IPv6) as is, IPv6 by its /64 (the smallest block one host is usually given).
pub fn client_address(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        v4 => v4,
    }
}
