//! The function's observability: the Lambda request id becomes the request id (logged and echoed
//! in `X-Request-Id`), and the handler with EMF still answers as before.

use lambda_http::RequestExt;
use lambda_http::request::from_str;
use registry_core::{MemoryStore, Registry, RegistrySettings};
use registry_http::AppOptions;
use registry_lambda::emf::EmfConfig;
use registry_lambda::handler;
use std::sync::Arc;
use tower::ServiceExt;

fn register_event() -> lambda_http::Request {
    let path = format!("{}/tests/events/apigw_v2_register.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    from_str(&text).unwrap_or_else(|e| panic!("not a Lambda HTTP event: {e}"))
}

#[tokio::test]
async fn the_lambda_request_id_is_echoed_and_emf_does_not_change_the_answer() {
    let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
    let emf = EmfConfig { namespace: "SchemaRegistry".into(), registry: "test-fn".into() };
    let handler = handler(registry.clone(), AppOptions::default(), Some(emf));
    let mut context = lambda_http::lambda_runtime::Context::default();
    context.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd".into();
    let request = register_event().with_lambda_context(context);
    let response = handler.oneshot(request).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 200);
    let echoed = response.headers().get("x-request-id").and_then(|v| v.to_str().ok());
    assert_eq!(echoed, Some("8476a536-e9f4-11e8-9739-2dfe598c3fcd"));
    let snapshot = registry.metrics().snapshot();
    assert_eq!(snapshot.registrations_new_id, 1);
    let counted: u64 = snapshot.requests.iter().map(|series| series.latency.count).sum();
    assert_eq!(counted, 1, "the request is counted once");
}
