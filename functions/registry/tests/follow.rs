//! Functions follow the home marker, through the `registry` binary on the emulator: two
//! `registry serve` processes, us-east-1 and eu-west-1, both configured with us-east-1 as home and
//! with every region's bucket (`REGISTRY_REGION_BUCKETS`), the test-only [`Replicator`] standing in
//! for global tables and S3 replication both ways in the background (a write through a region
//! that is not home is acknowledged once that region's replica shows it). `registry failover --to
//! eu-west-1`, which writes the marker in us-east-1's replica too, and nothing restarted or
//! reconfigured: once the marker's time to live has passed both processes commit in eu-west-1's
//! table, above the jump.
//! Processes that still route as before the failover are fenced (500 / 50002): a second pair whose
//! time to live no run reaches (so that they stay stale however slow the machine is). Failback
//! follows the same way. Prints the time from each failover's return to the first write each
//! region commits (a figure: a busy machine makes it longer, never wrong).

mod support;

use registry_core::{Context, SchemaId, Store};
use registry_store_aws::testing::replicator::{LaggedReplication, Replicator, Site};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::{Server, call, record, run_ok, serve};

const HOME: &str = "us-east-1";
const OTHER: &str = "eu-west-1";
/// The followers' marker time to live (`REGISTRY_HOME_MARKER_TTL_MS`): a failover reaches their
/// writes once it has passed.
const TTL: Duration = Duration::from_millis(3000);
/// The stale processes' time to live: longer than any run, so that they read the marker once, when
/// first asked, and route as it said then for the rest of the test, at any speed.
const STALE_TTL: Duration = Duration::from_secs(24 * 3600);
/// A hang guard only, never a speed check: a follower still refusing writes this long after a
/// failover never follows (following takes the time to live plus one marker read, and a read slower
/// than a second keeps the old home for another period, which a busy machine may repeat).
const FOLLOW_HANG_GUARD: Duration = Duration::from_secs(600);
/// Starts of a stale process whose first marker read missed the marker (a read slower than a second
/// keeps the configured home): a hang guard, never reached unless the marker is never read.
const STALE_STARTS: usize = 20;
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

/// Whether `answer` is the fence's refusal (500 / 50002).
fn fenced((status, answer): &(u16, Value)) -> bool {
    (*status, &answer["error_code"]) == (500, &json!(50002))
}

