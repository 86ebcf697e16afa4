//! Per-request observability and response media type negotiation: one middleware that logs every
//! answer (5xx with the error detail the body never carries) and applies the `Accept` choice.

use crate::error::ErrorDetail;
use crate::extract::{MEDIA_V1, negotiate};
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// Runs the request, then: swaps the default media type for the negotiated one on successful JSON
/// answers (errors always keep `application/vnd.schemaregistry.v1+json`), and logs the outcome,
/// at `error` with the detail for 5xx, at `debug` otherwise. Handlers open the per-operation span.
pub async fn observe(request: Request, next: Next) -> Response {
    let media = negotiate(request.headers());
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().map(|path| path.as_str().to_owned());
    let started = Instant::now();
    let mut response = next.run(request).await;
    let status = response.status();
    if status.is_success() && media != MEDIA_V1 {
        let is_default = response.headers().get(header::CONTENT_TYPE).is_some_and(|value| value == MEDIA_V1);
        if is_default {
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
        }
    }
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let route = route.as_deref().unwrap_or("<unmatched>");
    if status.is_server_error() {
        let detail = response.extensions().get::<ErrorDetail>().map(|detail| detail.0.as_str()).unwrap_or("");
        tracing::error!(%method, route, status = status.as_u16(), elapsed_ms, detail, "request failed");
    } else {
        tracing::debug!(%method, route, status = status.as_u16(), elapsed_ms, "request served");
    }
    response
}
