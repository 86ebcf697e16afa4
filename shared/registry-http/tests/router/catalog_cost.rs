//! What one search costs in store calls: a bounded scan. Over more subjects than the scan budget,
//! a field search lists subjects in pages and reads each scanned subject's latest version once,
//! stops at the budget with a cursor, and makes no write; the figures are printed for the docs.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use registry_core::testkit::{HookedStore, StoreCall};
use registry_core::{MemoryStore, NewSchema, Registry, RegistrySettings, SchemaType, StoreResult};
use registry_http::routes::catalog::DEFAULT_SCAN;
use registry_http::{AppOptions, app};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tower::ServiceExt;

/// More subjects than one request scans by default.
const SUBJECTS: usize = DEFAULT_SCAN + 200;

#[tokio::test]
async fn a_search_reads_a_bounded_number_of_subjects() {
    let inner: Arc<MemoryStore> = Arc::new(MemoryStore::new());
    let seeding = Registry::new(inner.clone(), RegistrySettings::default());
    for n in 0..SUBJECTS {
        let text = format!(r#"{{"type":"record","name":"R{n}","fields":[{{"name":"customer_id","type":"long"}}]}}"#);
        let schema = NewSchema { schema: Some(text), schema_type: SchemaType::Avro, ..NewSchema::default() };
        seeding.register(&format!("s-{n:05}"), schema, Default::default()).await.unwrap();
    }
    let calls: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let counted = calls.clone();
    let hook = move |call: StoreCall| -> StoreResult<()> {
        let name = format!("{call:?}");
        let kind = name.split([' ', '{', '(']).next().unwrap_or_default().to_string();
        *counted.lock().unwrap().entry(kind).or_default() += 1;
        Ok(())
    };
    let store = Arc::new(HookedStore::new(inner, hook));
    let registry = Registry::new(store, RegistrySettings::default());
    let request = Request::post("/schemas/search/field")
        .header("content-type", "application/json")
        .body(Body::from(r#"{"field":"customerId","limit":5000}"#))
        .unwrap();
    let response = app(registry, AppOptions::default()).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["subjects_scanned"], DEFAULT_SCAN);
    assert_eq!(body["count"], DEFAULT_SCAN);
    assert_eq!(body["next_cursor"], format!("s-{:05}", DEFAULT_SCAN - 1));

    let calls = calls.lock().unwrap().clone();
    eprintln!("store calls of one search scanning {DEFAULT_SCAN} of {SUBJECTS} subjects: {calls:?}");
    let reads = ["ListSubjects", "Versions", "GetConfig", "GetBody"];
    assert!(calls.keys().all(|kind| reads.contains(&kind.as_str())), "only reads: {calls:?}");
    let total: usize = calls.values().sum();
    assert_eq!(calls.get("ListSubjects"), Some(&DEFAULT_SCAN.div_ceil(500)), "{calls:?}");
    assert!(total <= DEFAULT_SCAN * 3 + 2, "at most three reads per scanned subject: {calls:?}");
}
