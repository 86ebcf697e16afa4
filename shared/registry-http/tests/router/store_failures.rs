//! Storage failures become generic 5xx answers (50001/50002) whose body never carries the detail.

use crate::support::Api;
use registry_core::testkit::{HookedStore, StoreCall};
use registry_core::{MemoryStore, Store, StoreError};
use serde_json::json;
use std::sync::Arc;

const SECRET: &str = "arn:aws:dynamodb:eu-west-1:123456789012:table/secret";

/// A store whose every call fails: `Unavailable` when `throttled`, `Corrupt` otherwise.
pub fn broken_store(throttled: bool) -> impl Store {
    HookedStore::new(Arc::new(MemoryStore::new()), move |_: StoreCall| {
        Err(if throttled {
            StoreError::Unavailable(format!("throttled by {SECRET}"))
        } else {
            StoreError::Corrupt(format!("bad item in {SECRET}"))
        })
    })
}

async fn assert_generic_5xx(api: &Api, error_code: u64) {
    let replies = [
        api.get("/subjects").await,
        api.get("/schemas/ids/1").await,
        api.get("/subjects/users/versions/1").await,
        api.get("/config").await,
        api.post("/subjects/users/versions", json!({"schema": "\"string\""})).await,
    ];
    for reply in replies {
        let message = reply.error(500, error_code);
        assert!(!message.contains("secret") && !message.contains("arn:"), "detail leaked: {message}");
    }
}

#[tokio::test]
async fn unavailable_store_is_50002_without_detail() {
    assert_generic_5xx(&Api::over(broken_store(true)), 50002).await;
}

#[tokio::test]
async fn corrupt_store_is_50001_without_detail() {
    assert_generic_5xx(&Api::over(broken_store(false)), 50001).await;
}
