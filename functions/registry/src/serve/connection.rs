//! One connection of `registry serve`: hyper's HTTP/1 server over a [`WatchedStream`], with the four
//! time budgets the [`Clock`] and the stream track.
//!
//! - **Headers**: the first request's from the moment the connection is accepted, a later request's
//!   from its first byte, until hyper has parsed the head; the connection is closed when it runs out
//!   (a client that sends nothing, or half a header, holds nothing longer). A head must also arrive
//!   at [`MIN_HEAD_RATE`] after the first [`HEAD_GRACE`]: a client trickling a byte a second is closed
//!   after about a second, not at the end of the whole budget.
//! - **Body**: from the parsed head until the body's last byte; the request is answered 408 when it
//!   runs out ([`DeadlineBody`]).
//! - **Idle**: from the end of a response until the next request's first byte; the connection is
//!   closed gracefully when it runs out, or earlier when the listener evicts it ([`Clock::evict`]).
//! - **Write**: a response the client does not read (its socket accepts less than
//!   [`super::framework_answers::WRITE_PROGRESS`] within the budget) is abandoned and the connection
//!   closed ([`WatchedStream`]); a client pipelining requests it never reads holds nothing longer.
//!
//! A connection stalled in any phase (silent, trickling its head, or not reading its answer, each
//! for longer than [`super::admission::SILENT_GRACE`]) or idle between requests may be evicted when a
//! new client needs its place ([`Clock::stalled`]).
//!
//! hyper's own header timer is off: it starts when hyper begins waiting for a request, so it would
//! also cut idle keep-alive connections at the header budget.

use super::admission::IdleSignal;
use super::framework_answers::WatchedStream;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse;
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use registry_http::error::ApiError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;
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
    /// A response not being read.
    pub write: Duration,
}

/// Time a request head may take whatever its size; past it, the head must have arrived at
/// [`MIN_HEAD_RATE`] (real clients send a head in one or two packets).
pub const HEAD_GRACE: Duration = Duration::from_secs(1);
/// Bytes per second a request head must arrive at once past [`HEAD_GRACE`].
pub const MIN_HEAD_RATE: u64 = 256;

/// Where a connection is in its request cycle, and since when.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request's first byte: since the connection was accepted (`fresh`, timed by the
    /// header budget) or since the last response (timed by the idle budget).
    Idle { since: Instant, fresh: bool },
    /// A request's head is arriving: its header budget runs since its first byte (or since the
    /// acceptance for the first request), its pace since its first byte, with the bytes received.
    Head { since: Instant, first_byte: Instant, received: u64 },
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

/// The phase and eviction mark of a connection, and since when its writes have been blocked (the
/// client is not reading).
#[derive(Debug)]
struct State {
    phase: Phase,
    evicted: bool,
    write_blocked: Option<Instant>,
}

/// Why a connection may give its place up: since when it has waited for a request (idle between
/// requests) or been stalled (silent since accepted, trickling a head, not reading its answer).
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    /// Since the last response (idle), or since the stall began.
    pub since: Instant,
    /// Stalled rather than idle: evictable only once stalled for the grace, and closed at once.
    pub stalled: bool,
}

/// The phase of one connection, moved by the stream (bytes read), the service (request started) and
/// the response body (request finished); the connection task sleeps until the phase's deadline. The
/// listener reads how long a connection has waited for a request, and evicts it.
#[derive(Debug)]
pub struct Clock {
    state: Mutex<State>,
    /// Told when the listener evicts the connection (the only change made from outside its task).
    evict_asked: Notify,
    /// Told whenever a connection turns idle (the listener waits on it for an evictable connection).
    turned_idle: Arc<IdleSignal>,
    /// The request being served ran out of its body budget ([`DeadlineBody`]).
    body_late: AtomicBool,
    /// The server stops: close once the request in flight is answered ([`Clock::stop`]).
    stop_asked: AtomicBool,
}

impl Clock {
    /// The clock of a connection accepted now; `turned_idle` is told each time it turns idle.
    pub fn new(turned_idle: Arc<IdleSignal>) -> Clock {
        let phase = Phase::Idle { since: Instant::now(), fresh: true };
        let state = State { phase, evicted: false, write_blocked: None };
        let (body_late, stop_asked) = (AtomicBool::new(false), AtomicBool::new(false));
        Clock { state: Mutex::new(state), evict_asked: Notify::new(), turned_idle, body_late, stop_asked }
    }

