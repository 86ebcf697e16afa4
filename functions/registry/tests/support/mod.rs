//! Test support: `registry serve` child processes on free ports, the `registry` binary run as a
//! command, a small JSON client, a seeded source registry and a mechanical GET comparison.

#![allow(dead_code)]

pub mod raw_peer;
pub mod wire;

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_registry");

/// A `registry serve` child, killed on drop.
pub struct Server {
    pub url: String,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// The child's process ID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}")).port()
}

/// Starts `registry serve` with `args` (backend flags) and `envs`; waits until it answers.
pub async fn serve(args: &[&str], envs: &[(&str, &str)]) -> Server {
    serve_ready(args, envs, "/subjects").await
}

/// Starts `registry serve` with `args` and `envs`; waits until a GET of `path` succeeds (`/` when
/// authentication is on: it stays open for health checks).
pub async fn serve_ready(args: &[&str], envs: &[(&str, &str)], path: &str) -> Server {
    serve_configured(args, path, |command| {
        command.envs(envs.iter().copied());
    })
    .await
}

/// Starts `registry serve` with `args`, its environment set by `configure` (`RUST_LOG` is `warn`
/// whatever it sets); waits until a GET of `path` succeeds.
pub async fn serve_configured(args: &[&str], path: &str, configure: impl FnOnce(&mut Command)) -> Server {
    let port = free_port();
    let mut command = Command::new(BIN);
    command.args(["serve", "--bind", "127.0.0.1", "--port", &port.to_string()]).args(args);
    configure(&mut command);
    let child = command
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn serve: {e}"));
    let server = Server { url: format!("http://127.0.0.1:{port}"), child };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if reqwest::get(format!("{}{path}", server.url)).await.is_ok_and(|r| r.status().is_success()) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("registry serve {args:?} did not answer within 30 s");
}

/// Runs `registry <args>` with `envs` to completion.
pub fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(args)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("run registry {args:?}: {e}"))
}

