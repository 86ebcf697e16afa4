//! One instance's Lambda Runtime API (`AWS_LAMBDA_RUNTIME_API`), the endpoints `lambda_runtime`
//! calls: next event, response (buffered or streamed), invocation error, init error. Each
//! connection can be cut ([`Cut`]), to fail a response post as a runtime emulator that drops the
//! connection does.

use super::answer::{Answer, read_streaming};
use super::{InvocationDeadline, Shared, lock};
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
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
    let app = app.into_make_service_with_connect_info::<Cut>();
    tokio::spawn(async move {
        if let Err(error) = axum::serve(CuttableListener(listener), app).await {
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
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let deadline = match shared.config.deadline {
        InvocationDeadline::Timeout => now + shared.config.timeout,
        InvocationDeadline::After(after) => now + after,
        InvocationDeadline::PassedBy(passed) => now.saturating_sub(passed),
        InvocationDeadline::Fixed(millis) => Duration::from_millis(millis),
    };
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

async fn response(
    State(instance): State<Instance>,
    ConnectInfo(cut): ConnectInfo<Cut>,
    Path(id): Path<String>,
    request: Request,
) -> StatusCode {
    let Some(answer) = lock(&instance.shared.dispatched).remove(&id) else {
        return StatusCode::BAD_REQUEST;
    };
    let failing = &instance.shared.failing_responses;
    if failing.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1)).is_ok() {
        // The function never reads this answer: its connection fails first.
        cut.0.store(true, Ordering::SeqCst);
        let _ = answer.send(Answer::Failed("the response post's connection was cut".into()));
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
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

/// A Runtime API connection's switch: once set, every read and write on the connection fails, so
/// the server drops it without a word and the function's call ends in a transport error
/// (`hyper::Error(IncompleteMessage)`), as when `cargo lambda watch` answers 500 to a response post
/// and closes the connection. Handlers get it as `ConnectInfo<Cut>`.
#[derive(Debug, Clone, Default)]
pub(super) struct Cut(Arc<AtomicBool>);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, CuttableListener>> for Cut {
    fn connect_info(stream: axum::serve::IncomingStream<'_, CuttableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// Accepts connections whose [`Cut`] a handler can set.
pub(super) struct CuttableListener(TcpListener);

impl axum::serve::Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = Cut;

    async fn accept(&mut self) -> (CuttableStream, Cut) {
        loop {
            match self.0.accept().await {
                Ok((stream, _)) => {
                    let cut = Cut::default();
                    return (CuttableStream { stream, cut: cut.clone() }, cut);
                }
                // Out of file descriptors and the like: wait for some to be freed.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Cut> {
        Ok(Cut::default())
    }
}

/// A TCP connection that fails every read and write once its [`Cut`] is set.
pub(super) struct CuttableStream {
    stream: TcpStream,
    cut: Cut,
}

impl CuttableStream {
    fn check(&self) -> std::io::Result<()> {
        if self.cut.0.load(Ordering::SeqCst) {
            Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut by the emulator"))
        } else {
            Ok(())
        }
    }
}

impl AsyncRead for CuttableStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if let Err(error) = self.check() {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        if let Err(error) = self.check() {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if let Err(error) = self.check() {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
