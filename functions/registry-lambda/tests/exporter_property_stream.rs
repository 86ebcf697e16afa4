//! Schema linking as a property on DynamoDB + S3 through the exporter function: the numbered random
//! workload of [`registry_exporter::testkit::linking`] on a registry over the emulator's table and
//! bucket, its table's stream read as Lambda's event source mapping reads it and handed, batch by
//! batch from the last acknowledged record, to the exporter function's handler
//! ([`exporter::handle`], the exporters' records in the same table), under faults, then the
//! catch-up run until every exporter is level, then the oracle ([`linking::compare`]).
//!
//! The faults: the function killed in the middle of an invocation (dropped after a destination
//! call applied: no status written, no batch answer, so the same records come again), destination
//! calls failing before they apply or after (the answer lost), the destination down for a while
//! or wiped, the exporter paused from inside a pass (then resumed, or reset and resumed), and two
//! instances of the function handling the same batch at once. Every write the destination
//! receives after a pause was acknowledged fails the run.
//!
//! `EXPORTER_STREAM_PROPERTY_WORKLOADS` (default [`DEFAULT_WORKLOADS`]) sets how many numbered workloads run,
//! `EXPORTER_STREAM_PROPERTY_WORKLOAD` replays one. Skips without `AWS_ENDPOINT_URL` (fails with `CI`
//! set), as the store's emulator tests do.

mod stream;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use registry_core::{Registry, RegistrySettings};
use registry_exporter::engine::Method;
use registry_exporter::testkit::linking::{self, Rng, Workload};
use registry_exporter::testkit::mid_pass_pause::{MidPassPause, due};
use registry_exporter::{DestinationPolicy, ExporterService, SecretBox};
use registry_exporter_http::{HttpApi, RouterApi};
use registry_lambda::exporter::{self, CATCH_UP_EVENT};
use registry_lambda::exporter_engine::ServiceEngine;
use registry_lambda::exporter_store::DynamoExporterStore;
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::testing::{emulator_sdk, unique_names};
use registry_store_aws::{AwsStore, AwsStoreConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use stream::{StreamReader, failures};
use tokio::sync::oneshot;

/// Workloads `make test` runs (each some 30-80 operations against the emulator).
const DEFAULT_WORKLOADS: u64 = 3;

/// The exporter's name.
const NAME: &str = "prop";

/// Most records one batch holds (the event source mapping's batch size is drawn up to it).
const MAX_BATCH: u64 = 40;

/// The destination's faults, applied by a middleware in front of its router.
struct Faults {
    rng: Mutex<Rng>,
    /// Out of 1000 calls, how many fail (half before they apply, half after: the answer lost).
    per_mille: AtomicU64,
    injected: AtomicU64,
    /// Calls left until the one after which the invocation in flight is killed (0: none).
    kill_in: AtomicU64,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    /// The exporter paused from inside a call.
    pause: MidPassPause,
}

async fn faulty(State(faults): State<Arc<Faults>>, request: Request, next: Next) -> Response {
    let rate = faults.per_mille.load(Ordering::Relaxed);
    let (fault, lost) = {
        let mut rng = faults.rng.lock().unwrap_or_else(|e| e.into_inner());
        let fault = rate > 0 && rng.below(1000) < rate;
        (fault, fault && rng.below(2) == 0)
    };
    let refused = || (axum::http::StatusCode::BAD_GATEWAY, "injected fault").into_response();
    if fault {
        faults.injected.fetch_add(1, Ordering::Relaxed);
        if !lost {
            return refused();
        }
    }
    faults.pause.before_call(request.method() != axum::http::Method::GET);
    let response = next.run(request).await;
    faults.pause.after_call().await;
    let kill = if due(&faults.kill_in) { faults.kill.lock().unwrap_or_else(|e| e.into_inner()).take() } else { None };
    if let Some(kill) = kill {
        // The function is gone: this call's answer never reaches it, and the pass goes no further.
        let _ = kill.send(());
        std::future::pending::<()>().await;
    }
    if lost { refused() } else { response }
}

/// The destination: an embedded registry in a directory of its own, served on one port that
/// stays its address when it is stopped, restarted or wiped.
struct Destination {
    port: u16,
    faults: Arc<Faults>,
    dirs: Vec<tempfile::TempDir>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Destination {
    /// Serves the newest directory (a fresh one when `wiped`).
    async fn start(&mut self, wiped: bool) {
        if wiped || self.dirs.is_empty() {
            self.dirs.push(tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")));
        }
        let dir = self.dirs.last().map(|dir| dir.path().to_owned()).unwrap_or_default();
        let store = registry_store_local::LocalStore::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let app = registry_http::app(Registry::new(Arc::new(store), RegistrySettings::default()), Default::default())
            .layer(axum::middleware::from_fn_with_state(self.faults.clone(), faulty));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port)).await.unwrap_or_else(|e| panic!("{e}"));
        self.port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
        self.server = Some(tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        }));
    }

    async fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
            let _ = server.await;
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// The stream as Lambda feeds it: batches from the last acknowledged record.
struct Feed {
    reader: StreamReader,
    acknowledged: usize,
}

