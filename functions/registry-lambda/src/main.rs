//! The Lambda entry point: settings → AWS store → warm-instance cache → registry → `registry_http::app`
//! (with `/exporters` over the exporter records in the same table, credentials sealed by KMS;
//! assembled by `registry_lambda::api`, following the home marker when every region's bucket is
//! given), served with a streaming response (Function URL `RESPONSE_STREAM`) so large lists are never cut at
//! 6 MB. Nothing is read from storage at init. With `REGISTRY_LAMBDA_HANDLER=exporter` the same
//! bootstrap is the exporter function instead (`registry_lambda::exporter`). Either runtime loop
//! is started again after a failed Runtime API call (`registry_lambda::runtime_loop`), so the
//! process exits only when the Runtime API cannot be reached.

use lambda_http::Error;
use lambda_http::LambdaEvent;
use registry_lambda::LambdaConfig;
use registry_lambda::config::HandlerKind;
use registry_lambda::exporter;
use registry_lambda::exporter_engine::FunctionEngines;
use registry_lambda::runtime_loop::{FIRST_PAUSE, Invocations, keep_serving};
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
    let handler = registry_lambda::api::handler(&config, &env).await?;
    let invocations = Invocations::default();
    keep_serving(&invocations, FIRST_PAUSE, || {
        let invocations = invocations.clone();
        let counted = tower::util::MapRequest::new(handler.clone(), move |request| {
            invocations.handled();
            request
        });
        lambda_http::run_with_streaming_response(counted)
    })
    .await
}

/// The exporter function: stream batches and catch-up runs over the exporters whose records are in
/// the registry's table (the home region's in a multi-region registry), the source this region's
/// registry without authentication ([`FunctionEngines`]: with every region's bucket, the home the
/// marker names at each invocation).
/// Credentials are opened by KMS `Decrypt` (sealed by the API function under
/// `REGISTRY_EXPORTER_KMS_KEY`).
async fn run_exporter(config: &LambdaConfig) -> Result<(), Error> {
    let env = registry_store_aws::AwsEnv::from_env().await?;
    let regions = registry_app::region_config(&config.settings, &env.store.bucket);
    let keys = config.exporter_kms_keys();
    let settings = &config.settings.regions;
    let (buckets, ttl) = (&settings.region_buckets, settings.home_marker_ttl());
    let engines = FunctionEngines::open(&env, regions.as_ref(), buckets, ttl, &keys, config.settings.registry())?;
    let engines = Arc::new(engines);
    let invocations = Invocations::default();
    keep_serving(&invocations, FIRST_PAUSE, || {
        let (engines, invocations) = (engines.clone(), invocations.clone());
        lambda_http::lambda_runtime::run(lambda_http::service_fn(move |event: LambdaEvent<serde_json::Value>| {
            invocations.handled();
            let engines = engines.clone();
            // Boxed: the invocation's future nested in the runtime's is too deep for the compiler's
            // layout queries otherwise.
            Box::pin(async move {
                let engine = engines.current().await?;
                exporter::handle(engine, &event.payload).await.map_err(Error::from)
            })
        }))
    })
    .await
}
