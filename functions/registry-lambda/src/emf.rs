//! CloudWatch embedded metric format (EMF): one JSON line on stdout per request, which the Lambda
//! log pipeline turns into metrics. No CloudWatch API call is made, on the request path or anywhere.
//!
//! Each line carries two metric directives in [`EmfConfig::namespace`] (default `SchemaRegistry`):
//! - `Requests` (Count) and `Latency` (Milliseconds) with dimension sets `[Registry, Operation, Status]`
//!   and `[Registry]`;
//! - with dimension `[Registry]`, what the registry did during this request (deltas of its counters,
//!   so a sum over any period is exact across instances): `NewSchemaIds`, `NewVersions`,
//!   `ExistingRegistrations`, `CompatibilityRejections`, `StoreRetries`, `StoreThrottles`,
//!   `ChurnExceeded`, `ChurnRefused`, `CacheHits`, `CacheMisses` (Count), and `MaxSchemaId` (None;
//!   the highest ID this instance has seen, once it has seen one; alarm on its `Maximum`).
//!
//! `Registry` is the function name (`AWS_LAMBDA_FUNCTION_NAME`). The request id and subject ride
//! along as plain properties (searchable in Logs Insights, not dimensions).

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use registry_core::metrics::MetricsSnapshot;
use registry_core::{CacheStats, Registry};
use registry_http::observability::RequestRecord;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where and under which name the metrics go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmfConfig {
    /// The CloudWatch namespace (`REGISTRY_METRICS_NAMESPACE`, default `SchemaRegistry`).
    pub namespace: String,
    /// The `Registry` dimension: the function name.
    pub registry: String,
}

/// The registry counters a line reports as deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counters {
    new_ids: u64,
    new_versions: u64,
    existing: u64,
    rejections: u64,
    retries: u64,
    throttles: u64,
    churn_exceeded: u64,
    churn_refused: u64,
    cache_hits: u64,
    cache_misses: u64,
}

impl Counters {
    fn of(snapshot: &MetricsSnapshot, cache: Option<CacheStats>) -> Counters {
        Counters {
            new_ids: snapshot.registrations_new_id,
            new_versions: snapshot.registrations_new_version,
            existing: snapshot.registrations_existing,
            rejections: snapshot.compatibility_rejections,
            retries: snapshot.store_retries,
            throttles: snapshot.store_throttles,
            churn_exceeded: snapshot.churn_exceeded,
            churn_refused: snapshot.churn_refused,
            cache_hits: cache.map_or(0, |c| c.hits),
            cache_misses: cache.map_or(0, |c| c.misses),
        }
    }

    fn named(&self) -> [(&'static str, u64); 10] {
        [
            ("NewSchemaIds", self.new_ids),
            ("NewVersions", self.new_versions),
            ("ExistingRegistrations", self.existing),
            ("CompatibilityRejections", self.rejections),
            ("StoreRetries", self.retries),
            ("StoreThrottles", self.throttles),
            ("ChurnExceeded", self.churn_exceeded),
            ("ChurnRefused", self.churn_refused),
            ("CacheHits", self.cache_hits),
            ("CacheMisses", self.cache_misses),
        ]
    }
}

/// Turns request records into EMF lines, remembering the counters already reported.
#[derive(Debug)]
pub struct Emf {
    config: EmfConfig,
    reported: Mutex<Counters>,
}

impl Emf {
    /// An emitter that has reported nothing yet.
    pub fn new(config: EmfConfig) -> Emf {
        Emf { config, reported: Mutex::new(Counters::default()) }
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
        let now = Counters::of(snapshot, cache);
        let previous = {
            let mut reported = self.reported.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            std::mem::replace(&mut *reported, now)
        };
        let namespace = self.config.namespace.as_str();
        let count = |name: &str| json!({ "Name": name, "Unit": "Count" });
        let mut registry_metrics: Vec<Value> = now.named().iter().map(|(name, _)| count(name)).collect();
        let mut line = Map::new();
        line.insert("Registry".into(), json!(self.config.registry));
        line.insert("Operation".into(), json!(record.operation));
        line.insert("Status".into(), json!(record.status.to_string()));
        line.insert("Requests".into(), json!(1));
        line.insert("Latency".into(), json!(record.latency_ms));
        for ((name, value), (_, before)) in now.named().iter().zip(previous.named()) {
            line.insert((*name).into(), json!(value.saturating_sub(before)));
        }
        if snapshot.max_schema_id > 0 {
            registry_metrics.push(json!({ "Name": "MaxSchemaId", "Unit": "None" }));
            line.insert("MaxSchemaId".into(), json!(snapshot.max_schema_id));
        }
        line.insert("RequestId".into(), json!(record.request_id));
        if let Some(subject) = &record.subject {
            line.insert("Subject".into(), json!(subject));
        }
        let aws = json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [["Registry", "Operation", "Status"], ["Registry"]],
                    "Metrics": [{ "Name": "Requests", "Unit": "Count" }, { "Name": "Latency", "Unit": "Milliseconds" }],
                },
                { "Namespace": namespace, "Dimensions": [["Registry"]], "Metrics": registry_metrics },
            ],
        });
        line.insert("_aws".into(), aws);
        Value::Object(line).to_string()
    }
}