impl Feed {
    /// The next batch of at most `size` records (empty: the stream is drained).
    async fn next(&self, size: usize) -> Vec<Value> {
        let records = self.reader.records().await;
        records.into_iter().skip(self.acknowledged).take(size).collect()
    }

    /// Moves past what the answer to `batch` acknowledged: all of it, or up to its first failure.
    fn answered(&mut self, batch: &[Value], answer: &Value) {
        let failed = failures(answer);
        let through = match failed.first() {
            None => batch.len(),
            Some(first) => batch.iter().position(|r| r["dynamodb"]["SequenceNumber"] == first.as_str()).unwrap_or(0),
        };
        self.acknowledged += through;
    }
}

/// One invocation of `engine` with `event`, killed when the destination's faults say so: `None`
/// when it was.
async fn invoke(engine: &ServiceEngine, event: &Value, faults: &Faults) -> Option<Result<Value, String>> {
    let (kill, killed) = oneshot::channel();
    *faults.kill.lock().unwrap_or_else(|e| e.into_inner()) = Some(kill);
    let outcome = tokio::select! {
        answer = exporter::handle(engine, event) => Some(answer),
        _ = killed => None,
    };
    faults.kill_in.store(0, Ordering::Relaxed);
    outcome
}

/// An engine as one instance of the exporter function builds it: its own registry over the table
/// and bucket, the exporters' records in the same table.
fn engine(sdk: &aws_config::SdkConfig, names: &AwsStoreConfig, service: &ExporterService) -> ServiceEngine {
    let store = AwsStore::with_path_style(sdk, names.clone(), true);
    let registry = Registry::new(Arc::new(store), RegistrySettings::default());
    let source = RouterApi::source(registry_http::app(registry.clone(), Default::default()), registry);
    ServiceEngine::new(service.clone(), Arc::new(source))
}

