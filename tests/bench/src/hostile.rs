//! `registry-bench --hostile`: each class of hostile schema sent to a real `registry serve` (embedded
//! store, default budgets). For each class it registers the old schema, checks the new one against it
//! (`POST /compatibility/.../latest`) and registers the new one, and prints each answer's status,
//! `error_code` and time; then the peak resident memory over the idle process, and the latency of a
//! cheap `GET /` while heavy compatibility checks run without pause. Printed, never asserted.

use crate::http::{Conn, get, post};
use crate::server::Server;
use crate::{loadavg, mib, ms};
use registry_schema::bombs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Heavy checks kept running at once while `GET /` is timed.
const HEAVY_CLIENTS: usize = 4;
/// How long `GET /` is timed under the heavy checks.
const LATENCY_WINDOW: Duration = Duration::from_secs(5);
/// Pause between two timed `GET /`.
const LATENCY_PAUSE: Duration = Duration::from_millis(10);

/// One class: its subject, format and (old, new) texts.
struct Class {
    name: &'static str,
    schema_type: &'static str,
    pair: (String, String),
}

fn classes() -> Vec<Class> {
    let class = |name, schema_type, pair| Class { name, schema_type, pair };
    vec![
        class("avro-dag-22", "AVRO", bombs::avro_dag(22)),
        class("json-ref-dag-22", "JSON", bombs::json_ref_dag(22)),
        class("avro-union-5000-fixed-reordered", "AVRO", bombs::avro_wide_union(5_000)),
        class("avro-enum-60000", "AVRO", bombs::avro_wide_enum(60_000)),
        class("avro-enum-100000", "AVRO", bombs::avro_wide_enum(100_000)),
        class("json-one-of-300", "JSON", bombs::json_wide_one_of(300)),
        class("json-enum-90000", "JSON", bombs::json_wide_enum(90_000)),
        class("protobuf-10000-mutual-messages", "PROTOBUF", bombs::protobuf_mutual_messages(10_000)),
        class("protobuf-40000-fields", "PROTOBUF", bombs::protobuf_wide_message(40_000)),
        class("protobuf-20000-fields", "PROTOBUF", bombs::protobuf_wide_message(20_000)),
        class("protobuf-12497-fields", "PROTOBUF", bombs::protobuf_wide_message(12_497)),
        class("protobuf-large-api-1000-messages", "PROTOBUF", bombs::protobuf_large_api(1_000)),
        class("json-long-integer-const", "JSON", bombs::json_long_integer_const()),
    ]
}

fn body(schema_type: &str, schema: &str) -> String {
    serde_json::json!({ "schemaType": schema_type, "schema": schema }).to_string()
}

/// `status` or `status/error_code` of an answer, and its time.
async fn timed(conn: &mut Conn, request: &[u8]) -> Result<(String, Duration), String> {
    let started = Instant::now();
    let response = conn.send(request, true).await.map_err(|error| error.to_string())?;
    let elapsed = started.elapsed();
    let code = serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|body| body.get("error_code").and_then(serde_json::Value::as_i64));
    let outcome = match code {
        Some(code) => format!("{}/{code}", response.status),
        None => response.status.to_string(),
    };
    Ok((outcome, elapsed))
}

