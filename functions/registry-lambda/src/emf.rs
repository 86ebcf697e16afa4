//! CloudWatch embedded metric format (EMF): one JSON line on stdout per request, which the Lambda
//! log pipeline turns into metrics. No CloudWatch API call is made, on the request path or anywhere.
//! The line is also the request's access line ([`EmfLine`], the application's
//! `registry_http::observability::AnswerLine`): it carries every field of the access line the
//! router logs otherwise (`Method`, `Principal`, `ErrorCode` besides those below), so an invocation
//! writes one line, in one write, not two.
//!
//! Every distinct (namespace, metric, dimension values) is a custom metric billed by the month
//! ($0.30 each for the first 10,000), so the dimensions are chosen to keep a registry at about ten:
//! - `Requests` (Count) and `Latency` (Milliseconds) by `[Registry, StatusClass]` (`2xx`, `3xx`, `4xx`,
//!   `5xx`): at most 8 metrics, where `[Registry, Operation, Status]` made one per operation and status
//!   seen (hundreds, $15-50 a month);
//! - `Latency` by `[Registry, Operation]` only for [`PER_OPERATION`] (registrations: what producers
//!   wait for; reads are answered from memory and show in the status-class latency);
//! - by `[Registry]`, the registry counters that alarms and dashboards need ([`METRIC_COUNTERS`]:
//!   `NewSchemaIds`, `NewVersions`, `ChurnExceeded`, `ChurnRefused`, `StoreThrottles`, and in a
//!   multi-region registry `HomeFallbacks` and `ReplicationAckTimeouts`, [`RegionCounters`]), as
//!   deltas so a sum over any period is exact across instances, declared only on lines where they
//!   are not 0 (a counter that never moves never becomes a metric: a single-region registry never
//!   declares the regional two).
//!
//! Everything else rides along as plain properties, searchable in Logs Insights at no metric cost:
//! `Operation`, `Status` (the number), `Method`, the request id, subject and principal (`anonymous`
//! without verified credentials), the `ErrorCode` of an error answer, the other counters' non-zero deltas
//! (`ExistingRegistrations`, `CompatibilityRejections`, `StoreRetries`, `CacheHits`, `CacheMisses`)
//! and `MaxSchemaId` (the highest ID this instance has seen). `Registry` is the function name
//! (`AWS_LAMBDA_FUNCTION_NAME`).

use registry_core::metrics::MetricsSnapshot;
use registry_core::{CacheStats, Registry};
use registry_http::observability::{ANONYMOUS, AnswerLine, RequestRecord};
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Operations whose latency is also a metric of its own (`Latency` by `[Registry, Operation]`).
pub const PER_OPERATION: &[&str] = &["register_schema"];

/// Counters published as metrics (by `[Registry]`) on the lines where they moved; the others are
/// properties only.
pub const METRIC_COUNTERS: &[&str] = &[
    "NewSchemaIds",
    "NewVersions",
    "ChurnExceeded",
    "ChurnRefused",
    "StoreThrottles",
    "HomeFallbacks",
    "ReplicationAckTimeouts",
];

/// `2xx`, `4xx`, ... of an HTTP status.
fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}

/// Where and under which name the metrics go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmfConfig {
    /// The CloudWatch namespace (`REGISTRY_METRICS_NAMESPACE`, default `SchemaRegistry`).
    pub namespace: String,
    /// The `Registry` dimension: the function name.
    pub registry: String,
}

/// A multi-region function's own counters, as its stores count them since the process started:
/// reads a read region's replica missed and the home region answered (`home_fallback_total`: how
/// often replication lag showed), and writes whose wait for the acknowledging regions ran out
/// (`replication_ack_timeout_total`: RPO 0 not met within `REGISTRY_ACK_TIMEOUT_MS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegionCounters {
    pub home_fallbacks: u64,
    pub ack_timeouts: u64,
}

/// Reads the [`RegionCounters`] at each line.
pub type RegionProbe = Arc<dyn Fn() -> RegionCounters + Send + Sync>;

