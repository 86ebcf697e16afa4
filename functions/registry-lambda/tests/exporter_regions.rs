//! The exporter function in a multi-region registry, on the emulator: us-east-1 the home, eu-west-1
//! the region the exporter function runs in (a registry's first region, which a failover can leave
//! without the home), each with its replica of one table, its bucket and its exporter-credential
//! key, the test-only replicator standing in for global tables. The engines are those
//! `run_exporter` builds ([`function_engine`], [`FunctionEngines`]) and the destination an embedded registry on
//! loopback that asks for the credentials the API sealed.
//!
//! Skips without `AWS_ENDPOINT_URL` (fails with `CI` set), as the store's emulator tests do.

mod destination;

use destination::{avro, destination_config, loopback, loopback_shared, serve_embedded};
use registry_core::{Registry, RegistrySettings};
use registry_exporter::engine::{Method, RegistryApi};
use registry_exporter::store::ExporterStore;
use registry_exporter::{ExporterState, ExporterUpdate};
use registry_exporter_http::{HttpApi, RouterApi};
use registry_lambda::exporter::{self, CATCH_UP_EVENT, ExportEngine};
use registry_lambda::exporter_engine::{FunctionEngines, function_engine};
use registry_store_aws::AwsEnv;
use registry_store_aws::exporter_store::{DynamoExporterStore, deployment_exporter_service};
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::regions::{Deployment, RegionConfig, in_region};
use registry_store_aws::testing::replicator::{Replicator, Site};
use registry_store_aws::testing::{create_kms_key, emulator_sdk, unique_names};
use serde_json::{Value, json};

use std::sync::Arc;
use std::time::Duration;

const HOME: &str = "us-east-1";
const EXPORTER_REGION: &str = "eu-west-1";
fn create(name: &str, url: &str) -> ExporterUpdate {
    ExporterUpdate {
        name: Some(name.to_owned()),
        context_type: Some("CUSTOM".to_owned()),
        context: Some(".dr".to_owned()),
        subjects: Some(vec!["orders-*".to_owned()]),
        subject_rename_format: None,
        config: Some(destination_config(url)),
    }
}

/// Registers `body` under `subject` through `site`'s own table and bucket, as that region's
/// function does when it is home.
async fn register(site: &Site, home: &str, subject: &str, body: Value) {
    let app = registry_http::app(
        Registry::new(Arc::new(site.store().fenced_by(home)), RegistrySettings::default()),
        Default::default(),
    );
    let answer = RouterApi::new(app)
        .call(Method::Post, &format!("/subjects/{subject}/versions"), Some(&body))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer.status, 200, "{}", answer.body);
}

/// A stream batch of one version row of `subject`, as the exporter's event source mapping hands it.
fn batch(subject: &str, sequence: &str) -> Value {
    json!({ "Records": [{ "eventName": "INSERT", "dynamodb": {
        "Keys": { "pk": { "S": format!("S#{subject}") }, "sk": { "S": "V#0000000001" } },
        "NewImage": { "deleted": { "BOOL": false } },
        "SequenceNumber": sequence,
    } }] })
}

