//! The Lambda entry point: config → AWS store → warm-instance cache → registry → router, served
//! with a streaming response (Function URL `RESPONSE_STREAM`) so large lists are never cut at 6 MB.
//! Nothing is read from storage at init.

use lambda_http::Error;
use registry_core::{CachedStore, Registry};
use registry_lambda::{LambdaConfig, handler_observed};
use registry_store_aws::AwsStore;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = LambdaConfig::from_env()?;
    tracing_subscriber::fmt()
        .json()
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&config.log_filter)?)
        .init();
    let store = AwsStore::from_env().await?;
    let store = Arc::new(CachedStore::with_capacity(store, config.cache_bytes));
    let registry = Registry::new(store, config.settings());
    let authenticator = registry_lambda::auth::authenticator().await?;
    let handler = handler_observed(registry, authenticator, Some(config.emf));
    lambda_http::run_with_streaming_response(handler).await
}
