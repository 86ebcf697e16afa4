//! `GET /metrics`: the registry's metrics in the Prometheus text exposition format (0.0.4).
//!
//! The path is outside Confluent's API (no Confluent resource is called `metrics`), so clients
//! never reach it by accident. Access: with authentication on it needs the `read` role like every
//! other `GET` (a scraper gets its own read-only user); without authentication it is open like
//! the rest of the API. Values are per process: they start at zero and only grow (the highest
//! schema ID is read from the store at scrape time when it answers).
//!
//! Families (all prefixed `schema_registry_`): `requests_total{operation,status}` and
//! `request_duration_seconds{operation,status}` (histogram); `registrations_total{outcome}` with
//! `new_id`, `new_version` (an existing ID under a new subject) and `existing` (idempotent);
//! `compatibility_rejections_total`; `store_retries_total` (lost conditional writes retried);
//! `store_throttles_total` (answers 50002); `churn_exceeded_total`, `churn_refused_total`;
//! `max_schema_id`; with authentication on, `password_verifications_total` (argon2 checks run) and
//! `password_refusals_total` (checks the per-address gate answered as wrong without argon2: a
//! wrong-password flood shows here); and, when the store has an in-process cache, `cache_hits_total`,
//! `cache_misses_total`, `cache_entries`, `cache_bytes`.

use crate::AppState;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use registry_core::CacheStats;
use registry_core::metrics::{LATENCY_BUCKETS_MS, MetricsSnapshot};
use std::fmt::Write;

/// The Content-Type of the text exposition format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /metrics`.
pub async fn get_metrics(State(state): State<AppState>) -> Response {
    let mut snapshot = state.registry.metrics().snapshot();
    if let Ok(Some(id)) = state.registry.store().max_id_in(&registry_core::Context::DEFAULT).await {
        snapshot.max_schema_id = snapshot.max_schema_id.max(i64::from(id.0));
    }
    let mut text = render(&snapshot, state.registry.store().cache_stats());
    if let Some(authenticator) = &state.authenticator {
        let passwords = authenticator.password_pool();
        render_passwords(&mut text, passwords.verifications(), passwords.refusals());
    }
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROMETHEUS_TEXT));
    response
}

/// The exposition text for `snapshot` (and the cache statistics, when there is a cache).
pub fn render(snapshot: &MetricsSnapshot, cache: Option<CacheStats>) -> String {
    let mut out = String::new();
    family(&mut out, "requests_total", "counter", "Requests answered, by operation and status.");
    for series in &snapshot.requests {
        let labels = format!("operation=\"{}\",status=\"{}\"", series.operation, series.status);
        line(&mut out, "requests_total", &labels, series.latency.count as f64);
    }
    family(&mut out, "request_duration_seconds", "histogram", "Time to the response head, by operation and status.");
    for series in &snapshot.requests {
        let labels = format!("operation=\"{}\",status=\"{}\"", series.operation, series.status);
        for (bound, count) in LATENCY_BUCKETS_MS.iter().zip(&series.latency.cumulative) {
            let bucket = format!("{labels},le=\"{}\"", bound / 1000.0);
            line(&mut out, "request_duration_seconds_bucket", &bucket, *count as f64);
        }
        let count = series.latency.count as f64;
        line(&mut out, "request_duration_seconds_bucket", &format!("{labels},le=\"+Inf\""), count);
        line(&mut out, "request_duration_seconds_sum", &labels, series.latency.sum_ms / 1000.0);
        line(&mut out, "request_duration_seconds_count", &labels, count);
    }
    family(&mut out, "registrations_total", "counter", "Registrations by outcome.");
    for (outcome, value) in [
        ("new_id", snapshot.registrations_new_id),
        ("new_version", snapshot.registrations_new_version),
        ("existing", snapshot.registrations_existing),
    ] {
        line(&mut out, "registrations_total", &format!("outcome=\"{outcome}\""), value as f64);
    }
    let counters = [
        ("compatibility_rejections_total", "Registrations refused as incompatible.", snapshot.compatibility_rejections),
        ("store_retries_total", "Conditional writes lost to a concurrent writer and retried.", snapshot.store_retries),
        ("store_throttles_total", "Requests failed by throttled or unavailable storage.", snapshot.store_throttles),
        ("churn_exceeded_total", "New versions over the per-subject hourly threshold.", snapshot.churn_exceeded),
        ("churn_refused_total", "New versions refused by the churn guard (429).", snapshot.churn_refused),
    ];
    for (name, help, value) in counters {
        family(&mut out, name, "counter", help);
        line(&mut out, name, "", value as f64);
    }
    family(&mut out, "max_schema_id", "gauge", "The highest schema ID allocated.");
    line(&mut out, "max_schema_id", "", snapshot.max_schema_id as f64);
    if let Some(cache) = cache {
        let values = [
            ("cache_hits_total", "counter", "Store reads answered from the in-process cache.", cache.hits as f64),
            ("cache_misses_total", "counter", "Store reads passed to the backend.", cache.misses as f64),
            ("cache_entries", "gauge", "Entries in the in-process cache.", cache.entries as f64),
            ("cache_bytes", "gauge", "Bytes charged to the in-process cache.", cache.bytes as f64),
        ];
        for (name, kind, help, value) in values {
            family(&mut out, name, kind, help);
            line(&mut out, name, "", value);
        }
    }
    out
}

