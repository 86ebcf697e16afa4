//! The exporter function end to end on the emulator: a registry on DynamoDB + S3 with its table's
//! stream on (NEW_AND_OLD_IMAGES), exporters whose records live in the same table, and an embedded
//! destination registry served on loopback. Registrations, deletes and a config change at the
//! source are read back from the stream (GetShardIterator / GetRecords, as Lambda's event source
//! mapping reads them) and handed to the exporter handler; afterwards every GET of the exported
//! subjects answers the same on source and destination. Also: a crash between the push and the
//! offset re-sends idempotently, and a destination that is down fails the batch at the first record
//! that concerns it, with the exporter in ERROR and the reason in its trace. The destination asks
//! for credentials: the exporters' are sealed by KMS (the item holds only the ciphertext) and
//! opened by the pass, as the exporter function's own wiring does.
//!
//! Skips without `AWS_ENDPOINT_URL` (fails with `CI` set), as the store's emulator tests do.

mod destination;
mod stream;

use destination::{PASSWORD, avro, destination_config, loopback, loopback_shared, serve_embedded};
use registry_core::{Registry, RegistrySettings};
use registry_exporter::engine::{Method, RegistryApi, sync_pass};
use registry_exporter::{ExporterService, ExporterState, ExporterStore, ExporterUpdate};
use registry_exporter_http::{HttpApi, RouterApi};
use registry_lambda::exporter::{self, CATCH_UP_EVENT};
use registry_lambda::exporter_engine::ServiceEngine;
use registry_lambda::exporter_store::DynamoExporterStore;
use registry_store_aws::exporter_secrets::{KmsSealer, SEALED_PREFIX};
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::testing::{create_kms_key, emulator_sdk, unique_names};
use registry_store_aws::{AwsStore, AwsStoreConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use stream::failures;

async fn call(api: &dyn RegistryApi, method: Method, path: &str, body: Option<Value>) -> Value {
    let answer = api.call(method, path, body.as_ref()).await.unwrap_or_else(|e| panic!("{method:?} {path}: {e}"));
    assert!((200..300).contains(&answer.status), "{method:?} {path}: {} {}", answer.status, answer.body);
    answer.body
}

/// What a GET answers, without what legitimately differs: the destination context in front of
/// subject names (`:.team-a:`) and `ts` (when each registry wrote the version).
async fn get(api: &dyn RegistryApi, path: &str) -> (u16, Value) {
    let answer = api.call(Method::Get, path, None).await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let mut body = answer.body;
    strip(&mut body);
    (answer.status, body)
}

fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("ts");
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        // Error messages and references name the subject too.
        Value::String(text) => *text = text.replace(":.team-a:", ""),
        _ => {}
    }
}

/// Every GET a client makes for `subject`, on both registries: versions (live, deleted included),
/// each version and its raw schema, each ID (in the destination's context), the subject's config.
async fn assert_same(source: &dyn RegistryApi, destination: &dyn RegistryApi, subject: &str) {
    let remote = format!(":.team-a:{subject}");
    let mut paths = vec![
        (format!("/subjects/{subject}/versions"), format!("/subjects/{remote}/versions")),
        (format!("/subjects/{subject}/versions?deleted=true"), format!("/subjects/{remote}/versions?deleted=true")),
        (format!("/config/{subject}"), format!("/config/{remote}")),
        (format!("/subjects/{subject}/versions/latest"), format!("/subjects/{remote}/versions/latest")),
    ];
    let (_, versions) = get(source, &format!("/subjects/{subject}/versions?deleted=true")).await;
    for version in versions.as_array().cloned().unwrap_or_default() {
        for suffix in ["", "/schema"] {
            paths.push((
                format!("/subjects/{subject}/versions/{version}{suffix}?deleted=true"),
                format!("/subjects/{remote}/versions/{version}{suffix}?deleted=true"),
            ));
        }
        let (_, row) = get(source, &format!("/subjects/{subject}/versions/{version}?deleted=true")).await;
        if let Some(id) = row["id"].as_i64() {
            paths.push((format!("/schemas/ids/{id}"), format!("/contexts/.team-a/schemas/ids/{id}")));
        }
    }
    for (at_source, at_destination) in paths {
        let here = get(source, &at_source).await;
        let there = get(destination, &at_destination).await;
        assert_eq!(here, there, "GET {at_source} (source) and GET {at_destination} (destination) differ");
    }
}

