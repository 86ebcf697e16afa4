//! One connection of `registry serve`: hyper's HTTP/1 server over a [`WatchedStream`], with the three
//! time budgets the [`Clock`] tracks.
//!
//! - **Headers**: the first request's from the moment the connection is accepted, a later request's
//!   from its first byte, until hyper has parsed the head; the connection is closed when it runs out
//!   (a client that sends nothing, or half a header, holds nothing longer).
//! - **Body**: from the parsed head until the body's last byte; the request is answered 408 when it
//!   runs out ([`DeadlineBody`]).
//! - **Idle**: from the end of a response until the next request's first byte; the connection is
//!   closed gracefully when it runs out, or earlier when the listener evicts it ([`Clock::evict`]).
//!
//! hyper's own header timer is off: it starts when hyper begins waiting for a request, so it would
//! also cut idle keep-alive connections at the header budget.

use super::framework_answers::WatchedStream;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse;
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use registry_http::error::ApiError;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// The time budgets of a connection (`ServerSettings`).
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    /// Sending a request's headers.
    pub header: Duration,
    /// Sending a request's body.
    pub body: Duration,
    /// Idle between requests.
    pub idle: Duration,
}

/// Where a connection is in its request cycle, and since when.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request's first byte: since the connection was accepted (`fresh`, timed by the
    /// header budget) or since the last response (timed by the idle budget).
    Idle { since: Instant, fresh: bool },
    /// A request's head is arriving (since its first byte, or since the acceptance for the first).
    Head(Instant),
    /// A request is being served (its body timed by [`DeadlineBody`]).
    Busy,
}

/// What the connection task does when a phase's deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    /// Close at once: the request head did not arrive in time.
    Close,
    /// Close gracefully: idle too long between requests.
    Retire,
}

/// The phase and eviction mark of a connection.
#[derive(Debug)]
struct State {
    phase: Phase,
    evicted: bool,
}

/// A connection waiting for a request: since when, and whether it has sent nothing since accepted.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    /// Since the acceptance (silent) or the last response.
    pub since: Instant,
    /// No byte received since the connection was accepted.
    pub silent: bool,
}

/// The phase of one connection, moved by the stream (bytes read), the service (request started) and
/// the response body (request finished); the connection task sleeps until the phase's deadline. The
/// listener reads how long a connection has waited for a request, and evicts it.
#[derive(Debug)]
pub struct Clock {
    state: Mutex<State>,
    changed: Notify,
    /// Told whenever a connection turns idle (the listener waits on it for an evictable connection).
    turned_idle: Arc<Notify>,
}

impl Clock {
    /// The clock of a connection accepted now; `turned_idle` is told each time it turns idle.
    pub fn new(turned_idle: Arc<Notify>) -> Clock {
        let phase = Phase::Idle { since: Instant::now(), fresh: true };
        Clock { state: Mutex::new(State { phase, evicted: false }), changed: Notify::new(), turned_idle }
    }

    fn set(&self, next: impl FnOnce(Phase) -> Option<Phase>) {
        if let Ok(mut state) = self.state.lock()
            && let Some(next) = next(state.phase)
        {
            state.phase = next;
            self.changed.notify_one();
        }
    }

    /// Bytes arrived: an idle connection starts receiving a request head (the first request's head
    /// keeps the acceptance as its start).
    pub fn received(&self) {
        self.set(|phase| match phase {
            Phase::Idle { since, fresh: true } => Some(Phase::Head(since)),
            Phase::Idle { fresh: false, .. } => Some(Phase::Head(Instant::now())),
            Phase::Head(_) | Phase::Busy => None,
        });
    }

    fn request_started(&self) {
        self.set(|_| Some(Phase::Busy));
    }

    fn request_finished(&self) {
        self.set(|_| Some(Phase::Idle { since: Instant::now(), fresh: false }));
        self.turned_idle.notify_waiters();
    }

    /// Whether a request is being served (so what hyper writes is its answer).
    pub fn busy(&self) -> bool {
        self.state.lock().map_or(true, |state| matches!(state.phase, Phase::Busy))
    }

    /// Since when the connection has waited for a request without receiving a byte of one (idle
    /// keep-alive, or silent since accepted); `None` while a request arrives or is served, or once
    /// evicted.
    pub fn waiting(&self) -> Option<Waiting> {
        let state = self.state.lock().ok()?;
        match state.phase {
            Phase::Idle { since, fresh } if !state.evicted => Some(Waiting { since, silent: fresh }),
            _ => None,
        }
    }

