//! The Lambda entry point: settings → AWS store → warm-instance cache → registry → `registry_http::app`,
//! served with a streaming response (Function URL `RESPONSE_STREAM`) so large lists are never cut at
//! 6 MB. Nothing is read from storage at init.

use lambda_http::Error;
use registry_core::{CachedStore, Registry};
use registry_lambda::{LambdaConfig, guarded_handler};
use registry_store_aws::AwsStore;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = LambdaConfig::from_env()?;
    tracing_subscriber::fmt()
        .json()
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&config.log)?)
        .init();
    let store = AwsStore::from_env().await?;
    let dek = registry_store_aws::dek_registry::dek_backend(&store);
    let store = Arc::new(CachedStore::with_capacity(store, config.settings.cache_bytes));
    let registry = Registry::new(store, config.settings.registry());
    let authenticator = registry_lambda::auth::authenticator(&config.settings.auth).await?;
    let mut options = config.settings.app_options(authenticator)?;
    options.request_budget = config.request_budget();
    options.deks = dek.map(|backend| config.settings.dek.registry(backend)).transpose()?;
    let origin = registry_lambda::auth::origin_guard(config.origin_secret.as_deref(), &config.settings.auth).await?;
    lambda_http::run_with_streaming_response(guarded_handler(registry, options, Some(config.emf()), origin)).await
}
