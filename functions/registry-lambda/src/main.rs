//! The Lambda entry point: settings → AWS store → warm-instance cache → registry → `registry_http::app`
//! (with `/exporters` over the exporter records in the same table, credentials sealed by KMS),
//! served with a streaming response (Function URL `RESPONSE_STREAM`) so large lists are never cut at
//! 6 MB. Nothing is read from storage at init. With `REGISTRY_LAMBDA_HANDLER=exporter` the same
//! bootstrap is the exporter function instead (`registry_lambda::exporter`).

use lambda_http::Error;
use lambda_http::LambdaEvent;
use registry_core::{CachedStore, Registry};
use registry_lambda::config::HandlerKind;
use registry_lambda::emf::{Emf, RegionCounters};
use registry_lambda::exporter;
use registry_lambda::exporter_engine::function_engine;
use registry_lambda::{LambdaConfig, guarded_app_handler, guarded_handler};
use registry_store_aws::AwsStore;
use registry_store_aws::regions::{AckReplicas, Deployment, RegionConfig, RegionalStore};
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
    let regions = &config.settings.regions;
    let regions = RegionConfig::from_settings(
        regions.home_region(),
        regions.home_bucket.as_deref(),
        &env.store.bucket,
        &regions.ack_regions,
        regions.ack_timeout(),
    );
    let authenticator = registry_lambda::auth::authenticator(&config.settings.auth).await?;
    let mut options = config.settings.app_options(authenticator)?;
    options.request_budget = config.request_budget();
    let origin = registry_lambda::auth::origin_guard(config.origin_secret.as_deref(), &config.settings.auth).await?;
    let cached = |store: AwsOrRegional| {
        let registry = |store: Arc<dyn registry_core::Store>| Registry::new(store, config.settings.registry());
        let bytes = config.settings.cache_bytes;
        match store {
            AwsOrRegional::Aws(store) => registry(Arc::new(CachedStore::with_capacity(store, bytes))),
            AwsOrRegional::Regional(store) => registry(Arc::new(CachedStore::with_capacity(store, bytes))),
        }
    };
    let deks = |store: &AwsStore| {
        let backend = registry_store_aws::dek_registry::dek_backend(store);
        backend.map(|backend| config.settings.dek.registry(backend)).transpose()
    };
    let deployment = Deployment::open(&env, regions.as_ref());
    // Exporters are managed in the home region, reads included (see deployment_exporter_service).
    let exporters = Arc::new(registry_store_aws::exporter_store::deployment_exporter_service(&env, &deployment));
    let handler = match deployment {
        Deployment::Single(store) | Deployment::Home(store) => {
            options.deks = deks(&store)?;
            options.exporters = Some(exporters);
            let emf = emf(&config, None, store.acks().cloned());
            guarded_handler(cached(AwsOrRegional::Aws(store)), options, Some(emf), origin)
        }
        // A read region: reads from the local replica, writes through the home region; after each
        // write the local registry forgets what it remembers, so the function reads its own writes.
        Deployment::Read { reads, writes } => {
            let mut home_options = options.clone();
            home_options.deks = deks(&writes)?;
            home_options.exporters = Some(exporters.clone());
            options.deks = deks(reads.local())?;
            options.exporters = Some(exporters);
            let emf = emf(&config, Some(reads.clone()), writes.acks().cloned());
            let (local, home) = (cached(AwsOrRegional::Regional(reads)), cached(AwsOrRegional::Aws(writes)));
            let app = registry_http::regional::app_forgetting(
                registry_http::app(local.clone(), options),
                registry_http::app(home, home_options),
                local.clone(),
            );
            guarded_app_handler(app, local, Some(emf), origin)
        }
    };
    lambda_http::run_with_streaming_response(handler).await
}

/// The EMF emitter, reporting a multi-region function's counters too: `reads`' fallbacks to the
/// home (a read region) and `acks`' waits that ran out (RPO 0 on).
fn emf(config: &LambdaConfig, reads: Option<RegionalStore>, acks: Option<Arc<AckReplicas>>) -> Emf {
    let emf = Emf::new(config.emf());
    if reads.is_none() && acks.is_none() {
        return emf;
    }
    emf.with_regions(Arc::new(move || RegionCounters {
        home_fallbacks: reads.as_ref().map_or(0, RegionalStore::fallbacks),
        ack_timeouts: acks.as_ref().map_or(0, |acks| acks.timeouts()),
    }))
}

/// The store under one registry of the function.
enum AwsOrRegional {
    Aws(AwsStore),
    Regional(RegionalStore),
}

/// The exporter function: stream batches and catch-up runs over the exporters whose records are in
/// the registry's table (the home region's in a multi-region registry), the source this region's
/// registry without authentication ([`registry_lambda::exporter_engine::function_engine`]).
/// Credentials are opened by KMS `Decrypt` (sealed by the API function under
/// `REGISTRY_EXPORTER_KMS_KEY`).
async fn run_exporter(config: &LambdaConfig) -> Result<(), Error> {
    let env = registry_store_aws::AwsEnv::from_env().await?;
    let regions = config.region_config(&env.store.bucket);
    let keys = config.exporter_kms_keys();
    let engine = Arc::new(function_engine(&env, regions.as_ref(), &keys, config.settings.registry()));
    lambda_http::lambda_runtime::run(lambda_http::service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let engine = engine.clone();
        async move { exporter::handle(engine.as_ref(), &event.payload).await.map_err(Error::from) }
    }))
    .await
}
