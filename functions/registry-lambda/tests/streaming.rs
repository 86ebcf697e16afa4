//! A `GET /subjects` answer larger than Lambda's 6 MB buffered-response limit, sent through
//! `lambda_http::StreamAdapter`: the same event → request → router → `StreamResponse`
//! conversion `lambda_http::run_with_streaming_response` performs behind a `RESPONSE_STREAM`
//! Function URL. The streamed body must arrive whole: valid JSON with every subject.

use futures::StreamExt;
use lambda_http::request::LambdaRequest;
use lambda_http::{Context, LambdaEvent, StreamAdapter};
use registry_core::testkit::{StoreTestExt, record_body, row};
use registry_core::{MemoryStore, Registry, RegistrySettings, Store, Subject};
use registry_lambda::handler;
use std::sync::Arc;
use std::time::Instant;
use tower::ServiceExt;

/// Lambda's limit for a buffered (non-streaming) response payload.
const BUFFERED_LIMIT: usize = 6 * 1024 * 1024;
const SUBJECTS: usize = 40_000;
const SUBJECT_CHARS: usize = 200;

fn subject_name(i: usize) -> String {
    let head = format!("team-{i:06}-");
    format!("{head}{}", "s".repeat(SUBJECT_CHARS - head.len()))
}

async fn seeded_store() -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    let body = record_body("big-list");
    let fingerprint = body.fingerprint();
    store.put_body(&fingerprint, &body).await.unwrap_or_else(|e| panic!("put_body: {e}"));
    let id = store.allocate_id(&fingerprint).await.unwrap_or_else(|e| panic!("allocate_id: {e}"));
    for i in 0..SUBJECTS {
        let subject = Subject::new(subject_name(i)).unwrap_or_else(|e| panic!("subject: {e}"));
        store.add_version(&row(&subject, 1, id, fingerprint)).await.unwrap_or_else(|e| panic!("create_version: {e}"));
    }
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subject_list_over_6_mb_streams_whole() {
    let store = seeded_store().await;
    let registry = Registry::new(store, RegistrySettings::default());
    let event_path = format!("{}/tests/events/function_url_list_subjects.json", env!("CARGO_MANIFEST_DIR"));
    let event_json = std::fs::read_to_string(&event_path).unwrap_or_else(|e| panic!("{event_path}: {e}"));
    let payload: LambdaRequest = serde_json::from_str(&event_json).unwrap_or_else(|e| panic!("event: {e}"));

    let started = Instant::now();
    let adapter = StreamAdapter::from(handler(registry, registry_http::AppOptions::default(), None));
    let response =
        adapter.oneshot(LambdaEvent::new(payload, Context::default())).await.unwrap_or_else(|never| match never {});
    let prelude = &response.metadata_prelude;
    assert_eq!(prelude.status_code, 200);
    assert_eq!(
        prelude.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/vnd.schemaregistry.v1+json")
    );
    // The prelude is what the runtime sends ahead of the body; it must serialize.
    let prelude_json = serde_json::to_value(prelude).unwrap_or_else(|e| panic!("prelude: {e}"));
    assert_eq!(prelude_json["statusCode"], 200);

    let mut stream = response.stream;
    let mut body = Vec::new();
    let mut chunks = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.unwrap_or_else(|e| panic!("stream error: {e}"));
        body.extend_from_slice(&chunk);
        chunks += 1;
    }
    let elapsed = started.elapsed();
    println!(
        "streamed GET /subjects: {} bytes ({:.2} MB) in {chunks} chunk(s), {SUBJECTS} subjects, {:.0} ms",
        body.len(),
        body.len() as f64 / 1e6,
        elapsed.as_secs_f64() * 1e3
    );

    assert!(body.len() > BUFFERED_LIMIT, "answer is {} bytes, must exceed the 6 MB buffered limit", body.len());
    let subjects: Vec<String> =
        serde_json::from_slice(&body).unwrap_or_else(|e| panic!("streamed body is not JSON: {e}"));
    assert_eq!(subjects.len(), SUBJECTS);
    let expected: Vec<String> = (0..SUBJECTS).map(subject_name).collect();
    assert!(subjects == expected, "every subject, in order");
}
