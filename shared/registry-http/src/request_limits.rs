//! What a request may be before any handler, authentication included, looks at it: the URI and header
//! budgets (414 and 431) and a declared body over [`crate::MAX_BODY_BYTES`] (413 at once: a client
//! sending `Expect: 100-continue` is refused before `100 Continue`, so it never sends the body), each as
//! Confluent's JSON error; and the time budget of one request ([`RequestBudget`]: 504, as Confluent's
//! `RequestTimeoutHandler`).
//!
//! The HTTP parser in front (hyper in `registry serve`, the Lambda front end) has larger limits of its
//! own, so the requests it refuses itself are only the grossly oversized or unparsable ones.

use crate::error::ApiError;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::time::{Duration, Instant};

/// Longest request target (path and query) accepted, in bytes; 414 above it.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// Most header bytes accepted (names and values, plus 4 per line for `: ` and CRLF); 431 above it.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// The refusal of a request over the URI, header or declared body budget; `None` for the others
/// (the edge, `crate::observability::EdgeLayer`, answers it before anything else looks at the request).
pub fn refusal(request: &Request) -> Option<ApiError> {
    let uri = request.uri().path_and_query().map_or(0, |target| target.as_str().len());
    if uri > MAX_URI_BYTES {
        return Some(ApiError::Http(StatusCode::URI_TOO_LONG));
    }
    let headers: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if headers > MAX_HEADER_BYTES {
        return Some(ApiError::Http(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE));
    }
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok());
    if declared
        .and_then(|value| value.trim().parse::<u64>().ok())
        .is_some_and(|length| length > crate::MAX_BODY_BYTES as u64)
    {
        return Some(ApiError::PayloadTooLarge);
    }
    None
}

/// How long one request may take up to its response head: a fixed time, the host's deadline for the
/// request ([`HostDeadline`]) less a margin ([`until_deadline`]), or whichever ends first. The default
/// sets neither: the request runs until it answers (`registry serve` bounds the client's time on the
/// connection instead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestBudget {
    /// The same time for every request.
    pub fixed: Option<Duration>,
    /// Kept free before a request's [`HostDeadline`], so that the 504 is written and logged before the
    /// host gives up on the request (a Lambda runtime kills the invocation at its deadline: the client
    /// would get the Function URL's bare 502 and the instance would be reset). When less than twice
    /// this remains, half of what remains is kept instead ([`until_deadline`]).
    pub deadline_margin: Duration,
}

/// The time a request may work when `remaining` is left before its host's deadline: `remaining` less
/// the margin kept free, which is `margin` or half of `remaining`, whichever is smaller. So the budget
/// never collapses to zero while the invocation still has time (a function with a 1 s timeout and
/// the 1 s margin works 0.5 s, and answers 504 with 0.5 s left to write it), and is zero only when
/// the deadline has passed (answered at once by [`within`]).
pub fn until_deadline(remaining: Duration, margin: Duration) -> Duration {
    remaining - margin.min(remaining / 2)
}

/// The instant by which the host must have this request's answer, as a request extension: a Lambda
/// invocation's deadline (the Lambda adapter inserts it from the invocation's context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostDeadline(pub Instant);

impl RequestBudget {
    /// The time `request` may take from `now`, if anything bounds it.
    pub fn for_request(&self, request: &Request, now: Instant) -> Option<Duration> {
        let until_deadline = request.extensions().get::<HostDeadline>().map(|HostDeadline(deadline)| {
            until_deadline(deadline.saturating_duration_since(now), self.deadline_margin)
        });
        match (self.fixed, until_deadline) {
            (Some(fixed), Some(until_deadline)) => Some(fixed.min(until_deadline)),
            (fixed, until_deadline) => fixed.or(until_deadline),
        }
    }
}

