//! The read region's write path, two ways, under a simulated cross-region round trip of
//! [`CROSS_REGION_RTT`] (the emulator is one host: without it nothing crosses a region):
//!
//! - direct (what the function does): the read region's home store calls the home region's table
//!   and bucket through a proxy that waits the round trip before each AWS request;
//! - forwarding (a test-only stand-in, not in the product): the read region sends each write as
//!   HTTP to the home region's application, served on loopback over the home's store, through a
//!   proxy that waits the round trip once per request.
//!
//! Reads go to the local replica in both. Each write kind is timed a few times; the figures are
//! printed and only relations a loaded machine cannot break are asserted.

mod support;

use support::http::{app, call, schema};

use aws_config::BehaviorVersion;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use registry_store_aws::regions::RegionalStore;
use registry_store_aws::testing::replicator::{Replicator, Site};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";
/// As scripts/infra_cost.py assumes; real round trips vary by region pair.
const CROSS_REGION_RTT: Duration = Duration::from_millis(70);
/// Repetitions of each write kind (distinct subjects).
const REPEATS: usize = 5;

/// A proxy to `target` that waits the round trip before sending each request on, counting them.
struct Delayed {
    client: Client<HttpConnector, axum::body::Body>,
    target: String,
    requests: AtomicU64,
}

