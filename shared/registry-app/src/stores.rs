//! The stores an application is assembled over: one region's ([`Stores`]), and which regions a
//! process serves ([`Topology`]). The AWS backend's are opened here from the settings, for both
//! binaries; `registry serve` builds the embedded and memory stores itself.

use registry_core::{CachedStore, Store};
use registry_dek::DekBackend;
use registry_exporter::ExporterService;
use registry_http::regional::HomeFallbacks;
use registry_settings::Settings;
use registry_store_aws::AwsEnv;
use registry_store_aws::dek_registry::dek_backend;
use registry_store_aws::exporter_store::deployment_exporter_service;
use registry_store_aws::home_watch::{Follow, HomeWatch};
use registry_store_aws::regions::{AckReplicas, Deployment, RegionConfig};
use std::sync::Arc;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One region's stores, as a process serves them while that region is home.
pub struct Stores {
    /// Where writes commit: the only store of a single region, the home's in a read region.
    pub writes: Arc<dyn Store>,
    /// The DEK registry's backend beside `writes` (`None`: its `/dek-registry` paths answer 404).
    pub deks: Option<DekBackend>,
    /// A read region: the store of read requests (the local replica) with its DEK backend.
    pub reads: Option<(Arc<dyn Store>, Option<DekBackend>)>,
    /// Schema linking's records and sealer (`None`: its `/exporters` paths answer 404).
    pub exporters: Option<ExporterService>,
    /// What they are, for the ready line and admin commands.
    pub description: String,
    /// What a host reports of them.
    pub counters: RegionCounters,
}

/// A multi-region store's counters: a read region's fallbacks to the home and the waits for
/// acknowledging replicas that ran out.
#[derive(Clone, Default)]
pub struct RegionCounters {
    /// A read region's: counted by its application, which is where it asks the home.
    pub(crate) fallbacks: Option<HomeFallbacks>,
    acks: Option<Arc<AckReplicas>>,
}

impl RegionCounters {
    /// Whether there is anything to report (a single region has neither).
    pub fn is_regional(&self) -> bool {
        self.fallbacks.is_some() || self.acks.is_some()
    }

    /// Reads the local replica could not answer and the home answered.
    pub fn home_fallbacks(&self) -> u64 {
        self.fallbacks.as_ref().map_or(0, HomeFallbacks::count)
    }

    /// Writes acknowledged before every acknowledging replica showed them.
    pub fn ack_timeouts(&self) -> u64 {
        self.acks.as_ref().map_or(0, |acks| acks.timeouts())
    }
}

/// The home region and acknowledging replicas `settings` configure, `local_bucket` the bucket of
/// this region (`None`: a single-region registry).
pub fn region_config(settings: &Settings, local_bucket: &str) -> Option<RegionConfig> {
    let regions = &settings.regions;
    RegionConfig::from_settings(
        regions.home_region(),
        regions.home_bucket.as_deref(),
        local_bucket,
        &regions.ack_regions,
        regions.ack_timeout(),
    )
}

/// The regions a process serves.
pub enum Topology {
    /// One set of stores for every request.
    One(Box<Stores>),
    /// A multi-region registry following the home marker (`REGISTRY_REGION_BUCKETS`): per region
    /// that may become home, the stores served while it is; `watch` names the home per request.
    Following { watch: Arc<HomeWatch>, configured: String, homes: Vec<(String, Stores)> },
}

impl Topology {
    /// The AWS backend's stores as `settings` configure them: a single region, a home or a read
    /// region of a fixed home, or with every region's bucket the stores of each region as home.
    /// Each store sits behind an answer cache of `REGISTRY_CACHE_BYTES`. Reads nothing.
    pub fn aws(settings: &Settings, env: &AwsEnv) -> Result<Topology, BoxError> {
        let regions = &settings.regions;
        let config = region_config(settings, &env.store.bucket);
        let follow = Follow::open(env, config.as_ref(), &regions.region_buckets, regions.home_marker_ttl())?;
        match (follow, config) {
            (Some(follow), Some(config)) => {
                let homes = follow.homes.into_iter().map(|(region, d)| (region, Stores::aws(settings, env, d)));
                Ok(Topology::Following { watch: follow.watch, configured: config.home_region, homes: homes.collect() })
            }
            (_, config) => {
                Ok(Topology::One(Box::new(Stores::aws(settings, env, Deployment::open(env, config.as_ref())))))
            }
        }
    }

    /// What the configured home's stores are, for the ready line.
    pub fn description(&self) -> String {
        match self {
            Topology::One(stores) => stores.description.clone(),
            Topology::Following { configured, homes, .. } => {
                let stores = homes.iter().find(|(region, _)| region == configured).map(|(_, stores)| stores);
                let described = stores.map_or_else(String::new, |stores| stores.description.clone());
                format!("{described}, following the home marker (configured home {configured})")
            }
        }
    }

    /// The stores of the configured home (admin commands work on them).
    pub fn configured(self) -> Result<Stores, BoxError> {
        match self {
            Topology::One(stores) => Ok(*stores),
            Topology::Following { configured, homes, .. } => homes
                .into_iter()
                .find(|(region, _)| *region == configured)
                .map(|(_, stores)| stores)
                .ok_or_else(|| "the configured home has no stores".into()),
        }
    }
}

impl Stores {
    /// What `deployment` serves, each store behind the answer cache.
    pub fn aws(settings: &Settings, env: &AwsEnv, deployment: Deployment) -> Stores {
        let bytes = settings.cache_bytes;
        let description = format!("aws table {} bucket {}", env.store.table, env.store.bucket);
        // In the home region's table, fenced on its marker in a multi-region registry.
        let exporters = Some(deployment_exporter_service(env, &deployment));
        match deployment {
            Deployment::Single(store) | Deployment::Home(store) => Stores {
                deks: dek_backend(&store),
                counters: RegionCounters { fallbacks: None, acks: store.acks().cloned() },
                writes: Arc::new(CachedStore::with_capacity(store, bytes)),
                reads: None,
                exporters,
                description,
            },
            Deployment::Read { reads, writes } => Stores {
                deks: dek_backend(&writes),
                counters: RegionCounters { fallbacks: Some(HomeFallbacks::default()), acks: writes.acks().cloned() },
                reads: Some((Arc::new(CachedStore::with_capacity(reads.clone(), bytes)), dek_backend(reads.local()))),
                writes: Arc::new(CachedStore::with_capacity(writes, bytes)),
                exporters,
                description: format!("{description} (reads; writes in the home region)"),
            },
        }
    }
}
