//! Following the home marker on the emulator: a [`HomeWatch`] reads the marker of its replica at
//! most once per time to live, however many requests ask (one strongly consistent GetItem,
//! counted by the store's interceptor), and [`Follow::open`] opens every region's stores with the
//! right variant. The whole path through `registry serve` is `functions/registry/tests/follow.rs`.

mod support;

use registry_core::testkit::ManualClock;
use registry_store_aws::AwsEnv;
use registry_store_aws::home_watch::{Follow, HomeWatch, WatchClock};
use registry_store_aws::regions::{AckRegion, Deployment, RegionConfig};
use std::time::Duration;

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";

/// The environment a function of `site`'s region reads.
fn env_of(site: &registry_store_aws::testing::replicator::Site) -> AwsEnv {
    AwsEnv {
        sdk: site.sdk.clone(),
        store: site.config.clone(),
        s3_path_style: true,
        kms_key_arns: vec![],
        exporter_kms_key: None,
    }
}

/// The watch's clock, moved by the test: what it makes of its time to live is checked at any
/// speed of the machine.
fn watch_clock(clock: &ManualClock) -> WatchClock {
    let clock = clock.clone();
    WatchClock::new(move || clock.now())
}

#[tokio::test]
async fn the_watch_reads_the_marker_once_per_ttl_and_follows_a_failover() {
    support::with_regions("follow", HOME, READ, |_home, read| async move {
        let ttl = Duration::from_secs(3);
        let local = read.store();
        let time = ManualClock::new();
        // A marker read may take as long as a loaded emulator needs (a read past the default second
        // keeps the old home, which is not what this test is about); the bound is a hang guard.
        let watch = HomeWatch::new(local.clone(), HOME, ttl)
            .with_clock(watch_clock(&time))
            .with_read_timeout(Duration::from_secs(600));

        // No marker: the configured home, one GetItem for 20 concurrent requests and the next 20.
        let homes = futures::future::join_all((0..20).map(|_| watch.home())).await;
        assert!(homes.iter().all(|home| home == HOME), "{homes:?}");
        for _ in 0..20 {
            assert_eq!(watch.home().await, HOME);
        }
        assert_eq!((local.calls().get(), watch.reads()), (1, 1), "one marker read per time to live");

        // A failover writes the marker in this replica: still the old home until the period ends
        // (a moment before it, too).
        read.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(watch.home().await, HOME);
        time.advance(ttl - Duration::from_millis(1));
        assert_eq!(watch.home().await, HOME);
        assert_eq!(local.calls().get(), 1);
        time.advance(Duration::from_millis(1));
        assert_eq!(watch.home().await, READ, "the marker's region once the time to live has passed");
        for _ in 0..20 {
            assert_eq!(watch.home().await, READ);
        }
        assert_eq!((local.calls().get(), watch.reads()), (2, 2));
    })
    .await;
}

#[tokio::test]
async fn follow_opens_every_region_as_home_and_checks_the_buckets() {
    support::with_regions("follow-open", HOME, READ, |home, read| async move {
        let env = env_of(&read);
        let regions = RegionConfig {
            home_region: HOME.into(),
            home_bucket: home.config.bucket.clone(),
            ack_regions: AckRegion::parse_list(&format!("{HOME},{READ}")),
            ack_timeout: Duration::from_secs(1),
        };
        let buckets = format!("{HOME}={},{READ}={}", home.config.bucket, read.config.bucket);
        let ttl = Duration::from_secs(5);
        let none = Follow::open(&env, Some(&regions), "", ttl).unwrap_or_else(|e| panic!("{e}"));
        assert!(none.is_none(), "without the bucket list the home is fixed");
        assert!(Follow::open(&env, None, &buckets, ttl).unwrap_or_else(|e| panic!("{e}")).is_none(), "one region");
        let follow = Follow::open(&env, Some(&regions), &buckets, ttl).unwrap_or_else(|e| panic!("{e}"));
        let follow = follow.unwrap_or_else(|| panic!("following"));
        assert_eq!(follow.homes.keys().collect::<Vec<_>>(), [READ, HOME]);
        match &follow.homes[READ] {
            Deployment::Home(store) => {
                assert_eq!(store.fence(), Some(READ));
                assert!(store.acks().is_some(), "acknowledged by us-east-1 while eu-west-1 is home");
            }
            other => panic!("this region as home is the Home variant: {other:?}"),
        }
        match &follow.homes[HOME] {
            Deployment::Read { writes, .. } => assert_eq!(writes.fence(), Some(HOME)),
            other => panic!("another region as home is the Read variant: {other:?}"),
        }
        for wrong in [format!("{HOME}={}", home.config.bucket), format!("{HOME}=other,{READ}={}", read.config.bucket)] {
            let refused = Follow::open(&env, Some(&regions), &wrong, ttl);
            assert!(refused.is_err(), "{wrong}: must name this region and the home with their buckets");
        }
    })
    .await;
}

