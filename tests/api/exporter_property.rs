//! Schema linking as a property on the embedded store: the numbered random workload of
//! [`registry_exporter::testkit::linking`] on a source registry, with exporter passes at random
//! points under faults, then passes without faults until one changes nothing, then the oracle
//! ([`linking::compare`]). The faults: the source killed in the middle of a pass (dropped after a
//! destination call applied), destination calls failing before they apply (a reset connection) or
//! after (the answer lost), the destination down
//! for a while or wiped, the exporter paused in the middle of a pass (then resumed, or reset and
//! resumed), and two source processes passing at once. Every write the destination receives after
//! a pause was acknowledged fails the run.
//!
//! Source and destination are embedded (SQLite) registries called through their routers in
//! process; the passes are those `registry serve`'s runner makes ([`ExporterService::export`],
//! fenced on the exporter's record). `EXPORTER_PROPERTY_WORKLOADS` (default [`DEFAULT_WORKLOADS`]) sets
//! how many numbered workloads run; `EXPORTER_PROPERTY_WORKLOAD` replays one (a failure names its number).

use registry_core::{Registry, RegistrySettings};
use registry_exporter::engine::{Answer, Connect, Method, PassError, RegistryApi};
use registry_exporter::testkit::linking::{self, Rng, Workload};
use registry_exporter::testkit::mid_pass_pause::{MidPassPause, due};
use registry_exporter::{DestinationPolicy, ExporterService, ExporterState, MemoryExporterStore, SecretBox};
use registry_exporter_http::RouterApi;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Workloads `make test` runs (each a few hundred operations and passes in process, a second or two).
const DEFAULT_WORKLOADS: u64 = 24;

/// The exporter's name.
const NAME: &str = "prop";

/// An embedded registry over `dir` and its router (`source`: an exporter's source, which also
/// lists the subjects holding a config).
fn embedded(dir: &std::path::Path, source: bool) -> RouterApi {
    let store = registry_store_local::LocalStore::open(dir).unwrap_or_else(|error| panic!("store: {error}"));
    let registry = Registry::new(Arc::new(store), RegistrySettings::default());
    let app = registry_http::app(registry.clone(), registry_http::AppOptions::default());
    if source { RouterApi::source(app, registry) } else { RouterApi::new(app) }
}

/// The destination: an embedded registry whose calls fail while `down`, or when the fault
/// generator says so, before the call applies or after (its answer lost); and which can pause the
/// exporter from inside a call, counting every write it receives once the pause was acknowledged.
struct Faulty {
    inner: Mutex<RouterApi>,
    /// Out of 1000 calls, how many fail.
    fault_per_mille: AtomicU64,
    down: AtomicBool,
    faults: Mutex<Rng>,
    injected: AtomicU64,
    /// The exporter paused from inside a call.
    pause: MidPassPause,
    /// Calls left until the one after which the pass in flight is killed (0: none).
    kill_in: AtomicU64,
    /// Kill the pass in flight right after it wrote a subject's config.
    kill_after_config: AtomicBool,
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

impl Faulty {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        if self.down.load(Ordering::Relaxed) {
            self.injected.fetch_add(1, Ordering::Relaxed);
            return Err("injected fault: connection refused".to_owned());
        }
        let rate = self.fault_per_mille.load(Ordering::Relaxed);
        let (fault, lost) = {
            let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
            let fault = rate > 0 && faults.below(1000) < rate;
            (fault, fault && faults.below(2) == 0)
        };
        if fault {
            self.injected.fetch_add(1, Ordering::Relaxed);
            if !lost {
                return Err("injected fault: connection reset".to_owned());
            }
        }
        self.pause.before_call(method != Method::Get);
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let answer = inner.call(method, path, body).await;
        self.pause.after_call().await;
        let config_written = method == Method::Put && path.starts_with("/config/");
        let killing = due(&self.kill_in) || (config_written && self.kill_after_config.load(Ordering::Relaxed));
        let kill = if killing { self.kill.lock().unwrap_or_else(|e| e.into_inner()).take() } else { None };
        if let Some(kill) = kill {
            // The process is gone: this call never answers, and the pass goes no further.
            let _ = kill.send(());
            std::future::pending::<()>().await;
        }
        if lost { Err("injected fault: the answer was lost".to_owned()) } else { answer }
    }
}

