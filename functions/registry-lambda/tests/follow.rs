//! The API function follows the home marker (`registry_lambda::api::handler`, what `main` runs), on
//! the emulator: handlers for us-east-1 and eu-west-1, both configured with us-east-1 as home and
//! every region's bucket, replication running both ways in the background (a write through a
//! region that is not home is acknowledged once that region's replica shows it); after a failover
//! to eu-west-1 whose marker has replicated, both commit in
//! eu-west-1 once the marker's time to live has passed, nothing rebuilt (how long after is printed). The same path through `registry
//! serve`, with the refusal before the time to live and a failback, is
//! `functions/registry/tests/follow.rs`.

use clap::Parser;
use http_body_util::BodyExt;
use registry_core::{Context, SchemaId, Store};
use registry_lambda::LambdaConfig;
use registry_store_aws::AwsEnv;
use registry_store_aws::testing::replicator::{Replicator, Site};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tower::ServiceExt;

const HOME: &str = "us-east-1";
const OTHER: &str = "eu-west-1";
const TTL_MS: u64 = 500;
/// A hang guard, never a speed check: a function still refusing writes this long after the failover
/// never follows (following takes the time to live plus one marker read, and a read slower than a
/// second keeps the old home for another period, which a busy machine's emulator may repeat).
const FOLLOW_HANG_GUARD: Duration = Duration::from_secs(600);

/// The function of `site`'s region as `main` builds it, following the marker over `sites`' buckets.
async fn function(site: &Site, sites: [&Site; 2]) -> registry_lambda::Handler {
    let buckets = sites.map(|s| format!("{}={}", region(s), s.config.bucket)).join(",");
    let ttl = TTL_MS.to_string();
    let args = [
        "--home-region",
        HOME,
        "--home-bucket",
        &sites[0].config.bucket,
        "--region-buckets",
        &buckets,
        "--home-marker-ttl-ms",
        &ttl,
    ];
    let config = LambdaConfig::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"));
    let env = AwsEnv {
        sdk: site.sdk.clone(),
        store: site.config.clone(),
        s3_path_style: true,
        kms_key_arns: vec![],
        exporter_kms_key: None,
    };
    registry_lambda::api::handler(&config, &env).await.unwrap_or_else(|e| panic!("{e}"))
}

fn region(site: &Site) -> String {
    site.sdk.region().map(|r| r.as_ref().to_string()).unwrap_or_default()
}

/// Registers a schema of its own (`tag`) through `handler`: the ID, or the error answer.
async fn register(handler: &registry_lambda::Handler, tag: &str) -> Result<i64, (u16, Value)> {
    let schema = json!({"type": "record", "name": "Event", "fields": [{"name": tag, "type": "string"}]});
    let body = json!({ "schema": schema.to_string() }).to_string();
    let request = lambda_http::http::Request::builder()
        .method("POST")
        .uri(format!("/subjects/{tag}/versions"))
        .header("content-type", "application/vnd.schemaregistry.v1+json")
        .body(lambda_http::Body::from(body))
        .unwrap_or_else(|e| panic!("{e}"));
    let response = handler.clone().oneshot(request).await.unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    match (status, answer["id"].as_i64()) {
        (200, Some(id)) => Ok(id),
        _ => Err((status, answer)),
    }
}

async fn binds(site: &Site, id: i64) -> bool {
    let id = SchemaId(i32::try_from(id).unwrap_or_else(|e| panic!("{e}")));
    site.store().fingerprint_for_id_in(&Context::DEFAULT, id).await.unwrap_or_else(|e| panic!("{e}")).is_some()
}

#[tokio::test]
async fn the_function_follows_a_failover_without_a_redeploy() {
    let Some([us, eu]) = Site::of_regions("lambda-follow", [(HOME, "us"), (OTHER, "eu")]).await else { return };
    for site in [&us, &eu] {
        site.create().await;
    }
    let routes = vec![(us.clone(), eu.clone()), (eu.clone(), us.clone())];
    let replication = Replicator::run_with_lag(routes, Duration::ZERO, Duration::from_millis(50));
    let (us_fn, eu_fn) = (function(&us, [&us, &eu]).await, function(&eu, [&us, &eu]).await);
    for (handler, tag) in [(&us_fn, "before_us"), (&eu_fn, "before_eu")] {
        let id = register(handler, tag).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(binds(&us, id).await && id < 100, "committed in the configured home");
    }
    tokio::time::timeout(FOLLOW_HANG_GUARD, replication.caught_up()).await.unwrap_or_else(|_| panic!("no catch-up"));

    eu.store().fail_over(OTHER, 100).await.unwrap_or_else(|e| panic!("{e}"));
    let failed_over = Instant::now();
    // The marker replicated to us-east-1 (the old home then refuses every write).
    tokio::time::timeout(FOLLOW_HANG_GUARD, replication.caught_up()).await.unwrap_or_else(|_| panic!("no catch-up"));
    for (handler, tag) in [(&us_fn, "after_us"), (&eu_fn, "after_eu")] {
        let id = loop {
            match register(handler, tag).await {
                Ok(id) => break id,
                Err((status, answer)) => {
                    assert_eq!((status, &answer["error_code"]), (500, &json!(50002)), "{answer}");
                    assert!(failed_over.elapsed() < FOLLOW_HANG_GUARD, "still refused: {answer}");
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        println!("{tag}: ID {id} committed {:?} after the failover (time to live {TTL_MS} ms)", failed_over.elapsed());
        assert!(id > 100, "ID {id} above the jump");
        assert!(binds(&eu, id).await, "ID {id} committed in eu-west-1, the new home (above its jump)");
    }
    replication.stop().await;
    for site in [&us, &eu] {
        site.delete().await;
    }
}