    /// Moves the phase. Only from inside the connection task's poll of hyper's connection, which
    /// reads the new deadline right after ([`Deadline`]): nothing to wake.
    fn set(&self, next: impl FnOnce(Phase) -> Option<Phase>) {
        if let Ok(mut state) = self.state.lock()
            && let Some(next) = next(state.phase)
        {
            state.phase = next;
        }
    }

    /// `bytes` arrived: an idle connection starts receiving a request head (the first request's head
    /// keeps the acceptance as its start); a head counts them.
    pub fn received(&self, bytes: usize) {
        let bytes = bytes as u64;
        let Ok(mut state) = self.state.lock() else { return };
        let now = Instant::now();
        let next = match state.phase {
            Phase::Idle { since, fresh: true } => Phase::Head { since, first_byte: now, received: bytes },
            Phase::Idle { fresh: false, .. } => Phase::Head { since: now, first_byte: now, received: bytes },
            Phase::Head { since, first_byte, received } => {
                Phase::Head { since, first_byte, received: received.saturating_add(bytes) }
            }
            Phase::Busy => return,
        };
        state.phase = next;
    }

    /// A write found the client's socket full (it is not reading): the stall starts now unless it
    /// already had.
    pub fn write_blocked(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.write_blocked.get_or_insert_with(Instant::now);
        }
    }

    /// The client read enough of what was written: no longer stalled.
    pub fn write_progressed(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.write_blocked = None;
        }
    }

    fn request_started(&self) {
        self.body_late.store(false, Ordering::SeqCst);
        self.set(|_| Some(Phase::Busy));
    }

    fn request_finished(&self) {
        self.set(|_| Some(Phase::Idle { since: Instant::now(), fresh: false }));
        self.turned_idle.turned_idle();
    }

    /// Whether a request is being served (so what hyper writes is its answer).
    pub fn busy(&self) -> bool {
        self.state.lock().map_or(true, |state| matches!(state.phase, Phase::Busy))
    }

    /// Whether the connection may give its place up, and since when: idle between requests, or
    /// stalled (silent since accepted, receiving a head, or not reading what is written to it);
    /// `None` while a request arrives at pace or is served, or once evicted.
    pub fn waiting(&self) -> Option<Waiting> {
        let state = self.state.lock().ok()?;
        if state.evicted {
            return None;
        }
        if let Some(since) = state.write_blocked {
            return Some(Waiting { since, stalled: true });
        }
        match state.phase {
            Phase::Idle { since, fresh } => Some(Waiting { since, stalled: fresh }),
            Phase::Head { first_byte, .. } => Some(Waiting { since: first_byte, stalled: true }),
            Phase::Busy => None,
        }
    }

    /// Asks the connection to close if it is still idle or stalled ([`Clock::waiting`]); whether it
    /// was.
    pub fn evict(&self) -> bool {
        let Ok(mut state) = self.state.lock() else { return false };
        let evictable = state.write_blocked.is_some() || !matches!(state.phase, Phase::Busy);
        if state.evicted || !evictable {
            return false;
        }
        state.evicted = true;
        self.evict_asked.notify_one();
        true
    }

    /// Whether the connection can be closed gracefully: idle between requests, with everything
    /// written (hyper's graceful shutdown would otherwise wait for a request or a reader).
    fn closes_gracefully(&self) -> bool {
        self.state
            .lock()
            .is_ok_and(|state| state.write_blocked.is_none() && matches!(state.phase, Phase::Idle { fresh: false, .. }))
    }

    /// Asks the connection to close once its request in flight is answered (at once when it has
    /// none): the server stops. Told through the same wake-up as an eviction, so a connection waits
    /// on nothing shared with the others.
    pub fn stop(&self) {
        self.stop_asked.store(true, Ordering::SeqCst);
        self.evict_asked.notify_one();
    }

    fn stop_asked(&self) -> bool {
        self.stop_asked.load(Ordering::SeqCst)
    }

    /// Whether the listener evicted the connection (a graceful close of an evicted connection was
    /// idle: nothing of a request is left unread).
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
            Phase::Idle { since, fresh: true } => Some((since + budgets.header, Expiry::Close)),
            Phase::Head { since, first_byte, received } => {
                let paced = HEAD_GRACE + Duration::from_millis(received.saturating_mul(1000) / MIN_HEAD_RATE);
                Some(((since + budgets.header).min(first_byte + paced), Expiry::Close))
            }
            Phase::Idle { since, fresh: false } => Some((since + budgets.idle, Expiry::Retire)),
            Phase::Busy => None,
        }
    }
}

