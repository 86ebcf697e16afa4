//! Per-request observability and response media type negotiation: one log line and one metrics
//! sample per request, the request id, and the `Accept` choice.
//!
//! The log line (`tracing` event, target `registry_http::request`, level `info`; `error` with the
//! 5xx detail the body never carries) has the fields `operation` (Confluent's operation name in
//! snake_case, as the endpoint declares it: [`crate::endpoint`]), `subject` (percent-decoded, when
//! the path names one), `principal` (who made the request: the verified user name or token subject,
//! `anonymous` without verified credentials or with authentication off — the audit trail of every
//! write), `method`, `status`, `error_code` (error answers), `latency_ms` and `request_id`.
//! Nothing else from the request is logged: no bodies, no headers, no query strings, so schema
//! texts and credentials never reach the log.
//!
//! The request id is, in order: a [`RequestId`] extension put on the request by the caller (the
//! Lambda request id, when it is a valid header value), a well-formed `X-Request-Id` header from
//! the client, or a fresh id. It is echoed in the `X-Request-Id` response header.
//!
//! The guard of the endpoint that answered tells the edge what it served ([`Served`]) through a
//! slot the edge listens on while it polls its answer ([`served`]): a request costs no extension
//! table on its response.
//!
//! [`EdgeLayer`] is the outermost layer of `crate::app`, so every answer is recorded exactly once.
//! A host whose own per-answer line carries these fields (the Lambda function's EMF line) gives
//! the edge an [`AnswerLine`]: the record goes there instead of the `info` line, so each answer
//! is written once, as one line (5xx answers still get their `error` line with the detail).
//! A read region's local answer that the home region answers again ([`HomeAnswersNotFound`]) is
//! not handed to it: the home's answer is the request's.

use crate::endpoint::{Served, UNKNOWN_OPERATION};
use crate::error::{ApiError, ErrorCode, ErrorDetail};
use crate::extract::{MEDIA_V1, negotiate};
use crate::request_limits::RequestBudget;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use registry_core::Registry;
use registry_core::metrics::Metrics;
use std::convert::Infallible;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The request and response header carrying the request id.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The `tracing` target of the per-request log line.
pub const REQUEST_LOG_TARGET: &str = "registry_http::request";

/// A request id chosen by the caller (the Lambda request id); wins over the client's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// What the per-request record saw: handed to the host's [`AnswerLine`] (the Lambda's EMF line,
/// `registry serve`'s access line) for every answer of `crate::app`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// Confluent's operation name, as the endpoint declares it.
    pub operation: &'static str,
    /// The subject named in the path, percent-decoded.
    pub subject: Option<String>,
    /// The status answered.
    pub status: u16,
    /// Time to the response head, in milliseconds (whole microseconds).
    pub latency_ms: f64,
    /// The request id (also in the `X-Request-Id` response header): [`RequestRecord::request_id`].
    pub request_id: HeaderValue,
    /// The endpoint may change what the registry holds (registrations, deletes, config, MCP calls;
    /// not lookups or compatibility tests, which are `POST`s that only read).
    pub writes: bool,
    /// The request's method.
    pub method: Method,
    /// Who made the request when its credentials verified; `None` is [`ANONYMOUS`].
    pub principal: Option<String>,
    /// The `error_code` of an error answer.
    pub error_code: Option<u32>,
}

impl RequestRecord {
    /// The request id as text (always plain ASCII: [`client_request_id`], [`fresh_request_id`]).
    pub fn request_id(&self) -> &str {
        self.request_id.to_str().unwrap_or("")
    }
}

/// A host's own line per answer, written instead of the edge's `info` access line: it is handed
/// every answer's [`RequestRecord`] (all the fields that line has) once the response head is ready.
pub trait AnswerLine: Send + Sync + std::fmt::Debug {
    /// Writes the line of one answer.
    fn answered(&self, record: &RequestRecord);
}

/// Put on a request by a read region's dispatch (`crate::regional`) when a 404 answer to it will
/// be asked of the home region again: that answer is not the request's, so an [`AnswerLine`] is
/// not handed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeAnswersNotFound;

