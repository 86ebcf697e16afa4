//! Exporters of a real `registry serve` against destinations that are hostile or broken, served by
//! the test itself on 127.0.0.1 (raw TCP, one thread per connection): a destination must not be
//! able to exhaust the source's memory, stall other exporters, put its answers into the exporter's
//! status, obtain a credential given for another destination, or reach addresses the operator did
//! not allow; two registries exporting to each other must stop.
//!
//! Every source here that exports to loopback sets `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS`
//! explicitly (the default refuses loopback); the one checking the default removes it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::raw_peer;

/// How long a test waits for something that must happen (generous: never decides an outcome on a
/// slow machine).
const PATIENCE: Duration = Duration::from_secs(90);

/// A `registry serve --backend memory` child (killed on drop) and the exporter calls made of it.
struct Source(support::Server);

impl std::ops::Deref for Source {
    type Target = support::Server;

    fn deref(&self) -> &support::Server {
        &self.0
    }
}

impl Source {
    /// Started with `allowed` as `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` (`None`: unset).
    async fn start(allowed: Option<&str>) -> Source {
        let server = support::serve_configured(&["--backend", "memory"], "/subjects", |command| {
            command.env_remove("REGISTRY_EXPORTER_ALLOWED_DESTINATIONS");
            if let Some(allowed) = allowed {
                command.env("REGISTRY_EXPORTER_ALLOWED_DESTINATIONS", allowed);
            }
        })
        .await;
        Source(server)
    }

    /// The process's peak resident memory (`VmHWM`), in bytes.
    fn peak_memory(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
        line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) * 1024
    }

    async fn exporter(&self, name: &str, context_type: &str, rename: &str, config: Value) {
        let body = json!({
            "name": name, "contextType": context_type, "subjects": ["*"],
            "subjectRenameFormat": rename, "config": config,
        });
        support::ok("POST", &format!("{}/exporters", self.url), Some(body)).await;
    }

    async fn status(&self, name: &str) -> Value {
        support::ok("GET", &format!("{}/exporters/{name}/status", self.url), None).await
    }

    /// Waits for `name`'s status to satisfy `done`; the last status.
    async fn status_until(&self, name: &str, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let status = self.status(name).await;
            if done(&status) {
                return status;
            }
            assert!(started.elapsed() < PATIENCE, "{name} never reached the expected status: {status}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn subjects(&self) -> Vec<String> {
        let listed = support::ok("GET", &format!("{}/subjects?deleted=true", self.url), None).await;
        serde_json::from_value(listed).unwrap_or_default()
    }
}

fn is_error(status: &Value) -> bool {
    status["state"] == "ERROR"
}

/// What a fake destination answers.
enum Reply {
    /// A status and a JSON body.
    Json(u16, Arc<Vec<u8>>),
    /// Nothing, until the client goes away.
    Silent,
}

/// A fake destination on a fresh port of 127.0.0.1: its port, and the heads of the requests it
/// received.
fn fake_destination(reply: Reply) -> (u16, Arc<Mutex<Vec<String>>>) {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let address = raw_peer::serve(move |stream| answer(stream, &reply, &seen));
    (address.port(), heads)
}

fn answer(mut stream: TcpStream, reply: &Reply, seen: &Mutex<Vec<String>>) {
    let Some(head) = raw_peer::read_head(&mut stream) else { return };
    let length = head
        .lines()
        .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|n| n.trim().to_owned()))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    let _ = stream.read_exact(&mut body);
    seen.lock().unwrap().push(head);
    match reply {
        Reply::Json(status, body) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/vnd.schemaregistry.v1+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body));
        }
        Reply::Silent => raw_peer::read_until_closed(&mut stream),
    }
}

fn ok_json(body: &str) -> Reply {
    Reply::Json(200, Arc::new(body.as_bytes().to_vec()))
}

async fn register_at(base: &str, subject: &str) {
    let schema = support::record("Order", &["id"]);
    support::register(base, subject, json!({ "schema": schema })).await;
}

