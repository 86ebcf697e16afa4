//! The accept loop of `registry serve`: at most `max_connections` connections open at once (further
//! clients wait in the listen backlog, so the process never runs out of file descriptors), each
//! served by [`super::connection::serve`] under the time budgets, and a graceful stop.

use super::connection::{self, Budgets};
use registry_settings::ServerSettings;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

/// Serves `app` on `listener` until `stop` completes; then accepts no more connections, lets each
/// open one finish its request in flight (idle ones close at once) and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    settings: ServerSettings,
    stop: impl std::future::Future<Output = ()>,
) {
    let budgets =
        Budgets { header: settings.header_timeout(), body: settings.body_timeout(), idle: settings.idle_timeout() };
    let slots = Arc::new(Semaphore::new(settings.max_connections as usize));
    let (stopping, stop_seen) = watch::channel(false);
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = &mut stop => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors or a connection reset before it was accepted: log, pause, retry.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let stop_seen = stop_seen.clone();
        tokio::spawn(async move {
            connection::serve(stream, app, budgets, stop_seen).await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let _ = slots.acquire_many(settings.max_connections).await;
}
