//! Schema linking end to end on loopback, embedded store to embedded store: a source registry with
//! its exporter runner (as `registry serve` runs it) copies subjects into a destination registry.
//! After each step the exported subjects answer the same on both (IDs, versions, bodies,
//! references, metadata, deleted flags, config), `ts` aside (the destination's registration time).

use api_tests::client::{enc, numbers, strings};
use api_tests::{EXPORTER_SECRET, Harness, Kind};
use registry_core::{Registry, RegistrySettings};
use registry_exporter::runner::{Pacing, Runner};
use registry_exporter::{DestinationPolicy, ExporterService, SecretBox};
use registry_exporter_http::{HttpConnect, RouterApi};
use registry_http::AppOptions;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, oneshot};

const SECRET: &str = "exporter-password-never-shown";

/// How long a test waits for an exporter to settle or reach a state: a hang guard only (an exporter
/// that has not settled by then never will), never a speed check; a busy machine only waits longer.
const PATIENCE: Duration = Duration::from_secs(600);

/// A source registry on the embedded store with its exporter runner, and its data directory.
struct Source {
    harness: Harness,
    dir: PathBuf,
    runner: tokio::task::JoinHandle<()>,
}

impl Source {
    async fn start() -> Source {
        let harness = Harness::start_kind(Kind::Local).await;
        let dir = match harness.backend() {
            api_tests::Backend::Local(dir) => dir.clone(),
            other => panic!("a local source, not {other:?}"),
        };
        let open = || match registry_store_local::LocalStore::open(&dir) {
            Ok(store) => store,
            Err(error) => panic!("cannot open the source store: {error}"),
        };
        let registry = Registry::new(Arc::new(open()), RegistrySettings::default());
        let source_app = RouterApi::source(registry_http::app(registry.clone(), AppOptions::default()), registry);
        let secrets = match SecretBox::new(EXPORTER_SECRET) {
            Ok(secrets) => secrets,
            Err(error) => panic!("secrets: {error}"),
        };
        // The destination is on loopback, which the default allow-list refuses.
        let loopback = DestinationPolicy::parse("127.0.0.1").unwrap_or_else(|error| panic!("{error}"));
        let service = ExporterService::new(Arc::new(open()), Arc::new(secrets)).with_destinations(loopback);
        let pacing = Pacing {
            interval: Duration::from_millis(100),
            first_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(400),
        };
        let runner =
            Runner::new(service, Arc::new(source_app), Arc::new(HttpConnect), pacing).spawn(Arc::new(Notify::new()));
        Source { harness, dir, runner }
    }

    async fn stop(self) {
        self.runner.abort();
        self.harness.stop().await;
    }
}

/// A destination registry on the embedded store in `dir`, listening on `port` (0: any).
struct Destination {
    base: String,
    shutdown: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<()>,
}

impl Destination {
    async fn start(dir: &std::path::Path, port: u16) -> Destination {
        let store = match registry_store_local::LocalStore::open(dir) {
            Ok(store) => store,
            Err(error) => panic!("cannot open the destination store: {error}"),
        };
        let app =
            registry_http::app(Registry::new(Arc::new(store), RegistrySettings::default()), AppOptions::default());
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => listener,
            Err(error) => panic!("cannot bind 127.0.0.1:{port}: {error}"),
        };
        let address = listener.local_addr().unwrap_or_else(|error| panic!("no address: {error}"));
        let (shutdown, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Destination { base: format!("http://{address}"), shutdown: Some(shutdown), server }
    }

    async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        let _ = (&mut self.server).await;
    }
}

/// A plain client for a registry at `base`.
struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    fn new(base: &str) -> Client {
        let http = reqwest::Client::builder().no_proxy().build().unwrap_or_else(|error| panic!("client: {error}"));
        Client { base: base.to_owned(), http }
    }

    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.header("Content-Type", "application/vnd.schemaregistry.v1+json").body(body.to_string());
        }
        let response = request.send().await.unwrap_or_else(|error| panic!("{path}: {error}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    async fn ok(&self, method: Method, path: &str, body: Option<&Value>) -> Value {
        let (status, value) = self.call(method.clone(), path, body).await;
        assert_eq!(status, 200, "{method} {path}: {value}");
        value
    }

    async fn register(&self, subject: &str, body: Value) -> i64 {
        let path = format!("/subjects/{}/versions", enc(subject));
        let answer = self.ok(Method::POST, &path, Some(&body)).await;
        answer["id"].as_i64().unwrap_or_else(|| panic!("no id: {answer}"))
    }
}