/// `router` with one EMF line written to stdout after each answer that carries a
/// [`RequestRecord`] (every answer of `registry_http::app`).
pub fn layer(router: axum::Router, registry: Registry, emf: Arc<Emf>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state((registry, emf), emit))
}

async fn emit(State((registry, emf)): State<(Registry, Arc<Emf>)>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if let Some(record) = response.extensions().get::<RequestRecord>() {
        let timestamp_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let line = emf.line(record, &registry.metrics().snapshot(), registry.store().cache_stats(), timestamp_ms);
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::metrics::{Metrics, Registration};

    fn record() -> RequestRecord {
        RequestRecord {
            operation: "register_schema",
            subject: Some("orders-value".into()),
            status: 200,
            latency_ms: 12.5,
            request_id: "req-1".into(),
        }
    }

    fn emf() -> Emf {
        Emf::new(EmfConfig { namespace: "SchemaRegistry".into(), registry: "team-registry".into() })
    }

    fn parse(line: &str) -> Value {
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    #[test]
    fn every_declared_metric_has_its_value_and_every_dimension_its_property() {
        let metrics = Metrics::default();
        metrics.record_registration(Registration::NewId, 42);
        let line = parse(&emf().line(&record(), &metrics.snapshot(), None, 1_700_000_000_000));
        assert!(!emf().line(&record(), &metrics.snapshot(), None, 1).contains('\n'), "one line");
        assert_eq!(line["_aws"]["Timestamp"], 1_700_000_000_000u64);
        let directives = line["_aws"]["CloudWatchMetrics"].as_array().cloned().unwrap_or_default();
        assert_eq!(directives.len(), 2);
        for directive in &directives {
            assert_eq!(directive["Namespace"], "SchemaRegistry");
            for set in directive["Dimensions"].as_array().into_iter().flatten() {
                for dimension in set.as_array().into_iter().flatten() {
                    let name = dimension.as_str().unwrap_or_default();
                    assert!(line[name].is_string(), "dimension {name} must be a string property: {line}");
                }
            }
            for metric in directive["Metrics"].as_array().into_iter().flatten() {
                let name = metric["Name"].as_str().unwrap_or_default();
                assert!(line[name].is_number(), "metric {name} has no numeric value: {line}");
            }
        }
        assert_eq!((line["Operation"].as_str(), line["Status"].as_str()), (Some("register_schema"), Some("200")));
        assert_eq!((line["Requests"].as_u64(), line["Latency"].as_f64()), (Some(1), Some(12.5)));
        assert_eq!((line["NewSchemaIds"].as_u64(), line["MaxSchemaId"].as_u64()), (Some(1), Some(42)));
        assert_eq!((line["RequestId"].as_str(), line["Subject"].as_str()), (Some("req-1"), Some("orders-value")));
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
        let cache = CacheStats { hits: 5, ..cache };
        let second = parse(&emf.line(&record(), &metrics.snapshot(), Some(cache), 2));
        assert_eq!((second["ChurnExceeded"].as_u64(), second["StoreRetries"].as_u64()), (Some(0), Some(0)));
        assert_eq!(second["CacheHits"].as_u64(), Some(2));
    }

    #[test]
    fn max_schema_id_is_left_out_until_one_is_seen() {
        let line = parse(&emf().line(&record(), &MetricsSnapshot::default(), None, 1));
        assert!(line.get("MaxSchemaId").is_none());
        assert!(!line.to_string().contains("\"MaxSchemaId\""));
    }
}