fn failures(answer: &Value) -> Vec<String> {
    answer["batchItemFailures"]
        .as_array()
        .map(|items| items.iter().filter_map(|item| item["itemIdentifier"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The environment a function of `site`'s region reads (`REGISTRY_TABLE`, `REGISTRY_BUCKET`, its
/// region), sealing with `key` when given.
fn env(site: &Site, key: Option<&str>) -> AwsEnv {
    AwsEnv {
        sdk: site.sdk.clone(),
        store: site.config.clone(),
        s3_path_style: true,
        kms_key_arns: Vec::new(),
        exporter_kms_key: key.map(str::to_owned),
    }
}

fn regions(home: &str, home_bucket: &str, local_bucket: &str) -> Option<RegionConfig> {
    RegionConfig::from_settings(Some(home), Some(home_bucket), local_bucket, "", Duration::from_secs(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exporter_function_records_its_status_at_home_and_an_old_home_refuses_it() {
    let regions = [(HOME, "home"), (EXPORTER_REGION, "local")];
    let Some([home, local]) = Site::of_regions("exporter-regions", regions).await else { return };
    for site in [&home, &local] {
        site.create().await;
    }
    let outcome = tokio::spawn(run(home.clone(), local.clone())).await;
    for site in [&home, &local] {
        site.delete().await;
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

async fn run(home: Site, local: Site) {
    let replicator = Replicator::default();
    let home_key = create_kms_key(&home.sdk, "exporter credentials, us-east-1").await;
    let local_key = create_kms_key(&local.sdk, "exporter credentials, eu-west-1").await;
    let keys = [home_key.clone(), local_key.clone()];
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (url, server) = serve_embedded(dir.path()).await;
    let destination =
        HttpApi::from_config("check", &create("check", &url).config.unwrap_or_default(), &loopback_shared())
            .unwrap_or_else(|e| panic!("{e}"));

    // A schema committed at home and replicated to the exporter's region (its source), then an
    // exporter created through the API of the exporter's region, a read region: the record and its
    // sealed credentials are at home only.
    register(&home, HOME, "orders-value", avro(&["id"])).await;
    replicator.replicate(&home, &local).await;
    let as_read_region = regions(HOME, &home.config.bucket, &local.config.bucket);
    let api_env = env(&local, Some(&home_key));
    let api = deployment_exporter_service(&api_env, &Deployment::open(&api_env, as_read_region.as_ref()));
    api.create(create("to-dr", &url)).await.unwrap_or_else(|e| panic!("{e}"));
    let at_home = DynamoExporterStore::new(home.dynamo(), home.config.table.clone());
    let in_local = DynamoExporterStore::new(local.dynamo(), local.config.table.clone());
    let created = at_home.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
    let created = created.unwrap_or_else(|| panic!("the exporter is not in the home region's table"));

    // The exporter function of eu-west-1, told us-east-1 is home: a catch-up pass copies the
    // subject (the credentials opened by the home region's KMS) and records RUNNING at home; the
    // local replica holds no exporter item.
    let function_env = env(&local, None);
    let engine = function_engine(&function_env, as_read_region.as_ref(), &keys, RegistrySettings::default())
        .with_destinations(loopback());
    let answer = exporter::handle(&engine, &json!({ "registry": CATCH_UP_EVENT })).await;
    assert_eq!(answer, Ok(json!({})), "the catch-up pass");
    let recorded = at_home.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
    let recorded = recorded.unwrap_or_else(|| panic!("the exporter left the home region's table"));
    assert_eq!(recorded.value.status.state, ExporterState::Running, "{:?}", recorded.value.status);
    assert!(recorded.value.status.offset > 0, "the offset counts the writes: {:?}", recorded.value.status);
    assert!(recorded.revision > created.revision, "the status was written at home");
    let none = in_local.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
    assert!(none.is_none(), "the exporter function wrote its state into its local replica: {none:?}");
    let copied = destination.call(Method::Get, "/subjects/:.dr:orders-value/versions", None).await;
    let copied = copied.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((copied.status, copied.body.clone()), (200, json!([1])), "{}", copied.body);

    // A failover to eu-west-1 whose marker reached us-east-1, the exporter function not yet told.
    // A new version (committed by the new home, in the exporter's own replica) is pushed, but the
    // status write at the old home is refused: the pass fails, naming the marker.
    replicator.replicate(&home, &local).await;
    local.store().fail_over(EXPORTER_REGION, 100).await.unwrap_or_else(|e| panic!("{e}"));
    replicator.replicate(&local, &home).await;
    register(&local, EXPORTER_REGION, "orders-value", avro(&["id", "amount"])).await;
    let listed = engine.running().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.len(), 1, "the exporters are still listed from the old home's table");
    let error = engine.pass(&listed[0]).await.err().unwrap_or_default();
    assert!(error.contains("status not recorded") && error.contains("home marker"), "{error}");
    // Through a stream batch: the record of the change is reported failed, so Lambda retries it.
    register(&local, EXPORTER_REGION, "orders-value", avro(&["id", "amount", "note"])).await;
    let answer = exporter::handle(&engine, &batch("orders-value", "41")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(failures(&answer), ["41"], "a refused status write fails the batch: {answer}");
    let kept = at_home.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kept.map(|stored| stored.revision), Some(recorded.revision), "the old home's record is unchanged");

    // An exporter created at the new home is sealed by eu-west-1's key, the first one's credentials
    // are still us-east-1's. The function following the home marker (every region's bucket), still
    // configured with us-east-1 as home, as no apply changed it: it reads the marker in its own
    // replica, so the retried batch passes both (the first has nothing left to push) and their
    // statuses are recorded in eu-west-1's table.
    let as_home = regions(EXPORTER_REGION, &local.config.bucket, &local.config.bucket);
    let new_home_env = env(&local, Some(&local_key));
    let api = deployment_exporter_service(&new_home_env, &Deployment::open(&new_home_env, as_home.as_ref()));
    let mut second = create("to-dr-2", &url);
    second.context = Some(".dr2".to_owned());
    api.create(second).await.unwrap_or_else(|e| panic!("{e}"));
    let buckets = format!("{HOME}={},{EXPORTER_REGION}={}", home.config.bucket, local.config.bucket);
    let settings = RegistrySettings::default();
    let (configured, ttl) = (as_read_region.as_ref(), Duration::ZERO);
    let engines = FunctionEngines::open(&function_env, configured, &buckets, ttl, &keys, settings)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_destinations(loopback());
    let engine = engines.current().await.unwrap_or_else(|e| panic!("{e}"));
    let answer = exporter::handle(engine, &batch("orders-value", "41")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(failures(&answer), Vec::<String>::new(), "{answer}");
    for (name, context) in [("to-dr", ".dr"), ("to-dr-2", ".dr2")] {
        let stored = in_local.exporter(name).await.unwrap_or_else(|e| panic!("{e}"));
        let status = stored.map(|stored| stored.value.status).unwrap_or_else(|| panic!("{name} is not at home"));
        assert_eq!(status.state, ExporterState::Running, "{name}: {status:?}");
        let path = format!("/subjects/:{context}:orders-value/versions");
        let copied = destination.call(Method::Get, &path, None).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((copied.status, copied.body.clone()), (200, json!([1, 2, 3])), "{name}: {}", copied.body);
    }
    server.abort();
}

/// A single-region registry (no home region): the function's engine keeps the exporters' records
/// in its own table, unfenced, credentials opened by its own region's KMS, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_region_exporter_function_keeps_its_records_in_its_own_table() {
    let Some(sdk) = emulator_sdk().await else { return };
    let names = unique_names("exporter-single");
    let site = Site { sdk: in_region(&sdk, HOME), config: names.clone() };
    create_resources(&site.sdk, &site.config, true).await.unwrap_or_else(|e| panic!("creating: {e}"));
    let outcome = tokio::spawn(async move {
        let key = create_kms_key(&site.sdk, "exporter credentials").await;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (url, server) = serve_embedded(dir.path()).await;
        register(&site, HOME, "orders-value", avro(&["id"])).await;
        let api_env = env(&site, Some(&key));
        let api = deployment_exporter_service(&api_env, &Deployment::open(&api_env, None));
        api.create(create("to-dr", &url)).await.unwrap_or_else(|e| panic!("{e}"));
        let engine =
            function_engine(&env(&site, None), None, &[], RegistrySettings::default()).with_destinations(loopback());
        let answer = exporter::handle(&engine, &json!({ "registry": CATCH_UP_EVENT })).await;
        assert_eq!(answer, Ok(json!({})), "the catch-up pass");
        let records = DynamoExporterStore::new(site.dynamo(), site.config.table.clone());
        let stored = records.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
        let status = stored.map(|stored| stored.value.status).unwrap_or_else(|| panic!("no exporter record"));
        assert_eq!((status.state, status.offset > 0), (ExporterState::Running, true), "{status:?}");
        server.abort();
    })
    .await;
    let _ = delete_resources(&sdk, &names, true).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}
