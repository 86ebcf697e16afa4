//! One instance's Lambda Runtime API (`AWS_LAMBDA_RUNTIME_API`), the endpoints `lambda_runtime`
//! calls: next event, response (buffered or streamed), invocation error, init error.

use super::answer::{Answer, read_streaming};
use super::{Shared, lock};
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::task::JoinHandle;

const ARN: &str = "arn:aws:lambda:us-east-1:000000000000:function:registry-lambda";

#[derive(Clone)]
struct Instance {
    shared: Arc<Shared>,
    started: Instant,
    init: Arc<Mutex<Option<Duration>>>,
}

/// Serves the Runtime API of the instance spawned at `started` on `listener`; the first
/// `GET /runtime/invocation/next` records its init time in `init`.
pub(super) fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    started: Instant,
    init: Arc<Mutex<Option<Duration>>>,
) -> JoinHandle<()> {
    let app = Router::new()
        .route("/2018-06-01/runtime/invocation/next", get(next))
        .route("/2018-06-01/runtime/invocation/{id}/response", post(response))
        .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
        .route("/2018-06-01/runtime/init/error", post(init_error))
        .with_state(Instance { shared, started, init });
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("lambda emulator: Runtime API failed: {error}");
        }
    })
}

async fn next(State(instance): State<Instance>) -> Response {
    lock(&instance.init).get_or_insert_with(|| instance.started.elapsed());
    let shared = &instance.shared;
    let invocation = {
        let _idle = Idle::enter(shared);
        shared.next_invocation().await
    };
    let deadline = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default() + shared.config.timeout;
    lock(&shared.dispatched).insert(invocation.id.clone(), invocation.answer);
    let body = serde_json::to_vec(&invocation.event).unwrap_or_default();
    let headers = [
        ("lambda-runtime-aws-request-id", invocation.id.clone()),
        ("lambda-runtime-deadline-ms", deadline.as_millis().to_string()),
        ("lambda-runtime-invoked-function-arn", ARN.to_string()),
        ("lambda-runtime-trace-id", format!("Root=1-00000000-{:0>24};Sampled=0", invocation.id.replace('-', ""))),
        ("content-type", "application/json".to_string()),
    ];
    (headers, body).into_response()
}

async fn response(State(instance): State<Instance>, Path(id): Path<String>, request: Request) -> StatusCode {
    let Some(answer) = lock(&instance.shared.dispatched).remove(&id) else {
        return StatusCode::BAD_REQUEST;
    };
    let streaming = header(request.headers(), "lambda-runtime-function-response-mode") == Some("streaming");
    let body = request.into_body();
    if streaming {
        read_streaming(body.into_data_stream(), move |a| {
            let _ = answer.send(a);
        })
        .await;
    } else {
        let answered = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(value) => Answer::Buffered(value),
                Err(e) => Answer::Failed(format!("buffered response is not JSON: {e}")),
            },
            Err(e) => Answer::Failed(format!("response body: {e}")),
        };
        let _ = answer.send(answered);
    }
    StatusCode::ACCEPTED
}

async fn error(State(instance): State<Instance>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> StatusCode {
    let detail = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    let kind = header(&headers, "lambda-runtime-function-error-type").unwrap_or("unhandled").to_string();
    if let Some(answer) = lock(&instance.shared.dispatched).remove(&id) {
        let _ = answer.send(Answer::Failed(format!("{kind}: {}", String::from_utf8_lossy(&detail))));
    }
    StatusCode::ACCEPTED
}

async fn init_error(headers: HeaderMap, body: Body) -> StatusCode {
    let detail = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    let kind = header(&headers, "lambda-runtime-function-error-type").unwrap_or("Runtime.InitError");
    eprintln!("lambda emulator: init error {kind}: {}", String::from_utf8_lossy(&detail));
    StatusCode::ACCEPTED
}

/// Counts an instance as idle while it waits in `next` (also when the wait is abandoned).
struct Idle<'a>(&'a Shared);

impl<'a> Idle<'a> {
    fn enter(shared: &'a Shared) -> Idle<'a> {
        shared.idle.fetch_add(1, Ordering::SeqCst);
        Idle(shared)
    }
}

impl Drop for Idle<'_> {
    fn drop(&mut self) {
        self.0.idle.fetch_sub(1, Ordering::SeqCst);
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
