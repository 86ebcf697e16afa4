//! In-process operational metrics: request counts and latency by operation and status, and the
//! registry's own signals (registrations by outcome, compatibility rejections, storage retries and
//! throttles, churn-guard trips, the highest schema ID seen). Atomics only, no exporter here: the
//! router renders Prometheus text and the Lambda writes CloudWatch EMF lines from [`MetricsSnapshot`].
//!
//! Counters are per process (per Lambda instance): they start at zero and only grow. Aggregation
//! across processes is the metric backend's job (Prometheus `sum`, CloudWatch statistics).

use std::collections::BTreeMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

/// Upper bounds (milliseconds) of the latency histogram buckets; a final `+Inf` bucket is implied.
pub const LATENCY_BUCKETS_MS: [f64; 12] =
    [1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0];

/// A latency histogram with fixed buckets ([`LATENCY_BUCKETS_MS`]).
#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; LATENCY_BUCKETS_MS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

/// A point-in-time copy of a [`Histogram`].
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// Cumulative counts per bucket, in [`LATENCY_BUCKETS_MS`] order (Prometheus `le` semantics).
    pub cumulative: Vec<u64>,
    /// Observations (the `+Inf` bucket).
    pub count: u64,
    /// Sum of observations in milliseconds.
    pub sum_ms: f64,
}

impl Histogram {
    /// Records one observation of `ms` milliseconds (negative or NaN counts as 0).
    pub fn observe(&self, ms: f64) {
        let ms = if ms.is_finite() && ms > 0.0 { ms } else { 0.0 };
        if let Some(index) = LATENCY_BUCKETS_MS.iter().position(|bound| ms <= *bound)
            && let Some(bucket) = self.buckets.get(index)
        {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        // Saturating float→int conversion: an absurd latency cannot wrap the sum.
        self.sum_micros.fetch_add((ms * 1000.0) as u64, Ordering::Relaxed);
    }

    /// The current counts.
    pub fn snapshot(&self) -> HistogramSnapshot {
        Histogram::sum(&[self])
    }

    /// The current counts of `histograms` added up (one series' stripes).
    fn sum(histograms: &[&Histogram]) -> HistogramSnapshot {
        let load = |read: &dyn Fn(&Histogram) -> &AtomicU64| -> u64 {
            histograms.iter().map(|histogram| read(histogram).load(Ordering::Relaxed)).sum()
        };
        let mut running = 0;
        let cumulative = (0..LATENCY_BUCKETS_MS.len())
            .map(|index| {
                running += load(&|histogram| &histogram.buckets[index]);
                running
            })
            .collect();
        HistogramSnapshot {
            cumulative,
            count: load(&|histogram| &histogram.count),
            sum_ms: load(&|histogram| &histogram.sum_micros) as f64 / 1000.0,
        }
    }
}

/// What a registration did, for the registrations counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// The schema already was a live version of the subject: nothing written.
    Existing,
    /// A new version carrying an ID the schema already had (registered under another subject).
    NewVersion,
    /// A new version with a newly allocated ID.
    NewId,
}

/// The request series of one [`STRIPES`]th of the threads, on cache lines of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Stripe(RwLock<BTreeMap<(&'static str, u16), Histogram>>);

/// Request series are kept per thread stripe and summed when read: every request records one, and
/// with one shared map and histogram per series the threads serving requests would fight over the
/// same lock and counters on every request.
const STRIPES: usize = 8;

/// The stripe of the calling thread (threads take them in turn, the first time they record).
fn stripe_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

/// The registry's metrics. Shared by every clone of a [`crate::Registry`] ([`crate::Registry::metrics`]).
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [Stripe; STRIPES],
    registrations_existing: AtomicU64,
    registrations_new_version: AtomicU64,
    registrations_new_id: AtomicU64,
    compatibility_rejections: AtomicU64,
    store_retries: AtomicU64,
    store_throttles: AtomicU64,
    churn_exceeded: AtomicU64,
    churn_refused: AtomicU64,
    max_schema_id: AtomicI64,
}

