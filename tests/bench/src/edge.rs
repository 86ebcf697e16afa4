//! `registry-bench --edge`: the serving edge against its floor, in one run. The floor is an axum
//! server answering every request with a fixed body (the bytes `registry serve` answers, taken from
//! it first), run as a process of its own (this binary with `--floor`) with tokio's default runtime,
//! as `registry serve` runs. The same load generator, on the same connections, drives both:
//! `GET /schemas/ids/{id}` over the hot IDs against the GET floor, `POST /subjects/{s}` lookups over
//! the hot subjects against the POST floor. Each round runs each path on both servers, cut into
//! [`SLICES`] slices that alternate between the floor and the registry, so a change in the
//! machine's other load within the run falls on both sides alike.
//! The ratios (registry ÷ floor) and the p99 ratios are printed, with their median over the rounds
//! per path (a round the machine's other load hit harder on one side than the other moves it
//! least), and the CPU time each server process spent per answer in its run (from `/proc`: not
//! shared with the generator, so steadier than the ratios on a busy machine); nothing is asserted.
//! The registry logs at the default level (`info`: an access-log line per request, to `/dev/null`).
//!
//! The generator is this process's one tokio worker; on two cores it takes about half the machine,
//! so the floor's figure is partly the generator's, and ratios near 1 mean "as fast as this
//! generator can tell", not "free".

use crate::http::{get, post};
use crate::load::{self, LoadResult, Sample, Shape};
use crate::server::{Server, cpu_time};
use crate::{schema_json, seed, spread};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// Keep-alive connections of every run (wrk's usual 64).
const CONNECTIONS: usize = 64;
/// Rounds of the four runs (odd: the summary line's median is one round's figure).
const ROUNDS: usize = 5;
/// Slices each path's run is cut into in a round, the floor's and the registry's alternating, so a
/// change in the machine's other load within the run falls on both sides alike.
const SLICES: u32 = 10;

/// The floor process, killed when dropped.
struct Floor {
    child: Child,
    port: u16,
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves the floor on 127.0.0.1:`port` until killed: GET answers `FLOOR_GET_BODY`, POST reads the
/// request body and answers `FLOOR_POST_BODY`, both in Confluent's media type.
pub fn serve_floor(port: &str) -> Result<(), String> {
    let get_body = axum::body::Bytes::from(std::env::var("FLOOR_GET_BODY").unwrap_or_default());
    let post_body = axum::body::Bytes::from(std::env::var("FLOOR_POST_BODY").unwrap_or_default());
    let runtime = tokio::runtime::Runtime::new().map_err(|error| error.to_string())?;
    runtime.block_on(async move {
        let media = [(axum::http::header::CONTENT_TYPE, "application/vnd.schemaregistry.v1+json")];
        let app = axum::Router::new().fallback(move |method: axum::http::Method, _body: axum::body::Bytes| {
            let body = if method == axum::http::Method::POST { post_body.clone() } else { get_body.clone() };
            async move { (media, body) }
        });
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await.map_err(|e| e.to_string())?;
        axum::serve(listener, app).await.map_err(|error| error.to_string())
    })
}

fn start_floor(get_body: &[u8], post_body: &[u8]) -> Result<Floor, String> {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map_err(|error| error.to_string())?
        .port();
    let exe = std::env::current_exe().map_err(|error| error.to_string())?;
    let child = Command::new(exe)
        .args(["--floor", &port.to_string()])
        .env("FLOOR_GET_BODY", String::from_utf8_lossy(get_body).as_ref())
        .env("FLOOR_POST_BODY", String::from_utf8_lossy(post_body).as_ref())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|error| format!("spawn the floor: {error}"))?;
    let floor = Floor { child, port };
    for _ in 0..500 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(floor);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("the floor did not listen".into())
}

/// One answer's body from `port`.
async fn body_of(port: u16, request: &[u8]) -> Result<Vec<u8>, String> {
    let mut conn = crate::http::Conn::connect(port).await.map_err(|error| error.to_string())?;
    let response = conn.send(request, true).await.map_err(|error| error.to_string())?;
    if response.status != 200 {
        return Err(format!("status {}", response.status));
    }
    Ok(response.body)
}

