//! One connection of `registry serve`: hyper's HTTP/1 server over a [`WatchedStream`], with the three
//! time budgets the [`Clock`] tracks.
//!
//! - **Headers**: from the first byte of a request until hyper has parsed its head; the connection is
//!   closed when it runs out (a client sending half a header holds nothing longer).
//! - **Body**: from the parsed head until the body's last byte; the request is answered 408 when it
//!   runs out ([`DeadlineBody`]).
//! - **Idle**: from the end of a response until the next request's first byte; the connection is
//!   closed gracefully when it runs out.
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
    /// Waiting for a request's first byte.
    Idle(Instant),
    /// A request's head is arriving.
    Head(Instant),
    /// A request is being served (its body timed by [`DeadlineBody`]).
    Busy,
}

/// The phase of one connection, moved by the stream (bytes read), the service (request started) and
/// the response body (request finished); the connection task sleeps until the phase's deadline.
#[derive(Debug)]
pub struct Clock {
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Clock {
    fn new() -> Clock {
        Clock { phase: Mutex::new(Phase::Idle(Instant::now())), changed: Notify::new() }
    }

    fn set(&self, next: impl FnOnce(Phase) -> Option<Phase>) {
        if let Ok(mut phase) = self.phase.lock()
            && let Some(next) = next(*phase)
        {
            *phase = next;
            self.changed.notify_one();
        }
    }

    /// Bytes arrived: an idle connection starts receiving a request head.
    pub fn received(&self) {
        self.set(|phase| matches!(phase, Phase::Idle(_)).then(|| Phase::Head(Instant::now())));
    }

    fn request_started(&self) {
        self.set(|_| Some(Phase::Busy));
    }

    fn request_finished(&self) {
        self.set(|_| Some(Phase::Idle(Instant::now())));
    }

    /// Whether a request is being served (so what hyper writes is its answer).
    pub fn busy(&self) -> bool {
        self.phase.lock().map_or(true, |phase| matches!(*phase, Phase::Busy))
    }

    fn deadline(&self, budgets: &Budgets) -> Option<(Instant, Phase)> {
        let phase = *self.phase.lock().ok()?;
        match phase {
            Phase::Idle(since) => Some((since + budgets.idle, phase)),
            Phase::Head(since) => Some((since + budgets.header, phase)),
            Phase::Busy => None,
        }
    }
}

/// Serves one connection until the client closes it, a budget runs out or `stop` turns true (then the
/// request in flight is finished and the connection closed).
pub async fn serve(
    stream: tokio::net::TcpStream,
    app: axum::Router,
    budgets: Budgets,
    mut stop: watch::Receiver<bool>,
) {
    let clock = Arc::new(Clock::new());
    let io = TokioIo::new(WatchedStream::new(stream, Arc::clone(&clock)));
    let service = {
        let clock = Arc::clone(&clock);
        hyper::service::service_fn(move |request| answer(app.clone(), Arc::clone(&clock), budgets.body, request))
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.header_read_timeout(None);
    let connection = http.serve_connection(io, service);
    tokio::pin!(connection);
    let mut stopping = *stop.borrow();
    if stopping {
        connection.as_mut().graceful_shutdown();
    }
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
            () = clock.changed.notified() => {}
            () = expiry => match clock.deadline(&budgets) {
                Some((at, Phase::Head(_))) if at <= Instant::now() => {
                    tracing::debug!("request headers not received in time: closing the connection");
                    return;
                }
                Some((at, Phase::Idle(_))) if at <= Instant::now() => {
                    connection.as_mut().graceful_shutdown();
                }
                _ => {}
            },
            changed = stop.changed(), if !stopping => {
                stopping = true;
                if changed.is_err() || *stop.borrow() {
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
