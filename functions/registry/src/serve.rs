//! `registry serve`: settings → store → registry → `registry_http::app` → HTTP listener, with graceful shutdown.

mod admission;
mod connection;
mod framework_answers;
mod listener;

use crate::config::ServeConfig;
use crate::{exporters, store};
use registry_core::Registry;
use registry_exporter::runner::Pacing;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::Notify;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Serves until SIGINT or SIGTERM, then lets in-flight requests finish. Logs one line when the
/// listener accepts connections, with the time since `started` (process start). Connections are
/// bounded in number and time by `settings.server` ([`listener`]).
pub async fn run(config: ServeConfig, started: Instant) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let authenticator = config.settings.auth.authenticator()?;
    if let Some(authenticator) = &authenticator {
        tracing::info!(bearer = authenticator.accepts_bearer(), "authentication on");
    }
    let options = config.settings.app_options(authenticator)?;
    let mut opened = store::open(&config).await?;
    let follow = opened.follow.take();
    let description = opened.description.clone();
    let (app, trigger) = application(opened, &config, options.clone())?;
    let app = match follow {
        None => app,
        // Every region that may be home has its application; each request goes to the one of
        // the region the home marker names now.
        Some(follow) => {
            let mut apps = std::collections::BTreeMap::from([(follow.configured, app)]);
            for (region, opened) in follow.others {
                apps.insert(region, application(opened, &config, options.clone())?.0);
            }
            let watch = follow.watch;
            let home = registry_http::regional::home_from(move || {
                let watch = watch.clone();
                async move { watch.home().await }
            });
            registry_http::regional::following(apps, home)
        }
    };
    let app = match trigger {
        Some(trigger) => app.layer(axum::middleware::from_fn(move |request, next| {
            exporters::notify_writes(trigger.clone(), request, next)
        })),
        None => app,
    };

    let address = format!("{}:{}", config.bind, config.port);
    let listener = TcpListener::bind(&address).await.map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let local = listener.local_addr()?;
    tracing::info!("ready on {local} in {} ms (store: {description})", started.elapsed().as_millis());
    listener::serve(listener, app, config.settings.server, shutdown_signal()).await;
    tracing::info!("stopped");
    Ok(())
}

/// The application over `opened`'s stores, and the trigger of the exporters it runs (if any).
fn application(
    opened: store::Opened,
    config: &ServeConfig,
    mut options: registry_http::AppOptions,
) -> Result<(axum::Router, Option<Arc<Notify>>), BoxError> {
    options.deks = opened.dek.map(|backend| config.settings.dek.registry(backend)).transpose()?;
    let registry = Registry::new(opened.store, config.settings.registry());
    let trigger = match opened.exporters {
        Some(service) => {
            // The exporters' source: this registry's router in process, without authentication.
            let source = registry_http::app(registry.clone(), registry_http::AppOptions::default());
            let (service, trigger) = exporters::start(service, source, Pacing::default());
            options.exporters = Some(service);
            Some(trigger)
        }
        None => None,
    };
    if let Some(service) = opened.home_exporters {
        // A read region: `/exporters` served (reads and writes) from the home region's records.
        options.exporters = Some(Arc::new(service));
    }
    let app = match opened.local_reads {
        // A read region: reads from the local replica, writes through the home region; after each
        // write the local registry forgets what it remembers, so the process reads its own writes.
        Some((reads, dek)) => {
            let mut read_options = options.clone();
            read_options.deks = dek.map(|backend| config.settings.dek.registry(backend)).transpose()?;
            let local = Registry::new(reads, config.settings.registry());
            let reads = registry_http::app(local.clone(), read_options);
            registry_http::regional::app_forgetting(reads, registry_http::app(registry, options), local)
        }
        None => registry_http::app(registry, options),
    };
    Ok((app, trigger))
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
