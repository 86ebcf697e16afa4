//! [`ServiceEngine`]: the [`ExportEngine`] the exporter function runs: the exporters of an
//! [`ExporterService`] (records in the registry's table, [`crate::exporter_store`]), each pass a
//! [`ExporterService::export`] (destinations checked against `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS`) from this registry's router (in process) to the destination over HTTP ([`HttpConnect`]), and its
//! outcome recorded in the exporter's status as `registry serve`'s runner records it: RUNNING with
//! the offset raised by the writes made, or ERROR with the reason in `trace`. The status write is
//! conditioned on the revision listed, so a pause, reset or new definition made through the API
//! meanwhile wins and the outcome is dropped.
//!
//! [`function_engine`] wires it as the exporter function runs it: in a multi-region registry the
//! records at home, every status write fenced on the home marker; a refused write (an old home
//! after a failover) fails the pass, so its batch is retried rather than acknowledged.

use crate::exporter::ExportEngine;
use registry_exporter::engine::RegistryApi;
use registry_exporter::store::Stored;
use registry_exporter::{DestinationPolicy, ExporterRecord, ExporterService, ExporterState};
use registry_exporter_http::{HttpConnect, RouterApi};
use registry_store_aws::home_watch::{Follow, HomeWatch};
use registry_store_aws::regions::{Deployment, RegionConfig};
use registry_store_aws::{AwsEnv, AwsStore};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The exporter function's engine for `env` (its own region's table and bucket) and `regions`
/// (`None`: a single-region registry, which makes the calls it always made).
///
/// The exporters' records are the API's ([`registry_store_aws::exporter_store::exporter_function_service`]):
/// in a multi-region registry the home region's table wherever the function runs, each status
/// write fenced on the home marker, credentials opened by the home region's KMS and then by each
/// of `kms_keys`.
///
/// The source stays this region's own replica and bucket, home or not. A pass makes the
/// destination hold what the source holds for the exporter's subjects, and the function is fed by
/// this replica's stream, which carries the changes of whichever region is home: a pass therefore
/// copies a state this replica has reached, never one it will not show. A replica that lags the
/// home only delays a change, and the record of that change arriving in this stream starts the
/// pass that copies it (the catch-up runs also read this replica).
pub fn function_engine(
    env: &AwsEnv,
    regions: Option<&RegionConfig>,
    kms_keys: &[String],
    settings: registry_core::RegistrySettings,
) -> ServiceEngine {
    engine_over(env, &Deployment::open(env, regions), kms_keys, own_registry(env, settings))
}

/// The engine of `deployment`'s exporters' records, copying from `source`.
fn engine_over(
    env: &AwsEnv,
    deployment: &Deployment,
    kms_keys: &[String],
    source: Arc<dyn RegistryApi>,
) -> ServiceEngine {
    let service = registry_store_aws::exporter_store::exporter_function_service(env, deployment, kms_keys);
    ServiceEngine::new(service, source)
}

/// This region's own registry (its replica and bucket), called in process without authentication.
fn own_registry(env: &AwsEnv, settings: registry_core::RegistrySettings) -> Arc<dyn RegistryApi> {
    let store = AwsStore::with_path_style(&env.sdk, env.store.clone(), env.s3_path_style);
    let registry = registry_core::Registry::new(Arc::new(store), settings);
    Arc::new(RouterApi::source(registry_http::app(registry.clone(), registry_http::AppOptions::default()), registry))
}

/// The exporter function's engines: one for the configured home, or, with every region's bucket
/// (`REGISTRY_REGION_BUCKETS`), one per region that may be home with the home marker choosing at
/// each invocation, as it chooses the API function's stores ([`Follow`]). After
/// `registry failover --to R` the status writes go to R once this replica shows the marker (within
/// its time to live), with no apply; until then they go to the old home, which refuses them once
/// the marker reached it (the pass fails and its batch is retried).
pub enum FunctionEngines {
    /// The home is fixed by the configuration (or a single region).
    Fixed(ServiceEngine),
    /// Per region that may be home, its engine; `watch` says which is home now.
    Following { watch: Arc<HomeWatch>, engines: BTreeMap<String, ServiceEngine> },
}