/// Serves one connection, timed by `clock` (made when it was accepted), until the client closes it, a
/// budget runs out, the listener evicts it, or the server stops ([`Clock::stop`]: then the request
/// in flight is finished and the connection closed). Each request carries the client's address
/// `peer`, when given (`ConnectInfo`).
pub async fn serve(
    stream: tokio::net::TcpStream,
    peer: Option<SocketAddr>,
    clock: Arc<Clock>,
    app: axum::Router,
    budgets: Budgets,
) {
    let io = TokioIo::new(WatchedStream::new(stream, Arc::clone(&clock), budgets.write));
    let service = {
        let clock = Arc::clone(&clock);
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            // The client's address, for the per-address limits of password checks.
            if let Some(peer) = peer {
                request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            }
            answer(app.clone(), Arc::clone(&clock), budgets.body, request)
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.header_read_timeout(None);
    let connection = http.serve_connection(io, service);
    tokio::pin!(connection);
    if clock.stop_asked() {
        return;
    }
    let mut closing = false;
    let mut deadline = std::pin::pin!(Deadline::new(&clock, budgets));
    // Made once, not at each turn of the loop, and made again after it fired.
    let mut evict_asked = std::pin::pin!(clock.evict_asked.notified());
    loop {
        // Biased: the deadline is read after hyper's connection was polled, which is where the
        // phase moves, so the deadline always follows the phase without a wake-up of its own.
        tokio::select! {
            biased;
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            expiry = deadline.as_mut(), if !closing => match expiry {
                Expiry::Close => {
                    tracing::debug!("request headers not received in time: closing the connection");
                    return;
                }
                Expiry::Retire => {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            },
            () = evict_asked.as_mut(), if !closing => {
                evict_asked.set(clock.evict_asked.notified());
                if clock.stop_asked() {
                    if clock.silent() {
                        return;
                    }
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                } else if clock.evicted() {
                    if !clock.closes_gracefully() {
                        tracing::debug!("stalled connection evicted: closing it");
                        return;
                    }
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Completes when the connection's current deadline passes ([`Clock::deadline`]), with what to do.
/// Each poll reads the deadline again; its one timer is moved only when the deadline comes earlier
/// than the timer is set for (a later one is set when the timer fires), so a request served at
/// pace moves no timer at all.
struct Deadline<'a> {
    clock: &'a Clock,
    budgets: Budgets,
    timer: Pin<Box<Sleep>>,
    /// When the timer is set to fire, unless it has fired.
    armed: Option<Instant>,
}

impl<'a> Deadline<'a> {
    fn new(clock: &'a Clock, budgets: Budgets) -> Deadline<'a> {
        Deadline { clock, budgets, timer: Box::pin(tokio::time::sleep(Duration::ZERO)), armed: None }
    }
}

impl Future for Deadline<'_> {
    type Output = Expiry;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Expiry> {
        loop {
            // Busy: no deadline while a request is served (a timer still set fires harmlessly).
            let Some((at, expiry)) = self.clock.deadline(&self.budgets) else { return Poll::Pending };
            // The clock is read only when the timer says its instant passed, or to arm it: a poll
            // of a connection whose deadline lies past the armed timer reads no clock.
            if self.armed.is_none_or(|armed| at < armed) {
                if at <= Instant::now() {
                    return Poll::Ready(expiry);
                }
                self.timer.as_mut().reset(at);
                self.armed = Some(at);
            }
            match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => self.armed = None,
                Poll::Pending => return Poll::Pending,
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
) -> Result<Response<FinishingBody>, std::convert::Infallible> {
    clock.request_started();
    let request = request.map(|body| match body.is_end_stream() {
        // Nothing to wait for (a `GET`): no budget to keep.
        true => Body::empty(),
        false => Body::new(DeadlineBody {
            inner: body,
            deadline: Instant::now() + body_budget,
            timer: None,
            clock: Arc::clone(&clock),
        }),
    });
    let finished = Finished(clock);
    let response = match app.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let response = if finished.0.body_late.load(Ordering::SeqCst) {
        let mut refused = ApiError::Http(StatusCode::REQUEST_TIMEOUT).into_response();
        refused.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        refused
    } else {
        response
    };
    Ok(response.map(|body| FinishingBody { inner: body, _finished: finished }))
}

/// Marks the connection idle when dropped (the response body is done, or the request was abandoned).
struct Finished(Arc<Clock>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// A request body that fails once `deadline` passes before its end, and records that it did in its
/// connection's clock.
struct DeadlineBody {
    inner: Incoming,
    deadline: Instant,
    timer: Option<Pin<Box<Sleep>>>,
    clock: Arc<Clock>,
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
            self.clock.body_late.store(true, Ordering::SeqCst);
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

/// A response body that holds [`Finished`] until hyper drops it (hyper's own body type: no box
/// around the app's).
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
