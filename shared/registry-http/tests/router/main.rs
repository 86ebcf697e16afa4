//! Router tests: `router(MemoryStore)` driven with `oneshot`, asserting statuses, `error_code`s,
//! JSON field names and content types for every endpoint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod caching;
mod catalog_cost;
mod compatibility;
mod config;
mod contracts;
mod framework;
mod observability;
mod schemas;
mod store_failures;
mod streaming;
mod subjects;
mod versions;
mod wire;