impl Delayed {
    fn router(target: &str) -> (axum::Router, Arc<Delayed>) {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let proxy = Arc::new(Delayed { client, target: target.trim_end_matches('/').to_string(), requests: 0.into() });
        (axum::Router::new().fallback(forward).with_state(proxy.clone()), proxy)
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

async fn forward(State(proxy): State<Arc<Delayed>>, mut request: Request) -> Response {
    proxy.requests.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(CROSS_REGION_RTT).await;
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let uri: Uri = match format!("{}{path}", proxy.target).parse() {
        Ok(uri) => uri,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    *request.uri_mut() = uri;
    match proxy.client.request(request).await {
        Ok(response) => response.map(axum::body::Body::new),
        Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

/// Serves `router` on a loopback port: its URL.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

/// `site`'s table and bucket reached through a delayed proxy to the emulator: the store and the proxy.
async fn across_regions(site: &Site) -> (registry_store_aws::AwsStore, Arc<Delayed>) {
    let emulator = site.sdk.endpoint_url().unwrap_or_else(|| panic!("the emulator's SDK has an endpoint")).to_string();
    let (router, proxy) = Delayed::router(&emulator);
    let url = serve(router).await;
    // Loaded with the endpoint given, so the environment's (the emulator's) is ignored: a client
    // built from `site.sdk` with only its endpoint replaced would still prefer the environment's.
    let mut loader =
        aws_config::defaults(BehaviorVersion::latest()).region(site.sdk.region().cloned()).endpoint_url(url);
    if let Some(credentials) = site.sdk.credentials_provider() {
        loader = loader.credentials_provider(credentials);
    }
    let far = Site { sdk: loader.load().await, config: site.config.clone() };
    (far.store().fenced_by(HOME), proxy)
}

/// The wall times of one kind of request and the requests that crossed regions for all of them.
struct Kind {
    name: &'static str,
    times: Vec<Duration>,
    crossings: u64,
}

impl Kind {
    fn median(&self) -> Duration {
        let mut sorted = self.times.clone();
        sorted.sort();
        sorted[sorted.len() / 2]
    }

    fn min(&self) -> Duration {
        self.times.iter().copied().min().unwrap_or_default()
    }

    fn max(&self) -> Duration {
        self.times.iter().copied().max().unwrap_or_default()
    }

    /// Crossings per request (each kind's requests cross alike).
    fn per_request(&self) -> u64 {
        self.crossings / self.times.len() as u64
    }
}

/// Times `REPEATS` requests of one kind on `read_app`, the `i`th `request(i)`, each answering 200;
/// the crossings are the growth of `crossed()` over them.
async fn measure(
    read_app: &axum::Router,
    name: &'static str,
    crossed: &dyn Fn() -> u64,
    request: impl Fn(usize) -> (Method, String, Option<Value>),
) -> Kind {
    let before = crossed();
    let mut times = Vec::with_capacity(REPEATS);
    for i in 0..REPEATS {
        let (method, path, body) = request(i);
        let started = Instant::now();
        let (status, answer) = call(read_app, method.clone(), &path, body).await;
        times.push(started.elapsed());
        assert_eq!(status, StatusCode::OK, "{name}: {method} {path}: {answer}");
    }
    Kind { name, times, crossings: crossed() - before }
}

/// Every kind, in the order a subject's life takes them: new registrations, re-registrations,
/// (replication, untimed) lookups, config writes, soft deletes.
async fn kinds(read_app: &axum::Router, home: &Site, read: &Site, crossed: &dyn Fn() -> u64) -> Vec<Kind> {
    let subject = |i: usize| format!("write-path-{i}");
    let versions = |i: usize| {
        let body = json!({"schema": schema(&format!("T{i}"))});
        (Method::POST, format!("/subjects/{}/versions", subject(i)), Some(body))
    };
    let new = measure(read_app, "new registration", crossed, versions).await;
    let again = measure(read_app, "re-registration", crossed, versions).await;
    assert!(Replicator::default().replicate(home, read).await > 0);
    let lookup = |i: usize| {
        let body = json!({"schema": schema(&format!("T{i}"))});
        (Method::POST, format!("/subjects/{}", subject(i)), Some(body))
    };
    let lookups = measure(read_app, "lookup (replicated)", crossed, lookup).await;
    let config = |i: usize| (Method::PUT, format!("/config/{}", subject(i)), Some(json!({"compatibility": "NONE"})));
    let configs = measure(read_app, "config write", crossed, config).await;
    let delete = |i: usize| (Method::DELETE, format!("/subjects/{}", subject(i)), None);
    let deletes = measure(read_app, "soft delete", crossed, delete).await;
    vec![new, again, lookups, configs, deletes]
}

fn print(path: &str, crossing: &str, kinds: &[Kind]) {
    eprintln!("{path} (simulated round trip {} ms, {REPEATS} each):", CROSS_REGION_RTT.as_millis());
    for kind in kinds {
        eprintln!(
            "  {:<20} median {:>4} ms (min {:>4}, max {:>4}); {} {crossing} crossing regions per request",
            kind.name,
            kind.median().as_millis(),
            kind.min().as_millis(),
            kind.max().as_millis(),
            kind.per_request(),
        );
    }
}

/// Direct: the read region's registry writes through a home store whose every AWS call waits the
/// round trip; reads through the local replica (falling back to home through the same delay).
async fn direct() -> Option<Vec<Kind>> {
    let mut measured = None;
    let slot = &mut measured;
    support::with_regions("write-direct", HOME, READ, |home, read| async move {
        let (home_store, proxy) = across_regions(&home).await;
        let reads = RegionalStore::new(read.store(), home_store.clone());
        let read_app = registry_http::regional::app(app(Arc::new(reads)), app(Arc::new(home_store)));
        *slot = Some(kinds(&read_app, &home, &read, &|| proxy.requests()).await);
    })
    .await;
    measured
}

/// Forwarding: writes go as HTTP to the home region's application (its store local to it) through
/// a proxy waiting the round trip once per request; reads as in [`direct`].
async fn forwarding() -> Option<Vec<Kind>> {
    let mut measured = None;
    let slot = &mut measured;
    support::with_regions("write-forward", HOME, READ, |home, read| async move {
        let home_url = serve(app(Arc::new(home.store().fenced_by(HOME)))).await;
        let (to_home, forwarded) = Delayed::router(&home_url);
        let (home_reads, fallbacks) = across_regions(&home).await;
        let reads = RegionalStore::new(read.store(), home_reads);
        let read_app = registry_http::regional::app(app(Arc::new(reads)), to_home);
        let crossed = || forwarded.requests() + fallbacks.requests();
        *slot = Some(kinds(&read_app, &home, &read, &crossed).await);
    })
    .await;
    measured
}

#[tokio::test]
async fn writes_from_the_read_region_direct_and_forwarded_under_a_cross_region_round_trip() {
    // One after the other: the emulator serves one request at a time, so the two would slow each other.
    let Some(direct) = direct().await else { return };
    let Some(forwarded) = forwarding().await else { return };
    print("direct (home table and bucket called from the read region)", "AWS calls", &direct);
    print("forwarding (HTTP to the home region's application)", "HTTP requests", &forwarded);

    let rtt = CROSS_REGION_RTT;
    for kind in &direct {
        // Each crossing call waits the round trip, one after another: the floor of the request's time.
        let floor = rtt * kind.per_request() as u32;
        assert!(kind.min() >= floor, "direct {}: {:?} under {:?}", kind.name, kind.min(), floor);
    }
    let [new, again, lookup, config, delete] = &direct[..] else { panic!("five kinds") };
    assert!(new.per_request() > again.per_request(), "a new registration makes more calls than a re-registration");
    assert_eq!(again.per_request(), 1, "a re-registration crosses once");
    assert_eq!(lookup.crossings, 0, "a replicated lookup is local");
    assert!(config.per_request() >= 1 && delete.per_request() >= 1);
    for (kind, direct_kind) in forwarded.iter().zip(&direct) {
        let expected = u64::from(direct_kind.name != "lookup (replicated)");
        assert_eq!(kind.per_request(), expected, "forwarding {}: one HTTP request per write", kind.name);
        if expected == 1 {
            assert!(kind.min() >= rtt, "forwarding {}: {:?} under one round trip", kind.name, kind.min());
        }
    }
}