/// Runs `registry <args>` and asserts it succeeded; returns its stdout.
pub fn run_ok(args: &[&str], envs: &[(&str, &str)]) -> String {
    let output = run(args, envs);
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "registry {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// One request; returns (status, JSON body or Null).
pub async fn call(method: &str, url: &str, body: Option<Value>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request.header("content-type", "application/vnd.schemaregistry.v1+json").body(body.to_string());
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap_or_default();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// A call that must answer 2xx.
pub async fn ok(method: &str, url: &str, body: Option<Value>) -> Value {
    let (status, answer) = call(method, url, body).await;
    assert!((200..300).contains(&status), "{method} {url}: {status} {answer}");
    answer
}

/// An Avro record schema text.
pub fn record(name: &str, fields: &[&str]) -> String {
    let fields: Vec<String> =
        fields.iter().map(|f| format!(r#"{{"name":"{f}","type":"string","default":""}}"#)).collect();
    format!(r#"{{"type":"record","name":"{name}","namespace":"com.acme","fields":[{}]}}"#, fields.join(","))
}

/// Registers `schema` under `subject` on `base`; returns the id.
pub async fn register(base: &str, subject: &str, schema: Value) -> i64 {
    let answer = ok("POST", &format!("{base}/subjects/{subject}/versions"), Some(schema)).await;
    answer["id"].as_i64().unwrap_or_else(|| panic!("no id in {answer}"))
}

/// A memory-backed registry holding what [`seed`] writes.
pub async fn seeded_server() -> Server {
    let server = serve(&["--backend", "memory"], &[]).await;
    seed(&server.url).await;
    server
}

/// Seeds `base` with what an import must carry: gaps in IDs (a hard-deleted subject and IDs
/// imported far apart), one schema shared by two subjects, a reference, soft-deleted versions,
/// per-subject configs and modes, and a global config.
pub async fn seed(base: &str) {
    ok("PUT", &format!("{base}/config"), Some(json!({"compatibility": "FULL"}))).await;
    let address = record("Address", &["street"]);
    register(base, "address-value", json!({"schema": address})).await;
    let customer = r#"{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home","type":"com.acme.Address"}]}"#;
    let refs = json!([{"name": "com.acme.Address", "subject": "address-value", "version": 1}]);
    register(base, "customer-value", json!({"schema": customer, "references": refs})).await;
    let shared = record("Shared", &["s"]);
    let a = register(base, "a-value", json!({"schema": shared})).await;
    let b = register(base, "b-value", json!({"schema": shared})).await;
    assert_eq!(a, b, "one schema, one id");
    register(base, "gone-value", json!({"schema": record("Gone", &["g"])})).await;
    ok("DELETE", &format!("{base}/subjects/gone-value"), None).await;
    ok("DELETE", &format!("{base}/subjects/gone-value?permanent=true"), None).await;
    ok("PUT", &format!("{base}/config/orders-value"), Some(json!({"compatibility": "NONE"}))).await;
    for fields in [&["a"][..], &["a", "b"], &["a", "b", "c"]] {
        register(base, "orders-value", json!({"schema": record("Order", fields)})).await;
    }
    ok("DELETE", &format!("{base}/subjects/orders-value/versions/1"), None).await;
    register(base, "retired-value", json!({"schema": record("Retired", &["r"])})).await;
    ok("DELETE", &format!("{base}/subjects/retired-value"), None).await;
    ok("PUT", &format!("{base}/mode/imported-value"), Some(json!({"mode": "IMPORT"}))).await;
    let imported = json!({"schema": record("Imported", &["i"]), "id": 1000, "version": 7});
    register(base, "imported-value", imported).await;
    ok("PUT", &format!("{base}/mode/imported-value"), Some(json!({"mode": "READONLY"}))).await;
    ok("PUT", &format!("{base}/config/a-value"), Some(json!({"compatibility": "FORWARD_TRANSITIVE"}))).await;
}

/// The context prefix of a listed subject: `:.ctx:` for `:.ctx:name`, empty in the default context.
pub fn context_prefix(subject: &str) -> &str {
    match subject.strip_prefix(":.").and_then(|rest| rest.find(':')) {
        Some(end) => &subject[..end + 3],
        None => "",
    }
}

/// Every GET a client can make of `base`, as (path, status, body) with `ts` removed: every
/// context's subjects, versions, settings and IDs (each ID looked up in its own context).
pub async fn every_get(base: &str) -> Vec<(String, u16, Value)> {
    let mut paths = vec!["/subjects?deleted=true".to_string(), "/subjects".to_string(), "/config".to_string()];
    paths.push("/mode".to_string());
    paths.push("/contexts".to_string());
    let (_, subjects) = call("GET", &format!("{base}/subjects?deleted=true"), None).await;
    let subjects: Vec<String> = serde_json::from_value(subjects).unwrap_or_default();
    let mut ids = std::collections::BTreeSet::new();
    let contexts: std::collections::BTreeSet<&str> = subjects.iter().map(|s| context_prefix(s)).collect();
    for context in contexts.iter().filter(|c| !c.is_empty()) {
        paths.push(format!("/config/{context}"));
        paths.push(format!("/mode/{context}"));
    }
    for subject in &subjects {
        paths.push(format!("/subjects/{subject}/versions"));
        paths.push(format!("/subjects/{subject}/versions?deleted=true"));
        paths.push(format!("/config/{subject}"));
        paths.push(format!("/mode/{subject}"));
        let (_, versions) = call("GET", &format!("{base}/subjects/{subject}/versions?deleted=true"), None).await;
        for version in serde_json::from_value::<Vec<i64>>(versions).unwrap_or_default() {
            let path = format!("/subjects/{subject}/versions/{version}?deleted=true");
            let (_, answer) = call("GET", &format!("{base}{path}"), None).await;
            ids.insert((context_prefix(subject), answer["id"].as_i64().unwrap_or_default()));
            paths.push(path);
            paths.push(format!("/subjects/{subject}/versions/{version}"));
            paths.push(format!("/subjects/{subject}/versions/{version}/referencedby"));
        }
    }
    for (context, id) in ids {
        let in_context = if context.is_empty() { String::new() } else { format!("subject={context}&") };
        paths.push(format!("/schemas/ids/{id}?{in_context}"));
        paths.push(format!("/schemas/ids/{id}/subjects?{in_context}deleted=true"));
        paths.push(format!("/schemas/ids/{id}/versions?{in_context}deleted=true"));
    }
    let mut answers = Vec::new();
    for path in paths {
        let (status, mut body) = call("GET", &format!("{base}{path}"), None).await;
        if let Some(object) = body.as_object_mut() {
            object.remove("ts");
        }
        answers.push((path, status, body));
    }
    answers
}

/// Asserts `left` and `right` answer every GET identically.
pub async fn assert_same_answers(left: &str, right: &str) {
    let (a, b) = (every_get(left).await, every_get(right).await);
    assert!(a.len() > 40, "the comparison covers the registry filled by seed() ({} GETs)", a.len());
    let paths = |v: &[(String, u16, Value)]| v.iter().map(|(p, _, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&a), paths(&b), "same subjects, versions and ids");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "GET {} differs", x.0);
    }
}

/// Lines of `path`.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect()
}

/// A memory-backed registry holding what [`seed`] writes in the default context and, in the named
/// contexts `.a` and `.b`, different schemas under the same IDs (1 and 2 in each): `.a` has an
/// unqualified reference to its own subject and a mode of its own (READONLY), `.b` a soft-deleted first
/// version and a config of its own (NONE).
pub async fn contexts_server() -> Server {
    let server = seeded_server().await;
    let base = server.url.as_str();
    let address = register(base, ":.a:address-value", json!({"schema": record("Address", &["street", "city"])})).await;
    let customer = r#"{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home","type":"com.acme.Address"}]}"#;
    // Unqualified: the reference names `address-value` of its referrer's context `.a`.
    let refs = json!([{"name": "com.acme.Address", "subject": "address-value", "version": 1}]);
    let orders = register(base, ":.a:orders-value", json!({"schema": customer, "references": refs})).await;
    ok("PUT", &format!("{base}/config/:.b:"), Some(json!({"compatibility": "NONE"}))).await;
    let first = register(base, ":.b:orders-value", json!({"schema": record("Payment", &["amount"])})).await;
    let second = register(base, ":.b:orders-value", json!({"schema": record("Refund", &["amount"])})).await;
    assert_eq!((address, orders, first, second), (1, 2, 1, 2), "each context has its own ID sequence");
    ok("DELETE", &format!("{base}/subjects/:.b:orders-value/versions/1"), None).await;
    ok("PUT", &format!("{base}/mode/:.a:"), Some(json!({"mode": "READONLY"}))).await;
    server
}
