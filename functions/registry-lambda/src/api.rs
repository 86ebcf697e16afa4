//! The API function's handler: per set of stores ([`Deployment`]) the application `registry serve`
//! assembles too, and with `REGISTRY_REGION_BUCKETS` one per region that may be home behind
//! [`registry_http::regional::following`], so writes follow the home marker with no redeploy.

use crate::emf::{Emf, RegionCounters};
use crate::{Handler, LambdaConfig, guarded_app_handler};
use lambda_http::Error;
use registry_core::{CachedStore, Registry};
use registry_http::AppOptions;
use registry_store_aws::home_watch::Follow;
use registry_store_aws::regions::{AckReplicas, Deployment, RegionalStore};
use registry_store_aws::{AwsEnv, AwsStore};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The handler over `env`'s stores as `config` says: the configured home's stores, or with every
/// region's bucket (`REGISTRY_REGION_BUCKETS`) those of the region the home marker names at each
/// request. Reads nothing from storage.
pub async fn handler(config: &LambdaConfig, env: &AwsEnv) -> Result<Handler, Error> {
    let regions = config.region_config(&env.store.bucket);
    let authenticator = crate::auth::authenticator(&config.settings.auth).await?;
    let mut options = config.settings.app_options(authenticator)?;
    options.request_budget = config.request_budget();
    let origin = crate::auth::origin_guard(config.origin_secret.as_deref(), &config.settings.auth).await?;
    let settings = &config.settings.regions;
    let Some(follow) = Follow::open(env, regions.as_ref(), &settings.region_buckets, settings.home_marker_ttl())?
    else {
        let app = application(config, env, Deployment::open(env, regions.as_ref()), options)?;
        let emf = emf(config, vec![(app.reads.clone(), app.acks.clone())]);
        return Ok(guarded_app_handler(app.app, app.registry, Some(emf), origin));
    };
    let own = env.sdk.region().map(|region| region.as_ref().to_string()).unwrap_or_default();
    let mut apps = BTreeMap::new();
    let (mut counters, mut registry) = (Vec::new(), None);
    for (region, deployment) in follow.homes {
        let app = application(config, env, deployment, options.clone())?;
        counters.push((app.reads, app.acks));
        // The metrics lines describe this region's own registry (its stores while it is home).
        if region == own || registry.is_none() {
            registry = Some(app.registry);
        }
        apps.insert(region, app.app);
    }
    let registry = registry.ok_or("REGISTRY_REGION_BUCKETS names no region")?;
    let watch = follow.watch;
    let home = registry_http::regional::home_from(move || {
        let watch = watch.clone();
        async move { watch.home().await }
    });
    let app = registry_http::regional::following(apps, home);
    Ok(guarded_app_handler(app, registry, Some(emf(config, counters)), origin))
}

/// One deployment's application, the registry its metrics describe, and its regional counters.
struct Application {
    app: axum::Router,
    registry: Registry,
    reads: Option<RegionalStore>,
    acks: Option<Arc<AckReplicas>>,
}

/// The application over `deployment`: `registry_http::app` in a single or home region; in a read
/// region reads from the local replica and writes through the home region, and after each write
/// the local registry forgets what it remembers, so the function reads its own writes.
fn application(
    config: &LambdaConfig,
    env: &AwsEnv,
    deployment: Deployment,
    mut options: AppOptions,
) -> Result<Application, Error> {
    let cached = |store: Arc<dyn registry_core::Store>| Registry::new(store, config.settings.registry());
    let bytes = config.settings.cache_bytes;
    let deks = |store: &AwsStore| {
        let backend = registry_store_aws::dek_registry::dek_backend(store);
        backend.map(|backend| config.settings.dek.registry(backend)).transpose()
    };
    // Exporters are managed in the home region, reads included (see deployment_exporter_service).
    let exporters = Arc::new(registry_store_aws::exporter_store::deployment_exporter_service(env, &deployment));
    match deployment {
        Deployment::Single(store) | Deployment::Home(store) => {
            options.deks = deks(&store)?;
            options.exporters = Some(exporters);
            let acks = store.acks().cloned();
            let registry = cached(Arc::new(CachedStore::with_capacity(store, bytes)));
            Ok(Application { app: registry_http::app(registry.clone(), options), registry, reads: None, acks })
        }
        Deployment::Read { reads, writes } => {
            let mut home_options = options.clone();
            home_options.deks = deks(&writes)?;
            home_options.exporters = Some(exporters.clone());
            options.deks = deks(reads.local())?;
            options.exporters = Some(exporters);
            let acks = writes.acks().cloned();
            let local = cached(Arc::new(CachedStore::with_capacity(reads.clone(), bytes)));
            let home = cached(Arc::new(CachedStore::with_capacity(writes, bytes)));
            let app = registry_http::regional::app_forgetting(
                registry_http::app(local.clone(), options),
                registry_http::app(home, home_options),
                local.clone(),
            );
            Ok(Application { app, registry: local, reads: Some(reads), acks })
        }
    }
}

/// The EMF emitter, reporting a multi-region function's counters too, summed over its
/// applications: reads' fallbacks to the home (a read region) and waits that ran out (RPO 0 on).
fn emf(config: &LambdaConfig, counters: Vec<(Option<RegionalStore>, Option<Arc<AckReplicas>>)>) -> Emf {
    let emf = Emf::new(config.emf());
    if counters.iter().all(|(reads, acks)| reads.is_none() && acks.is_none()) {
        return emf;
    }
    emf.with_regions(Arc::new(move || RegionCounters {
        home_fallbacks: counters.iter().filter_map(|(reads, _)| reads.as_ref()).map(RegionalStore::fallbacks).sum(),
        ack_timeouts: counters.iter().filter_map(|(_, acks)| acks.as_ref()).map(|acks| acks.timeouts()).sum(),
    }))
}
