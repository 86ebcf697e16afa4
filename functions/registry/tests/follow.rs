//! Functions follow the home marker, through the `registry` binary on the emulator: two
//! `registry serve` processes, us-east-1 and eu-west-1, both configured with us-east-1 as home and
//! with every region's bucket (`REGISTRY_REGION_BUCKETS`), the test-only [`Replicator`] standing in
//! for global tables and S3 replication when the test says. `registry failover --to eu-west-1`,
//! then the marker replicated to us-east-1, and nothing restarted or reconfigured: within the
//! marker's time to live both processes commit in eu-west-1's table, above the jump; before it
//! both still route to us-east-1 and are fenced (500 / 50002). Failback follows the same way.
//! Prints the time from each failover's return to the first write each region commits.

mod support;

use registry_core::{Context, SchemaId, Store};
use registry_store_aws::AwsStoreConfig;
use registry_store_aws::regions::in_region;
use registry_store_aws::testing::replicator::{Replicator, Site};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::{Server, call, record, run_ok, serve};

const HOME: &str = "us-east-1";
const OTHER: &str = "eu-west-1";
/// The marker's time to live in both processes (`REGISTRY_HOME_MARKER_TTL_MS`).
const TTL: Duration = Duration::from_millis(3000);
/// The failover's gap.
const GAP: i64 = 100;

fn envs<'a>(pairs: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A schema of its own per `tag` (letters, digits, dashes).
fn schema(tag: &str) -> String {
    record("Event", &[&format!("f_{}", tag.replace('-', "_"))])
}

/// Registers `schema` under `subject`: the ID, or the error answer.
async fn register(server: &Server, subject: &str, schema: &str) -> Result<i64, (u16, Value)> {
    let url = format!("{}/subjects/{subject}/versions", server.url);
    let (status, answer) = call("POST", &url, Some(json!({ "schema": schema }))).await;
    match (status, answer["id"].as_i64()) {
        (200, Some(id)) => Ok(id),
        _ => Err((status, answer)),
    }
}