fn record(name: &str, field: &str) -> String {
    json!({ "type": "record", "name": name, "namespace": "shop", "fields": [{ "name": field, "type": "string" }] })
        .to_string()
}

/// `Order` with an optional `note` added: compatible with `record("Order", "id")` either way.
fn order_with_note() -> String {
    json!({
        "type": "record", "name": "Order", "namespace": "shop",
        "fields": [{ "name": "id", "type": "string" }, { "name": "note", "type": ["null", "string"], "default": null }],
    })
    .to_string()
}

fn exporter(name: &str, destination: &str, extra: Value) -> Value {
    let mut body = json!({
        "name": name,
        "subjects": ["orders-*"],
        "config": {
            "schema.registry.url": destination,
            "basic.auth.credentials.source": "USER_INFO",
            "basic.auth.user.info": format!("exporter:{SECRET}"),
        },
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

async fn status(source: &Client, name: &str) -> Value {
    source.ok(Method::GET, &format!("/exporters/{name}/status"), None).await
}

/// Waits until the exporter is RUNNING and a further pass changed nothing (offset and ts stable
/// over three ticks).
async fn settled(source: &Client, name: &str) -> Value {
    let started = Instant::now();
    let mut last = Value::Null;
    loop {
        let now = status(source, name).await;
        if now["state"] == "RUNNING" && now == last {
            return now;
        }
        assert!(started.elapsed() < PATIENCE, "exporter {name} did not settle: {now}");
        last = now;
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
}

/// Waits until the exporter's state is `state`.
async fn reaches(source: &Client, name: &str, state: &str) -> Value {
    let started = Instant::now();
    loop {
        let now = status(source, name).await;
        if now["state"] == state {
            return now;
        }
        assert!(started.elapsed() < PATIENCE, "exporter {name} never reached {state}: {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An answer as compared: a 200's body without the fields that differ by design (`ts`, and
/// `subject`, which names the destination's subject), an error's code (its message names the
/// subject asked for).
fn comparable((status, mut body): (u16, Value)) -> (u16, Value) {
    if status != 200 {
        return (status, body["error_code"].clone());
    }
    if let Some(object) = body.as_object_mut() {
        object.remove("ts");
        object.remove("subject");
    }
    (status, body)
}

/// Waits until `check` passes, then returns; panics with its last complaint once [`PATIENCE`] ran
/// out. The exporter copies on its own schedule, which a loaded machine delays: a check of the
/// destination waits for the copy rather than assuming how soon it lands.
async fn eventually<F, Fut>(check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    loop {
        match check().await {
            Ok(()) => return,
            Err(complaint) if started.elapsed() >= PATIENCE => panic!("{complaint}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// `Err` naming the first difference unless `from` and `to` are equal.
fn same<T: PartialEq + std::fmt::Debug>(from: T, to: T, what: &str) -> Result<(), String> {
    if from == to { Ok(()) } else { Err(format!("{what}: source {from:?}, destination {to:?}")) }
}

/// Every GET of source subject `subject` answers the same as of `target` at the destination,
/// once the exporter has copied it.
async fn assert_same(source: &Client, destination: &Client, subject: &str, target: &str) {
    eventually(|| differences(source, destination, subject, target)).await;
}

async fn differences(source: &Client, destination: &Client, subject: &str, target: &str) -> Result<(), String> {
    let (s, t) = (enc(subject), enc(target));
    for query in ["", "?deleted=true"] {
        let from = source.get(&format!("/subjects/{s}/versions{query}")).await;
        let to = destination.get(&format!("/subjects/{t}/versions{query}")).await;
        same(comparable(from.clone()), comparable(to), &format!("versions{query} of {subject} / {target}"))?;
        let versions: Vec<i64> = if from.0 == 200 { numbers(&from.1) } else { Vec::new() };
        for version in versions {
            let path = |subject: &str| format!("/subjects/{subject}/versions/{version}?deleted=true");
            let from = source.get(&path(&s)).await;
            let to = destination.get(&path(&t)).await;
            same(comparable(from.clone()), comparable(to), &format!("{subject} v{version}"))?;
            let id = from.1["id"].as_i64().ok_or_else(|| format!("no id: {}", from.1))?;
            let by_id = source.get(&format!("/schemas/ids/{id}?deleted=true")).await;
            let target_id = destination.get(&format!("/schemas/ids/{id}?deleted=true&subject={t}")).await;
            same(by_id, target_id, &format!("ID {id} of {subject} / {target}"))?;
        }
    }
    let from = source.get(&format!("/config/{s}")).await;
    let to = destination.get(&format!("/config/{t}")).await;
    same(comparable(from), comparable(to), &format!("config of {subject} / {target}"))
}

/// The source's database files hold no credential in plain text.
fn assert_sealed_at_rest(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())).flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        let found = bytes.windows(SECRET.len()).any(|window| window == SECRET.as_bytes());
        assert!(!found, "{} holds the credential in plain text", entry.path().display());
    }
}

/// A source and a destination started side by side (the destination's store in a directory of
/// the case's), with a client for each.
struct Linked {
    source_registry: Source,
    destination: Destination,
    source: Client,
    target: Client,
}

impl Linked {
    async fn start(destination_dir: &std::path::Path) -> Linked {
        let source_registry = Source::start().await;
        let destination = Destination::start(destination_dir, 0).await;
        let (source, target) = (Client::new(source_registry.harness.base_url()), Client::new(&destination.base));
        Linked { source_registry, destination, source, target }
    }

    async fn stop(self) {
        self.destination.stop().await;
        self.source_registry.stop().await;
    }
}

/// CUSTOM context, a pattern, a referenced subject outside the pattern, subject config (also of a
/// subject without versions, set and removed), new versions, soft and hard deletes of versions and
/// of a whole subject; credentials never shown.
async fn custom_context_follows_every_change(destination_dir: &std::path::Path) {
    let linked = Linked::start(destination_dir).await;
    let (source, target) = (&linked.source, &linked.target);

    source.register("common", json!({ "schema": record("Money", "currency") })).await;
    source.register("orders-value", json!({ "schema": record("Order", "id") })).await;
    let with_reference = json!({
        "type": "record", "name": "Order", "namespace": "shop",
        "fields": [{ "name": "id", "type": "string" }, { "name": "price", "type": ["null", "shop.Money"], "default": null }],
    });
    let referencing = json!({
        "schema": with_reference.to_string(),
        "references": [{ "name": "shop.Money", "subject": "common", "version": 1 }],
        "metadata": { "properties": { "owner": "team-a" } },
    });
    source.register("orders-value", referencing).await;
    source.register("orders-old", json!({ "schema": record("Old", "id") })).await;
    source.register("payments-value", json!({ "schema": record("Payment", "id") })).await;
    source.ok(Method::PUT, "/config/orders-value", Some(&json!({ "compatibility": "FULL" }))).await;
    // A subject with a config and no version yet: no listing shows it, the pattern matches it.
    source.ok(Method::PUT, "/config/orders-planned", Some(&json!({ "compatibility": "FORWARD" }))).await;

    let body = exporter("to-b", &linked.destination.base, json!({ "contextType": "CUSTOM", "context": ".team-a" }));
    source.ok(Method::POST, "/exporters", Some(&body)).await;
    let first = settled(source, "to-b").await;
    assert!(first["offset"].as_i64().is_some_and(|offset| offset > 0), "{first}");

    eventually(|| async {
        let listed = strings(&target.ok(Method::GET, "/subjects?subjectPrefix=:.team-a:", None).await);
        let expected = [":.team-a:common", ":.team-a:orders-old", ":.team-a:orders-value"].map(String::from);
        same(listed, expected.to_vec(), "subjects of .team-a")
    })
    .await;
    assert_eq!(target.get("/subjects/payments-value/versions").await.0, 404, "not exported");
    assert_eq!(target.ok(Method::GET, "/mode/:.team-a:", None).await["mode"], "IMPORT");
    let planned = target.ok(Method::GET, "/config/:.team-a:orders-planned", None).await;
    assert_eq!(planned["compatibilityLevel"], "FORWARD", "the config of a subject without versions");
    for subject in ["common", "orders-value", "orders-old"] {
        assert_same(source, target, subject, &format!(":.team-a:{subject}")).await;
    }

    // New version, soft delete, hard delete of a version, whole subject gone, config removed.
    source.register("orders-value", json!({ "schema": order_with_note() })).await;
    source.ok(Method::DELETE, "/subjects/orders-value/versions/1", None).await;
    source.ok(Method::DELETE, "/subjects/orders-old", None).await;
    settled(source, "to-b").await;
    assert_same(source, target, "orders-value", ":.team-a:orders-value").await;
    assert_same(source, target, "orders-old", ":.team-a:orders-old").await;

    source.ok(Method::DELETE, "/subjects/orders-value/versions/1?permanent=true", None).await;
    source.ok(Method::DELETE, "/subjects/orders-old?permanent=true", None).await;
    source.ok(Method::DELETE, "/config/orders-value", None).await;
    source.ok(Method::DELETE, "/config/orders-planned", None).await;
    settled(source, "to-b").await;
    eventually(|| async {
        let status = target.get("/config/:.team-a:orders-planned").await.0;
        same(status, 404, "the removed config of the subject without versions at the destination")
    })
    .await;
    assert_same(source, target, "orders-value", ":.team-a:orders-value").await;
    eventually(|| async {
        let status = target.get("/subjects/:.team-a:orders-old/versions?deleted=true").await.0;
        same(status, 404, "the hard-deleted subject at the destination")
    })
    .await;
    assert_same(source, target, "common", ":.team-a:common").await;

    let shown = source.ok(Method::GET, "/exporters/to-b", None).await;
    assert_eq!(shown["config"]["basic.auth.user.info"], "[hidden]");
    assert!(!shown.to_string().contains(SECRET));
    assert!(!status(source, "to-b").await.to_string().contains(SECRET));
    assert_sealed_at_rest(&linked.source_registry.dir);

    linked.stop().await;
}

/// AUTO exports into `.<exporter name>`; NONE into the default context, renamed, the subject in
/// IMPORT mode; both from one source into one destination.
async fn auto_and_none_contexts_with_renames(destination_dir: &std::path::Path) {
    let linked = Linked::start(destination_dir).await;
    let (source, target) = (&linked.source, &linked.target);
    source.register("orders-value", json!({ "schema": record("Order", "id") })).await;
    source.register("orders-key", json!({ "schema": "\"string\"" })).await;

    source.ok(Method::POST, "/exporters", Some(&exporter("dr", &linked.destination.base, json!({})))).await;
    let renamed =
        json!({ "contextType": "NONE", "subjects": ["orders-value"], "subjectRenameFormat": "copy-${subject}" });
    source.ok(Method::POST, "/exporters", Some(&exporter("flat", &linked.destination.base, renamed))).await;
    settled(source, "dr").await;
    settled(source, "flat").await;

    assert_same(source, target, "orders-value", ":.dr:orders-value").await;
    assert_same(source, target, "orders-key", ":.dr:orders-key").await;
    assert_same(source, target, "orders-value", "copy-orders-value").await;
    let listed = strings(&target.ok(Method::GET, "/subjects", None).await);
    assert_eq!(listed, [":.dr:orders-key", ":.dr:orders-value", "copy-orders-value"]);
    assert_eq!(target.ok(Method::GET, "/mode/copy-orders-value", None).await["mode"], "IMPORT");

    linked.stop().await;
}

/// A destination that is down puts the exporter in ERROR (reason in trace); when it comes back on
/// the same address the exporter catches up. Pause holds changes back, resume delivers them,
/// reset after the destination lost its data copies everything again.
async fn down_pause_resume_reset(destination_dir: &std::path::Path) {
    let source_registry = Source::start().await;
    let source = Client::new(source_registry.harness.base_url());
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|error| panic!("bind: {error}"));
        probe.local_addr().unwrap_or_else(|error| panic!("address: {error}")).port()
    };
    let base = format!("http://127.0.0.1:{port}");
    source.register("orders-value", json!({ "schema": record("Order", "id") })).await;
    source.ok(Method::POST, "/exporters", Some(&exporter("to-b", &base, json!({ "contextType": "NONE" })))).await;
    let failed = reaches(&source, "to-b", "ERROR").await;
    let trace = failed["trace"].as_str().unwrap_or_default().to_owned();
    assert!(trace.contains("destination") && trace.contains(&base), "{failed}");
    assert!(!trace.contains(SECRET), "{trace}");

    let destination = Destination::start(destination_dir, port).await;
    let target = Client::new(&destination.base);
    let running = settled(&source, "to-b").await;
    assert!(running.get("trace").is_none(), "{running}");
    assert_same(&source, &target, "orders-value", "orders-value").await;

    source.ok(Method::PUT, "/exporters/to-b/pause", None).await;
    source.register("orders-value", json!({ "schema": order_with_note() })).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(status(&source, "to-b").await["state"], "PAUSED");
    assert_eq!(target.ok(Method::GET, "/subjects/orders-value/versions", None).await, json!([1]), "held back");
    source.ok(Method::PUT, "/exporters/to-b/resume", None).await;
    let resumed = settled(&source, "to-b").await;
    assert_same(&source, &target, "orders-value", "orders-value").await;

    // The destination loses the subject; reset and resume copy it again from offset 0.
    source.ok(Method::PUT, "/exporters/to-b/pause", None).await;
    target.ok(Method::DELETE, "/subjects/orders-value", None).await;
    target.ok(Method::DELETE, "/subjects/orders-value?permanent=true", None).await;
    source.ok(Method::PUT, "/exporters/to-b/reset", None).await;
    assert_eq!(status(&source, "to-b").await["offset"], 0);
    source.ok(Method::PUT, "/exporters/to-b/resume", None).await;
    let again = settled(&source, "to-b").await;
    assert!(again["offset"].as_i64() < resumed["offset"].as_i64().map(|offset| offset + 100), "{again}");
    assert!(again["offset"].as_i64().is_some_and(|offset| offset > 0), "{again}");
    assert_same(&source, &target, "orders-value", "orders-value").await;

    destination.stop().await;
    source_registry.stop().await;
}

/// A destination version holding another ID than the source's is an ERROR naming both; once the
/// destination's subject is removed the exporter goes on.
async fn conflicting_id_is_replaced(destination_dir: &std::path::Path) {
    let linked = Linked::start(destination_dir).await;
    let (source, target) = (&linked.source, &linked.target);
    target.register(":.team-a:orders-value", json!({ "schema": record("Theirs", "id") })).await;
    source.register("other", json!({ "schema": record("Other", "id") })).await;
    let id = source.register("orders-value", json!({ "schema": record("Order", "id") })).await;
    assert_eq!(id, 2);

    // The destination's version 1 has ID 1, the source's ID 2: the exporter owns its context, and
    // replaces the version as IMPORT allows (a source that hard-deleted a version and registered
    // another under the same number looks the same).
    let body = exporter("to-b", &linked.destination.base, json!({ "contextType": "CUSTOM", "context": "team-a" }));
    source.ok(Method::POST, "/exporters", Some(&body)).await;
    settled(source, "to-b").await;
    assert_same(source, target, "orders-value", ":.team-a:orders-value").await;

    linked.stop().await;
}

macro_rules! embedded_to_embedded {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("tempdir: {error}"));
                super::$case(dir.path()).await;
            }
        )*
    };
}

mod embedded {
    embedded_to_embedded!(
        custom_context_follows_every_change,
        auto_and_none_contexts_with_renames,
        down_pause_resume_reset,
        conflicting_id_is_replaced,
    );
}