/// One (operation, status) series of [`MetricsSnapshot::requests`].
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSeries {
    /// Confluent's operation name in snake_case (`register_schema`), or `unknown`.
    pub operation: &'static str,
    /// The HTTP status answered.
    pub status: u16,
    /// Latency of those requests; `count` is the request count.
    pub latency: HistogramSnapshot,
}

/// A point-in-time copy of every counter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// Request series ordered by (operation, status).
    pub requests: Vec<RequestSeries>,
    /// Registrations answered with an existing version (idempotent re-registration).
    pub registrations_existing: u64,
    /// Registrations that appended a version with an ID the schema already had.
    pub registrations_new_version: u64,
    /// Registrations that allocated a new schema ID.
    pub registrations_new_id: u64,
    /// Registrations refused as incompatible (409).
    pub compatibility_rejections: u64,
    /// Conditional writes lost to a concurrent writer and retried.
    pub store_retries: u64,
    /// Requests that failed because storage was throttled or unavailable (50002).
    pub store_throttles: u64,
    /// New-version registrations over the churn threshold (counted whether enforced or not).
    pub churn_exceeded: u64,
    /// Of those, registrations refused with 429 because the guard enforces.
    pub churn_refused: u64,
    /// The highest schema ID this process registered or saw registered (0: none yet).
    pub max_schema_id: i64,
}

