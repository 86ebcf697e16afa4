//! The Lambda path per core against the router `registry serve` runs, in one run.
//!
//! One thread (a current-thread runtime: what one core does), a warm registry on the memory store
//! with [`HOT`] schemas, and the same requests four ways, rounds interleaved so drift hits all alike:
//! - `router`: `registry_http::app` called with an `http::Request` (the application `registry serve`
//!   hands every parsed request to);
//! - `handler`: the function's handler as `main` assembles it (the same application, its EMF line
//!   in place of the access line, the request preparation and time budget) called with the request
//!   `lambda_http` builds, its Lambda context attached;
//! - `handler without EMF`: that handler without its EMF lines, so with the router's access line
//!   (what the adapter itself adds);
//! - `event`: the same, from the invocation's bytes: the Function URL event parsed and converted
//!   as `lambda_http` does it, and the answer's metadata prelude serialized as the runtime sends it.
//!
//! Each path logs as deployed: the router its access line as JSON at `info` (to /dev/null here, the
//! Lambda log pipeline's pipe there), the function its EMF line on stdout instead (sent to
//! /dev/null: run with `> /dev/null`; the figures go to stderr). Printed, never asserted: requests per second of one
//! core for `GET /schemas/ids/{id}` and lookups, and each path's ratio to the router's.
//!
//! `cargo bench -p registry-lambda --bench adapter > /dev/null` (`make bench-edge` runs it).

use axum::body::Body;
use axum::http::{Method, Request, header};
use clap::Parser;
use http_body_util::BodyExt;
use lambda_http::RequestExt;
use lambda_http::lambda_runtime::{Context, MetadataPrelude};
use lambda_http::request::LambdaRequest;
use registry_core::{MemoryStore, NewSchema, Registry, RegistrySettings};
use registry_http::AppOptions;
use registry_lambda::LambdaConfig;
use registry_lambda::emf::Emf;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// Schemas registered, read in turn.
const HOT: usize = 200;
/// Rounds of each path (the median is printed).
const ROUNDS: usize = 5;
const MEDIA: &str = "application/vnd.schemaregistry.v1+json";

/// One request of the load: method, path, body.
struct Call {
    method: Method,
    path: String,
    body: Option<String>,
}

impl Call {
    fn http(&self) -> Request<Body> {
        let body = self.body.clone().map_or_else(Body::empty, Body::from);
        let mut request = Request::builder().method(self.method.clone()).uri(&self.path).header(header::ACCEPT, MEDIA);
        if self.body.is_some() {
            request = request.header(header::CONTENT_TYPE, MEDIA);
        }
        request.body(body).unwrap_or_else(|e| panic!("{e}"))
    }

    fn lambda(&self) -> lambda_http::Request {
        let body = self.body.clone().map_or(lambda_http::Body::Empty, lambda_http::Body::Text);
        let mut request = Request::builder().method(self.method.clone()).uri(&self.path).header(header::ACCEPT, MEDIA);
        if self.body.is_some() {
            request = request.header(header::CONTENT_TYPE, MEDIA);
        }
        request.body(body).unwrap_or_else(|e| panic!("{e}")).with_lambda_context(context())
    }

    /// The Function URL event (payload 2.0) Lambda hands the function for this request.
    fn event(&self) -> Vec<u8> {
        let mut headers = json!({"accept": MEDIA, "host": "abcdefghijklmnop.lambda-url.eu-west-1.on.aws",
            "user-agent": "confluent-kafka-python/2.6.0", "x-forwarded-for": "198.51.100.7",
            "x-forwarded-proto": "https", "x-amzn-trace-id": "Root=1-67891233-abcdef012345678912345678"});
        if self.body.is_some() {
            headers["content-type"] = json!(MEDIA);
        }
        let event = json!({
            "version": "2.0", "routeKey": "$default", "rawPath": self.path, "rawQueryString": "",
            "headers": headers,
            "requestContext": {
                "accountId": "anonymous", "apiId": "abcdefghijklmnop",
                "domainName": "abcdefghijklmnop.lambda-url.eu-west-1.on.aws", "domainPrefix": "abcdefghijklmnop",
                "http": {"method": self.method.as_str(), "path": self.path, "protocol": "HTTP/1.1",
                    "sourceIp": "198.51.100.7", "userAgent": "confluent-kafka-python/2.6.0"},
                "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", "routeKey": "$default", "stage": "$default",
                "time": "12/Mar/2026:19:03:58 +0000", "timeEpoch": 1773342238390u64
            },
            "body": self.body, "isBase64Encoded": false
        });
        serde_json::to_vec(&event).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A Lambda context as the runtime builds it from the invocation's headers: its request id, and
/// a deadline a minute away.
fn context() -> Context {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut context = Context::default();
    context.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd".into();
    context.deadline = now.as_millis() as u64 + 60_000;
    context
}

/// The paths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Router,
    /// The handler without its EMF lines: what the adapter itself adds (the request's preparation
    /// and its time budget).
    Adapter,
    Handler,
    Event,
}

struct Bench {
    router: axum::Router,
    adapter: registry_lambda::Handler,
    handler: registry_lambda::Handler,
}

impl Bench {
    /// Answers `call` through `path` and returns the answer's body length (read to the end).
    async fn answer(&self, path: Path, call: &Call, event: &[u8]) -> usize {
        let response = match path {
            Path::Router => self.router.clone().oneshot(call.http()).await.unwrap_or_else(|never| match never {}),
            Path::Adapter => self.adapter.clone().oneshot(call.lambda()).await.unwrap_or_else(|never| match never {}),
            Path::Handler => self.handler.clone().oneshot(call.lambda()).await.unwrap_or_else(|never| match never {}),
            Path::Event => {
                let payload: LambdaRequest = serde_json::from_slice(event).unwrap_or_else(|e| panic!("{e}"));
                let request = lambda_http::Request::from(payload).with_lambda_context(context());
                let response = self.handler.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
                let (parts, body) = response.into_parts();
                assert!(parts.status.is_success(), "{}", parts.status);
                let prelude =
                    MetadataPrelude { status_code: parts.status, headers: parts.headers, cookies: Vec::new() };
                let prelude = serde_json::to_vec(&prelude).unwrap_or_else(|e| panic!("{e}"));
                let bytes = body.collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes();
                return prelude.len() + bytes.len();
            }
        };
        assert!(response.status().is_success(), "{}", response.status());
        response.into_body().collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes().len()
    }