impl FunctionEngines {
    /// The engines for `env`, `regions` and the `region=bucket` list `buckets` (empty: a fixed
    /// home), the marker re-read at most once per `ttl`. All copy from this region's registry.
    pub fn open(
        env: &AwsEnv,
        regions: Option<&RegionConfig>,
        buckets: &str,
        ttl: Duration,
        kms_keys: &[String],
        settings: registry_core::RegistrySettings,
    ) -> Result<FunctionEngines, String> {
        let source = own_registry(env, settings);
        let Some(follow) = Follow::open(env, regions, buckets, ttl)? else {
            return Ok(FunctionEngines::Fixed(engine_over(env, &Deployment::open(env, regions), kms_keys, source)));
        };
        let engines = follow
            .homes
            .iter()
            .map(|(home, deployment)| (home.clone(), engine_over(env, deployment, kms_keys, source.clone())))
            .collect();
        Ok(FunctionEngines::Following { watch: follow.watch, engines })
    }

    /// The same engines, their passes allowed the destinations `policy` allows (instead of those
    /// `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` names).
    pub fn with_destinations(self, policy: DestinationPolicy) -> Self {
        match self {
            FunctionEngines::Fixed(engine) => FunctionEngines::Fixed(engine.with_destinations(policy)),
            FunctionEngines::Following { watch, engines } => FunctionEngines::Following {
                watch,
                engines: engines
                    .into_iter()
                    .map(|(home, engine)| (home, engine.with_destinations(policy.clone())))
                    .collect(),
            },
        }
    }

    /// The engine of the current home; an error when the marker names a region the list lacks.
    pub async fn current(&self) -> Result<&ServiceEngine, String> {
        match self {
            FunctionEngines::Fixed(engine) => Ok(engine),
            FunctionEngines::Following { watch, engines } => {
                let home = watch.home().await;
                engines.get(&home).ok_or_else(|| {
                    format!("the home marker names {home}, a region REGISTRY_REGION_BUCKETS does not list")
                })
            }
        }
    }
}

/// The exporters of `service`, exported from `source`.
pub struct ServiceEngine {
    service: ExporterService,
    source: Arc<dyn RegistryApi>,
}

impl ServiceEngine {
    /// `source` is this registry's own router, called without authentication.
    pub fn new(service: ExporterService, source: Arc<dyn RegistryApi>) -> Self {
        Self { service, source }
    }

    /// The same engine, its passes allowed the destinations `policy` allows (instead of those
    /// `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` names).
    pub fn with_destinations(self, policy: DestinationPolicy) -> Self {
        Self { service: self.service.with_destinations(policy), ..self }
    }
}

impl ExportEngine for ServiceEngine {
    type Exporter = Stored<ExporterRecord>;

    async fn running(&self) -> Result<Vec<Self::Exporter>, String> {
        let exporters = self.service.store().exporters().await.map_err(|error| error.to_string())?;
        Ok(exporters.into_iter().filter(|stored| stored.value.status.state != ExporterState::Paused).collect())
    }

    fn name<'a>(&self, exporter: &'a Self::Exporter) -> &'a str {
        &exporter.value.exporter.name
    }

    fn matches(&self, exporter: &Self::Exporter, subject: &str) -> bool {
        exporter.value.exporter.matches(subject)
    }

    /// The pass, then its outcome recorded. A status that cannot be written fails the pass too:
    /// the change is retried rather than acknowledged with the exporter's offset not moved.
    async fn pass(&self, exporter: &Self::Exporter) -> Result<(), String> {
        let (outcome, recorded) = self.service.pass(exporter, self.source.as_ref(), &HttpConnect).await;
        recorded.map_err(|error| format!("status not recorded: {error}"))?;
        outcome.map(|_| ()).map_err(|error| error.0)
    }
}