impl Metrics {
    /// Records one answered request.
    pub fn record_request(&self, operation: &'static str, status: u16, latency_ms: f64) {
        let key = (operation, status);
        let Stripe(series) = &self.requests[stripe_index()];
        if let Some(histogram) = series.read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key) {
            histogram.observe(latency_ms);
            return;
        }
        series.write().unwrap_or_else(|poisoned| poisoned.into_inner()).entry(key).or_default().observe(latency_ms);
    }

    /// Records a registration outcome with the ID it answered.
    pub fn record_registration(&self, outcome: Registration, id: i32) {
        let counter = match outcome {
            Registration::Existing => &self.registrations_existing,
            Registration::NewVersion => &self.registrations_new_version,
            Registration::NewId => &self.registrations_new_id,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.observe_schema_id(id);
    }

    /// Raises the highest-ID gauge to `id` if it is higher.
    pub fn observe_schema_id(&self, id: i32) {
        self.max_schema_id.fetch_max(i64::from(id), Ordering::Relaxed);
    }

    /// Counts a registration refused as incompatible.
    pub fn record_compatibility_rejection(&self) {
        self.compatibility_rejections.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a lost conditional write that is retried.
    pub fn record_store_retry(&self) {
        self.store_retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request failed by throttled or unavailable storage.
    pub fn record_store_throttle(&self) {
        self.store_throttles.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a registration over the churn threshold, and whether it was refused.
    pub fn record_churn(&self, refused: bool) {
        self.churn_exceeded.fetch_add(1, Ordering::Relaxed);
        if refused {
            self.churn_refused.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Copies every counter (each is read atomically; the set is not one transaction).
    pub fn snapshot(&self) -> MetricsSnapshot {
        let stripes: Vec<_> = self
            .requests
            .iter()
            .map(|Stripe(stripe)| stripe.read().unwrap_or_else(|poisoned| poisoned.into_inner()))
            .collect();
        let mut series: BTreeMap<(&'static str, u16), Vec<&Histogram>> = BTreeMap::new();
        for (&key, histogram) in stripes.iter().flat_map(|stripe| stripe.iter()) {
            series.entry(key).or_default().push(histogram);
        }
        let requests = series
            .into_iter()
            .map(|((operation, status), histograms)| RequestSeries {
                operation,
                status,
                latency: Histogram::sum(&histograms),
            })
            .collect();
        MetricsSnapshot { requests, ..self.counters() }
    }

    /// [`Metrics::snapshot`] without the request series (`requests` is empty): the counters alone,
    /// read with no lock and no copy of a histogram, for what reports them on every request (the
    /// Lambda function's EMF line).
    pub fn counters(&self) -> MetricsSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        MetricsSnapshot {
            requests: Vec::new(),
            registrations_existing: load(&self.registrations_existing),
            registrations_new_version: load(&self.registrations_new_version),
            registrations_new_id: load(&self.registrations_new_id),
            compatibility_rejections: load(&self.compatibility_rejections),
            store_retries: load(&self.store_retries),
            store_throttles: load(&self.store_throttles),
            churn_exceeded: load(&self.churn_exceeded),
            churn_refused: load(&self.churn_refused),
            max_schema_id: self.max_schema_id.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_are_the_snapshot_without_its_request_series() {
        let metrics = Metrics::default();
        metrics.record_request("register_schema", 200, 3.0);
        metrics.record_registration(Registration::NewId, 7);
        metrics.record_store_retry();
        let (counters, snapshot) = (metrics.counters(), metrics.snapshot());
        assert!(counters.requests.is_empty());
        assert_eq!(snapshot.requests.len(), 1);
        assert_eq!(MetricsSnapshot { requests: Vec::new(), ..snapshot }, counters);
        assert_eq!((counters.registrations_new_id, counters.store_retries, counters.max_schema_id), (1, 1, 7));
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_sum_in_ms() {
        let histogram = Histogram::default();
        for ms in [0.5, 3.0, 3.0, 120.0, 99_999.0] {
            histogram.observe(ms);
        }
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, 5);
        assert_eq!(snapshot.cumulative.first(), Some(&1), "le=1");
        assert_eq!(snapshot.cumulative.get(2), Some(&3), "le=5");
        assert_eq!(snapshot.cumulative.get(7), Some(&4), "le=250");
        assert_eq!(snapshot.cumulative.last(), Some(&4), "the 99 s one is only in +Inf");
        assert!((snapshot.sum_ms - 100_125.5).abs() < 0.01);
    }

    #[test]
    fn requests_are_counted_per_operation_and_status() {
        let metrics = Metrics::default();
        metrics.record_request("register_schema", 200, 4.0);
        metrics.record_request("register_schema", 200, 6.0);
        metrics.record_request("register_schema", 409, 1.0);
        metrics.record_request("get_schemas_by_id", 404, 1.0);
        let snapshot = metrics.snapshot();
        let counts: Vec<(&str, u16, u64)> =
            snapshot.requests.iter().map(|s| (s.operation, s.status, s.latency.count)).collect();
        assert_eq!(
            counts,
            vec![("get_schemas_by_id", 404, 1), ("register_schema", 200, 2), ("register_schema", 409, 1)]
        );
    }

    /// Each thread records into a stripe of its own; a series read adds up every stripe's.
    #[test]
    fn requests_from_many_threads_are_one_series_each() {
        let metrics = Metrics::default();
        std::thread::scope(|scope| {
            for thread in 0..STRIPES + 3 {
                let metrics = &metrics;
                scope.spawn(move || {
                    for n in 0..100 {
                        metrics.record_request("get_schemas_by_id", 200, if n % 2 == 0 { 0.5 } else { 3.0 });
                    }
                    metrics.record_request("register_schema", 201 + (thread % 2) as u16, 1.0);
                });
            }
        });
        let snapshot = metrics.snapshot();
        let threads = (STRIPES + 3) as u64;
        let counts: Vec<(&str, u16, u64)> =
            snapshot.requests.iter().map(|s| (s.operation, s.status, s.latency.count)).collect();
        assert_eq!(
            counts,
            [("get_schemas_by_id", 200, threads * 100), ("register_schema", 201, 6), ("register_schema", 202, 5)]
        );
        let by_id = &snapshot.requests[0].latency;
        assert_eq!(by_id.cumulative[..3], [threads * 50, threads * 50, threads * 100], "≤1, ≤2.5, ≤5 ms");
        assert!((by_id.sum_ms - threads as f64 * (50.0 * 0.5 + 50.0 * 3.0)).abs() < 1e-6);
    }

    #[test]
    fn max_schema_id_only_grows() {
        let metrics = Metrics::default();
        metrics.record_registration(Registration::NewId, 7);
        metrics.record_registration(Registration::Existing, 3);
        let snapshot = metrics.snapshot();
        assert_eq!(snapshot.max_schema_id, 7);
        assert_eq!((snapshot.registrations_new_id, snapshot.registrations_existing), (1, 1));
    }
}
