//! The embedded store across restarts: data survives a new server on the same directory, and the
//! real `registry serve` binary's ready time with 0 and 100,000 subjects (printed, not asserted).

use api_tests::client::enc;
use api_tests::schemas::{distinct, user_v1, user_v2_with_default};
use api_tests::{Backend, Harness};
use registry_core::{
    CompatibilityLevel, Fingerprint, RegistrySettings, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow,
};
use registry_store_local::LocalStore;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|error| panic!("tempdir: {error}"))
}

/// An embedded-store backend in a fresh directory (kept while the returned guard lives).
fn local_backend() -> (tempfile::TempDir, Backend) {
    let dir = tempdir();
    let backend = Backend::Local(dir.path().to_path_buf());
    (dir, backend)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_survives_restart() {
    let (_dir, backend) = local_backend();
    let first = Harness::start(backend.clone()).await;
    let id = first.register("orders-value", &user_v1()).await;
    first.register("orders-value", &user_v2_with_default()).await;
    first.register("gone", &distinct(1)).await;
    first.delete_subject("gone", false).await.ok_json(200);
    first.set_config(Some("orders-value"), "FULL").await.ok_json(200);
    first.set_mode(Some("gone"), "READONLY", "").await.ok_json(200);
    first.stop().await;

    let second = Harness::start(backend).await;
    assert_eq!(second.subjects("").await, ["orders-value"]);
    assert_eq!(second.subjects("?deleted=true").await, ["gone", "orders-value"]);
    assert_eq!(second.versions("orders-value", "").await, [1, 2]);
    assert_eq!(second.lookup("orders-value", &user_v1()).await.ok_json(200)["id"], id);
    assert_eq!(second.get(&format!("/schemas/ids/{id}")).await.ok_json(200)["schema"], user_v1());
    assert_eq!(second.get("/config/orders-value").await.ok_json(200)["compatibilityLevel"], "FULL");
    assert_eq!(second.get("/mode/gone").await.ok_json(200)["mode"], "READONLY");
    let next = second.register("new", &distinct(2)).await;
    let max = second.get(&format!("/schemas/ids/{next}?fetchMaxId=true")).await.ok_json(200)["maxId"].clone();
    assert_eq!(max, json!(next));
    assert!(next > id, "ids keep growing across restarts");
    second.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_delete_survives_restart_and_id_not_reused() {
    let (_dir, backend) = local_backend();
    let first = Harness::start(backend.clone()).await;
    let id = first.register("s", &user_v1()).await;
    first.delete_subject("s", false).await.ok_json(200);
    first.delete_subject("s", true).await.ok_json(200);
    first.stop().await;

    let second = Harness::start(backend).await;
    second.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
    assert!(second.register("t", &distinct(2)).await > id, "hard-deleted id reissued to other content");
    second.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_default_compatibility_applies() {
    let settings = RegistrySettings { default_compatibility: CompatibilityLevel::None, ..RegistrySettings::default() };
    let h = Harness::start_with(Backend::Memory, settings).await;
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "NONE");
    h.register("s", &user_v1()).await;
    h.register("s", r#""int""#).await;
    h.stop().await;
}

/// The `registry` binary next to this test executable (`target/<profile>/registry`).
fn registry_binary() -> PathBuf {
    // Built beside this test executable by `cargo test --workspace` and `make test` (a `cargo build
    // -p registry` from here would build the dependencies again with that package's features alone).
    let exe = std::env::current_exe().unwrap_or_else(|error| panic!("current_exe: {error}"));
    let profile_dir = exe.parent().and_then(Path::parent).unwrap_or_else(|| panic!("no profile dir for {exe:?}"));
    let binary = profile_dir.join(format!("registry{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.exists(), "{binary:?} missing: run `cargo build -p registry`");
    binary
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|error| panic!("bind: {error}"));
    listener.local_addr().unwrap_or_else(|error| panic!("local_addr: {error}")).port()
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn spawn(binary: &Path, dir: &Path) -> Server {
        let port = free_port();
        let child = Command::new(binary)
            .arg("serve")
            .env("PORT", port.to_string())
            .env("REGISTRY_BIND", "127.0.0.1")
            .env("REGISTRY_BACKEND", "embedded")
            .env("REGISTRY_DATA_DIR", dir)
            .env("RUST_LOG", "info")
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|error| panic!("spawning {binary:?}: {error}"));
        Server { child, base: format!("http://127.0.0.1:{port}") }
    }

    /// Polls `GET /subjects?limit=1` until it answers 200; returns the answer.
    async fn first_subjects_page(&mut self, http: &reqwest::Client) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(response) = http.get(format!("{}/subjects?limit=1", self.base)).send().await
                && response.status().as_u16() == 200
            {
                return response.json().await.unwrap_or_else(|error| panic!("GET /subjects body: {error}"));
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("registry exited before answering: {status}");
            }
            assert!(Instant::now() < deadline, "registry not ready after 120 s");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// SIGTERM, then waits: graceful shutdown must exit with success.
    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let exit = self.child.wait().unwrap_or_else(|error| panic!("wait: {error}"));
        assert!(exit.success(), "registry did not shut down cleanly: {exit}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn subject_name(n: usize) -> String {
    format!("subject-{n:06}")
}

async fn seed(dir: &Path, subjects: usize) {
    let store = LocalStore::open(dir).unwrap_or_else(|error| panic!("open {dir:?}: {error}"));
    let mut bodies = Vec::with_capacity(subjects);
    let mut rows = Vec::with_capacity(subjects);
    for n in 0..subjects {
        let body = SchemaBody {
            schema_type: SchemaType::Avro,
            schema: distinct(n),
            references: Vec::new(),
            metadata: None,
            rule_set: None,
        };
        let fingerprint: Fingerprint = body.fingerprint();
        let subject = Subject::new(subject_name(n)).unwrap_or_else(|error| panic!("{error}"));
        let id = SchemaId(i32::try_from(n + 1).unwrap_or(i32::MAX));
        rows.push(VersionRow {
            subject,
            version: Version(1),
            id,
            fingerprint,
            deleted: false,
            references: Vec::new(),
            registered_at_ms: 0,
        });
        bodies.push((fingerprint, body));
    }
    store.insert_unchecked(&bodies, &rows).await.unwrap_or_else(|error| panic!("seeding: {error}"));
}

/// Spawns the binary on `dir`, returns the time from spawn to the first 200 and that answer.
async fn time_to_ready(binary: &Path, dir: &Path, http: &reqwest::Client) -> (Duration, serde_json::Value) {
    let spawned = Instant::now();
    let mut server = Server::spawn(binary, dir);
    let first = server.first_subjects_page(http).await;
    let elapsed = spawned.elapsed();
    if let Some(last) = first.as_array().and_then(|page| page.first()).and_then(|s| s.as_str()) {
        let got = http.get(format!("{}/subjects/{}/versions/1", server.base, enc(last))).send().await;
        let body: serde_json::Value = match got {
            Ok(response) => response.json().await.unwrap_or_else(|error| panic!("{error}")),
            Err(error) => panic!("{error}"),
        };
        assert_eq!(body["schema"], distinct(0), "seeded subject answers its schema");
    }
    server.terminate();
    (elapsed, first)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_time_does_not_depend_on_subject_count() {
    const SEEDED: usize = 100_000;
    let binary = registry_binary();
    let http = reqwest::Client::builder().no_proxy().build().unwrap_or_else(|error| panic!("{error}"));
    let empty = tempdir();
    let full = tempdir();
    let seeding = Instant::now();
    seed(full.path(), SEEDED).await;
    let seeded_in = seeding.elapsed();

    let warm_up = tempdir();
    time_to_ready(&binary, warm_up.path(), &http).await;
    let (empty_ready, empty_page) = time_to_ready(&binary, empty.path(), &http).await;
    assert_eq!(empty_page, json!([]));
    let (full_ready, full_page) = time_to_ready(&binary, full.path(), &http).await;
    assert_eq!(full_page, json!([subject_name(0)]));

    println!(
        "ready time (spawn → first 200 on GET /subjects?limit=1): 0 subjects {} ms; {SEEDED} subjects {} ms \
         (seeded in {} ms)",
        empty_ready.as_millis(),
        full_ready.as_millis(),
        seeded_in.as_millis()
    );
}
