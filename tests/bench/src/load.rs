//! Load: `connections` keep-alive connections for a fixed duration; throughput and latency
//! percentiles. Closed loop (`rate: None`): each connection sends its next request as soon as the
//! previous answer arrived, which finds the maximum throughput but makes latency mostly queueing
//! (by Little's law, mean latency = connections ÷ throughput). Open loop (`rate: Some(r)`): the
//! connections together offer `r` requests per second on a fixed schedule, which shows the latency
//! a client sees at that load.

use crate::http::Conn;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one load run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadResult {
    /// Answers with the expected status per second of measured time.
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Answers with any other status, or failed connections.
    pub errors: u64,
    pub ok: u64,
}

/// How the clients pace their requests.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub connections: usize,
    pub duration: Duration,
    /// Offered requests per second over all connections; `None`: as fast as answers come.
    pub rate: Option<f64>,
}

/// Runs `shape.connections` clients against `port`. Client `c` sends request `requests(c, i)` as
/// its `i`-th; an answer with `expected` status counts as success. Latency is measured from the
/// moment the request is written.
pub async fn run<F>(port: u16, shape: Shape, expected: u16, requests: F) -> LoadResult
where
    F: Fn(usize, u64) -> Vec<u8> + Send + Sync + 'static,
{
    sample(port, shape, expected, requests).await.result()
}

/// What one or more load runs recorded: every successful answer's latency, the failures and the
/// measured time. Samples of runs against one server merge ([`Sample::add`]), so a run split into
/// slices reports as one.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    latencies_us: Vec<u32>,
    errors: u64,
    elapsed: Duration,
}

impl Sample {
    /// `other`'s answers, failures and time added to this sample's.
    pub fn add(&mut self, other: Sample) {
        self.latencies_us.extend(other.latencies_us);
        self.errors += other.errors;
        self.elapsed += other.elapsed;
    }

    /// Throughput over the measured time and latency percentiles of all the answers.
    pub fn result(mut self) -> LoadResult {
        let all = &mut self.latencies_us;
        all.sort_unstable();
        let percentile = |p: f64| -> f64 {
            if all.is_empty() {
                return f64::NAN;
            }
            let index = ((all.len() as f64 - 1.0) * p).round() as usize;
            f64::from(all[index.min(all.len() - 1)]) / 1000.0
        };
        LoadResult {
            per_second: all.len() as f64 / self.elapsed.as_secs_f64().max(1e-9),
            p50_ms: percentile(0.50),
            p99_ms: percentile(0.99),
            errors: self.errors,
            ok: all.len() as u64,
        }
    }
}

/// [`run`], with the answers' latencies kept ([`Sample`]).
pub async fn sample<F>(port: u16, shape: Shape, expected: u16, requests: F) -> Sample
where
    F: Fn(usize, u64) -> Vec<u8> + Send + Sync + 'static,
{
    let requests = Arc::new(requests);
    let Shape { connections, duration, rate } = shape;
    let interval = rate.map(|rate| Duration::from_secs_f64(connections as f64 / rate.max(1.0)));
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::with_capacity(connections);
    for client in 0..connections {
        let requests = Arc::clone(&requests);
        tasks.push(tokio::spawn(async move {
            let mut latencies_us: Vec<u32> = Vec::with_capacity(64 * 1024);
            let mut errors = 0u64;
            let Ok(mut conn) = Conn::connect_as(port, client).await else {
                return (latencies_us, 1);
            };
            let mut i = 0u64;
            let offset = interval.map(|every| every.mul_f64(client as f64 / connections as f64));
            while Instant::now() < deadline {
                if let (Some(every), Some(offset)) = (interval, offset) {
                    let due = started + offset + every.mul_f64(i as f64);
                    if due >= deadline {
                        break;
                    }
                    tokio::time::sleep_until(due.into()).await;
                }
                let request = requests(client, i);
                i += 1;
                let sent = Instant::now();
                match conn.send(&request, false).await {
                    Ok(response) if response.status == expected => {
                        latencies_us.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                    }
                    Ok(_) => errors += 1,
                    Err(_) => {
                        errors += 1;
                        match Conn::connect_as(port, client).await {
                            Ok(fresh) => conn = fresh,
                            Err(_) => break,
                        }
                    }
                }
            }
            (latencies_us, errors)
        }));
    }
    let mut all: Vec<u32> = Vec::new();
    let mut errors = 0;
    for task in tasks {
        if let Ok((latencies, failed)) = task.await {
            all.extend(latencies);
            errors += failed;
        } else {
            errors += 1;
        }
    }
    Sample { latencies_us: all, errors, elapsed: started.elapsed() }
}