/// Registers `schema` through `server` until it succeeds (every 50 ms; every refusal must be the
/// fence's); the ID and the time from `since` to the success.
async fn first_write(server: &Server, subject: &str, schema: &str, since: Instant) -> (i64, Duration) {
    loop {
        match register(server, subject, schema).await {
            Ok(id) => return (id, since.elapsed()),
            Err(refused) => {
                assert!(fenced(&refused), "{refused:?}");
                assert!(since.elapsed() < FOLLOW_HANG_GUARD, "writes still refused: {refused:?}");
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `replication` has applied what was written before (a hang guard only).
async fn caught_up(replication: &LaggedReplication) {
    let waited = tokio::time::timeout(FOLLOW_HANG_GUARD, replication.caught_up()).await;
    waited.unwrap_or_else(|_| panic!("replication did not catch up in {FOLLOW_HANG_GUARD:?}"));
}

/// Whether `site`'s table binds `id` (default context), strongly consistent.
async fn binds(site: &Site, id: i64) -> bool {
    let id = SchemaId(i32::try_from(id).unwrap_or_else(|e| panic!("{e}")));
    let found = site.store().fingerprint_for_id_in(&Context::DEFAULT, id).await;
    found.unwrap_or_else(|e| panic!("{e}")).is_some()
}

/// One process per environment of `pairs` with [`STALE_TTL`], each shown to route to `home` (the
/// marker's region now): a registration through it commits in `home`'s table (recorded in
/// `schemas`). A process whose first marker read missed (it keeps the configured home, fenced
/// there) is started again.
async fn stale_processes(
    pairs: [&[(&'static str, String)]; 2],
    home: &Site,
    tag: &str,
    schemas: &mut BTreeMap<i64, String>,
) -> Vec<Server> {
    let mut servers = Vec::new();
    for (env, n) in pairs.into_iter().zip(1..) {
        let mut env = env.to_vec();
        env.push(("REGISTRY_HOME_MARKER_TTL_MS", STALE_TTL.as_millis().to_string()));
        let tag = format!("{tag}-{n}");
        let mut starts = 0;
        let server = loop {
            starts += 1;
            assert!(starts <= STALE_STARTS, "{tag}: no start read the home marker");
            let server = serve(&["--backend", "aws"], &envs(&env)).await;
            match register(&server, &tag, &schema(&tag)).await {
                Ok(id) => {
                    assert!(binds(home, id).await, "{tag}: ID {id} committed where the marker says");
                    schemas.insert(id, schema(&tag));
                    break server;
                }
                Err(refused) => assert!(fenced(&refused), "{tag}: {refused:?}"),
            }
        };
        servers.push(server);
    }
    servers
}

/// After a failover to `to` whose marker both replicas show: processes still routing to the old
/// home are fenced (nothing committed), whatever time has passed.
async fn old_routing_is_fenced(stale: &[Server], to: &str) {
    for (server, n) in stale.iter().zip(1..) {
        let refused = register(server, &format!("early-{to}-{n}"), &schema(&format!("early-{to}-{n}"))).await;
        let refused = refused.err().unwrap_or_else(|| panic!("a write through the old routing committed"));
        assert!(fenced(&refused), "{refused:?}");
    }
}

/// After a failover at `since` to `home` (its region and site): the first write through each of
/// `servers` (subject `{tag}-{n}`) commits in `home`'s table with an ID above `jump` (recorded in
/// `schemas`); the time each took.
async fn writes_commit_in_the_new_home(
    servers: [&Server; 2],
    tag: &str,
    since: Instant,
    jump: i64,
    (region, home): (&str, &Site),
    schemas: &mut BTreeMap<i64, String>,
) -> Vec<Duration> {
    let mut took = Vec::new();
    for (server, n) in servers.into_iter().zip(1..) {
        let subject = format!("{tag}-{n}");
        let schema = schema(&subject);
        let (id, elapsed) = first_write(server, &subject, &schema, since).await;
        assert!(id > jump, "{subject}: ID {id} is above the jump ({jump})");
        assert!(binds(home, id).await, "{subject}: ID {id} committed in {region}, the new home (above its jump)");
        took.push(elapsed);
        schemas.insert(id, schema);
    }
    took
}

#[tokio::test]
async fn functions_follow_a_failover_and_a_failback_without_a_redeploy() {
    let Some([us, eu]) = Site::of_regions("follow", [(HOME, "us"), (OTHER, "eu")]).await else { return };
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
        env
    };
    let (us_stale, eu_stale) = (following(us_env.clone()), following(eu_env.clone()));
    let with_ttl = |mut env: Vec<(&'static str, String)>| {
        env.push(("REGISTRY_HOME_MARKER_TTL_MS", TTL.as_millis().to_string()));
        env
    };
    let (us_serve, eu_serve) = (with_ttl(us_stale.clone()), with_ttl(eu_stale.clone()));
    let routes = vec![(us.clone(), eu.clone()), (eu.clone(), us.clone())];
    let replication = Replicator::run_with_lag(routes, Duration::ZERO, Duration::from_millis(50));
    let us_server = serve(&["--backend", "aws"], &envs(&us_serve)).await;
    let eu_server = serve(&["--backend", "aws"], &envs(&eu_serve)).await;
    let servers = [&us_server, &eu_server];
    let mut schemas = BTreeMap::new();

    // Before any failover both commit in us-east-1, the configured home.
    for (server, n) in servers.into_iter().zip(1..) {
        let schema = schema(&format!("before-{n}"));
        let id = register(server, &format!("before-{n}"), &schema).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(binds(&us, id).await, "committed in the configured home");
        schemas.insert(id, schema);
    }
    let stale = stale_processes([&us_stale, &eu_stale], &us, "stale-before", &mut schemas).await;
    caught_up(&replication).await;

    // Failover to eu-west-1; its marker replicated to us-east-1; nothing restarted.
    let summary = run_ok(&["failover", "--to", OTHER, "--from", HOME, "--gap", &GAP.to_string()], &envs(&eu_env));
    let failed_over = Instant::now();
    assert!(summary.contains("home marker epoch: 1"), "{summary}");
    old_routing_is_fenced(&stale, OTHER).await;
    let rto = writes_commit_in_the_new_home(servers, "after", failed_over, GAP, (OTHER, &eu), &mut schemas).await;
    println!(
        "failover to {OTHER}: first committed write {:?} after the failover returned through {HOME}, {:?} through {OTHER} (time to live {TTL:?}, marker replicated at once)",
        rto[0], rto[1]
    );

    // Failback to us-east-1 once it has caught up; its marker replicated to eu-west-1.
    drop(stale);
    let stale = stale_processes([&us_stale, &eu_stale], &eu, "stale-after", &mut schemas).await;
    caught_up(&replication).await;
    let summary = run_ok(&["failover", "--to", HOME, "--gap", &GAP.to_string()], &envs(&us_env));
    let failed_back = Instant::now();
    assert!(summary.contains("home marker epoch: 2"), "{summary}");
    old_routing_is_fenced(&stale, HOME).await;
    let jump = schemas.keys().max().copied().unwrap_or_default() + GAP;
    let rto_back = writes_commit_in_the_new_home(servers, "back", failed_back, jump, (HOME, &us), &mut schemas).await;
    println!(
        "failback to {HOME}: first committed write {:?} after the failover returned through {HOME}, {:?} through {OTHER}",
        rto_back[0], rto_back[1]
    );
    drop(stale);

    // Replicated both ways: every ID names its one schema through both regions.
    caught_up(&replication).await;
    replication.stop().await;
    assert_eq!(schemas.len(), 10, "{schemas:?}");
    for (id, schema) in &schemas {
        for server in servers {
            let (status, answer) = call("GET", &format!("{}/schemas/ids/{id}", server.url), None).await;
            assert_eq!((status, answer["schema"].as_str()), (200, Some(schema.as_str())), "ID {id}: {answer}");
        }
    }
    for site in [&us, &eu] {
        site.delete().await;
    }
}