async fn run_workload(number: u64, sdk: &aws_config::SdkConfig, names: &AwsStoreConfig) -> Result<String, String> {
    let mut workload = Workload::new(number);
    let mut feed = Feed { reader: stream::enable(sdk, names).await, acknowledged: 0 };
    let store = AwsStore::with_path_style(sdk, names.clone(), true);
    let registry = Registry::new(Arc::new(store), RegistrySettings::default());
    let source = RouterApi::source(registry_http::app(registry.clone(), Default::default()), registry);
    let loopback = DestinationPolicy::parse("127.0.0.1").map_err(|e| e.to_string())?;
    let records = Arc::new(DynamoExporterStore::new(aws_sdk_dynamodb::Client::new(sdk), &names.table));
    let service = ExporterService::new(records, Arc::new(SecretBox::ephemeral().map_err(|e| e.to_string())?))
        .with_destinations(loopback.clone());
    let faults = Arc::new(Faults {
        rng: Mutex::new(Rng(number ^ 0xFA17)),
        per_mille: AtomicU64::new(0),
        injected: AtomicU64::new(0),
        kill_in: AtomicU64::new(0),
        kill: Mutex::new(None),
        pause: MidPassPause::new(service.clone(), NAME),
    });
    let mut destination = Destination { port: 0, faults: faults.clone(), dirs: Vec::new(), server: None };
    destination.start(false).await;
    let exporter = linking::random_exporter(&mut workload.rng, NAME);
    service
        .create(linking::definition(&exporter, &destination.url(), BTreeMap::new()))
        .await
        .map_err(|error| format!("create: {error}"))?;
    let (first, second) = (engine(sdk, names, &service), engine(sdk, names, &service));
    linking::call(&source, Method::Put, "/config", Some(json!({ "compatibility": "NONE" }))).await;
    let operations = 30 + workload.rng.below(51);
    let mut happened: Vec<&str> = Vec::new();
    let mut down = false;
    for _ in 0..operations {
        workload.step(&source).await;
        let paused = faults.pause.is_paused();
        let size = 1 + workload.rng.below(MAX_BATCH) as usize;
        match workload.rng.below(100) {
            0..=19 => {
                let rate = if workload.rng.below(3) == 0 { 150 } else { 0 };
                faults.per_mille.store(rate, Ordering::Relaxed);
                let kill = workload.rng.below(4) == 0;
                faults.kill_in.store(if kill { 1 + workload.rng.below(8) } else { 0 }, Ordering::Relaxed);
                let batch = feed.next(size).await;
                if !batch.is_empty() {
                    match invoke(&first, &json!({ "Records": batch }), &faults).await {
                        Some(answer) => feed.answered(&batch, &answer?),
                        None => happened.push("killed mid-invocation"),
                    }
                }
            }
            20..=23 => {
                // Two instances handle the same batch at once.
                let batch = feed.next(size).await;
                let event = json!({ "Records": batch });
                let (one, other) = tokio::join!(exporter::handle(&first, &event), exporter::handle(&second, &event));
                let (one, other) = (one?, other?);
                // Lambda takes one answer; the other instance's is a retry's.
                feed.answered(&batch, if failures(&one).is_empty() { &other } else { &one });
                happened.push("two instances at once");
            }
            24..=26 => {
                if down {
                    destination.start(false).await;
                } else {
                    destination.stop().await;
                }
                down = !down;
                happened.push(if down { "destination down" } else { "destination back" });
            }
            27 if workload.rng.below(3) == 0 => {
                destination.stop().await;
                destination.start(true).await;
                down = false;
                happened.push("destination wiped");
            }
            28..=31 if !paused => {
                let calls = 1 + workload.rng.below(6);
                let batch = feed.next(size).await;
                let event = json!({ "Records": batch });
                let invoked = faults.pause.during(calls, invoke(&first, &event, &faults), &mut happened).await;
                if let Some(answer) = invoked {
                    feed.answered(&batch, &answer?);
                }
            }
            32..=35 if paused => faults.pause.resume(workload.rng.below(2) == 0, &mut happened).await?,
            _ => {}
        }
    }
    // Quiescence: the exporter running, no faults, the destination up; the stream drained, then
    // the catch-up run until every exporter is level.
    faults.pause.finish().await?;
    faults.per_mille.store(0, Ordering::Relaxed);
    if down {
        destination.start(false).await;
    }
    for _ in 0..50 {
        let batch = feed.next(MAX_BATCH as usize).await;
        if batch.is_empty() {
            break;
        }
        let answer = exporter::handle(&first, &json!({ "Records": batch })).await?;
        feed.answered(&batch, &answer);
    }
    let mut level = Err("no catch-up run".to_owned());
    for _ in 0..8 {
        level = exporter::handle(&first, &json!({ "registry": CATCH_UP_EVENT })).await;
        if level.is_ok() {
            break;
        }
    }
    if let Err(error) = level {
        let dangling = linking::dangling_references(&source).await;
        return Err(format!("the exporter does not settle: {error}; dangling at the source: {dangling:?}"));
    }
    let config = BTreeMap::from([("schema.registry.url".to_owned(), destination.url())]);
    let check = HttpApi::from_config("check", &config, &Arc::new(loopback)).map_err(|e| e.to_string())?;
    let exporter = service.get(NAME).await.map_err(|error| error.to_string())?;
    let compared = linking::compare(&exporter, &source, &check).await?;
    destination.stop().await;
    Ok(format!(
        "{operations} operations, {} records, {compared} IDs, {} injected call faults, {happened:?}",
        feed.acknowledged,
        faults.injected.load(Ordering::Relaxed),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_workloads_with_faults_converge_through_the_stream() {
    let Some(sdk) = emulator_sdk().await else { return };
    let numbers = linking::workload_numbers(
        "EXPORTER_STREAM_PROPERTY_WORKLOAD",
        "EXPORTER_STREAM_PROPERTY_WORKLOADS",
        DEFAULT_WORKLOADS,
    );
    let mut failed = Vec::new();
    for number in &numbers {
        let names = unique_names("exporter-prop");
        create_resources(&sdk, &names, true).await.unwrap_or_else(|e| panic!("{e}"));
        let outcome = tokio::spawn({
            let (number, sdk, names) = (*number, sdk.clone(), names.clone());
            async move { run_workload(number, &sdk, &names).await }
        })
        .await;
        let _ = delete_resources(&sdk, &names, true).await;
        match outcome {
            Ok(Ok(summary)) => eprintln!("workload {number}: converged ({summary})"),
            Ok(Err(divergence)) => {
                eprintln!("workload {number}: FAILED: {divergence}");
                failed.push(format!(
                    "workload {number} (replay: EXPORTER_STREAM_PROPERTY_WORKLOAD={number}): {divergence}"
                ));
            }
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    assert!(failed.is_empty(), "{} of {} workloads failed:\n{}", failed.len(), numbers.len(), failed.join("\n"));
}
