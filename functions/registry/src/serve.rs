//! `registry serve`: settings → stores → the composition root's application → HTTP listener, with graceful shutdown.

mod admission;
mod connection;
mod framework_answers;
mod listener;

use crate::access_line::AccessLine;
use crate::config::ServeConfig;
use crate::store;
use registry_app::Exporters;
use registry_http::observability::AnswerLine;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;

/// Serves until SIGINT or SIGTERM, then lets in-flight requests finish. Logs one line when the
/// listener accepts connections, with the time since `started` (process start). Connections are
/// bounded in number and time by `settings.server` ([`listener`]). The application is the
/// composition root's ([`registry_app::assemble`]), its exporters run in this process. With
/// `access_line`, each answer's access line is written by hand ([`crate::access_line`]).
pub async fn run(
    config: ServeConfig,
    started: Instant,
    access_line: Option<AccessLine>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let authenticator = config.settings.auth.authenticator()?;
    if let Some(authenticator) = &authenticator {
        tracing::info!(bearer = authenticator.accepts_bearer(), "authentication on");
    }
    // Only authentication reads a client's address (the per-address limits of password checks).
    let peer_addresses = authenticator.is_some();
    let mut options = registry_app::app_options(&config.settings, authenticator)?;
    options.answer_line = access_line.map(|line| Arc::new(line) as Arc<dyn AnswerLine>);
    let topology = store::open(&config).await?;
    let description = topology.description();
    let app = registry_app::assemble(&config.settings, topology, options, Exporters::run(), None)?.app;

    let address = format!("{}:{}", config.bind, config.port);
    let listener = TcpListener::bind(&address).await.map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let local = listener.local_addr()?;
    tracing::info!("ready on {local} in {} ms (store: {description})", started.elapsed().as_millis());
    listener::serve(listener, app, config.settings.server, peer_addresses, shutdown_signal()).await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