/// What the edge holds for every request: the registry whose metrics it counts, the host's
/// [`AnswerLine`] if it has one, what to tell after a successful write (`crate::AppOptions::written`),
/// and the time budget of a request ([`RequestBudget`]).
#[derive(Debug, Clone)]
pub struct Edge {
    pub registry: Registry,
    pub answer_line: Option<Arc<dyn AnswerLine>>,
    pub written: Option<Arc<tokio::sync::Notify>>,
    pub budget: RequestBudget,
}

/// The edge every answer passes, the outermost layer of `app` (`Router::layer` puts it around each
/// route): refuses a request over the URI, header or declared-body budget
/// ([`crate::request_limits::refusal`]), else runs it within its time budget
/// ([`crate::request_limits::within`]); then swaps the default media type for the one `Accept`
/// negotiates ([`negotiate`]) on successful JSON answers (errors always keep
/// `application/vnd.schemaregistry.v1+json`), gives every answer without its own `Cache-Control`
/// `no-store` ([`crate::http_cache`]), and records the request (log line, metrics, `X-Request-Id`).
/// So every answer is recorded once, authentication's refusals included. A hand-written service,
/// not a `from_fn` middleware: no boxed inner service and no extra future per request.
#[derive(Debug, Clone)]
pub struct EdgeLayer(pub Arc<Edge>);

impl<S> tower::Layer<S> for EdgeLayer {
    type Service = EdgeService<S>;

    fn layer(&self, inner: S) -> EdgeService<S> {
        EdgeService { edge: self.0.clone(), inner }
    }
}

/// [`EdgeLayer`] around one route.
#[derive(Debug, Clone)]
pub struct EdgeService<S> {
    edge: Arc<Edge>,
    inner: S,
}

impl<S> tower::Service<Request> for EdgeService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
    S::Future: Unpin + Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeAnswer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> EdgeAnswer<S::Future> {
        let edge = self.edge.clone();
        let media = negotiate(request.headers());
        let started = Instant::now();
        let facts = Facts::of(&request);
        let answer = match crate::request_limits::refusal(&request) {
            Some(refusal) => Answer::Refused(Some(refusal)),
            None => match edge.budget.for_request(&request, started) {
                // No time left: answered by `within` without being started.
                Some(Duration::ZERO) => Answer::Bounded(Box::pin(bounded(Duration::ZERO, None::<S::Future>))),
                // Boxed: the timer is not part of the unbounded answer's future.
                Some(time) => Answer::Bounded(Box::pin(bounded(time, Some(self.inner.call(request))))),
                None => Answer::Unbounded(self.inner.call(request)),
            },
        };
        EdgeAnswer { edge, media, started, facts: Some(facts), answer, served: None }
    }
}

/// The answer of [`EdgeService`]: the inner service's, finished by the edge (media type,
/// `Cache-Control`, the request's record) once it is ready.
pub struct EdgeAnswer<F> {
    edge: Arc<Edge>,
    media: &'static str,
    started: Instant,
    facts: Option<Facts>,
    answer: Answer<F>,
    /// What the guard of the endpoint that answered said it served ([`served`]).
    served: Option<Served>,
}

/// What the edge runs for a request.
enum Answer<F> {
    /// Refused by [`crate::request_limits::refusal`].
    Refused(Option<ApiError>),
    /// The inner service's answer, with no time budget.
    Unbounded(F),
    /// The inner service's answer within a time budget ([`bounded`]).
    Bounded(Pin<Box<dyn Future<Output = Response> + Send>>),
}

impl<F> Future for EdgeAnswer<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let polled = served::listening(&mut this.served, || match &mut this.answer {
            Answer::Refused(refusal) => Poll::Ready(refusal.take().map_or_else(
                || ApiError::Http(StatusCode::INTERNAL_SERVER_ERROR).into_response(),
                IntoResponse::into_response,
            )),
            Answer::Unbounded(answer) => {
                Pin::new(answer).poll(cx).map(|answered| answered.unwrap_or_else(|never| match never {}))
            }
            Answer::Bounded(answer) => answer.as_mut().poll(cx),
        });
        let mut response = std::task::ready!(polled);
        let media = this.media;
        if response.status().is_success() && media != MEDIA_V1 {
            let is_default = response.headers().get(header::CONTENT_TYPE).is_some_and(|value| value == MEDIA_V1);
            if is_default {
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
            }
        }
        if !response.headers().contains_key(header::CACHE_CONTROL) {
            response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        if let Some(facts) = this.facts.take() {
            facts.finish(&this.edge, this.started, this.served.take(), &mut response);
        }
        Poll::Ready(Ok(response))
    }
}

