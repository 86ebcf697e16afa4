//! `registry-bench`: the figures of BENCHMARKS.md in one run, printed as one table.
//!
//! For each size (default 0, 100,000 and 1,000,000 subjects) it seeds a fresh data directory
//! through `LocalStore::insert_unchecked`, starts the real `registry serve` binary on it three
//! times (15 rounds, sizes interleaved) and keeps the median ready time (spawn → first 200) and the resident memory after ready.
//! On the largest size it then streams `GET /subjects` (bytes, time, peak RSS), drives warm
//! `GET /schemas/ids/{id}` and `POST /subjects/{s}` lookups with 256 keep-alive connections, and
//! registers new subjects with 32 clients, and times pages of the analysis API ([`catalog`]). All traffic goes to 127.0.0.1. Ratios (largest ÷ 0)
//! come from the same run. Nothing here is a test: it prints, it never asserts a time.
//!
//! Usage: `registry-bench [--binary PATH] [--sizes 0,100000,1000000] [--seconds 10] [--hot 1000]
//! [--work-dir DIR] [--aws-calls FILE]`; `--binary` defaults to the `registry` beside this binary.
//!
//! `registry-bench --hostile [--binary ...] [--classes protobuf,avro-dag]` prints the hostile-input table
//! instead ([`hostile`]), of every class or of those whose name starts with one of the given prefixes.
//!
//! `registry-bench --edge [--binary ...] [--seconds 10] [--hot 1000]` prints the serving edge against
//! a fixed-body axum floor instead ([`edge`]); `--floor PORT` is that floor (started by `--edge`).

mod catalog;
mod edge;
mod hostile;
mod http;
mod load;
mod seed;
mod server;