/// The destination, shared by the passes and the oracle.
#[derive(Clone)]
struct Shared(Arc<Faulty>);

impl RegistryApi for Shared {
    fn call<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        method: Method,
        path: &'life1 str,
        body: Option<&'life2 Value>,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, String>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(self.0.call(method, path, body))
    }

    fn describe(&self) -> String {
        "the faulty destination".to_owned()
    }
}

impl Connect for Shared {
    fn connect(
        &self,
        _exporter: &str,
        _config: &BTreeMap<String, String>,
        _policy: &Arc<DestinationPolicy>,
    ) -> Result<Box<dyn RegistryApi>, String> {
        Ok(Box::new(self.clone()))
    }
}

/// One pass as the runner makes it: none while the exporter is paused.
async fn pass(service: &ExporterService, source: &RouterApi, destination: &Shared) -> Result<u64, PassError> {
    let stored = service.store().exporter(NAME).await.map_err(|error| PassError::new(error.to_string()))?;
    let stored = stored.ok_or_else(|| PassError::new("the exporter is gone"))?;
    if stored.value.status.state == ExporterState::Paused {
        return Ok(0);
    }
    let (outcome, recorded) = service.pass(&stored, source, destination).await;
    recorded.map_err(|error| PassError::new(format!("status not recorded: {error}")))?;
    outcome
}

/// A pass killed when the destination says so (the source process killed -9 after a call
/// applied: the pass goes no further, nothing after it runs): `None` when it was.
async fn pass_or_killed(
    service: &ExporterService,
    source: &RouterApi,
    destination: &Shared,
) -> Option<Result<u64, PassError>> {
    let (kill, killed) = oneshot::channel();
    *destination.0.kill.lock().unwrap_or_else(|e| e.into_inner()) = Some(kill);
    let outcome = tokio::select! {
        outcome = pass(service, source, destination) => Some(outcome),
        _ = killed => None,
    };
    destination.0.kill_in.store(0, Ordering::Relaxed);
    outcome
}

/// The exporters' service: records in memory, any loopback destination allowed.
fn service() -> Result<ExporterService, String> {
    let secrets = SecretBox::ephemeral().map_err(|e| e.to_string())?;
    let loopback = DestinationPolicy::parse("127.0.0.1").map_err(|e| e.to_string())?;
    Ok(ExporterService::new(Arc::new(MemoryExporterStore::new()), Arc::new(secrets)).with_destinations(loopback))
}

/// The destination over `dir`, no fault planned (`number`: its fault generator's start).
fn faulty_destination(dir: &std::path::Path, service: &ExporterService, number: u64) -> Shared {
    Shared(Arc::new(Faulty {
        inner: Mutex::new(embedded(dir, false)),
        fault_per_mille: AtomicU64::new(0),
        down: AtomicBool::new(false),
        faults: Mutex::new(Rng(number ^ 0xFA17)),
        injected: AtomicU64::new(0),
        pause: MidPassPause::new(service.clone(), NAME),
        kill_in: AtomicU64::new(0),
        kill_after_config: AtomicBool::new(false),
        kill: Mutex::new(None),
    }))
}

