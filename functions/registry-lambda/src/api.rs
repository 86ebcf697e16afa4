//! The API function's handler: the composition root's application ([`registry_app::assemble`]) over
//! the AWS stores the settings name, the same `registry serve` serves, with the home marker followed
//! when every region's bucket is configured. Exporters are served here and run by the exporter
//! function.

use crate::emf::{Emf, EmfLine, RegionCounters};
use crate::{Handler, LambdaConfig, guarded_app_handler};
use lambda_http::Error;
use registry_app::{Exporters, Topology};
use registry_http::observability::AnswerLine;
use registry_store_aws::AwsEnv;
use std::sync::Arc;

/// The handler over `env`'s stores as `config` says: the configured home's stores, or with every
/// region's bucket (`REGISTRY_REGION_BUCKETS`) those of the region the home marker names at each
/// request. Reads nothing from storage.
pub async fn handler(config: &LambdaConfig, env: &AwsEnv) -> Result<Handler, Error> {
    let authenticator = crate::auth::authenticator(&config.settings.auth).await?;
    let mut options = registry_app::app_options(&config.settings, authenticator)?;
    options.request_budget = config.request_budget();
    let line = Arc::new(EmfLine::default());
    options.answer_line = Some(Arc::clone(&line) as Arc<dyn AnswerLine>);
    let origin = crate::auth::origin_guard(config.origin_secret.as_deref(), &config.settings.auth).await?;
    let topology = Topology::aws(&config.settings, env)?;
    // The metrics lines describe this region's own registry (its stores while it is home).
    let own = env.sdk.region().map(|region| region.as_ref().to_string());
    let assembled = registry_app::assemble(&config.settings, topology, options, Exporters::Serve, own.as_deref())?;
    line.start(emf(config, assembled.counters), assembled.registry);
    Ok(guarded_app_handler(assembled.app, origin))
}

/// The EMF emitter, reporting a multi-region function's counters too, summed over its
/// applications: reads' fallbacks to the home (a read region) and waits that ran out (RPO 0 on).
fn emf(config: &LambdaConfig, counters: Vec<registry_app::RegionCounters>) -> Emf {
    let emf = Emf::new(config.emf());
    if !counters.iter().any(registry_app::RegionCounters::is_regional) {
        return emf;
    }
    emf.with_regions(Arc::new(move || RegionCounters {
        home_fallbacks: counters.iter().map(registry_app::RegionCounters::home_fallbacks).sum(),
        ack_timeouts: counters.iter().map(registry_app::RegionCounters::ack_timeouts).sum(),
    }))
}