use http::{Conn, get, post};
use load::{LoadResult, Shape};
use server::{Memory, Server};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Connections for the read hot paths (a Connect rebalance's stampede).
const READ_CONNECTIONS: usize = 256;
/// Concurrent clients registering new subjects.
const WRITE_CLIENTS: usize = 32;
/// Spawns per size (rounds interleave the sizes, so load drift hits all alike); medians are reported.
const READY_RUNS: usize = 15;
/// Offered load of the open-loop latency runs: the throughput targets of BENCHMARKS.md.
const BY_ID_TARGET: f64 = 30_000.0;
const LOOKUP_TARGET: f64 = 20_000.0;

#[derive(Debug)]
struct Options {
    binary: PathBuf,
    sizes: Vec<usize>,
    seconds: u64,
    hot: usize,
    work_dir: Option<PathBuf>,
    aws_calls: Option<PathBuf>,
    hostile: bool,
    edge: bool,
    /// Name prefixes of the hostile classes to run (all when empty).
    classes: Vec<String>,
}

/// `registry` in the directory this binary was built into (cargo puts both in the same profile
/// directory, wherever CARGO_TARGET_DIR says), the default of `--binary`.
fn registry_beside_this_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("registry")))
        .unwrap_or_else(|| PathBuf::from("registry"))
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        binary: registry_beside_this_binary(),
        sizes: vec![0, 100_000, 1_000_000],
        seconds: 10,
        hot: 1000,
        work_dir: None,
        aws_calls: None,
        hostile: false,
        edge: false,
        classes: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--hostile" {
            options.hostile = true;
            continue;
        }
        if flag == "--edge" {
            options.edge = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<usize>().map_err(|_| format!("{flag}: not a number: {v}"));
        match flag.as_str() {
            "--binary" => options.binary = PathBuf::from(value),
            "--sizes" => options.sizes = value.split(',').map(number).collect::<Result<_, _>>()?,
            "--seconds" => options.seconds = number(&value)? as u64,
            "--hot" => options.hot = number(&value)?.max(1),
            "--work-dir" => options.work_dir = Some(PathBuf::from(value)),
            "--aws-calls" => options.aws_calls = Some(PathBuf::from(value)),
            "--classes" => options.classes = value.split(',').map(str::to_string).collect(),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    options.sizes.sort_unstable();
    options.sizes.dedup();
    if options.sizes.first() != Some(&0) {
        options.sizes.insert(0, 0);
    }
    Ok(options)
}

/// Start-up figures of one size.
#[derive(Debug, Clone, Copy)]
struct SizeFigures {
    subjects: usize,
    seeded: Duration,
    ready: Duration,
    memory: Memory,
}

/// Figures measured on the largest store.
#[derive(Debug, Default)]
struct LargeFigures {
    list_bytes: u64,
    list_subjects: u64,
    list_time: Duration,
    list_peak_kib: u64,
    by_id: LoadResult,
    by_id_open: LoadResult,
    lookups: LoadResult,
    lookups_open: LoadResult,
    registrations: LoadResult,
    peak_after_load_kib: u64,
    catalog: Option<catalog::CatalogFigures>,
}

// One worker thread for the load generator (its blocking pool still runs the readiness probe): with
// two, its threads and the server's competed for the two cores, and the scheduler's stalls showed up
// as the server's tail latency (open-loop lookup p99 0.65-4.63 ms over five runs with two workers;
// 0.66-2.13 ms over four with one).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, port] = args.as_slice()
        && flag == "--floor"
    {
        if let Err(error) = edge::serve_floor(port) {
            eprintln!("registry-bench --floor: {error}");
            std::process::exit(1);
        }
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
    let Ok(runtime) = runtime else {
        eprintln!("registry-bench: no tokio runtime");
        std::process::exit(1);
    };
    match runtime.block_on(run()) {
        Ok(()) => {}
        Err(error) => {
            eprintln!("registry-bench: {error}");
            std::process::exit(1);
        }
    }
}

async fn run() -> Result<(), String> {
    let options = options()?;
    if !options.binary.exists() {
        return Err(format!("{} not found (cargo build --release -p registry)", options.binary.display()));
    }
    let root = match &options.work_dir {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .map_err(|error| format!("work dir: {error}"))?;
    if options.hostile {
        return hostile::run(&options.binary, root.path(), &options.classes).await;
    }
    if options.edge {
        return edge::run(&options.binary, root.path(), options.seconds, options.hot).await;
    }
    let load_before = loadavg();
    let mut seeded = Vec::new();
    for &subjects in &options.sizes {
        let dir = root.path().join(format!("s{subjects}"));
        let seeding = Instant::now();
        seed::seed(&dir, subjects).await?;
        seeded.push((subjects, dir, seeding.elapsed()));
    }
    let mut runs: Vec<Vec<(Duration, Memory)>> = vec![Vec::new(); seeded.len()];
    for _ in 0..READY_RUNS {
        for ((_, dir, _), runs) in seeded.iter().zip(runs.iter_mut()) {
            let server = Server::start(&options.binary, dir, &[]).await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
            runs.push((server.ready, server.memory()?));
            server.stop();
        }
    }
    let mut sizes = Vec::new();
    for ((subjects, _, seeded), mut runs) in seeded.into_iter().zip(runs) {
        runs.sort_by_key(|(ready, _)| *ready);
        let ready = runs[runs.len() / 2].0;
        let (fastest, slowest) = (runs[0].0, runs[runs.len() - 1].0);
        let mut rss: Vec<u64> = runs.iter().map(|(_, memory)| memory.rss_kib).collect();
        rss.sort_unstable();
        let memory = Memory { rss_kib: rss[rss.len() / 2], peak_kib: 0 };
        eprintln!(
            "{subjects} subjects: seeded in {seeded:?}, ready in {ready:?} (fastest {fastest:?}, slowest {slowest:?}), RSS {} KiB",
            memory.rss_kib
        );
        sizes.push(SizeFigures { subjects, seeded, ready, memory });
    }
    let largest = *options.sizes.last().unwrap_or(&0);
    let large = measure_large(&options, &root.path().join(format!("s{largest}")), largest).await?;
    let load_after = loadavg();
    print_table(&sizes, &large, largest, &options, &load_before, &load_after);
    Ok(())
}

async fn measure_large(options: &Options, dir: &std::path::Path, subjects: usize) -> Result<LargeFigures, String> {
    let mut figures = LargeFigures::default();
    let server = Server::start(&options.binary, dir, &[]).await?;
    let port = server.port;

    let mut conn = Conn::connect(port).await.map_err(|error| error.to_string())?;
    let listing = Instant::now();
    let response = conn.send(&get("/subjects"), true).await.map_err(|error| format!("GET /subjects: {error}"))?;
    figures.list_time = listing.elapsed();
    if response.status != 200 {
        return Err(format!("GET /subjects answered {}", response.status));
    }
    figures.list_bytes = response.body_bytes;
    figures.list_subjects = response.body.iter().filter(|b| **b == b'"').count() as u64 / 2;
    figures.list_peak_kib = server.memory()?.peak_kib;
    drop(response);

    let hot = options.hot.min(subjects.max(1));
    let seconds = Duration::from_secs(options.seconds);
    if subjects > 0 {
        let by_id: Vec<Vec<u8>> =
            (0..hot).map(|k| get(&format!("/schemas/ids/{}", spread(k, hot, subjects) + 1))).collect();
        let lookups: Vec<Vec<u8>> = (0..hot)
            .map(|k| {
                let n = spread(k, hot, subjects);
                post(&format!("/subjects/{}", seed::subject_name(n)), &schema_json(n))
            })
            .collect();
        let (ids, looks) = (std::sync::Arc::new(by_id), std::sync::Arc::new(lookups));
        let warm = |set: std::sync::Arc<Vec<Vec<u8>>>| {
            move |client: usize, i: u64| set[(client * 7919 + i as usize) % set.len()].clone()
        };
        let closed = Shape { connections: READ_CONNECTIONS, duration: seconds, rate: None };
        let warm_up = Shape { duration: Duration::from_secs(1), ..closed };
        let open = |rate| Shape { rate: Some(rate), ..closed };
        load::run(port, warm_up, 200, warm(ids.clone())).await;
        figures.by_id = load::run(port, closed, 200, warm(ids.clone())).await;
        figures.by_id_open = load::run(port, open(BY_ID_TARGET), 200, warm(ids)).await;
        load::run(port, warm_up, 200, warm(looks.clone())).await;
        figures.lookups = load::run(port, closed, 200, warm(looks.clone())).await;
        figures.lookups_open = load::run(port, open(LOOKUP_TARGET), 200, warm(looks)).await;
    }
    if subjects > 0 {
        let mut pages = catalog::measure(port, subjects).await?;
        pages.peak_kib = server.memory()?.peak_kib;
        figures.catalog = Some(pages);
    }
    let base = subjects + 1_000_000;
    let writers = Shape { connections: WRITE_CLIENTS, duration: seconds, rate: None };
    figures.registrations = load::run(port, writers, 200, move |client, i| {
        let n = base + client * 10_000_000 + i as usize;
        post(&format!("/subjects/{}/versions", seed::subject_name(n)), &schema_json(n))
    })
    .await;
    figures.peak_after_load_kib = server.memory()?.peak_kib;
    server.stop();
    Ok(figures)
}

/// The `k`-th of `hot` subjects spread evenly over `0..subjects`.
fn spread(k: usize, hot: usize, subjects: usize) -> usize {
    (k * (subjects / hot.max(1)).max(1)) % subjects.max(1)
}

fn schema_json(n: usize) -> String {
    let escaped = seed::posted_schema(n).replace('"', "\\\"");
    format!(r#"{{"schema":"{escaped}"}}"#)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 / 1024.0)
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn print_table(
    sizes: &[SizeFigures],
    large: &LargeFigures,
    largest: usize,
    options: &Options,
    load_before: &str,
    load_after: &str,
) {
    let zero = sizes.first();
    let top = sizes.last();
    println!("registry-bench: {} cores, load average before {load_before}, after {load_after}", cores());
    println!();
    println!("| figure | value | target |");
    println!("|---|---|---|");
    for size in sizes {
        println!(
            "| ready time at {} subjects (spawn → first 200, median of {READY_RUNS}; seeded in {:.1} s) | {} | < 100 ms |",
            size.subjects,
            size.seeded.as_secs_f64(),
            ms(size.ready)
        );
        println!("| RSS after ready at {} subjects | {} | < 64 MB |", size.subjects, mib(size.memory.rss_kib));
    }
    if let (Some(zero), Some(top)) = (zero, top) {
        let ready_ratio = top.ready.as_secs_f64() / zero.ready.as_secs_f64().max(1e-9);
        let rss_ratio = top.memory.rss_kib as f64 / zero.memory.rss_kib.max(1) as f64;
        println!("| ready time ratio {} ÷ 0 | {ready_ratio:.2} | ≤ 1.1 |", top.subjects);
        println!("| RSS ratio {} ÷ 0 | {rss_ratio:.2} | ≤ 1.2 |", top.subjects);
    }
    println!(
        "| GET /subjects at {largest} subjects: {} subjects, {} bytes | {} | completes |",
        large.list_subjects,
        large.list_bytes,
        ms(large.list_time)
    );
    println!("| peak RSS (VmHWM) after GET /subjects at {largest} | {} | < 64 MB |", mib(large.list_peak_kib));
    let hot = options.hot;
    let row = |name: &str, result: &LoadResult, target: &str| {
        println!(
            "| {name} | {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms ({} ok, {} errors) | {target} |",
            result.per_second, result.p50_ms, result.p99_ms, result.ok, result.errors
        );
    };
    let secs = options.seconds;
    row(
        &format!("warm GET /schemas/ids/{{id}}, {READ_CONNECTIONS} connections closed loop, {secs} s, {hot} hot ids"),
        &large.by_id,
        "≥ 30,000 req/s",
    );
    row(
        &format!("same, open loop: {READ_CONNECTIONS} connections offering {BY_ID_TARGET} req/s"),
        &large.by_id_open,
        "p99 < 5 ms",
    );
    row(
        &format!(
            "warm POST /subjects/{{s}} lookups, {READ_CONNECTIONS} connections closed loop, {secs} s, {hot} hot subjects"
        ),
        &large.lookups,
        "≥ 20,000 req/s",
    );
    row(
        &format!("same, open loop: {READ_CONNECTIONS} connections offering {LOOKUP_TARGET} req/s"),
        &large.lookups_open,
        "p99 < 5 ms",
    );
    row(
        &format!("new subjects registered, {WRITE_CLIENTS} clients, {} s", options.seconds),
        &large.registrations,
        "≥ 3,000 /s",
    );
    if let Some(pages) = &large.catalog {
        let page = |name: &str, times: &catalog::PageTimes| {
            println!(
                "| {name} at {largest} subjects ({} scanned) | cold {}, warm median {} | same wherever it starts |",
                times.subjects_scanned,
                ms(times.cold),
                ms(times.warm_median)
            );
        };
        page("POST /schemas/search/field, first page", &pages.search_first_page);
        page("same, page from a cursor half-way through", &pages.search_middle_page);
        page("POST /subjects/match, one page of names", &pages.match_page);
        println!("| peak RSS (VmHWM) after the catalog pages at {largest} | {} | < 64 MB |", mib(pages.peak_kib));
    }
    println!("| peak RSS (VmHWM) after all load at {largest} | {} | |", mib(large.peak_after_load_kib));
    match options.aws_calls.as_ref().map(std::fs::read_to_string) {
        Some(Ok(text)) => {
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                println!("| AWS calls: {line} | |");
            }
        }
        Some(Err(error)) => println!("| AWS calls per operation | unreadable: {error} | |"),
        None => println!("| AWS calls per operation | skipped (no emulator) | |"),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map(usize::from).unwrap_or(0)
}
