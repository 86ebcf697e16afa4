//! `registry serve` against clients that try to hold it, over raw TCP from several loopback
//! addresses (each one another client address to the server): connections that pipeline requests
//! for a large schema and never read the answers, connections that trickle a request head a byte a
//! second, and a flood of wrong passwords. Each time, another client is served and the attackers'
//! connections are closed. The budgets the attack would otherwise hide behind are set far beyond
//! [`PATIENCE`], so only the defences can decide the outcome; nothing asserts how long anything took.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use std::time::Duration;
use support::wire::{GET_ROOT, PATIENCE, connect_from, read_answer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Budgets no test here waits for.
const FOREVER_MS: &str = "600000";

async fn start(envs: &[(&str, &str)]) -> (support::Server, String) {
    let server = support::serve(&["--backend", "memory"], envs).await;
    let address = server.url.trim_start_matches("http://").to_string();
    (server, address)
}

/// A connection from `source` with a small receive buffer, so the server's writes to it block soon.
async fn non_reader_from(source: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(address.parse().unwrap()).await.unwrap()
}

/// Sends `burst` copies of `request` at once and one more every 50 ms, never reading; returns once
/// a write fails, that is once the server has closed the connection.
async fn pipeline_until_closed(mut stream: TcpStream, request: String, burst: usize) {
    if stream.write_all(request.repeat(burst).as_bytes()).await.is_err() {
        return;
    }
    while stream.write_all(request.as_bytes()).await.is_ok() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends the start of a request head, then one byte a second; returns once a write fails (the
/// server closed the connection).
async fn trickle_until_closed(mut stream: TcpStream) {
    if stream.write_all(b"GET / HTTP/1.1\r\nx-slow: ").await.is_err() {
        return;
    }
    while stream.write_all(b"a").await.is_ok() {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Registers a schema of about 1 MB and returns the request for it by ID.
async fn large_schema_request(address: &str) -> String {
    let doc = "a".repeat(1_000_000);
    let schema = json!({"type": "record", "name": "Large", "doc": doc, "fields": []}).to_string();
    let id = support::register(&format!("http://{address}"), "large", json!({"schema": schema})).await;
    format!("GET /schemas/ids/{id} HTTP/1.1\r\nhost: registry\r\n\r\n")
}

/// `request` sent from `source` on a new connection is answered with `status`.
async fn served_from(source: &str, address: &str, request: &[u8], status: u16) {
    let mut stream = connect_from(source, address).await;
    stream.write_all(request).await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await;
    let answer = answer.unwrap_or_else(|_| panic!("{source} was not answered while attacked")).expect("an answer");
    assert_eq!(answer.status, status, "{answer:?}");
}

/// Runs `attack` on each connection, telling `closed` when one ends.
fn spawn_attack<F>(streams: Vec<TcpStream>, closed: &mpsc::UnboundedSender<()>, attack: impl Fn(TcpStream) -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    for stream in streams {
        let (attack, closed) = (attack(stream), closed.clone());
        tokio::spawn(async move {
            attack.await;
            let _ = closed.send(());
        });
    }
}

/// Opens `per_address` connections with `connect` from each of two client addresses and runs
/// `attack` on each; meanwhile a client from a third address must be served three times, and
/// one attacking connection (`attacker`) must be closed.
async fn attackers_cannot_lock_others_out<C, A>(
    address: &str,
    per_address: usize,
    connect: impl Fn(&'static str) -> C,
    attack: impl Fn(TcpStream) -> A,
    attacker: &str,
) where
    C: std::future::Future<Output = TcpStream>,
    A: std::future::Future<Output = ()> + Send + 'static,
{
    let (closed, mut closed_seen) = mpsc::unbounded_channel();
    for source in ["127.0.0.2", "127.0.0.3"] {
        let mut streams = Vec::new();
        for _ in 0..per_address {
            streams.push(connect(source).await);
        }
        spawn_attack(streams, &closed, &attack);
    }
    for _ in 0..3 {
        served_from("127.0.0.4", address, GET_ROOT, 200).await;
    }
    let attacker_closed = tokio::time::timeout(PATIENCE, closed_seen.recv()).await;
    assert!(matches!(attacker_closed, Ok(Some(()))), "{attacker} was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_pipelining_answers_they_never_read_cannot_lock_others_out() {
    let envs = [
        ("REGISTRY_MAX_CONNECTIONS", "8"),
        ("REGISTRY_MAX_CONNECTIONS_PER_PEER", "4"),
        ("REGISTRY_WRITE_TIMEOUT_MS", FOREVER_MS),
        ("REGISTRY_IDLE_TIMEOUT_MS", FOREVER_MS),
    ];
    let (_server, address) = start(&envs).await;
    let request = large_schema_request(&address).await;
    let connect = |source| non_reader_from(source, &address);
    let attack = |stream| pipeline_until_closed(stream, request.clone(), 20);
    attackers_cannot_lock_others_out(&address, 4, connect, attack, "a non-reading connection made room and").await;
}

#[tokio::test]
async fn an_answer_that_is_not_read_is_abandoned_after_the_write_budget() {
    let envs = [("REGISTRY_WRITE_TIMEOUT_MS", "500"), ("REGISTRY_IDLE_TIMEOUT_MS", FOREVER_MS)];
    let (_server, address) = start(&envs).await;
    let request = large_schema_request(&address).await;
    let stream = non_reader_from("127.0.0.2", &address).await;
    let closed = tokio::time::timeout(PATIENCE, pipeline_until_closed(stream, request, 20)).await;
    assert!(closed.is_ok(), "the connection not reading its answers was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_trickling_request_heads_cannot_lock_others_out() {
    let envs = [
        ("REGISTRY_MAX_CONNECTIONS", "20"),
        ("REGISTRY_MAX_CONNECTIONS_PER_PEER", "10"),
        ("REGISTRY_HEADER_TIMEOUT_MS", FOREVER_MS),
    ];
    let (_server, address) = start(&envs).await;
    let connect = |source| connect_from(source, &address);
    attackers_cannot_lock_others_out(&address, 10, connect, trickle_until_closed, "a trickling connection").await;
}

#[tokio::test]
async fn a_head_trickling_a_byte_a_second_is_closed_well_within_the_header_budget() {
    let (_server, address) = start(&[("REGISTRY_HEADER_TIMEOUT_MS", FOREVER_MS)]).await;
    let stream = connect_from("127.0.0.2", &address).await;
    let closed = tokio::time::timeout(PATIENCE, trickle_until_closed(stream)).await;
    assert!(closed.is_ok(), "a head arriving below the minimum rate closes the connection");
}

/// `Basic alice:right` and `Basic alice:wrong`.
const RIGHT: &str = "Basic YWxpY2U6cmlnaHQ=";
const WRONG: &str = "Basic YWxpY2U6d3Jvbmc=";

/// Sends wrong passwords on `stream` one request after another until the server closes it or
/// `stop` is dropped; every answer must be 401.
async fn guess_until_stopped(mut stream: TcpStream, mut stop: tokio::sync::watch::Receiver<()>) {
    let request = format!("GET /subjects HTTP/1.1\r\nhost: registry\r\nauthorization: {WRONG}\r\n\r\n");
    loop {
        if stream.write_all(request.as_bytes()).await.is_err() {
            return;
        }
        let answer = tokio::select! {
            answer = read_answer(&mut stream) => answer,
            _ = stop.changed() => return,
        };
        match answer {
            Some(answer) => assert_eq!(answer.status, 401, "{answer:?}"),
            None => return,
        }
    }
}

/// `Basic scraper:metrics`: the user that reads `GET /metrics` while the flood runs.
const SCRAPER: &str = "Basic c2NyYXBlcjptZXRyaWNz";

/// The `schema_registry_password_verifications_total` sample of `GET /metrics`, read from
/// `127.0.0.5` as the scraper (whose credentials are remembered after its first check: no argon2).
async fn verifications(address: &str) -> u64 {
    let request = format!("GET /metrics HTTP/1.1\r\nhost: registry\r\nauthorization: {SCRAPER}\r\n\r\n");
    let mut stream = connect_from("127.0.0.5", address).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = tokio::time::timeout(HANG, read_answer(&mut stream)).await.unwrap().expect("metrics answered");
    assert_eq!(answer.status, 200, "{answer:?}");
    let text = String::from_utf8_lossy(&answer.body).to_string();
    let sample = text.lines().find_map(|line| line.strip_prefix("schema_registry_password_verifications_total "));
    sample
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map_or_else(|| panic!("no sample in {text}"), |v| v as u64)
}

/// Bounds a wait that only a hung server would reach (never the verdict).
const HANG: Duration = Duration::from_secs(300);

/// The verdict is a work count, not a time: the argon2 checks the server ran while the login
/// waited. A fair gate lets at most two checks per flooding address queue ahead of it (four
/// here), plus the login's own and the few the workers finish while the counter is read; an
/// unfair queue runs every flooding connection's check (120) first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_wrong_passwords_does_not_keep_a_valid_login_out() {
    let dir = tempfile::tempdir().unwrap();
    // A cost of a few hundred milliseconds in a debug build: the flood queues far more checks than
    // the login should wait for, unless the queue is fair.
    let cost = registry_auth::HashCost { memory_kib: 8192, iterations: 2, parallelism: 1 };
    let users = dir.path().join("users.jsonl");
    let lines = [("alice", "right"), ("scraper", "metrics")].map(|(user, password)| {
        let hash = registry_auth::hash_password(password, cost).unwrap();
        json!({"user": user, "role": "read", "hash": hash}).to_string()
    });
    std::fs::write(&users, lines.join("\n")).unwrap();
    let users = users.to_string_lossy().to_string();
    let envs = [("REGISTRY_USERS_FILE", users.as_str()), ("REGISTRY_MAX_CONNECTIONS_PER_PEER", "100")];
    let server = support::serve_ready(&["--backend", "memory"], &envs, "/").await;
    let address = server.url.trim_start_matches("http://").to_string();
    verifications(&address).await; // the scraper's one argon2 check, before the flood
    let (stop, stopped) = tokio::sync::watch::channel(());
    let mut flood = Vec::new();
    for source in ["127.0.0.2", "127.0.0.3"] {
        for _ in 0..60 {
            let stream = connect_from(source, &address).await;
            flood.push(tokio::spawn(guess_until_stopped(stream, stopped.clone())));
        }
    }
    // Let every flooding connection put a wrong password in: an unfair queue now holds 120 checks.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = verifications(&address).await;
    let login = format!("GET /subjects HTTP/1.1\r\nhost: registry\r\nauthorization: {RIGHT}\r\n\r\n");
    let mut stream = connect_from("127.0.0.4", &address).await;
    stream.write_all(login.as_bytes()).await.unwrap();
    let answer = tokio::time::timeout(HANG, read_answer(&mut stream)).await.unwrap().expect("the login answered");
    assert_eq!(answer.status, 200, "{answer:?}");
    let during = verifications(&address).await - before;
    let workers = std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 2).max(1)) as u64;
    let bound = 2 * 2 + 1 + 2 * workers + 4;
    assert!(during <= bound, "{during} argon2 checks ran while the login waited (at most {bound} with a fair gate)");
    drop(stop);
    for guesser in flood {
        guesser.await.unwrap();
    }
}