/// One numbered workload: with passes under faults, quiescence, the oracle. `Err` describes the
/// divergence or the wedged pass.
async fn run_workload(number: u64) -> Result<String, String> {
    let mut workload = Workload::new(number);
    let (source_dir, destination_dir) =
        (tempfile::tempdir().map_err(|e| e.to_string())?, tempfile::tempdir().map_err(|e| e.to_string())?);
    let source = embedded(source_dir.path(), true);
    let service = service()?;
    let exporter = linking::random_exporter(&mut workload.rng, NAME);
    service
        .create(linking::definition(&exporter, "http://127.0.0.1:9", BTreeMap::new()))
        .await
        .map_err(|error| format!("create: {error}"))?;
    let destination = faulty_destination(destination_dir.path(), &service, number);
    let faulty = &destination.0;
    let mut wiped_dirs = Vec::new();
    linking::call(&source, Method::Put, "/config", Some(json!({ "compatibility": "NONE" }))).await;
    let operations = 60 + workload.rng.below(91);
    let mut faults: Vec<&str> = Vec::new();
    for _ in 0..operations {
        workload.step(&source).await;
        let paused = faulty.pause.is_paused();
        match workload.rng.below(100) {
            0..=11 => {
                let rate = if workload.rng.below(3) == 0 { 150 } else { 0 };
                faulty.fault_per_mille.store(rate, Ordering::Relaxed);
                let kill = if workload.rng.below(4) == 0 { 1 + workload.rng.below(8) } else { 0 };
                faulty.kill_in.store(kill, Ordering::Relaxed);
                if pass_or_killed(&service, &source, &destination).await.is_none() {
                    faults.push("source killed mid-pass");
                }
            }
            12..=13 => {
                // Two source processes pass at once.
                let _ = tokio::join!(pass(&service, &source, &destination), pass(&service, &source, &destination));
                faults.push("two passes at once");
            }
            14..=15 => {
                let down = !faulty.down.load(Ordering::Relaxed);
                faulty.down.store(down, Ordering::Relaxed);
                faults.push(if down { "destination down" } else { "destination back" });
            }
            16 if workload.rng.below(4) == 0 => {
                // The destination loses its data: a fresh registry at the same place.
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                *faulty.inner.lock().unwrap_or_else(|e| e.into_inner()) = embedded(dir.path(), false);
                wiped_dirs.push(dir);
                faults.push("destination wiped");
            }
            17..=19 if !paused => {
                // Paused from inside the pass's nth call (if it makes that many).
                let calls = 1 + workload.rng.below(6);
                let _ = faulty.pause.during(calls, pass(&service, &source, &destination), &mut faults).await;
            }
            20..=22 if paused => faulty.pause.resume(workload.rng.below(2) == 0, &mut faults).await?,
            _ => {}
        }
    }
    faulty.pause.finish().await?;
    faulty.down.store(false, Ordering::Relaxed);
    faulty.fault_per_mille.store(0, Ordering::Relaxed);
    let mut last = Err("no pass".to_owned());
    for _ in 0..8 {
        last = pass(&service, &source, &destination).await.map_err(|error| error.0);
        if last == Ok(0) {
            break;
        }
    }
    if last != Ok(0) {
        let dangling = linking::dangling_references(&source).await;
        return Err(format!(
            "the exporter does not settle: the last pass gave {last:?}; dangling at the source: {dangling:?}"
        ));
    }
    let exporter = service.get(NAME).await.map_err(|error| error.to_string())?;
    let compared = linking::compare(&exporter, &source, &destination).await?;
    drop(wiped_dirs);
    Ok(format!(
        "{operations} operations, {compared} IDs, {} injected call faults, {faults:?}",
        faulty.injected.load(Ordering::Relaxed),
    ))
}

/// A source and a destination (no fault planned), and an AUTO exporter of every subject.
struct Pair {
    source: RouterApi,
    service: ExporterService,
    destination: Shared,
    /// Their directories, removed when the pair is dropped.
    dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl Pair {
    async fn start() -> Pair {
        let (source_dir, destination_dir) = (tempfile::tempdir(), tempfile::tempdir());
        let (Ok(source_dir), Ok(destination_dir)) = (source_dir, destination_dir) else { panic!("tempdir") };
        let source = embedded(source_dir.path(), true);
        let service = service().unwrap_or_else(|error| panic!("{error}"));
        let exporter = registry_exporter::Exporter {
            name: NAME.to_owned(),
            context_type: registry_exporter::ContextType::Auto,
            context: None,
            subjects: vec!["*".to_owned()],
            subject_rename_format: "${subject}".to_owned(),
            config: BTreeMap::new(),
        };
        let definition = linking::definition(&exporter, "http://127.0.0.1:9", BTreeMap::new());
        service.create(definition).await.unwrap_or_else(|error| panic!("create: {error}"));
        let destination = faulty_destination(destination_dir.path(), &service, 1);
        Pair { source, service, destination, dirs: (source_dir, destination_dir) }
    }
}

/// A pass killed right after it copied the config of a subject without versions leaves the
/// subject remembered: once the source removes that config, the next pass removes it at the
/// destination too, though no listing of the source shows the subject any more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_copied_by_a_killed_pass_is_removed_once_the_source_removes_it() {
    let Pair { source, service, destination, dirs: _dirs } = Pair::start().await;
    let planned = json!({ "compatibility": "FORWARD" });
    assert_eq!(linking::call(&source, Method::Put, "/config/planned", Some(planned)).await.status, 200);