/// The registry counters a line reports as deltas, by name, in the order a line lists them.
type Counters = [(&'static str, u64); 12];

/// The counters' current values: the registry's (`snapshot`), the cache's and the regions'.
fn counters(snapshot: &MetricsSnapshot, cache: Option<CacheStats>, regions: RegionCounters) -> Counters {
    [
        ("NewSchemaIds", snapshot.registrations_new_id),
        ("NewVersions", snapshot.registrations_new_version),
        ("ExistingRegistrations", snapshot.registrations_existing),
        ("CompatibilityRejections", snapshot.compatibility_rejections),
        ("StoreRetries", snapshot.store_retries),
        ("StoreThrottles", snapshot.store_throttles),
        ("ChurnExceeded", snapshot.churn_exceeded),
        ("ChurnRefused", snapshot.churn_refused),
        ("CacheHits", cache.map_or(0, |c| c.hits)),
        ("CacheMisses", cache.map_or(0, |c| c.misses)),
        ("HomeFallbacks", regions.home_fallbacks),
        ("ReplicationAckTimeouts", regions.ack_timeouts),
    ]
}

/// Turns request records into EMF lines, remembering the counters already reported.
pub struct Emf {
    config: EmfConfig,
    regions: Option<RegionProbe>,
    reported: Mutex<Counters>,
    /// The directives every line (`Requests` and `Latency` by status class) and every line of a
    /// [`PER_OPERATION`] operation carry, as JSON text: the same on every line.
    requests_directive: String,
    operation_directive: String,
}

impl std::fmt::Debug for Emf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emf").field("config", &self.config).field("regions", &self.regions.is_some()).finish()
    }
}

impl Emf {
    /// An emitter that has reported nothing yet.
    pub fn new(config: EmfConfig) -> Emf {
        let nothing = counters(&MetricsSnapshot::default(), None, RegionCounters::default());
        let latency = json!({ "Name": "Latency", "Unit": "Milliseconds" });
        let requests = json!({
            "Namespace": config.namespace,
            "Dimensions": [["Registry", "StatusClass"]],
            "Metrics": [{ "Name": "Requests", "Unit": "Count" }, latency],
        });
        let operation =
            json!({ "Namespace": config.namespace, "Dimensions": [["Registry", "Operation"]], "Metrics": [latency] });
        Emf {
            config,
            regions: None,
            reported: Mutex::new(nothing),
            requests_directive: requests.to_string(),
            operation_directive: operation.to_string(),
        }
    }

    /// This emitter also reporting a multi-region function's counters, read by `probe`.
    pub fn with_regions(mut self, probe: RegionProbe) -> Emf {
        self.regions = Some(probe);
        self
    }

    /// The EMF line for `record`, with the registry counters' growth since the previous line
    /// (`snapshot`, `cache`: their current values) at `timestamp_ms`.
    pub fn line(
        &self,
        record: &RequestRecord,
        snapshot: &MetricsSnapshot,
        cache: Option<CacheStats>,
        timestamp_ms: u64,
    ) -> String {
        let regions = self.regions.as_ref().map(|probe| probe()).unwrap_or_default();
        let now = counters(snapshot, cache, regions);
        let previous = {
            let mut reported = self.reported.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            std::mem::replace(&mut *reported, now)
        };
        // Written field by field into one buffer (the line is on every request's path): the
        // object a `serde_json::Map` would give, in the same order, without building one.
        let mut line = JsonObject::with_capacity(640);
        line.field("Registry", self.config.registry.as_str());
        line.field("StatusClass", status_class(record.status));
        line.field("Operation", record.operation);
        line.field("Status", record.status);
        line.field("Requests", 1);
        line.field("Latency", record.latency_ms);
        let mut counter_metrics = Vec::new();
        for ((name, value), (_, before)) in now.iter().zip(previous) {
            let delta = value.saturating_sub(before);
            if delta == 0 {
                continue;
            }
            line.field(name, delta);
            if METRIC_COUNTERS.contains(name) {
                counter_metrics.push(json!({ "Name": name, "Unit": "Count" }));
            }
        }
        if snapshot.max_schema_id > 0 {
            line.field("MaxSchemaId", snapshot.max_schema_id);
        }
        line.field("RequestId", record.request_id());
        if let Some(subject) = &record.subject {
            line.field("Subject", subject.as_str());
        }
        line.field("Method", record.method.as_str());
        line.field("Principal", record.principal.as_deref().unwrap_or(ANONYMOUS));
        if let Some(code) = record.error_code {
            line.field("ErrorCode", code);
        }
        let mut aws = JsonObject::with_capacity(384);
        aws.field("Timestamp", timestamp_ms);
        let mut directives = String::with_capacity(256);
        directives.push('[');
        directives.push_str(&self.requests_directive);
        if PER_OPERATION.contains(&record.operation) {
            directives.push(',');
            directives.push_str(&self.operation_directive);
        }
        if !counter_metrics.is_empty() {
            let counters =
                json!({ "Namespace": self.config.namespace, "Dimensions": [["Registry"]], "Metrics": counter_metrics });
            directives.push(',');
            directives.push_str(&counters.to_string());
        }
        directives.push(']');
        aws.raw_field("CloudWatchMetrics", &directives);
        line.raw_field("_aws", &aws.finish());
        line.finish()
    }
}

/// A JSON object written field by field (each value serialized by `serde_json`).
struct JsonObject(Vec<u8>);

