//! Turns on authentication for `registry serve` when `registry-auth`'s configuration asks for it.

use registry_auth::{AuthConfig, Authenticator};
use std::sync::Arc;

/// `app` behind `registry_http::auth::protect` when `REGISTRY_USERS_FILE` (or another auth source, see
/// `registry_auth::config`) is set; `app` unchanged otherwise. A configured but unusable source is an
/// error, so the server never starts open by mistake.
pub fn protect(app: axum::Router) -> Result<axum::Router, registry_auth::AuthError> {
    let config = AuthConfig::from_env()?;
    match Authenticator::from_config(&config, None)? {
        Some(authenticator) => {
            tracing::info!(bearer = authenticator.accepts_bearer(), "authentication on");
            Ok(registry_http::auth::protect(app, Arc::new(authenticator)))
        }
        None => Ok(app),
    }
}