/// `answer` within `time` ([`crate::request_limits::within`]).
async fn bounded(time: Duration, answer: Option<impl Future<Output = Result<Response, Infallible>>>) -> Response {
    let answer = async {
        match answer {
            Some(answer) => answer.await.unwrap_or_else(|never| match never {}),
            None => ApiError::Http(StatusCode::GATEWAY_TIMEOUT).into_response(),
        }
    };
    crate::request_limits::within(Some(time), answer).await
}

/// The `principal` of the log line when no credentials verified (or authentication is off).
pub const ANONYMOUS: &str = "anonymous";

/// How the guard of the endpoint that answered tells the edge what it [`Served`]: while the edge
/// polls its answer, the thread's slot listens for it ([`listening`]), so the record costs no
/// extension table on the response. The guard tells when its answer is ready; a request a handler
/// makes on the caller's behalf through the routes (an MCP tool's) tells first, and its own
/// endpoint's guard, finishing last, has the last word. An edge inside another edge's answer keeps
/// what it hears to itself.
pub(crate) mod served {
    use super::Served;
    use std::cell::Cell;

    thread_local! {
        /// `None` while no edge listens on this thread; `Some(told)` while one polls its answer.
        static SLOT: Cell<Option<Option<Served>>> = const { Cell::new(None) };
    }

    /// Runs `poll` (one poll of an edge's answer) with the slot listening, and keeps in `heard` what
    /// a guard told during it.
    pub(super) fn listening<R>(heard: &mut Option<Served>, poll: impl FnOnce() -> R) -> R {
        let outer = SLOT.replace(Some(None));
        let polled = poll();
        if let Some(Some(told)) = SLOT.replace(outer) {
            *heard = Some(told);
        }
        polled
    }

    /// Tells the edge whose answer is being polled (if any) what was served.
    pub(crate) fn tell(served: Served) {
        SLOT.with(|slot| {
            // Outside an edge's poll (a router without `crate::app`'s edge) no one would hear it.
            if slot.take().is_some() {
                slot.set(Some(Some(served)));
            }
        });
    }
}

/// What the record needs from the request, taken before the request is consumed.
struct Facts {
    method: Method,
    request_id: HeaderValue,
    /// The home region answers this request again after a 404 ([`HomeAnswersNotFound`]).
    reasked_on_not_found: bool,
}

impl Facts {
    fn of(request: &Request) -> Facts {
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .and_then(|id| HeaderValue::from_str(&id.0).ok())
            .or_else(|| client_request_id(request.headers().get(&REQUEST_ID_HEADER)))
            .unwrap_or_else(fresh_request_id);
        let reasked_on_not_found = request.extensions().get::<HomeAnswersNotFound>().is_some();
        Facts { method: request.method().clone(), request_id, reasked_on_not_found }
    }

    fn finish(self, edge: &Edge, started: Instant, served: Option<Served>, response: &mut Response) {
        let metrics: &Metrics = edge.registry.metrics();
        // Whole microseconds: finer is noise, and a line writes them without the float formatter.
        let latency_ms = started.elapsed().as_micros() as f64 / 1000.0;
        let status = response.status();
        let error_code = response.extensions().get::<ErrorCode>().map(|code| code.0);
        let (operation, subject, principal, writes) = match served {
            Some(served) => (served.operation, served.subject, served.principal, served.writes),
            None => (UNKNOWN_OPERATION, None, None, false),
        };
        metrics.record_request(operation, status.as_u16(), latency_ms);
        if error_code == Some(50002) {
            metrics.record_store_throttle();
        }
        let record = RequestRecord {
            operation,
            subject,
            status: status.as_u16(),
            latency_ms,
            request_id: self.request_id,
            writes,
            method: self.method,
            principal,
            error_code,
        };
        let superseded = self.reasked_on_not_found && status == StatusCode::NOT_FOUND;
        match &edge.answer_line {
            Some(line) if !superseded => line.answered(&record),
            Some(_) => {}
            None => trace_access_line(&record),
        }
        if let Some(written) = edge.written.as_ref().filter(|_| record.writes && status.is_success()) {
            written.notify_one();
        }
        if status.is_server_error() {
            let detail = response.extensions().get::<ErrorDetail>().map_or("", |detail| detail.0.as_str());
            log_line(&record, Some(detail));
        }
        // Moved, not cloned: a clone of a fresh id's value would allocate its shared count.
        response.headers_mut().insert(REQUEST_ID_HEADER, record.request_id);
    }
}

