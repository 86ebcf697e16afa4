//! The Lambda entry point: settings → AWS store → warm-instance cache → registry → `registry_http::app`
//! (with `/exporters` over the exporter records in the same table, credentials sealed by KMS),
//! served with a streaming response (Function URL `RESPONSE_STREAM`) so large lists are never cut at
//! 6 MB. Nothing is read from storage at init. With `REGISTRY_LAMBDA_HANDLER=exporter` the same
//! bootstrap is the exporter function instead (`registry_lambda::exporter`).

use lambda_http::Error;
use lambda_http::LambdaEvent;
use registry_core::{CachedStore, Registry};
use registry_exporter::transport::RouterApi;
use registry_lambda::config::HandlerKind;
use registry_lambda::exporter;
use registry_lambda::exporter_engine::ServiceEngine;
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
    if HandlerKind::from_env()? == HandlerKind::Exporter {
        return run_exporter(&config).await;
    }
    let env = registry_store_aws::AwsEnv::from_env().await?;
    let exporters = registry_store_aws::exporter_store::exporter_service(&env);
    let store = AwsStore::with_path_style(&env.sdk, env.store, env.s3_path_style).with_kms_key_arns(env.kms_key_arns);
    let dek = registry_store_aws::dek_registry::dek_backend(&store);
    let store = Arc::new(CachedStore::with_capacity(store, config.settings.cache_bytes));
    let registry = Registry::new(store, config.settings.registry());
    let authenticator = registry_lambda::auth::authenticator(&config.settings.auth).await?;
    let mut options = config.settings.app_options(authenticator)?;
    options.request_budget = config.request_budget();
    options.deks = dek.map(|backend| config.settings.dek.registry(backend)).transpose()?;
    options.exporters = Some(Arc::new(exporters));
    let origin = registry_lambda::auth::origin_guard(config.origin_secret.as_deref(), &config.settings.auth).await?;
    lambda_http::run_with_streaming_response(guarded_handler(registry, options, Some(config.emf()), origin)).await
}

/// The exporter function: stream batches and catch-up runs over the exporters whose records are in
/// the registry's table, the source this registry's router without authentication. Credentials are
/// opened by KMS `Decrypt` (sealed by the API function under `REGISTRY_EXPORTER_KMS_KEY`).
async fn run_exporter(config: &LambdaConfig) -> Result<(), Error> {
    let env = registry_store_aws::AwsEnv::from_env().await?;
    let service = registry_store_aws::exporter_store::exporter_service(&env);
    let store = AwsStore::with_path_style(&env.sdk, env.store, env.s3_path_style);
    let registry = Registry::new(Arc::new(store), config.settings.registry());
    let source = registry_http::app(registry, registry_http::AppOptions::default());
    let engine = Arc::new(ServiceEngine::new(service, Arc::new(RouterApi::new(source))));
    lambda_http::lambda_runtime::run(lambda_http::service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let engine = engine.clone();
        async move { exporter::handle(engine.as_ref(), &event.payload).await.map_err(Error::from) }
    }))
    .await
}