    /// Asks the connection to close if it is still waiting for a request (no byte of one received);
    /// whether it was.
    pub fn evict(&self) -> bool {
        let Ok(mut state) = self.state.lock() else { return false };
        if state.evicted || !matches!(state.phase, Phase::Idle { .. }) {
            return false;
        }
        state.evicted = true;
        self.changed.notify_one();
        true
    }

    /// Whether the listener evicted the connection (it was idle: nothing of a request is left unread).
    pub fn evicted(&self) -> bool {
        self.state.lock().is_ok_and(|state| state.evicted)
    }

    /// Whether nothing was received since the connection was accepted (hyper's graceful shutdown
    /// would still wait for a first request).
    fn silent(&self) -> bool {
        self.state.lock().is_ok_and(|state| matches!(state.phase, Phase::Idle { fresh: true, .. }))
    }

    fn deadline(&self, budgets: &Budgets) -> Option<(Instant, Expiry)> {
        let phase = self.state.lock().ok()?.phase;
        match phase {
            Phase::Idle { since, fresh: true } | Phase::Head(since) => Some((since + budgets.header, Expiry::Close)),
            Phase::Idle { since, fresh: false } => Some((since + budgets.idle, Expiry::Retire)),
            Phase::Busy => None,
        }
    }
}

/// Serves one connection, timed by `clock` (made when it was accepted), until the client closes it, a
/// budget runs out, the listener evicts it, or `stop` turns true (then the request in flight is
/// finished and the connection closed).
pub async fn serve(
    stream: tokio::net::TcpStream,
    clock: Arc<Clock>,
    app: axum::Router,
    budgets: Budgets,
    mut stop: watch::Receiver<bool>,
) {
    let io = TokioIo::new(WatchedStream::new(stream, Arc::clone(&clock)));
    let service = {
        let clock = Arc::clone(&clock);
        hyper::service::service_fn(move |request| answer(app.clone(), Arc::clone(&clock), budgets.body, request))
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.header_read_timeout(None);
    let connection = http.serve_connection(io, service);
    tokio::pin!(connection);
    if *stop.borrow() {
        return;
    }
    let mut closing = false;
    loop {
        let deadline = clock.deadline(&budgets);
        let expiry = async {
            match deadline {
                Some((at, _)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = clock.changed.notified() => {
                if !closing && clock.evicted() {
                    if clock.silent() {
                        return;
                    }
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
            () = expiry => match clock.deadline(&budgets) {
                Some((at, Expiry::Close)) if at <= Instant::now() => {
                    tracing::debug!("request headers not received in time: closing the connection");
                    return;
                }
                Some((at, Expiry::Retire)) if at <= Instant::now() => {
                    connection.as_mut().graceful_shutdown();
                }
                _ => {}
            },
            changed = stop.changed(), if !closing => {
                if changed.is_err() || *stop.borrow() {
                    if clock.silent() {
                        return;
                    }
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Serves one request through `app`: its body must arrive within `body_budget` (else 408 and the
/// connection closes), and the connection is idle again when the response body is done or dropped.
async fn answer(
    app: axum::Router,
    clock: Arc<Clock>,
    body_budget: Duration,
    request: Request<Incoming>,
) -> Result<Response<Body>, std::convert::Infallible> {
    clock.request_started();
    let finished = Finished(clock);
    let late = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| {
        Body::new(DeadlineBody {
            inner: body,
            deadline: Instant::now() + body_budget,
            timer: None,
            late: Arc::clone(&late),
        })
    });
    let response = match app.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let response = if late.load(Ordering::SeqCst) {
        let mut refused = ApiError::Http(StatusCode::REQUEST_TIMEOUT).into_response();
        refused.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        refused
    } else {
        response
    };
    Ok(response.map(|body| Body::new(FinishingBody { inner: body, _finished: finished })))
}

/// Marks the connection idle when dropped (the response body is done, or the request was abandoned).
struct Finished(Arc<Clock>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// A request body that fails once `deadline` passes before its end, and records that it did.
struct DeadlineBody {
    inner: Incoming,
    deadline: Instant,
    timer: Option<Pin<Box<Sleep>>>,
    late: Arc<AtomicBool>,
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let deadline = self.deadline;
        let timer = self.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.as_mut().poll(cx).is_ready() {
            self.late.store(true, Ordering::SeqCst);
            return Poll::Ready(Some(Err("request body not received in time".into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that holds [`Finished`] until hyper drops it.
struct FinishingBody {
    inner: Body,
    _finished: Finished,
}

impl HttpBody for FinishingBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