/// After a failover the new home's bucket may lack bodies the old home wrote (S3 replication lags
/// the table's): a registration under a subject whose earlier version's row arrived without its
/// body reads that body from the old home's bucket (the home store `Follow::open` builds reads the
/// other regions' buckets), where a store without them answers 50001 (a body missing).
#[tokio::test]
async fn the_new_home_reads_a_body_not_yet_replicated_from_the_old_homes_bucket() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use registry_core::{Registry, RegistrySettings, Store};
    use registry_store_aws::testing::replicator::Replicator;
    use std::sync::Arc;
    use tower::ServiceExt;

    async fn register(store: Arc<dyn Store>, fields: &[&str]) -> (StatusCode, serde_json::Value) {
        let fields: Vec<_> =
            fields.iter().map(|name| serde_json::json!({"name": name, "type": "string", "default": ""})).collect();
        let schema = serde_json::json!({"type": "record", "name": "Order", "fields": fields}).to_string();
        let app = registry_http::app(Registry::new(store, RegistrySettings::default()), Default::default());
        let request = Request::post("/subjects/orders-value/versions")
            .header("content-type", "application/vnd.schemaregistry.v1+json")
            .body(Body::from(serde_json::json!({ "schema": schema }).to_string()))
            .unwrap_or_else(|e| panic!("{e}"));
        let response = app.oneshot(request).await.unwrap_or_else(|never| match never {});
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_else(|e| panic!("{e}"));
        (status, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    support::with_regions("follow-bodies", HOME, READ, |home, read| async move {
        let (status, body) = register(Arc::new(home.store().fenced_by(HOME)), &["id"]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // The table's items reach eu-west-1, the body does not (removed again after the copy);
        // then eu-west-1 becomes home.
        Replicator::default().replicate(&home, &read).await;
        let s3 = read.s3();
        let listed = s3.list_objects_v2().bucket(&read.config.bucket).prefix("schemas/").send().await;
        let listed = listed.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(listed.contents().len(), 1, "one body replicated");
        for object in listed.contents() {
            let deleted = s3.delete_object().bucket(&read.config.bucket).key(object.key().unwrap_or_default()).send();
            deleted.await.unwrap_or_else(|e| panic!("{e}"));
        }
        read.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        let env = env_of(&read);
        let configured = RegionConfig {
            home_region: HOME.into(),
            home_bucket: home.config.bucket.clone(),
            ack_regions: vec![],
            ack_timeout: Duration::from_secs(1),
        };

        // Opened with the home fixed to eu-west-1 and no other bucket: the body is missing.
        let fixed =
            RegionConfig { home_region: READ.into(), home_bucket: read.config.bucket.clone(), ..configured.clone() };
        let Deployment::Home(alone) = Deployment::open(&env, Some(&fixed)) else { panic!("not the home variant") };
        let (status, body) = register(Arc::new(alone), &["id", "amount"]).await;
        assert_eq!((status, body["error_code"].as_i64()), (StatusCode::INTERNAL_SERVER_ERROR, Some(50001)), "{body}");

        // Following (every region's bucket): eu-west-1's home store reads it from us-east-1's.
        let buckets = format!("{HOME}={},{READ}={}", home.config.bucket, read.config.bucket);
        let follow = Follow::open(&env, Some(&configured), &buckets, Duration::from_secs(5));
        let mut follow = follow.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("not following"));
        let Some(Deployment::Home(store)) = follow.homes.remove(READ) else {
            panic!("eu-west-1 is not a home variant")
        };
        let (status, body) = register(Arc::new(store), &["id", "amount"]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body["id"].as_i64() > Some(100), "above the failover's jump: {body}");
    })
    .await;
}
