//! The real `registry-lambda` binary as Lambda runs it: under the Runtime API emulator
//! (`api_tests::lambda`), reached through Function URL requests. Every `api_cases!` case also runs
//! this way (`lambda::<case>`); these cases cover what only a Lambda process has: an init that reads
//! nothing from storage, a list larger than Lambda's 6 MB buffered limit through the streaming
//! response, cold starts of further instances under concurrent requests, and the read region's
//! paths (every `lambda::<case>` runs as a read region's function, replicated before each request;
//! here replication is paused to see which region each request reads and writes).

use api_tests::aws::AwsTarget;
use api_tests::aws::{AwsCase, catch, emulator_sdk};
use api_tests::client::{avro, typed};
use api_tests::lambda::{FunctionConfig, InvocationDeadline, LambdaEmulator, function_binary};
use api_tests::schemas::distinct;
use futures::future::join_all;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

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
    AwsCase::with_lambda(1, async |case| {
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_cold_start_more_instances_that_share_one_registry() {
    AwsCase::with_lambda(4, async |case| {
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
}

/// The fingerprint `id` names in `store`'s default context.
async fn bound(store: &dyn registry_core::Store, id: registry_core::SchemaId) -> Option<registry_core::Fingerprint> {
    store.fingerprint_for_id_in(&registry_core::Context::DEFAULT, id).await.unwrap_or_else(|e| panic!("{e}"))
}

/// The function as a read region's (`AWS_REGION` eu-west-1, `REGISTRY_HOME_REGION` us-east-1):
/// writes commit in the home region's table only and are acknowledged once the local replica shows
/// them (while replication is paused the registration stays unanswered, committed at home), reads
/// are answered from the local replica (what only the replica holds is answered), a read the
/// replica cannot answer yet is answered by the home region, and once replication resumes the
/// registration is answered and read back at once. Two instances: one waits, the other reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_region_function_writes_at_home_and_reads_its_replica_first() {
    use registry_core::{NewSchema, RegisterOptions, Registry, RegistrySettings, SchemaId, Subject};
    AwsCase::with_lambda(2, async |case| {
        let h = case.harness();
        let region = case.read_region().unwrap_or_else(|| panic!("a lambda case runs in a read region"));
        let replica = region.replica();
        region.pause(true);

        // Replication paused: the registration commits at home and waits for the replica, while
        // the other instance answers reads.
        let schema = distinct(1);
        let body = json!({ "schema": schema });
        let answered_flag = std::sync::atomic::AtomicBool::new(false);
        let registration = async {
            let answer = h.register_raw("orders-value", &body).await;
            answered_flag.store(true, std::sync::atomic::Ordering::SeqCst);
            answer
        };
        let id = SchemaId(1);
        let meanwhile = async {
            let started = std::time::Instant::now();
            while bound(h.store().as_ref(), id).await.is_none() {
                assert!(started.elapsed() < HANG_GUARD, "the registration never committed at home");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
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
            let answered = answered_flag.load(std::sync::atomic::Ordering::SeqCst);
            assert!(!answered, "acknowledged before the replica showed it");
            // Replication resumes: the registration is answered once the replica shows it.
            region.pause(false);
        };
        let (answered, ()) = tokio::join!(registration, meanwhile);
        assert_eq!(answered.ok_json(200)["id"], json!(id.0));
        assert!(bound(&replica, id).await.is_some(), "acknowledged once the replica shows it");
        let second = h.register("payments-value", &distinct(2)).await;
        let versions = h.get("/subjects/payments-value/versions").await.ok_json(200);
        assert_eq!(versions, json!([1]), "read your writes: the new subject's version is listed at once");
        let latest = h.get("/subjects/payments-value/versions/latest").await.ok_json(200);
        assert_eq!(latest["id"], json!(second), "read your writes: latest at once");
        let subjects = h.get("/subjects").await.ok_json(200);
        assert!(subjects.as_array().is_some_and(|s| s.contains(&json!("payments-value"))), "{subjects}");
    })
    .await;
}

/// A hang guard, never a speed check.
const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(600);

/// Confluent's answer to a request whose time ran out.
const TIMEOUT_BODY: &str = r#"{"error_code":504,"message":"HTTP 504 Gateway Timeout"}"#;

/// Runs `case` on the function serving a table and bucket of its own with `env` added, under the
/// emulator as `configure` sets it (one instance at most), then stops it and deletes them.
async fn on_function<F>(env: &[(&str, &str)], configure: impl FnOnce(&mut FunctionConfig), case: F)
where
    F: AsyncFnOnce(&LambdaEmulator, &AwsTarget),
{
    let Some(target) = AwsTarget::create().await else { return };
    let env = target.function_env().into_iter().chain(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut config = FunctionConfig::new(function_binary(), env.collect());
    config.max_instances = 1;
    configure(&mut config);
    let function = LambdaEmulator::start(config, 0).await.unwrap_or_else(|e| panic!("start: {e}"));
    let outcome = catch(case(&function, &target)).await;
    function.stop().await;
    let _ = registry_store_aws::provision::delete_resources(&target.sdk, &target.names, true).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// `(status, body)` of `method` on the function's `path`.
async fn call(function: &LambdaEmulator, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, String) {
    let request = reqwest::Client::new().request(method, format!("{}{path}", function.url()));
    let request = match body {
        Some(body) => request.header("content-type", "application/vnd.schemaregistry.v1+json").body(body.to_string()),
        None => request,
    };
    let response = request.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// An invocation with less time left than `REGISTRY_DEADLINE_MARGIN_MS` still works (within half of
/// what is left) and gets the real answer: a 1 s function with the 1 s margin, scaled (60 s left,
/// a 300 s margin, so a 30 s budget) so that the work fits on any machine that serves at all. The
/// budget used to be zero then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invocation_with_less_time_left_than_the_margin_gets_its_answer() {
    let short = |config: &mut FunctionConfig| config.deadline = InvocationDeadline::After(Duration::from_secs(60));
    on_function(&[("REGISTRY_DEADLINE_MARGIN_MS", "300000")], short, async |function, _| {
        let schema = json!({"schema": r#"{"type":"string"}"#});
        let (status, body) =
            call(function, reqwest::Method::POST, "/subjects/short-value/versions", Some(schema)).await;
        assert_eq!(status, 200, "{body}");
        let registered: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(registered["id"], 1, "{body}");
        let (status, body) = call(function, reqwest::Method::GET, "/subjects", None).await;
        assert_eq!((status, body.as_str()), (200, r#"["short-value"]"#));
    })
    .await;
}

/// An invocation whose deadline passed before the function picked it up is answered 504 with
/// Confluent's body, with no work started (nothing registered), by a function that goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invocation_past_its_deadline_is_answered_504_and_the_function_stays() {
    let passed = |config: &mut FunctionConfig| config.deadline = InvocationDeadline::PassedBy(Duration::from_secs(1));
    on_function(&[], passed, async |function, target| {
        let schema = json!({"schema": r#"{"type":"string"}"#});
        for _ in 0..3 {
            let (status, body) =
                call(function, reqwest::Method::POST, "/subjects/late-value/versions", Some(schema.clone())).await;
            assert_eq!((status, body.as_str()), (504, TIMEOUT_BODY));
        }
        assert_eq!(function.instances_started(), 1, "one process answered them all");
        assert_eq!(function.pids().len(), 1, "and still runs");
        let store = registry_store_aws::AwsStore::with_path_style(&target.sdk, target.names.clone(), true);
        let max_id = registry_core::Store::max_id_in(&store, &registry_core::Context::DEFAULT).await;
        assert_eq!(max_id.map_err(|e| e.to_string()), Ok(None), "no ID allocated: no work started");
    })
    .await;
}

/// `cargo lambda watch` hands every invocation the deadline 600000 (1970-01-01T00:10:00Z): no
/// deadline, so requests are served (every one was answered 504).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_lambdas_constant_deadline_is_no_deadline() {
    let cargo_lambda = |config: &mut FunctionConfig| config.deadline = InvocationDeadline::Fixed(600_000);
    on_function(&[], cargo_lambda, async |function, _| {
        let schema = json!({"schema": r#"{"type":"string"}"#});
        let (status, body) =
            call(function, reqwest::Method::POST, "/subjects/watch-value/versions", Some(schema)).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = call(function, reqwest::Method::GET, "/subjects", None).await;
        assert_eq!((status, body.as_str()), (200, r#"["watch-value"]"#));
    })
    .await;
}

/// A response post whose connection the Runtime API cuts (`cargo lambda watch` answers 500 and
/// drops it when the caller went away) loses that invocation only: the same process serves the
/// next one (it used to exit, and the next request waited for a cold start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_failed_response_post_the_same_process_serves_the_next_invocation() {
    let failing = |config: &mut FunctionConfig| config.failed_responses = 1;
    on_function(&[], failing, async |function, _| {
        let (status, _) = call(function, reqwest::Method::GET, "/subjects", None).await;
        assert_eq!(status, 502, "the invocation whose response post failed is lost");
        for _ in 0..2 {
            let (status, body) = call(function, reqwest::Method::GET, "/subjects", None).await;
            assert_eq!((status, body.as_str()), (200, "[]"));
        }
        assert_eq!(function.instances_started(), 1, "no new instance was started");
        assert_eq!(function.pids().len(), 1, "the instance still runs");
    })
    .await;
}