/// Registers `schema` through `server` until it succeeds (every 50 ms, at most `TTL` + 10 s);
/// the ID and the time from `since` to the success.
async fn first_write(server: &Server, subject: &str, schema: &str, since: Instant) -> (i64, Duration) {
    loop {
        match register(server, subject, schema).await {
            Ok(id) => return (id, since.elapsed()),
            Err((status, answer)) => {
                assert_eq!((status, &answer["error_code"]), (500, &json!(50002)), "{answer}");
                assert!(since.elapsed() < TTL + Duration::from_secs(10), "writes still refused: {answer}");
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `site`'s table binds `id` (default context), strongly consistent.
async fn binds(site: &Site, id: i64) -> bool {
    let id = SchemaId(i32::try_from(id).unwrap_or_else(|e| panic!("{e}")));
    let found = site.store().fingerprint_for_id_in(&Context::DEFAULT, id).await;
    found.unwrap_or_else(|e| panic!("{e}")).is_some()
}

/// Lets both processes' watches expire, then makes each read the marker now (one request each):
/// for the next `TTL` they route as the marker said at `primed`.
async fn prime(servers: [&Server; 2]) -> Instant {
    tokio::time::sleep(TTL + Duration::from_millis(100)).await;
    let primed = Instant::now();
    for server in servers {
        let (status, answer) = call("GET", &format!("{}/subjects", server.url), None).await;
        assert_eq!(status, 200, "{answer}");
    }
    primed
}

/// Right after a failover to `to` whose marker both replicas show: both processes still route to
/// the old home, and both writes are fenced (nothing committed).
async fn old_routing_is_fenced(servers: [&Server; 2], primed: Instant, to: &str) {
    for (server, n) in servers.into_iter().zip(1..) {
        let refused = register(server, &format!("early-{to}-{n}"), &schema(&format!("early-{to}-{n}"))).await;
        let (status, answer) = refused.err().unwrap_or_else(|| panic!("a write through the old routing committed"));
        assert_eq!((status, &answer["error_code"]), (500, &json!(50002)), "{answer}");
    }
    assert!(
        primed.elapsed() < TTL,
        "the early writes ran {:?} after the watches were primed, past the time to live: nothing checked",
        primed.elapsed()
    );
}

#[tokio::test]
async fn functions_follow_a_failover_and_a_failback_without_a_redeploy() {
    let Some(sdk) = registry_store_aws::testing::emulator_sdk().await else { return };
    let names = registry_store_aws::testing::unique_names("follow");
    let site = |region: &str, suffix: &str| Site {
        sdk: in_region(&sdk, region),
        config: AwsStoreConfig { table: names.table.clone(), bucket: format!("{}-{suffix}", names.bucket) },
    };
    let (us, eu) = (site(HOME, "us"), site(OTHER, "eu"));
    let region_env = |site: &Site, region: &'static str| {
        vec![
            ("AWS_REGION", region.to_string()),
            ("REGISTRY_TABLE", site.config.table.clone()),
            ("REGISTRY_BUCKET", site.config.bucket.clone()),
        ]
    };
    let (us_env, eu_env) = (region_env(&us, HOME), region_env(&eu, OTHER));
    run_ok(&["aws-init"], &envs(&us_env));
    run_ok(&["aws-init"], &envs(&eu_env));
    let following = |mut env: Vec<(&'static str, String)>| {
        env.push(("REGISTRY_HOME_REGION", HOME.into()));
        env.push(("REGISTRY_HOME_BUCKET", us.config.bucket.clone()));
        env.push(("REGISTRY_REGION_BUCKETS", format!("{HOME}={},{OTHER}={}", us.config.bucket, eu.config.bucket)));
        env.push(("REGISTRY_HOME_MARKER_TTL_MS", TTL.as_millis().to_string()));
        env
    };
    let (us_serve, eu_serve) = (following(us_env.clone()), following(eu_env.clone()));
    let us_server = serve(&["--backend", "aws"], &envs(&us_serve)).await;
    let eu_server = serve(&["--backend", "aws"], &envs(&eu_serve)).await;
    let servers = [&us_server, &eu_server];
    let mut schemas = BTreeMap::new();

    // Before any failover both commit in us-east-1, the configured home.
    for (server, n) in servers.into_iter().zip(1..) {
        let schema = schema(&format!("before-{n}"));
        let id = register(server, &format!("before-{n}"), &schema).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(binds(&us, id).await && !binds(&eu, id).await, "committed in the configured home");
        schemas.insert(id, schema);
    }
    let replicator = Replicator::default();
    replicator.replicate(&us, &eu).await;

    // Failover to eu-west-1; its marker replicated to us-east-1; nothing restarted.
    let primed = prime(servers).await;
    let summary = run_ok(&["failover", "--to", OTHER, "--gap", &GAP.to_string()], &envs(&eu_env));
    let failed_over = Instant::now();
    assert!(summary.contains("home marker epoch: 1"), "{summary}");
    replicator.replicate(&eu, &us).await;
    old_routing_is_fenced(servers, primed, OTHER).await;
    let mut rto = Vec::new();
    for (server, n) in servers.into_iter().zip(1..) {
        let schema = schema(&format!("after-{n}"));
        let (id, took) = first_write(server, &format!("after-{n}"), &schema, failed_over).await;
        assert!(id > GAP, "ID {id} is above the jump");
        assert!(binds(&eu, id).await && !binds(&us, id).await, "ID {id} committed in eu-west-1, the new home");
        rto.push(took);
        schemas.insert(id, schema);
    }
    println!(
        "failover to {OTHER}: first committed write {:?} after the failover returned through {HOME}, {:?} through {OTHER} (time to live {TTL:?}, marker replicated at once)",
        rto[0], rto[1]
    );

    // Failback to us-east-1 once it has caught up; its marker replicated to eu-west-1.
    replicator.replicate(&eu, &us).await;
    let primed = prime(servers).await;
    let summary = run_ok(&["failover", "--to", HOME, "--gap", &GAP.to_string()], &envs(&us_env));
    let failed_back = Instant::now();
    assert!(summary.contains("home marker epoch: 2"), "{summary}");
    replicator.replicate(&us, &eu).await;
    old_routing_is_fenced(servers, primed, HOME).await;
    let before_failback = schemas.keys().max().copied().unwrap_or_default();
    let mut rto_back = Vec::new();
    for (server, n) in servers.into_iter().zip(1..) {
        let schema = schema(&format!("back-{n}"));
        let (id, took) = first_write(server, &format!("back-{n}"), &schema, failed_back).await;
        assert!(id > before_failback + GAP, "ID {id} is above the second jump");
        assert!(binds(&us, id).await && !binds(&eu, id).await, "ID {id} committed in us-east-1, home again");
        rto_back.push(took);
        schemas.insert(id, schema);
    }
    println!(
        "failback to {HOME}: first committed write {:?} after the failover returned through {HOME}, {:?} through {OTHER}",
        rto_back[0], rto_back[1]
    );
    for took in rto.iter().chain(&rto_back) {
        assert!(*took < TTL + Duration::from_secs(5), "a region took {took:?} to follow the marker");
    }

    // Replicated both ways: every ID names its one schema through both regions.
    replicator.replicate(&us, &eu).await;
    replicator.replicate(&eu, &us).await;
    assert_eq!(schemas.len(), 6, "{schemas:?}");
    for (id, schema) in &schemas {
        for server in servers {
            let (status, answer) = call("GET", &format!("{}/schemas/ids/{id}", server.url), None).await;
            assert_eq!((status, answer["schema"].as_str()), (200, Some(schema.as_str())), "ID {id}: {answer}");
        }
    }
    for site in [&us, &eu] {
        let deleted = registry_store_aws::provision::delete_resources(&site.sdk, &site.config, true).await;
        deleted.unwrap_or_else(|e| panic!("deleting: {e}"));
    }
}