/// A destination answering every call with a 62 MiB JSON array of numbers (under the 64 MiB
/// answer cap of old, ~16 times that once parsed into generic JSON values): the exporter goes to
/// ERROR naming the size limit, and the source's peak memory stays bounded (it grew past 3 GB and
/// aborted before answers were bounded). The source is killed as soon as it passes the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_costs_the_source_bounded_memory() {
    const BOUND: u64 = 400 * 1024 * 1024;
    let mut array = Vec::with_capacity(62 * 1024 * 1024 + 2);
    array.push(b'[');
    while array.len() < 62 * 1024 * 1024 {
        array.extend_from_slice(b"0,");
    }
    array.extend_from_slice(b"0]");
    let (port, heads) = fake_destination(Reply::Json(200, Arc::new(array)));
    let source = Source::start(Some("127.0.0.1")).await;
    register_at(&source.url, "orders-value").await;
    let before = source.peak_memory();
    source
        .exporter("big", "AUTO", "${subject}", json!({ "schema.registry.url": format!("http://127.0.0.1:{port}") }))
        .await;
    let started = Instant::now();
    let status = loop {
        let peak = source.peak_memory();
        assert!(peak < BOUND, "the source's peak memory reached {} MiB (bound {} MiB)", peak >> 20, BOUND >> 20);
        let status = source.status("big").await;
        // Several failed passes, each reading the whole answer.
        if is_error(&status) && heads.lock().unwrap().len() >= 3 {
            break status;
        }
        assert!(started.elapsed() < PATIENCE, "the exporter never failed: {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let trace = status["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("larger than"), "the trace names the size limit: {trace}");
    let peak = source.peak_memory();
    eprintln!(
        "source peak memory: {} MiB before the exporter, {} MiB after 3 answers of 62 MiB",
        before >> 20,
        peak >> 20
    );
    assert!(peak < BOUND, "the source's peak memory reached {} MiB", peak >> 20);
    assert_eq!(source.subjects().await, ["orders-value"], "the source still serves");
}