    destination.0.kill_after_config.store(true, Ordering::Relaxed);
    assert!(pass_or_killed(&service, &source, &destination).await.is_none(), "the pass was killed");
    destination.0.kill_after_config.store(false, Ordering::Relaxed);
    let copied = linking::call(&destination, Method::Get, &format!("/config/:.{NAME}:planned"), None).await;
    assert_eq!(copied.body["compatibilityLevel"], "FORWARD", "the killed pass copied the config: {copied:?}");

    assert_eq!(linking::call(&source, Method::Delete, "/config/planned", None).await.status, 200);
    let passed = pass(&service, &source, &destination).await;
    assert!(passed.is_ok(), "{passed:?}");
    let left = linking::call(&destination, Method::Get, &format!("/config/:.{NAME}:planned"), None).await;
    assert_eq!(left.status, 404, "the removed config is removed at the destination: {left:?}");
    let record = service.store().exporter(NAME).await.ok().flatten().map(|stored| stored.value.configured);
    assert_eq!(record, Some(Default::default()), "forgotten once a pass found no config");
}

/// The source hard-deletes a referrer and what it references, then reuses both version numbers
/// with new IDs, the new referrer referencing the new version: at the destination the old
/// referrer still references the old version, so the old version's replacement must wait for the
/// old referrer's, not the other way round (registration order alone wedged every pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_reused_by_a_referrer_and_its_reference_are_replaced_referrer_first() {
    let Pair { source, service, destination, dirs: _dirs } = Pair::start().await;
    let record = |name: &str| json!({ "type": "record", "name": name, "namespace": "p", "fields": [] }).to_string();
    let referrer = |name: &str, referenced: &str| {
        json!({
            "schema": json!({ "type": "record", "name": name, "namespace": "p",
                "fields": [{ "name": "r", "type": format!("p.{referenced}") }] }).to_string(),
            "references": [{ "name": format!("p.{referenced}"), "subject": "c", "version": 1 }],
        })
    };
    let register = |subject: &'static str, body: Value| {
        let source = &source;
        async move {
            let answer =
                linking::call(source, Method::Post, &format!("/subjects/{subject}/versions"), Some(body)).await;
            assert_eq!(answer.status, 200, "{subject}: {answer:?}");
        }
    };
    linking::call(&source, Method::Put, "/config", Some(json!({ "compatibility": "NONE" }))).await;
    register("c", json!({ "schema": record("Old") })).await;
    register("d", referrer("OldReferrer", "Old")).await;
    assert_eq!(pass(&service, &source, &destination).await.map(|writes| writes > 0), Ok(true));

    for path in ["/subjects/d/versions/1", "/subjects/d/versions/1?permanent=true"]
        .into_iter()
        .chain(["/subjects/c/versions/1", "/subjects/c/versions/1?permanent=true"])
    {
        assert_eq!(linking::call(&source, Method::Delete, path, None).await.status, 200, "{path}");
    }
    register("c", json!({ "schema": record("New") })).await;
    register("d", referrer("NewReferrer", "New")).await;

    let mut last = Err(PassError::new("no pass"));
    for _ in 0..3 {
        last = pass(&service, &source, &destination).await;
        if last == Ok(0) {
            break;
        }
    }
    assert_eq!(last, Ok(0), "the passes settle");
    let exporter = service.get(NAME).await.unwrap_or_else(|error| panic!("{error}"));
    let compared = linking::compare(&exporter, &source, &destination).await;
    assert!(compared.is_ok(), "{compared:?}");
}

/// `make test` runs the default workloads; more with `EXPORTER_PROPERTY_WORKLOADS=200 cargo nextest run -p
/// api-tests -E 'test(/exporter_property/)'`, one replayed with `EXPORTER_PROPERTY_WORKLOAD=N`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_workloads_with_faults_converge_on_embedded() {
    let numbers =
        linking::workload_numbers("EXPORTER_PROPERTY_WORKLOAD", "EXPORTER_PROPERTY_WORKLOADS", DEFAULT_WORKLOADS);
    let mut failures = Vec::new();
    for number in &numbers {
        match run_workload(*number).await {
            Ok(summary) => eprintln!("workload {number}: converged ({summary})"),
            Err(divergence) => {
                eprintln!("workload {number}: FAILED: {divergence}");
                failures.push(format!("workload {number} (replay: EXPORTER_PROPERTY_WORKLOAD={number}): {divergence}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} workloads failed:\n{}", failures.len(), numbers.len(), failures.join("\n"));
}