impl JsonObject {
    fn with_capacity(capacity: usize) -> JsonObject {
        let mut text = Vec::with_capacity(capacity);
        text.push(b'{');
        JsonObject(text)
    }

    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(b',');
        }
        self.push(key);
        self.0.push(b':');
    }

    fn push(&mut self, value: impl serde::Serialize) {
        // Strings and numbers: nothing here can fail to serialize.
        let _ = serde_json::to_writer(&mut self.0, &value);
    }

    fn field(&mut self, key: &str, value: impl serde::Serialize) {
        self.key(key);
        self.push(value);
    }

    /// A field whose value is `json`, JSON text already.
    fn raw_field(&mut self, key: &str, json: &str) {
        self.key(key);
        self.0.extend_from_slice(json.as_bytes());
    }

    fn finish(mut self) -> String {
        self.0.push(b'}');
        // Only serde_json's output and JSON text went in: valid UTF-8.
        String::from_utf8(self.0).unwrap_or_default()
    }
}

/// The function's [`AnswerLine`]: each answer's EMF line on stdout, in one write. It writes once
/// [`EmfLine::start`] gave it the emitter and the registry whose counters the lines report (the
/// application is assembled with the line before that registry exists).
#[derive(Debug, Default)]
pub struct EmfLine {
    started: OnceLock<(Emf, Registry)>,
}

impl EmfLine {
    /// Lines from now on by `emf`, with `registry`'s counters (the first call counts).
    pub fn start(&self, emf: Emf, registry: Registry) {
        let _ = self.started.set((emf, registry));
    }
}