fn create(name: &str, subjects: &[&str], url: &str) -> ExporterUpdate {
    ExporterUpdate {
        name: Some(name.to_owned()),
        context_type: Some("CUSTOM".to_owned()),
        context: Some(".team-a".to_owned()),
        subjects: Some(subjects.iter().map(|s| (*s).to_owned()).collect()),
        subject_rename_format: None,
        config: Some(destination_config(url)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_batches_export_the_subjects_and_the_destination_ends_identical() {
    let Some(sdk) = emulator_sdk().await else { return };
    let names = unique_names("exporter-stream");
    create_resources(&sdk, &names, true).await.unwrap_or_else(|e| panic!("{e}"));
    let outcome = tokio::spawn(run(sdk.clone(), names.clone())).await;
    let _ = delete_resources(&sdk, &names, true).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

async fn run(sdk: aws_config::SdkConfig, names: AwsStoreConfig) {
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let reader = stream::enable(&sdk, &names).await;

    // The source: this registry over the table and bucket, called in process.
    let store = AwsStore::with_path_style(&sdk, names.clone(), true);
    let source_app =
        registry_http::app(Registry::new(Arc::new(store), RegistrySettings::default()), Default::default());
    let source = RouterApi::new(source_app.clone());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (url, server) = serve_embedded(dir.path()).await;
    let destination =
        HttpApi::from_config("check", &destination_config(&url), &loopback_shared()).unwrap_or_else(|e| panic!("{e}"));
    let anonymous = HttpApi::from_config(
        "anonymous",
        &BTreeMap::from([("schema.registry.url".to_owned(), url.clone())]),
        &loopback_shared(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let refused = anonymous.call(Method::Get, "/subjects", None).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(refused.status, 401, "the destination asks for credentials");

    // The exporters, their records in the same table, their credentials sealed by KMS.
    let exporters: Arc<dyn ExporterStore> = Arc::new(DynamoExporterStore::new(dynamo.clone(), &names.table));
    let sealer = KmsSealer::new(&sdk, Some(create_kms_key(&sdk, "exporter credentials").await));
    let service = ExporterService::new(exporters.clone(), Arc::new(sealer));
    service.create(create("team-a", &["orders-*"], &url)).await.unwrap_or_else(|e| panic!("{e}"));
    let item = registry_store_aws::testing::exporter_item(&sdk, &names.table, "team-a").await;
    let raw = format!("{item:?}");
    assert!(!raw.contains(PASSWORD) && raw.contains(SEALED_PREFIX), "the item holds only the ciphertext: {raw}");
    let engine =
        ServiceEngine::new(service.clone(), Arc::new(RouterApi::new(source_app))).with_destinations(loopback());

    // Writes at the source: versions, a reference, a soft delete, a config, a hard delete, and a
    // subject no exporter copies.
    let post = |subject: &str, body: Value| {
        let path = format!("/subjects/{subject}/versions");
        let source = &source;
        async move { call(source, Method::Post, &path, Some(body)).await }
    };
    post("orders-value", avro(&["id"])).await;
    post("orders-value", avro(&["id", "amount"])).await;
    post("orders-key", json!({ "schema": "\"string\"" })).await;
    let referencing = json!({
        "schema": json!({ "type": "record", "name": "Envelope", "fields": [{ "name": "order", "type": "Order" }] }).to_string(),
        "references": [{ "name": "Order", "subject": "orders-value", "version": 2 }],
    });
    post("orders-envelope", referencing).await;
    post("payments-value", avro(&["payment"])).await;
    call(&source, Method::Delete, "/subjects/orders-value/versions/1", None).await;
    call(&source, Method::Put, "/config/orders-value", Some(json!({ "compatibility": "FULL" }))).await;
    post("orders-old", json!({ "schema": "\"int\"" })).await;
    call(&source, Method::Delete, "/subjects/orders-old", None).await;
    call(&source, Method::Delete, "/subjects/orders-old?permanent=true", None).await;

    let records = reader.records().await;
    let rows = records
        .iter()
        .filter(|r| r["dynamodb"]["Keys"]["sk"]["S"].as_str().is_some_and(|sk| sk.starts_with("V#")))
        .count();
    assert!(rows >= 8, "expected the version rows' records in the stream, got {rows} of {}", records.len());

    let (absent, _) = get(&destination, "/subjects/:.team-a:orders-value/versions").await;
    assert_eq!(absent, 404, "nothing is exported before the handler runs");
    let answer = exporter::handle(&engine, &json!({ "Records": records })).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(failures(&answer), Vec::<String>::new(), "{answer}");
    let status = service.status("team-a").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.state, ExporterState::Running, "{status:?}");
    assert!(status.offset > 0, "the offset counts the writes made: {status:?}");
    for subject in ["orders-value", "orders-key", "orders-envelope", "orders-old"] {
        assert_same(&source, &destination, subject).await;
    }
    let (status_code, _) = get(&destination, "/subjects/:.team-a:payments-value/versions").await;
    assert_eq!(status_code, 404, "a subject no pattern matches is not exported");

    // More changes, then a crash between push and offset: the pass reached the destination, the
    // status was never written. The retried batch pushes again; the destination answers it as
    // already done, and the offset moves once the batch is through.
    post("orders-value", avro(&["id", "amount", "note"])).await;
    call(&source, Method::Delete, "/subjects/orders-key/versions/1", None).await;
    call(&source, Method::Delete, "/config/orders-value", None).await;
    let exporter = service.get("team-a").await.unwrap_or_else(|e| panic!("{e}"));
    let pushed = sync_pass(&exporter, &source, &destination).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(pushed > 0, "the crashed pass pushed the new changes");
    let unrecorded = service.status("team-a").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(unrecorded.offset, status.offset, "the crash left the offset where it was");
    let answer = exporter::handle(&engine, &json!({ "Records": reader.records().await }))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(failures(&answer), Vec::<String>::new(), "{answer}");
    for subject in ["orders-value", "orders-key", "orders-envelope", "orders-old"] {
        assert_same(&source, &destination, subject).await;
    }
    assert_eq!(sync_pass(&exporter, &source, &destination).await, Ok(0), "a further pass writes nothing");

    // The same batch again (Lambda retrying after a lost answer): nothing changes.
    let again = exporter::handle(&engine, &json!({ "Records": reader.records().await })).await;
    assert_eq!(again.as_ref().map(failures), Ok(Vec::new()));
    assert_same(&source, &destination, "orders-value").await;

    // A destination that is down: the batch fails at the first record its exporter is concerned
    // with, the exporter is in ERROR with the reason, and the other exporter is unaffected.
    service.create(create("payments", &["payments-*"], "http://127.0.0.1:9")).await.unwrap_or_else(|e| panic!("{e}"));
    post("payments-value", avro(&["payment", "currency"])).await;
    let records = reader.records().await;
    let first_payments = records
        .iter()
        .find(|r| {
            r["dynamodb"]["Keys"]["pk"]["S"] == "S#payments-value"
                && r["dynamodb"]["Keys"]["sk"]["S"].as_str().is_some_and(|sk| sk.starts_with("V#"))
        })
        .and_then(|r| r["dynamodb"]["SequenceNumber"].as_str())
        .unwrap_or_else(|| panic!("no payments-value row in the stream"))
        .to_owned();
    let answer = exporter::handle(&engine, &json!({ "Records": records })).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(failures(&answer), [first_payments], "{answer}");
    let status = service.status("payments").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.state, ExporterState::Error, "{status:?}");
    assert!(status.trace.as_deref().is_some_and(|trace| !trace.is_empty()), "{status:?}");
    assert_eq!(service.status("team-a").await.map(|s| s.state).ok(), Some(ExporterState::Running));

    // The catch-up run reports the exporter that is not level, and passes the others.
    let caught_up = exporter::handle(&engine, &json!({ "registry": CATCH_UP_EVENT })).await;
    assert!(caught_up.as_ref().is_err_and(|error| error.contains("payments")), "{caught_up:?}");
    server.abort();
}