/// The edge's own access line of `record` (`info`, through `tracing`): what a host without an
/// [`AnswerLine`] gets for each answer below 500.
pub fn trace_access_line(record: &RequestRecord) {
    log_line(record, None);
}

/// The access line of `record` (`info`), or with a 5xx's `detail` its `error` line.
fn log_line(record: &RequestRecord, detail: Option<&str>) {
    let RequestRecord { operation, status, error_code, latency_ms, .. } = *record;
    let (method, request_id) = (record.method.as_str(), record.request_id());
    let subject = record.subject.as_deref().unwrap_or("");
    let principal = record.principal.as_deref().unwrap_or(ANONYMOUS);
    match detail {
        Some(detail) => tracing::error!(
            target: REQUEST_LOG_TARGET, operation, subject, principal, method, status, error_code, latency_ms,
            request_id, detail, "request failed"
        ),
        None if status >= 500 => {}
        None => tracing::info!(
            target: REQUEST_LOG_TARGET, operation, subject, principal, method, status, error_code, latency_ms,
            request_id, "request served"
        ),
    }
}

/// A client's `X-Request-Id` when it is short and plain (at most 128 of `[A-Za-z0-9._:-]`), so a
/// header can never forge log structure.
fn client_request_id(value: Option<&HeaderValue>) -> Option<HeaderValue> {
    let value = value?;
    let bytes = value.as_bytes();
    let plain = !bytes.is_empty()
        && bytes.len() <= 128
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    plain.then(|| value.clone())
}

/// 32 hex digits: a per-process random prefix, then the request's number in the process scrambled
/// by a bijection keyed per process ([`scramble`]): unique within the process, and across
/// processes with overwhelming probability.
fn fresh_request_id() -> HeaderValue {
    static KEYS: OnceLock<(u64, u64)> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let (prefix, key) = *KEYS.get_or_init(|| {
        let random = RandomState::new();
        (random.hash_one(std::process::id()), random.hash_one("request numbers"))
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut id = [0u8; 32];
    write_hex16(&mut id[..16], prefix);
    write_hex16(&mut id[16..], scramble(n.wrapping_add(key)));
    // Hex digits are always a valid header value.
    HeaderValue::from_bytes(&id).unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// SplitMix64's finalizer: a bijection of `u64` (distinct inputs, distinct outputs) that spreads
/// consecutive inputs over the whole range.
fn scramble(value: u64) -> u64 {
    let value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

/// `value` as 16 lowercase hex digits into `out` (16 bytes), as `{:016x}` writes it (without the
/// formatter: this is on every request's path).
fn write_hex16(out: &mut [u8], value: u64) {
    for (digit, byte) in out.iter_mut().rev().enumerate() {
        *byte = b"0123456789abcdef"[(value >> (digit * 4)) as usize & 15];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_request_ids_must_be_plain() {
        let plain = HeaderValue::from_static("abc-123_x.y:z");
        assert_eq!(client_request_id(Some(&plain)), Some(plain));
        let forged = HeaderValue::from_static("a\" level=error");
        assert_eq!(client_request_id(Some(&forged)), None);
        let long = HeaderValue::from_str(&"a".repeat(129)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(client_request_id(Some(&long)), None);
    }

    #[test]
    fn fresh_request_ids_are_unique() {
        let ids: std::collections::HashSet<HeaderValue> = (0..1000).map(|_| fresh_request_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.len() == 32 && id.as_bytes().iter().all(u8::is_ascii_hexdigit)));
        for value in [0, 1, 0x0123_4567_89ab_cdef, u64::MAX] {
            let mut hex = [0u8; 16];
            write_hex16(&mut hex, value);
            assert_eq!(std::str::from_utf8(&hex).ok(), Some(format!("{value:016x}").as_str()));
        }
        // Consecutive numbers scramble to distinct values (a bijection cannot repeat).
        let scrambled: std::collections::HashSet<u64> = (0..10_000u64).map(scramble).collect();
        assert_eq!(scrambled.len(), 10_000);
    }
}