/// A destination that never answers, with `request.timeout.ms` of a day, delays only its own
/// exporter: another exporter (to a real registry) delivers at once, and the hanging one goes to
/// ERROR once the capped timeout (30 s) passes. Before, passes ran one exporter at a time and the
/// timeout had no upper bound, so the first stalled every exporter for the day.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_destination_delays_only_its_own_exporter() {
    let (port, _) = fake_destination(Reply::Silent);
    let destination = support::serve(&["--backend", "memory"], &[]).await;
    let source = Source::start(Some("127.0.0.1")).await;
    let hanging =
        json!({ "schema.registry.url": format!("http://127.0.0.1:{port}"), "request.timeout.ms": "86400000" });
    source.exporter("a-hang", "AUTO", "${subject}", hanging).await;
    source.exporter("b-good", "AUTO", "${subject}", json!({ "schema.registry.url": destination.url })).await;
    register_at(&source.url, "orders-value").await;
    let started = Instant::now();
    loop {
        let (status, versions) =
            support::call("GET", &format!("{}/subjects/:.b-good:orders-value/versions", destination.url), None).await;
        if status == 200 && versions == json!([1]) {
            break;
        }
        assert!(started.elapsed() < PATIENCE, "the other exporter never delivered ({status} {versions})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = source.status_until("a-hang", is_error).await;
    let trace = status["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("timed out") || trace.contains("timeout"), "the trace names the timeout: {trace}");
}

/// A destination's refusal with a body (an internal service's answer, or 4 MiB of text) is not
/// shown in the exporter's status, and the stored trace is short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_answer_is_neither_shown_nor_stored() {
    let internal = json!({ "error_code": 42201, "message": "INTERNAL-SECRET-MARKER from the metadata service" });
    let (small, _) = fake_destination(Reply::Json(422, Arc::new(internal.to_string().into_bytes())));
    let large = json!({ "error_code": 50001, "message": "INTERNAL-SECRET-MARKER ".repeat(200_000) });
    let (big, _) = fake_destination(Reply::Json(500, Arc::new(large.to_string().into_bytes())));
    let source = Source::start(Some("127.0.0.1")).await;
    register_at(&source.url, "orders-value").await;
    for (name, port) in [("small", small), ("large", big)] {
        let config = json!({ "schema.registry.url": format!("http://127.0.0.1:{port}") });
        source.exporter(name, "AUTO", "${subject}", config).await;
        let status = source.status_until(name, is_error).await;
        let trace = status["trace"].as_str().unwrap_or_default();
        assert!(
            !trace.contains("INTERNAL-SECRET-MARKER"),
            "{name}: the destination's body is in the trace: {trace:.300}"
        );
        assert!(trace.len() <= 1024, "{name}: a trace of {} bytes", trace.len());
        assert!(trace.contains("HTTP 4") || trace.contains("HTTP 5"), "{name}: the trace names the status: {trace}");
    }
}

/// Pausing an exporter, pointing it at another server while sending the masked credential back,
/// and resuming it does not send the credential there: a new destination needs its credentials
/// sent again. Before, the second server received `Basic victimuser:victimPASSWORD`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_destination_does_not_get_the_stored_credential() {
    // `victimuser:victimPASSWORD` in Base64, as HTTP Basic sends it.
    let credential = "dmljdGltdXNlcjp2aWN0aW1QQVNTV09SRA==";
    let (victim, victim_heads) = fake_destination(ok_json("[]"));
    let (attacker, attacker_heads) = fake_destination(ok_json("[]"));
    let source = Source::start(Some("127.0.0.1")).await;
    register_at(&source.url, "orders-value").await;
    let config = json!({
        "schema.registry.url": format!("http://127.0.0.1:{victim}"),
        "basic.auth.credentials.source": "USER_INFO",
        "basic.auth.user.info": "victimuser:victimPASSWORD",
    });
    source.exporter("linked", "AUTO", "${subject}", config).await;
    let started = Instant::now();
    while !victim_heads.lock().unwrap().iter().any(|head| head.contains(credential)) {
        assert!(started.elapsed() < PATIENCE, "the destination never received the credential");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let base = &source.url;
    support::ok("PUT", &format!("{base}/exporters/linked/pause"), None).await;
    let moved = json!({
        "schema.registry.url": format!("http://127.0.0.1:{attacker}"),
        "basic.auth.credentials.source": "USER_INFO",
        "basic.auth.user.info": "[hidden]",
    });
    support::ok("PUT", &format!("{base}/exporters/linked/config"), Some(moved)).await;
    support::ok("PUT", &format!("{base}/exporters/linked/resume"), None).await;
    let started = Instant::now();
    while attacker_heads.lock().unwrap().len() < 3 {
        assert!(started.elapsed() < PATIENCE, "the new destination was never called");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for head in attacker_heads.lock().unwrap().iter() {
        assert!(
            !head.to_ascii_lowercase().contains("authorization"),
            "a credential went to the new destination:\n{head}"
        );
    }
    let shown = support::ok("GET", &format!("{base}/exporters/linked/config"), None).await;
    assert!(shown.get("basic.auth.user.info").is_none(), "the credential was dropped: {shown}");
}

/// Without `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS`, loopback, unspecified, link-local and private
/// destinations are refused however they are spelled (the status names the variable) and nothing
/// reaches the server listening there; URLs with user info or a fragment are refused when the
/// exporter is defined. With the variable naming another port, the same server is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_public_destinations_are_refused_unless_listed() {
    let (port, heads) = fake_destination(ok_json("[]"));
    let source = Source::start(None).await;
    register_at(&source.url, "orders-value").await;
    let mut urls = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
        format!("http://0.0.0.0:{port}"),
        format!("http://2130706433:{port}"),
        format!("http://127.1:{port}"),
        format!("http://[::ffff:127.0.0.1]:{port}"),
        "http://169.254.169.254/latest".to_owned(),
        "http://10.0.0.1:8081".to_owned(),
        "http://192.168.0.1:8081".to_owned(),
    ];
    // A name that resolves to loopback (checked on the resolved address), where the machine has one.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_owned();
    let loopback_only = |name: &str| {
        std::net::ToSocketAddrs::to_socket_addrs(&(name, 80))
            .map(|addresses| {
                let addresses: Vec<_> = addresses.collect();
                !addresses.is_empty() && addresses.iter().all(|address| address.ip().is_loopback())
            })
            .unwrap_or(false)
    };
    if !host.is_empty() && !host.contains("localhost") && loopback_only(&host) {
        urls.push(format!("http://{host}:{port}"));
    }
    for (index, url) in urls.iter().enumerate() {
        source.exporter(&format!("to-{index}"), "AUTO", "${subject}", json!({ "schema.registry.url": url })).await;
    }
    for (index, url) in urls.iter().enumerate() {
        let status = source.status_until(&format!("to-{index}"), is_error).await;
        let trace = status["trace"].as_str().unwrap_or_default();
        assert!(trace.contains("REGISTRY_EXPORTER_ALLOWED_DESTINATIONS"), "{url}: {trace}");
    }
    assert_eq!(heads.lock().unwrap().len(), 0, "no request reached the loopback server");

    for url in ["http://user:urlpassword@127.0.0.1:1", "http://127.0.0.1:1/#", "http://127.0.0.1:1/?x=y"] {
        let body = json!({ "name": "bad", "config": { "schema.registry.url": url } });
        let (status, answer) = support::call("POST", &format!("{}/exporters", source.url), Some(body)).await;
        assert_eq!((status, answer["error_code"].clone()), (409, json!(40951)), "{url}: {answer}");
        assert!(!answer.to_string().contains("urlpassword"), "the refusal repeats the password: {answer}");
    }

    let elsewhere = Source::start(Some(&format!("127.0.0.1:{}", port.wrapping_add(1)))).await;
    register_at(&elsewhere.url, "orders-value").await;
    elsewhere
        .exporter("to-port", "AUTO", "${subject}", json!({ "schema.registry.url": format!("http://127.0.0.1:{port}") }))
        .await;
    let status = elsewhere.status_until("to-port", is_error).await;
    assert!(
        status["trace"].as_str().unwrap_or_default().contains("REGISTRY_EXPORTER_ALLOWED_DESTINATIONS"),
        "{status}"
    );
    assert_eq!(heads.lock().unwrap().len(), 0, "no request reached the server on the port not listed");
}

/// Two registries exporting to each other into their default contexts with a rename each: what
/// one receives (in IMPORT mode) is not exported back, so each ends with the other's subject once
/// and no subject grows. Before, each round trip added a longer subject, without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_registries_exporting_to_each_other_stop() {
    let a = Source::start(Some("127.0.0.1")).await;
    let b = Source::start(Some("127.0.0.1")).await;
    a.exporter("to-b", "NONE", "${subject}-b", json!({ "schema.registry.url": b.url })).await;
    b.exporter("to-a", "NONE", "${subject}-a", json!({ "schema.registry.url": a.url })).await;
    register_at(&a.url, "orders").await;
    let started = Instant::now();
    while b.subjects().await.is_empty() {
        assert!(started.elapsed() < PATIENCE, "the subject never reached B");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Passes run every second: five more rounds on each side.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(a.subjects().await, ["orders"], "A holds its own subject only");
    assert_eq!(b.subjects().await, ["orders-b"], "B holds A's copy only");
    for (registry, name) in [(&a, "to-b"), (&b, "to-a")] {
        let status = registry.status(name).await;
        assert_eq!(status["state"], "RUNNING", "{name}: {status}");
    }
}
