//! The real `registry-lambda` binary as Lambda runs it: under the Runtime API emulator
//! (`api_tests::lambda`), reached through Function URL requests. Every `api_cases!` case also runs
//! this way (`lambda::<case>`); these cases cover what only a Lambda process has: an init that reads
//! nothing from storage, a list larger than Lambda's 6 MB buffered limit through the streaming
//! response, cold starts of further instances under concurrent requests, and the read region's
//! paths (every `lambda::<case>` runs as a read region's function, replicated before each request;
//! here replication is paused to see which region each request reads and writes).

use api_tests::aws::{AwsCase, catch, emulator_sdk};
use api_tests::client::{avro, typed};
use api_tests::lambda::{FunctionConfig, LambdaEmulator, function_binary};
use api_tests::schemas::distinct;
use futures::future::join_all;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lambda's limit for a buffered (non-streaming) response payload.
const BUFFERED_LIMIT: usize = 6 * 1024 * 1024;

/// Counts the TCP connections made to a local port that plays every AWS endpoint.
async fn counting_endpoint() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("address: {e}"));
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (format!("http://{address}"), connections)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_reads_nothing_from_storage() {
    if emulator_sdk().await.is_none() {
        return;
    }
    let (endpoint, connections) = counting_endpoint().await;
    let env = [
        ("REGISTRY_TABLE", "init-table"),
        ("REGISTRY_BUCKET", "init-bucket"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
    ];
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let function = LambdaEmulator::start(FunctionConfig::new(function_binary(), env), 0)
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    let init = function.first_init().await.unwrap_or_else(|e| panic!("init: {e}"));
    println!(
        "registry-lambda init (spawn → first GET /runtime/invocation/next, {} build): {:.1} ms",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        init.as_secs_f64() * 1e3
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0, "init connected to the storage endpoint");
    let root = reqwest::get(format!("{}/", function.url())).await.unwrap_or_else(|e| panic!("GET /: {e}"));
    assert_eq!(root.status(), 200, "GET / answers without storage");
    assert_eq!(connections.load(Ordering::SeqCst), 0, "GET / connected to the storage endpoint");
    function.stop().await;
}

/// A JSON Schema whose text is `chars` long or more, distinct per `n`.
fn big_json_schema(n: usize, chars: usize) -> String {
    json!({"type": "object", "title": format!("Big{n}"), "description": "d".repeat(chars)}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_over_6_mb_streams_whole_through_the_function_url() {
    let Some(case) = AwsCase::start_lambda(1).await else { return };
    let outcome = catch(async {
        let h = case.harness();
        const VERSIONS: usize = 8;
        const CHARS: usize = 900_000;
        h.set_config(Some("big-value"), "NONE").await.ok_json(200);
        let mut schemas = Vec::new();
        for n in 0..VERSIONS {
            let schema = big_json_schema(n, CHARS);
            h.register_body("big-value", &typed("JSON", &schema)).await;
            schemas.push(schema);
        }
        let listed = h.get("/schemas?subjectPrefix=big-value").await;
        assert_eq!(listed.status, 200);
        assert!(listed.text.len() > BUFFERED_LIMIT, "answer is {} bytes, must exceed 6 MB", listed.text.len());
        let listed: Vec<Value> = serde_json::from_str(&listed.text).unwrap_or_else(|e| panic!("not JSON: {e}"));
        let texts: Vec<&str> = listed.iter().filter_map(|s| s["schema"].as_str()).collect();
        assert_eq!(texts, schemas.iter().map(String::as_str).collect::<Vec<_>>(), "every version, whole, in order");
        println!("GET /schemas through the Function URL: {} schemas, streamed whole", listed.len());
    })
    .await;
    case.finish(outcome).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_cold_start_more_instances_that_share_one_registry() {
    let Some(case) = AwsCase::start_lambda(4).await else { return };
    let outcome = catch(async {
        let h = case.harness();
        const WRITERS: usize = 16;
        let calls = (0..WRITERS).map(|n| async move {
            let answer = h.register_raw(&format!("s{n}"), &avro(&distinct(n))).await.ok_json(200);
            answer["id"].as_i64().unwrap_or_else(|| panic!("no id: {answer}"))
        });
        let ids: Vec<i64> = join_all(calls).await;
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), WRITERS, "IDs are unique across instances: {ids:?}");
        let function = h.function().unwrap_or_else(|| panic!("a Lambda harness"));
        let started = function.instances_started();
        assert!(started >= 2, "16 concurrent requests found one instance busy and started another: {started}");
        for (n, id) in ids.iter().enumerate() {
            let by_id = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
            assert_eq!(by_id["schema"].as_str(), Some(distinct(n).as_str()));
        }
        let inits: Vec<String> =
            function.init_times().iter().map(|d| format!("{:.1} ms", d.as_secs_f64() * 1e3)).collect();
        println!("{started} instances, init times {}", inits.join(", "));
    })
    .await;
    case.finish(outcome).await;
}

/// The fingerprint `id` names in `store`'s default context.
async fn bound(store: &dyn registry_core::Store, id: registry_core::SchemaId) -> Option<registry_core::Fingerprint> {
    store.fingerprint_for_id_in(&registry_core::Context::DEFAULT, id).await.unwrap_or_else(|e| panic!("{e}"))
}

/// The function as a read region's (`AWS_REGION` eu-west-1, `REGISTRY_HOME_REGION` us-east-1):
/// writes commit in the home region's table only, reads are answered from the local replica (what
/// only the replica holds is answered), a read the replica cannot answer yet is answered by the
/// home region, and once replicated the replica holds the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_region_function_writes_at_home_and_reads_its_replica_first() {
    use registry_core::{NewSchema, RegisterOptions, Registry, RegistrySettings, SchemaId, Subject};
    let Some(case) = AwsCase::start_lambda(1).await else { return };
    let outcome = catch(async {
        let h = case.harness();
        let region = case.read_region().unwrap_or_else(|| panic!("a lambda case runs in a read region"));
        let replica = region.replica();
        region.pause(true);

        let schema = distinct(1);
        let id = h.register("orders-value", &schema).await;
        let id = SchemaId(i32::try_from(id).unwrap_or_else(|e| panic!("{e}")));
        assert!(bound(h.store().as_ref(), id).await.is_some(), "committed in the home region's table");
        assert!(bound(&replica, id).await.is_none(), "the function wrote nothing to the local replica");
        let by_id = h.get(&format!("/schemas/ids/{}", id.0)).await.ok_json(200);
        assert_eq!(by_id["schema"], json!(schema), "not replicated yet: answered by the home region");
        let latest = h.get("/subjects/orders-value/versions/latest").await.ok_json(200);
        assert_eq!(latest["id"], json!(id.0), "not replicated yet: the 404 asked again of the home region");

        // What only the replica holds is answered: reads go to the local replica first.
        let local_only = Registry::new(Arc::new(replica.clone()), RegistrySettings::default());
        let string = NewSchema { schema: Some("\"string\"".to_string()), ..NewSchema::default() };
        let registered = local_only.register(":.eu:local-only", string, RegisterOptions::default()).await;
        registered.unwrap_or_else(|e| panic!("{e}"));
        let version = h.get("/subjects/:.eu:local-only/versions/1").await.ok_json(200);
        assert_eq!(version["subject"], json!(":.eu:local-only"), "{version}");
        let subject = Subject::new(":.eu:local-only").unwrap_or_else(|e| panic!("{e}"));
        let at_home = h.store().versions(&subject).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(at_home.is_empty(), "the home region never had it");

        region.pause(false);
        h.get("/subjects").await.ok_json(200);
        assert!(bound(&replica, id).await.is_some(), "replicated before the next request");
    })
    .await;
    case.finish(outcome).await;
}