/// Seeds `hot` subjects under `root`, starts `registry serve` on them and the floor, and prints the
/// table of the four runs per round.
pub async fn run(binary: &Path, root: &Path, seconds: u64, hot: usize) -> Result<(), String> {
    let dir = root.join("edge");
    seed::seed(&dir, hot).await?;
    // At the default log level, as users run it: one access-log line per request.
    let server = Server::start(binary, &dir, &[("RUST_LOG", "info")]).await?;
    let by_id: Arc<Vec<Vec<u8>>> =
        Arc::new((0..hot).map(|k| get(&format!("/schemas/ids/{}", spread(k, hot, hot) + 1))).collect());
    let lookups: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..hot)
            .map(|k| {
                let n = spread(k, hot, hot);
                post(&format!("/subjects/{}", seed::subject_name(n)), &schema_json(n))
            })
            .collect(),
    );
    let get_body = body_of(server.port, &by_id[0]).await?;
    let post_body = body_of(server.port, &lookups[0]).await?;
    let floor = start_floor(&get_body, &post_body)?;
    let rotate =
        |set: Arc<Vec<Vec<u8>>>| move |client: usize, i: u64| set[(client * 7919 + i as usize) % set.len()].clone();
    let shape = Shape { connections: CONNECTIONS, duration: Duration::from_secs(seconds), rate: None };
    let warm = Shape { duration: Duration::from_secs(1), ..shape };
    for port in [server.port, floor.port] {
        load::run(port, warm, 200, rotate(by_id.clone())).await;
        load::run(port, warm, 200, rotate(lookups.clone())).await;
    }
    println!(
        "registry-bench --edge: {} cores, {CONNECTIONS} connections closed loop, {seconds} s per run, {hot} hot keys",
        crate::cores()
    );
    println!();
    println!(
        "| round | path | floor (axum, fixed body) | registry serve | ratio | p99 ratio | CPU µs per answer: floor, registry |"
    );
    println!("|---|---|---|---|---|---|---|");
    let paths = [("GET /schemas/ids/{id}", by_id), ("POST /subjects/{s} lookup", lookups)];
    let mut ratios = vec![(Vec::new(), Vec::new()); paths.len()];
    let slice = Shape { duration: shape.duration / SLICES, ..shape };
    for round in 1..=ROUNDS {
        for ((path, set), (throughput, p99)) in paths.iter().zip(&mut ratios) {
            let mut floor_side = Side::new(floor.child.id(), floor.port);
            let mut registry_side = Side::new(server.pid(), server.port);
            for k in 0..SLICES {
                // Each goes first in every other pair: neither always follows the other's load.
                let (first, second) = match k % 2 {
                    0 => (&mut floor_side, &mut registry_side),
                    _ => (&mut registry_side, &mut floor_side),
                };
                first.slice(slice, rotate(set.clone())).await;
                second.slice(slice, rotate(set.clone())).await;
            }
            let (floor_result, floor_cpu) = floor_side.finish();
            let (registry, registry_cpu) = registry_side.finish();
            let ratio = registry.per_second / floor_result.per_second.max(1.0);
            let p99_ratio = registry.p99_ms / floor_result.p99_ms.max(1e-6);
            println!(
                "| {round} | {path} | {} | {} | {ratio:.2} | {p99_ratio:.2} | {floor_cpu}, {registry_cpu} |",
                figures(&floor_result),
                figures(&registry),
            );
            throughput.push(ratio);
            p99.push(p99_ratio);
        }
    }
    for ((path, _), (throughput, p99)) in paths.iter().zip(&mut ratios) {
        println!("| median of {ROUNDS} | {path} | | | {:.2} | {:.2} | |", median(throughput), median(p99));
    }
    println!();
    println!("targets: GET by ID ratio ≥ 0.8, lookup ratio ≥ 0.7, p99 ratio < 2");
    drop(floor);
    server.stop();
    Ok(())
}

/// One server's side of a round's paired run: its process and port, what its slices measured and
/// the CPU time its process spent in them (`None` where `/proc` cannot tell).
struct Side {
    pid: u32,
    port: u16,
    sample: Sample,
    cpu: Option<Duration>,
}

impl Side {
    fn new(pid: u32, port: u16) -> Side {
        Side { pid, port, sample: Sample::default(), cpu: Some(Duration::ZERO) }
    }

    /// Runs one slice of load against this side's server, adding what it measured.
    async fn slice<F>(&mut self, shape: Shape, requests: F)
    where
        F: Fn(usize, u64) -> Vec<u8> + Send + Sync + 'static,
    {
        let before = cpu_time(self.pid);
        let sample = load::sample(self.port, shape, 200, requests).await;
        let spent = cpu_time(self.pid).zip(before).map(|(after, before)| after.saturating_sub(before));
        self.cpu = self.cpu.zip(spent).map(|(total, spent)| total + spent);
        self.sample.add(sample);
    }

    /// The side's figures over all its slices, and the CPU time its process spent per answer in
    /// them, in microseconds (`?` where `/proc` cannot tell).
    fn finish(self) -> (LoadResult, String) {
        let result = self.sample.result();
        let per_answer = match self.cpu {
            Some(spent) if result.ok > 0 => format!("{:.1}", spent.as_secs_f64() * 1e6 / result.ok as f64),
            _ => "?".to_string(),
        };
        (result, per_answer)
    }
}

/// The middle value of `values` (the upper one of the two middle values of an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn figures(result: &LoadResult) -> String {
    format!(
        "{:.0} req/s, p50 {:.2} ms, p99 {:.2} ms ({} errors)",
        result.per_second, result.p50_ms, result.p99_ms, result.errors
    )
}