impl AnswerLine for EmfLine {
    fn answered(&self, record: &RequestRecord) {
        let Some((emf, registry)) = self.started.get() else { return };
        let timestamp_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let mut line = emf.line(record, &registry.metrics().counters(), registry.store().cache_stats(), timestamp_ms);
        line.push('\n');
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::metrics::{Metrics, Registration};
    use serde_json::Value;

    fn record() -> RequestRecord {
        RequestRecord {
            operation: "register_schema",
            subject: Some("orders-value".into()),
            status: 200,
            latency_ms: 12.5,
            request_id: axum::http::HeaderValue::from_static("req-1"),
            writes: true,
            method: axum::http::Method::POST,
            principal: Some("alice".into()),
            error_code: None,
        }
    }

    fn emf_config() -> EmfConfig {
        EmfConfig { namespace: "SchemaRegistry".into(), registry: "team-registry".into() }
    }

    fn emf() -> Emf {
        Emf::new(emf_config())
    }

    fn parse(line: &str) -> Value {
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Every (metric, dimension names) a line declares.
    fn declared(line: &Value) -> Vec<(String, Vec<String>)> {
        let mut found = Vec::new();
        for directive in line["_aws"]["CloudWatchMetrics"].as_array().into_iter().flatten() {
            for set in directive["Dimensions"].as_array().into_iter().flatten() {
                let dimensions: Vec<String> =
                    set.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
                for metric in directive["Metrics"].as_array().into_iter().flatten() {
                    found.push((metric["Name"].as_str().unwrap_or_default().to_string(), dimensions.clone()));
                }
            }
        }
        found
    }

    #[test]
    fn every_declared_metric_has_its_value_and_every_dimension_its_property() {
        let metrics = Metrics::default();
        metrics.record_registration(Registration::NewId, 42);
        let line = parse(&emf().line(&record(), &metrics.snapshot(), None, 1_700_000_000_000));
        assert!(!emf().line(&record(), &metrics.snapshot(), None, 1).contains('\n'), "one line");
        assert_eq!(line["_aws"]["Timestamp"], 1_700_000_000_000u64);
        for directive in line["_aws"]["CloudWatchMetrics"].as_array().into_iter().flatten() {
            assert_eq!(directive["Namespace"], "SchemaRegistry");
        }
        for (metric, dimensions) in declared(&line) {
            assert!(line[&metric].is_number(), "metric {metric} has no numeric value: {line}");
            for name in dimensions {
                assert!(line[&name].is_string(), "dimension {name} must be a string property: {line}");
            }
        }
        assert_eq!((line["Operation"].as_str(), line["Status"].as_u64()), (Some("register_schema"), Some(200)));
        assert_eq!((line["Requests"].as_u64(), line["Latency"].as_f64()), (Some(1), Some(12.5)));
        assert_eq!((line["NewSchemaIds"].as_u64(), line["MaxSchemaId"].as_u64()), (Some(1), Some(42)));
        assert_eq!((line["RequestId"].as_str(), line["Subject"].as_str()), (Some("req-1"), Some("orders-value")));
        // The access line's fields, the line being the request's only one.
        assert_eq!((line["Method"].as_str(), line["Principal"].as_str()), (Some("POST"), Some("alice")));
        assert_eq!(line.get("ErrorCode"), None, "a success has no error code");
        let refused = RequestRecord { status: 409, error_code: Some(40901), principal: None, ..record() };
        let refused = parse(&emf().line(&refused, &metrics.snapshot(), None, 1));
        assert_eq!((refused["ErrorCode"].as_u64(), refused["Principal"].as_str()), (Some(40901), Some("anonymous")));
    }

    #[test]
    fn dimensions_are_few_whatever_the_operations_and_statuses() {
        let emf = emf();
        let metrics = Metrics::default();
        let mut series = std::collections::BTreeSet::new();
        let operations = ["register_schema", "get_schema_by_id", "look_up_schema_under_subject", "list_subjects"];
        for (index, operation) in operations.into_iter().cycle().take(40).enumerate() {
            let status = [200u16, 201, 204, 304, 401, 403, 404, 409, 422, 500][index % 10];
            let record = RequestRecord { operation, status, ..record() };
            let line = parse(&emf.line(&record, &metrics.snapshot(), None, 1));
            for (metric, dimensions) in declared(&line) {
                let values: Vec<String> =
                    dimensions.iter().map(|name| line[name].as_str().unwrap_or_default().to_string()).collect();
                series.insert((metric, values));
            }
        }
        // Requests and Latency by 2xx/3xx/4xx/5xx, and register_schema's own latency.
        assert_eq!(series.len(), 4 * 2 + 1, "{series:?}");
        let dimension_sets: std::collections::BTreeSet<_> =
            declared(&parse(&emf.line(&record(), &metrics.snapshot(), None, 1))).into_iter().map(|(_, d)| d).collect();
        assert!(!dimension_sets.iter().any(|set| set.contains(&"Status".to_string())), "{dimension_sets:?}");
    }

    #[test]
    fn counters_are_reported_as_deltas_between_lines() {
        let emf = emf();
        let metrics = Metrics::default();
        metrics.record_churn(true);
        metrics.record_store_retry();
        let cache = CacheStats { entries: 1, bytes: 10, hits: 3, misses: 1 };
        let first = parse(&emf.line(&record(), &metrics.snapshot(), Some(cache), 1));
        assert_eq!((first["ChurnExceeded"].as_u64(), first["ChurnRefused"].as_u64()), (Some(1), Some(1)));
        assert_eq!((first["StoreRetries"].as_u64(), first["CacheHits"].as_u64()), (Some(1), Some(3)));
        let metric_names: Vec<String> = declared(&first).into_iter().map(|(name, _)| name).collect();
        assert!(metric_names.contains(&"ChurnExceeded".to_string()), "alarmed counters are metrics");
        assert!(!metric_names.contains(&"CacheHits".to_string()), "other counters are properties only");
        let cache = CacheStats { hits: 5, ..cache };
        let second = parse(&emf.line(&record(), &metrics.snapshot(), Some(cache), 2));
        assert_eq!((second.get("ChurnExceeded"), second.get("StoreRetries")), (None, None), "0 is left out");
        assert_eq!(second["CacheHits"].as_u64(), Some(2));
        assert!(declared(&second).iter().all(|(_, dimensions)| dimensions != &["Registry".to_string()]));
    }

    #[test]
    fn a_multi_region_functions_counters_are_metrics_when_they_move() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let fallbacks = Arc::new(AtomicU64::new(0));
        let seen = fallbacks.clone();
        let probe: RegionProbe =
            Arc::new(move || RegionCounters { home_fallbacks: seen.load(Ordering::Relaxed), ack_timeouts: 0 });
        let emf = emf().with_regions(probe);
        let snapshot = MetricsSnapshot::default();
        let quiet = parse(&emf.line(&record(), &snapshot, None, 1));
        assert_eq!(quiet.get("HomeFallbacks"), None, "a counter that did not move is left out: {quiet}");
        fallbacks.store(3, Ordering::Relaxed);
        let first = parse(&emf.line(&record(), &snapshot, None, 2));
        assert_eq!(first["HomeFallbacks"].as_u64(), Some(3));
        let registry = vec!["Registry".to_string()];
        assert!(declared(&first).contains(&("HomeFallbacks".to_string(), registry.clone())), "{first}");
        fallbacks.store(5, Ordering::Relaxed);
        let second = parse(&emf.line(&record(), &snapshot, None, 3));
        assert_eq!(second["HomeFallbacks"].as_u64(), Some(2), "a delta since the previous line");
        let single = parse(&super::Emf::new(emf_config()).line(&record(), &snapshot, None, 4));
        assert!(!single.to_string().contains("HomeFallbacks") && !single.to_string().contains("ReplicationAck"));
    }

    #[test]
    fn max_schema_id_is_left_out_until_one_is_seen() {
        let line = parse(&emf().line(&record(), &MetricsSnapshot::default(), None, 1));
        assert!(line.get("MaxSchemaId").is_none());
        assert!(!line.to_string().contains("\"MaxSchemaId\""));
    }
}