/// The password-check families (authentication on).
pub fn render_passwords(out: &mut String, verifications: u64, refusals: u64) {
    let counters = [
        ("password_verifications_total", "Password checks that ran argon2.", verifications),
        ("password_refusals_total", "Password checks refused by the per-address gate without argon2.", refusals),
    ];
    for (name, help, value) in counters {
        family(out, name, "counter", help);
        line(out, name, "", value as f64);
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP schema_registry_{name} {help}");
    let _ = writeln!(out, "# TYPE schema_registry_{name} {kind}");
}

fn line(out: &mut String, name: &str, labels: &str, value: f64) {
    if labels.is_empty() {
        let _ = writeln!(out, "schema_registry_{name} {value}");
    } else {
        let _ = writeln!(out, "schema_registry_{name}{{{labels}}} {value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::metrics::Metrics;

    #[test]
    fn exposition_lines_are_well_formed() {
        let metrics = Metrics::default();
        metrics.record_request("register_schema", 200, 3.0);
        metrics.record_request("register_schema", 200, 30.0);
        let text = render(&metrics.snapshot(), Some(CacheStats { entries: 2, bytes: 300, hits: 5, misses: 1 }));
        assert!(text.contains("schema_registry_requests_total{operation=\"register_schema\",status=\"200\"} 2\n"));
        assert!(text.contains(
            "schema_registry_request_duration_seconds_bucket{operation=\"register_schema\",status=\"200\",le=\"0.005\"} 1\n"
        ));
        assert!(text.contains(
            "schema_registry_request_duration_seconds_bucket{operation=\"register_schema\",status=\"200\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains("schema_registry_cache_hits_total 5\n"));
        assert!(text.contains("# TYPE schema_registry_max_schema_id gauge\n"));
        for sample in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = sample.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {sample}"));
            assert!(value.parse::<f64>().is_ok(), "{sample}");
            assert!(name.starts_with("schema_registry_"), "{sample}");
            assert_eq!(name.matches('{').count(), name.matches('}').count(), "{sample}");
        }
    }

    #[test]
    fn password_families_count_checks_and_refusals() {
        let mut text = String::new();
        render_passwords(&mut text, 7, 3);
        assert!(text.contains("# TYPE schema_registry_password_verifications_total counter\n"));
        assert!(text.contains("schema_registry_password_verifications_total 7\n"));
        assert!(text.contains("schema_registry_password_refusals_total 3\n"));
    }

    #[test]
    fn no_cache_no_cache_families() {
        let text = render(&MetricsSnapshot::default(), None);
        assert!(!text.contains("cache_hits"));
    }
}