/// Answers 504 (`{"error_code":504,"message":"HTTP 504 Gateway Timeout"}`) when `answer` has not
/// produced a response head within `time` (the request's [`RequestBudget::for_request`]; `None`:
/// unbounded); the work in flight is dropped at its next await point, which every write path
/// tolerates as it tolerates a crash. A request with no time at all (its host's deadline passed
/// before it started) is answered so at once, before any work.
pub async fn within(time: Option<Duration>, answer: impl Future<Output = Response>) -> Response {
    let Some(time) = time else {
        return answer.await;
    };
    if time.is_zero() {
        tracing::warn!("request deadline passed before the request started");
        return ApiError::Http(StatusCode::GATEWAY_TIMEOUT).into_response();
    }
    match tokio::time::timeout(time, answer).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(budget_ms = time.as_millis() as u64, "request time budget spent");
            ApiError::Http(StatusCode::GATEWAY_TIMEOUT).into_response()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn request(uri: &str, headers: &[(&str, String)]) -> Request {
        let mut builder = axum::http::Request::builder().uri(uri);
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        builder.body(Body::empty()).unwrap()
    }

    fn status(request: &Request) -> Option<StatusCode> {
        refusal(request).map(|error| error.status_and_body().0)
    }

    #[test]
    fn the_budget_ends_a_margin_before_the_host_deadline_or_at_the_fixed_time() {
        let now = Instant::now();
        let deadline = |after: Duration| {
            let mut request = request("/", &[]);
            request.extensions_mut().insert(HostDeadline(now + after));
            request
        };
        let second = Duration::from_secs(1);
        let margin = RequestBudget { fixed: None, deadline_margin: second };
        assert_eq!(margin.for_request(&deadline(30 * second), now), Some(29 * second));
        assert_eq!(margin.for_request(&deadline(2 * second), now), Some(second), "the margin kept, as half");
        assert_eq!(margin.for_request(&deadline(second), now), Some(second / 2), "below twice the margin: half");
        assert_eq!(margin.for_request(&deadline(second / 2), now), Some(second / 4), "time left: never zero");
        assert_eq!(margin.for_request(&deadline(Duration::from_millis(2)), now), Some(Duration::from_millis(1)));
        let passed = {
            let mut request = request("/", &[]);
            request.extensions_mut().insert(HostDeadline(now));
            request
        };
        assert_eq!(margin.for_request(&passed, now + second), Some(Duration::ZERO), "deadline passed: at once");
        assert_eq!(margin.for_request(&request("/", &[]), now), None, "no deadline, no fixed time: unbounded");
        let both = RequestBudget { fixed: Some(10 * second), deadline_margin: second };
        assert_eq!(both.for_request(&deadline(30 * second), now), Some(10 * second));
        assert_eq!(both.for_request(&deadline(5 * second), now), Some(4 * second));
        assert_eq!(both.for_request(&request("/", &[]), now), Some(10 * second));
    }

    #[test]
    fn each_budget_is_refused_just_above_it() {
        let path = |len: usize| format!("/{}", "a".repeat(len - 1));
        assert_eq!(status(&request(&path(MAX_URI_BYTES), &[])), None);
        assert_eq!(status(&request(&path(MAX_URI_BYTES + 1), &[])), Some(StatusCode::URI_TOO_LONG));
        let header = |len: usize| vec![("x-big", "v".repeat(len - "x-big".len() - 4))];
        assert_eq!(status(&request("/", &header(MAX_HEADER_BYTES))), None);
        assert_eq!(
            status(&request("/", &header(MAX_HEADER_BYTES + 1))),
            Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        );
        let length = |n: usize| vec![("content-length", n.to_string()), ("expect", "100-continue".to_string())];
        assert_eq!(status(&request("/", &length(crate::MAX_BODY_BYTES))), None);
        assert_eq!(status(&request("/", &length(crate::MAX_BODY_BYTES + 1))), Some(StatusCode::PAYLOAD_TOO_LARGE));
    }

    #[tokio::test]
    async fn a_request_over_its_time_budget_is_answered_504_and_one_within_it_is_untouched() {
        use tower::ServiceExt;
        // A budget per route: 20 ms for one that never answers, 10 minutes (nothing a busy machine
        // needs for a constant) for one that answers at once, so that speed decides neither.
        let app = axum::Router::new()
            .route("/slow", axum::routing::get(std::future::pending::<&'static str>))
            .route("/fast", axum::routing::get(|| async { "fast" }))
            .layer(axum::middleware::from_fn(|request: Request, next: axum::middleware::Next| {
                let fixed = if request.uri().path() == "/slow" { 20 } else { 600_000 };
                let budget = RequestBudget { fixed: Some(Duration::from_millis(fixed)), ..RequestBudget::default() };
                within(budget.for_request(&request, Instant::now()), next.run(request))
            }));
        let slow = app.clone().oneshot(request("/slow", &[])).await.unwrap();
        assert_eq!(slow.status(), StatusCode::GATEWAY_TIMEOUT);
        let body = axum::body::to_bytes(slow.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], br#"{"error_code":504,"message":"HTTP 504 Gateway Timeout"}"#);
        let fast = app.oneshot(request("/fast", &[])).await.unwrap();
        assert_eq!(fast.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_request_whose_deadline_passed_is_answered_504_without_running_and_one_with_time_left_runs() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tower::ServiceExt;
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let app = axum::Router::new()
            .route(
                "/fast",
                axum::routing::get(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { "fast" }
                }),
            )
            .layer(axum::middleware::from_fn(|request: Request, next: axum::middleware::Next| {
                // An hour's margin: "less time left than the margin" below is half an hour, so the
                // request's budget (a quarter hour) does not depend on the machine's speed.
                let budget = RequestBudget { fixed: None, deadline_margin: Duration::from_secs(3600) };
                within(budget.for_request(&request, Instant::now()), next.run(request))
            }));
        let with_deadline = |deadline: Instant| {
            let mut request = request("/fast", &[]);
            request.extensions_mut().insert(HostDeadline(deadline));
            request
        };
        let passed = app.clone().oneshot(with_deadline(Instant::now())).await.unwrap();
        assert_eq!(passed.status(), StatusCode::GATEWAY_TIMEOUT);
        let body = axum::body::to_bytes(passed.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], br#"{"error_code":504,"message":"HTTP 504 Gateway Timeout"}"#);
        assert_eq!(runs.load(Ordering::SeqCst), 0, "no work started past the deadline");
        // Less time left than the margin: the request still works (within half of what remains).
        let short = app.oneshot(with_deadline(Instant::now() + Duration::from_secs(1800))).await.unwrap();
        assert_eq!(short.status(), StatusCode::OK);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
