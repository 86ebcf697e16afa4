//! The one HTTP router: Confluent's REST API over a [`Registry`], used by the local server and by Lambda.

use registry_core::Registry;

/// What every handler gets: the registry service.
#[derive(Debug, Clone)]
pub struct AppState {
    pub registry: Registry,
}

/// The full Confluent API.
pub fn router(state: AppState) -> axum::Router {
    axum::Router::new().with_state(state)
}