    /// Requests per second `path` answers over `calls` in `time`.
    async fn rate(&self, path: Path, calls: &[(Call, Vec<u8>)], time: Duration) -> f64 {
        let started = Instant::now();
        let mut answered = 0usize;
        while started.elapsed() < time {
            for (call, event) in calls {
                std::hint::black_box(self.answer(path, call, event).await);
            }
            answered += calls.len();
        }
        answered as f64 / started.elapsed().as_secs_f64()
    }
}

fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

async fn run(seconds: f64) {
    let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
    let mut by_id = Vec::new();
    let mut lookups = Vec::new();
    for n in 0..HOT {
        let text = json!({"type": "record", "name": format!("Hot{n}"), "fields": [{"name": "id", "type": "string"}]});
        let schema = NewSchema { schema: Some(text.to_string()), ..NewSchema::default() };
        let subject = format!("hot-{n}-value");
        let record = registry.register(&subject, schema, Default::default()).await.unwrap_or_else(|e| panic!("{e}"));
        by_id.push(Call { method: Method::GET, path: format!("/schemas/ids/{}", record.id.0), body: None });
        let body = json!({ "schema": text.to_string() }).to_string();
        lookups.push(Call { method: Method::POST, path: format!("/subjects/{subject}"), body: Some(body) });
    }
    // The options each host builds from the default settings: the function's add its request
    // budget (a margin before the invocation's deadline), `registry serve` bounds time at its edge.
    let config = LambdaConfig::try_parse_from(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
    let served = registry_app::app_options(&config.settings, None).unwrap_or_else(|e| panic!("{e}"));
    let function = AppOptions { request_budget: config.request_budget(), ..served.clone() };
    let bench = Bench {
        router: registry_http::app(registry.clone(), served),
        adapter: registry_lambda::guarded_handler(registry.clone(), function.clone(), None, None),
        handler: registry_lambda::guarded_handler(registry, function, Some(Emf::new(config.emf())), None),
    };
    let time = Duration::from_secs_f64(seconds);
    eprintln!("Lambda path per core ({ROUNDS} rounds of {seconds} s per path, median; one thread; {HOT} hot schemas)");
    eprintln!(
        "| requests | router req/s | handler without EMF req/s (ratio) | handler req/s (ratio) | event → handler req/s (ratio) |"
    );
    eprintln!("|---|---|---|---|---|");
    for (name, calls) in [("GET /schemas/ids/{id}", by_id), ("POST /subjects/{s} (lookup)", lookups)] {
        let calls: Vec<(Call, Vec<u8>)> = calls
            .into_iter()
            .map(|call| {
                let event = call.event();
                (call, event)
            })
            .collect();
        let paths = [Path::Router, Path::Adapter, Path::Handler, Path::Event];
        let mut figures: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
        bench.rate(Path::Event, &calls, Duration::from_millis(200)).await;
        for _ in 0..ROUNDS {
            for (figure, path) in figures.iter_mut().zip(paths) {
                figure.push(bench.rate(path, &calls, time).await);
            }
        }
        let [router, adapter, handler, event] = [0, 1, 2, 3].map(|i| median(figures[i].clone()));
        eprintln!(
            "| {name} | {router:.0} | {adapter:.0} ({:.2}) | {handler:.0} ({:.2}) | {event:.0} ({:.2}) |",
            adapter / router,
            handler / router,
            event / router
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `--seconds S` sets each run's length.
    let args: Vec<String> = std::env::args().collect();
    let seconds = args
        .iter()
        .position(|arg| arg == "--seconds")
        .and_then(|at| args.get(at + 1))
        .and_then(|value| value.parse().ok())
        .unwrap_or(1.0);
    let log = std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap_or_else(|e| panic!("{e}"));
    tracing_subscriber::fmt()
        .json()
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_writer(Mutex::new(log))
        .init();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(run(seconds));
}
