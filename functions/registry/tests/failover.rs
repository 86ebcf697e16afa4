//! Multi-region through the `registry` binary on the emulator: `registry serve` in a read region
//! (eu-west-1, `REGISTRY_HOME_REGION=us-east-1`) writes in the home region's table and bucket and
//! acknowledges a write once its own replica shows it (read-your-writes), and keeps exporters
//! created through it in the home region's table; `registry failover --to eu-west-1` jumps the counter
//! in eu-west-1's replica past the IDs it shows plus the gap and writes the home marker (epoch 1,
//! then 2); served as the home, eu-west-1 then issues IDs above the jump.

mod support;

use registry_core::{Context, SchemaId, Store};
use registry_store_aws::AwsStoreConfig;
use registry_store_aws::regions::in_region;
use registry_store_aws::testing::replicator::{Replicator, Site};
use std::time::Duration;
use support::{call, record, register, run, run_ok, serve};

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";

/// The pairs as `run`'s and `serve`'s environment.
fn envs<'a>(pairs: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn a_read_region_writes_at_home_and_failover_jumps_its_counter() {
    if std::env::var_os("AWS_ENDPOINT_URL").is_none() && std::env::var_os("CI").is_none() {
        eprintln!("skipped: set AWS_ENDPOINT_URL (emulator) to run the AWS tests");
        return;
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let table = format!("failover-{}-{nanos}", std::process::id());
    let (home_bucket, read_bucket) = (format!("{table}-home"), format!("{table}-read"));
    let site = |region: &'static str, bucket: &str| {
        vec![("AWS_REGION", region.to_string()), ("REGISTRY_TABLE", table.clone()), ("REGISTRY_BUCKET", bucket.into())]
    };
    let home = site(HOME, &home_bucket);
    let read = site(READ, &read_bucket);
    run_ok(&["aws-init"], &envs(&home));
    run_ok(&["aws-init"], &envs(&read));

    // A read region: its write is committed at home and acknowledged once its own replica shows it
    // (read-your-writes; the test-only replicator copies home to read meanwhile, then stops).
    let Some(sdk) = registry_store_aws::testing::emulator_sdk().await else { return };
    let store_site = |region: &str, bucket: &str| Site {
        sdk: in_region(&sdk, region),
        config: AwsStoreConfig { table: table.clone(), bucket: bucket.to_string() },
    };
    let routes = vec![(store_site(HOME, &home_bucket), store_site(READ, &read_bucket))];
    let replication = Replicator::run_with_lag(routes, Duration::ZERO, Duration::from_millis(50));
    let mut read_region = read.clone();
    read_region.push(("REGISTRY_HOME_REGION", HOME.into()));
    read_region.push(("REGISTRY_HOME_BUCKET", home_bucket.clone()));
    let server = serve(&["--backend", "aws"], &envs(&read_region)).await;
    let schema = serde_json::json!({ "schema": record("Order", &["a"]) });
    let id = register(&server.url, "orders-value", schema.clone()).await;
    replication.stop().await;
    let replica = store_site(READ, &read_bucket).store();
    let bound = replica.fingerprint_for_id_in(&Context::DEFAULT, SchemaId(i32::try_from(id).unwrap_or(0))).await;
    assert!(bound.unwrap_or_else(|e| panic!("{e}")).is_some(), "acknowledged once the replica shows it");
    let (status, answer) = call("GET", &format!("{}/schemas/ids/{id}", server.url), None).await;
    assert_eq!(status, 200, "{answer}");
    // Exporters through the read region: kept in the home region's table (and run there).
    let exporter = serde_json::json!({
        "name": "to-dr", "contextType": "AUTO", "subjects": ["*"],
        "config": {"schema.registry.url": "http://127.0.0.1:9/"}
    });
    let (status, created) = call("POST", &format!("{}/exporters", server.url), Some(exporter)).await;
    assert_eq!(status, 200, "{created}");
    let (status, listed) = call("GET", &format!("{}/exporters", server.url), None).await;
    assert_eq!((status, listed), (200, serde_json::json!(["to-dr"])));
    // The home as its own function is configured (fenced on itself, as every multi-region home).
    let mut home_configured = home.clone();
    home_configured.push(("REGISTRY_HOME_REGION", HOME.into()));
    home_configured.push(("REGISTRY_HOME_BUCKET", home_bucket.clone()));
    let home_server = serve(&["--backend", "aws"], &envs(&home_configured)).await;
    assert_eq!(register(&home_server.url, "orders-value", schema).await, id, "committed in the home region");
    let (status, at_home) = call("GET", &format!("{}/exporters/to-dr", home_server.url), None).await;
    assert_eq!((status, &at_home["name"]), (200, &serde_json::json!("to-dr")), "{at_home}");
    drop((server, home_server));

    // Without a marker the old home must be named (or the loss accepted): refused, nothing written.
    let refused = run(&["failover", "--to", READ, "--gap", "50"], &envs(&read));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("--from"), "{stderr}");
    // Failover to eu-west-1 (whose replica shows ID 1, the read region's own write): the
    // counter jumps past it by the gap, and the old home's replica gets the marker at once (fenced, with no
    // replication); a second run (failback's shape) raises the epoch and jumps again, with no old
    // home to fence (the marker names eu-west-1 already).
    let summary = run_ok(&["failover", "--to", READ, "--from", HOME, "--gap", "50"], &envs(&read));
    assert!(summary.contains("home marker epoch: 1") && summary.contains("counter now 51"), "{summary}");
    assert!(summary.contains(&format!("{HOME}: marker written there")), "{summary}");
    let home_server = serve(&["--backend", "aws"], &envs(&home_configured)).await;
    let (status, answer) = call(
        "POST",
        &format!("{}/subjects/late-value/versions", home_server.url),
        Some(serde_json::json!({ "schema": record("Late", &["a"]) })),
    )
    .await;
    assert_eq!((status, &answer["error_code"]), (500, &serde_json::json!(50002)), "the old home is fenced: {answer}");
    drop(home_server);
    let summary = run_ok(&["failover", "--to", READ, "--gap", "50"], &envs(&read));
    assert!(summary.contains("home marker epoch: 2") && summary.contains("counter now 101"), "{summary}");
    assert!(summary.contains("none: eu-west-1 was home already"), "{summary}");

    let mut new_home = read.clone();
    new_home.push(("REGISTRY_HOME_REGION", READ.into()));
    let server = serve(&["--backend", "aws"], &envs(&new_home)).await;
    let next =
        register(&server.url, "orders-value", serde_json::json!({ "schema": record("Order", &["a", "b"]) })).await;
    assert_eq!(next, 102, "the new home issues IDs past the jump");
}
