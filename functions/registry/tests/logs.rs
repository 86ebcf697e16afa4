//! `registry serve` operability end to end: JSON logs with `REGISTRY_LOG_FORMAT=json`, the churn
//! guard from `REGISTRY_CHURN_*`, and `GET /metrics`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serve_logs_json_lines_enforces_the_churn_guard_and_serves_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("stderr.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(env!("CARGO_BIN_EXE_registry"))
        .args([
            "serve",
            "--backend",
            "memory",
            "--default-compatibility",
            "NONE",
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .env("RUST_LOG", "info")
        .env("REGISTRY_LOG_FORMAT", "json")
        .env("REGISTRY_CHURN_MAX_PER_HOUR", "1")
        .env("REGISTRY_CHURN_ENFORCE", "true")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let server = Killed(child);
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let started = Instant::now();
    while client.get(format!("{base}/")).send().await.is_err() {
        // A hang guard, not a speed check: a start takes milliseconds, a busy machine's a few seconds.
        assert!(started.elapsed() < Duration::from_secs(600), "registry serve did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let register = |name: &str| {
        let schema = format!(r#"{{"type":"record","name":"{name}","fields":[{{"name":"a","type":"int"}}]}}"#);
        client
            .post(format!("{base}/subjects/orders-value/versions"))
            .header("content-type", "application/vnd.schemaregistry.v1+json")
            .body(json!({ "schema": schema }).to_string())
            .send()
    };
    assert_eq!(register("ChurnFirstRecord").await.unwrap().status(), 200);
    let refused = register("ChurnSecondRecord").await.unwrap();
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error_code"], 42901);
    assert_eq!(register("ChurnFirstRecord").await.unwrap().status(), 200, "re-registration is never refused");
    let metrics = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("schema_registry_churn_refused_total 1\n"), "{metrics}");
    assert!(metrics.contains("schema_registry_max_schema_id 1\n"), "{metrics}");
    drop(server);

    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect();
    let registrations: Vec<&Value> =
        lines.iter().filter(|line| line["fields"]["operation"] == "register_schema").collect();
    let statuses: Vec<u64> = registrations.iter().filter_map(|line| line["fields"]["status"].as_u64()).collect();
    assert_eq!(statuses, vec![200, 429, 200], "{text}");
    assert!(registrations.iter().all(|line| line["fields"]["subject"] == "orders-value"));
    assert!(registrations.iter().all(|line| line["fields"]["request_id"].as_str().is_some_and(|id| !id.is_empty())));
    assert!(
        lines
            .iter()
            .any(|line| line["level"] == "WARN"
                && line["fields"]["message"].as_str().is_some_and(|m| m.contains("churn"))),
        "the churn trip is logged as a warning: {text}"
    );
    assert!(!text.contains("ChurnFirstRecord") && !text.contains("ChurnSecondRecord"), "no schema bodies: {text}");
}
