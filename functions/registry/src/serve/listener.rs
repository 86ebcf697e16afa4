//! The accept loop of `registry serve`: at most `max_connections` connections open at once and
//! `max_connections_per_peer` from one client address ([`Admission`]), each served by
//! [`super::connection::serve`] under the time budgets from the moment it is accepted, and a graceful
//! stop. At the limit, the connection waiting longest for a request (idle between requests) or
//! stalled longest (silent, trickling a head, not reading its answer) is evicted to admit the
//! newcomer; while none is, further clients wait in the listen backlog, so the process never runs
//! out of file descriptors.

use super::admission::{Admission, IdleSignal, SILENT_GRACE};
use super::connection::{self, Budgets, Clock};
use registry_settings::ServerSettings;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Serves `app` on `listener` until `stop` completes; then accepts no more connections, lets each
/// open one finish its request in flight (idle ones close at once) and returns when all are closed.
/// With `peer_addresses`, each request carries its client's address (`ConnectInfo`).
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    settings: ServerSettings,
    peer_addresses: bool,
    stop: impl std::future::Future<Output = ()>,
) {
    let budgets = Budgets {
        header: settings.header_timeout(),
        body: settings.body_timeout(),
        idle: settings.idle_timeout(),
        write: settings.write_timeout(),
    };
    let slots = Arc::new(Semaphore::new(settings.max_connections as usize));
    let admission = Admission::new(settings.max_connections_per_peer, SILENT_GRACE);
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors or a connection reset before it was accepted: log, pause, retry.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(admitted) = admission.admit(peer.ip()) else {
            tracing::debug!(%peer, "connection refused: its address holds REGISTRY_MAX_CONNECTIONS_PER_PEER");
            continue;
        };
        let Some(slot) = free_slot(&slots, &admission, stop.as_mut()).await else { break };
        let _ = stream.set_nodelay(true);
        let clock = Arc::new(Clock::new(admission.turned_idle()));
        admitted.track(Arc::clone(&clock));
        let app = app.clone();
        tokio::spawn(async move {
            connection::serve(stream, peer_addresses.then_some(peer), clock, app, budgets).await;
            drop(admitted);
            drop(slot);
        });
    }
    drop(listener);
    admission.stop_all();
    let _ = slots.acquire_many(settings.max_connections).await;
}

/// A free place for an accepted connection: at once when there is one, else once an open
/// connection closes, evicting one that waits for a request whenever there is one; `None` when
/// `stop` completes first.
async fn free_slot(
    slots: &Arc<Semaphore>,
    admission: &Admission,
    stop: Pin<&mut impl Future<Output = ()>>,
) -> Option<OwnedSemaphorePermit> {
    if let Ok(slot) = Arc::clone(slots).try_acquire_owned() {
        return Some(slot);
    }
    let signal = admission.turned_idle();
    let slot = wait_for_slot(slots, admission, &signal, stop).await;
    signal.stop_listening();
    slot
}

/// [`free_slot`] once every place is taken, listening to `signal` meanwhile.
async fn wait_for_slot(
    slots: &Arc<Semaphore>,
    admission: &Admission,
    signal: &IdleSignal,
    mut stop: Pin<&mut impl Future<Output = ()>>,
) -> Option<OwnedSemaphorePermit> {
    loop {
        let idle = signal.listen();
        tokio::pin!(idle);
        idle.as_mut().enable();
        if let Ok(slot) = Arc::clone(slots).try_acquire_owned() {
            return Some(slot);
        }
        let evicted = admission.evict_one();
        tokio::select! {
            slot = Arc::clone(slots).acquire_owned() => return slot.ok(),
            () = &mut idle, if !evicted => {}
            // A stalled connection becomes evictable once past the grace.
            () = tokio::time::sleep(SILENT_GRACE), if !evicted => {}
            () = &mut stop => return None,
        }
    }
}