/// Runs the classes whose name starts with one of `only` (every class when `only` is empty).
pub async fn run(binary: &Path, dir: &Path, only: &[String]) -> Result<(), String> {
    let load_before = loadavg();
    let server = Server::start(binary, dir, &[]).await?;
    let mut conn = Conn::connect(server.port).await.map_err(|error| error.to_string())?;
    for _ in 0..10 {
        conn.send(&get("/"), false).await.map_err(|error| error.to_string())?;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idle = server.memory()?;
    println!("Hostile input against `{}` (embedded store, default budgets)\n", binary.display());
    println!("| class | register v1 | check new against v1 | register new | peak RSS over the RSS before |");
    println!("|---|---|---|---|---|");
    let (mut slowest, mut largest) = (Duration::ZERO, 0);
    let wanted = |class: &Class| only.is_empty() || only.iter().any(|prefix| class.name.starts_with(prefix.as_str()));
    for class in classes().into_iter().filter(wanted) {
        let before = server.memory()?;
        server.reset_peak()?;
        let (old, new) = (body(class.schema_type, &class.pair.0), body(class.schema_type, &class.pair.1));
        let subject = class.name;
        let (v1, v1_time) = timed(&mut conn, &post(&format!("/subjects/{subject}/versions"), &old)).await?;
        let check_path = format!("/compatibility/subjects/{subject}/versions/latest");
        let (check, check_time) = timed(&mut conn, &post(&check_path, &new)).await?;
        let (v2, v2_time) = timed(&mut conn, &post(&format!("/subjects/{subject}/versions"), &new)).await?;
        let growth = server.memory()?.peak_kib.saturating_sub(before.rss_kib);
        slowest = slowest.max(v1_time).max(check_time).max(v2_time);
        largest = largest.max(growth);
        println!(
            "| {subject} ({} KB) | {v1} in {} | {check} in {} | {v2} in {} | {} |",
            class.pair.1.len() / 1024,
            ms(v1_time),
            ms(check_time),
            ms(v2_time),
            mib(growth)
        );
    }
    let after = server.memory()?;
    println!();
    println!("| figure | value | target |");
    println!("|---|---|---|");
    println!("| slowest answer above | {} | < 1 s release, < 10 s debug |", ms(slowest));
    println!("| idle RSS | {} | |", mib(idle.rss_kib));
    println!("| largest peak RSS growth of one class | {} | < 100 MB |", mib(largest));
    println!("| RSS after every class, over idle | {} | |", mib(after.rss_kib.saturating_sub(idle.rss_kib)));
    let before_latency = server.memory()?;
    server.reset_peak()?;
    let latency = latency_under_heavy_checks(server.port).await?;
    println!(
        "| `GET /` while {HEAVY_CLIENTS} heavy checks run (avro-dag-22, {} checks done in {:?}) | p50 {}, p99 {}, max {} ({} requests) | < 50 ms |",
        latency.heavy_done,
        LATENCY_WINDOW,
        ms(latency.p50),
        ms(latency.p99),
        ms(latency.max),
        latency.samples
    );
    let peak = server.memory()?;
    println!(
        "| peak RSS (VmHWM) during the latency run, over the RSS before it | {} | < 100 MB |",
        mib(peak.peak_kib.saturating_sub(before_latency.rss_kib))
    );
    println!("\nload average before {load_before}, after {}", loadavg());
    server.stop();
    Ok(())
}

struct Latency {
    p50: Duration,
    p99: Duration,
    max: Duration,
    samples: usize,
    heavy_done: u64,
}

/// Times `GET /` every [`LATENCY_PAUSE`] for [`LATENCY_WINDOW`] while [`HEAVY_CLIENTS`] connections
/// send the Avro DAG check (stopped by the work budget) one after another.
async fn latency_under_heavy_checks(port: u16) -> Result<Latency, String> {
    let request =
        Arc::new(post("/compatibility/subjects/avro-dag-22/versions/latest", &body("AVRO", &bombs::avro_dag(22).1)));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut heavy = Vec::new();
    for _ in 0..HEAVY_CLIENTS {
        let (request, stop, done) = (request.clone(), stop.clone(), done.clone());
        let mut conn = Conn::connect(port).await.map_err(|error| error.to_string())?;
        heavy.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if conn.send(&request, false).await.is_err() {
                    break;
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut conn = Conn::connect(port).await.map_err(|error| error.to_string())?;
    let mut samples = Vec::new();
    let started = Instant::now();
    while started.elapsed() < LATENCY_WINDOW {
        let sent = Instant::now();
        conn.send(&get("/"), false).await.map_err(|error| error.to_string())?;
        samples.push(sent.elapsed());
        tokio::time::sleep(LATENCY_PAUSE).await;
    }
    stop.store(true, Ordering::Relaxed);
    for task in heavy {
        let _ = task.await;
    }
    samples.sort_unstable();
    let at = |quantile: f64| samples[((samples.len() - 1) as f64 * quantile) as usize];
    Ok(Latency {
        p50: at(0.5),
        p99: at(0.99),
        max: at(1.0),
        samples: samples.len(),
        heavy_done: done.load(Ordering::Relaxed),
    })
}
