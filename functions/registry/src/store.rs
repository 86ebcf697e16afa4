//! Opens the configured storage backend. Add a backend by adding one arm to [`open`].

use crate::config::{Backend, ServeConfig};
use registry_core::{CachedStore, MemoryStore, Store};
use registry_dek::{DekBackend, MemoryKeyStore};
use registry_exporter::{ExporterService, MemoryExporterStore, SecretBox};
use registry_store_aws::home_watch::{Follow, HomeWatch};
use std::sync::Arc;

/// The opened store, the DEK registry's backend beside it (`None`: this backend has none yet, its
/// `/dek-registry` paths answer 404) and a human-readable description for the ready line.
pub struct Opened {
    pub store: Arc<dyn Store>,
    pub dek: Option<DekBackend>,
    /// Schema linking's service: its store and what seals its credentials (`None`: this backend
    /// has none, its `/exporters` paths answer 404).
    pub exporters: Option<ExporterService>,
    pub description: String,
    /// A read region of a multi-region registry (`REGISTRY_HOME_REGION` names another region):
    /// the store of read requests (the local replica, falling back to the home) with its DEK
    /// backend; `store` and `dek` are then the home region's, which every write and every admin
    /// command uses.
    pub local_reads: Option<(Arc<dyn Store>, Option<DekBackend>)>,
    /// A read region: the exporters API over the home region's records (`exporters` is then
    /// `None`: this process serves them but does not run them; the home region's does).
    pub home_exporters: Option<ExporterService>,
    /// A multi-region registry following the home marker (`REGISTRY_REGION_BUCKETS`): what is
    /// opened for every other region that may become home; this `Opened` is the configured home's.
    pub follow: Option<Following>,
}

/// The stores of the regions a process may follow the home marker to.
pub struct Following {
    /// Names the home now (the marker in the local replica, re-read once per time to live).
    pub watch: Arc<HomeWatch>,
    /// The configured home (`REGISTRY_HOME_REGION`), whose stores the outer [`Opened`] holds.
    pub configured: String,
    /// Every other region, opened as it is while that region is home; its exporters are served,
    /// never run (the process runs those of the configured home's stores only, as before).
    pub others: Vec<(String, Opened)>,
}

/// Opens the backend `config` names. Both persistent backends sit behind a bounded cache of
/// immutable answers (bodies by fingerprint, fingerprint by ID) of `REGISTRY_CACHE_BYTES`, as in the Lambda
/// function. Fails if the embedded store cannot open its directory, or
/// if the AWS backend lacks `REGISTRY_TABLE` / `REGISTRY_BUCKET`.
pub async fn open(config: &ServeConfig) -> Result<Opened, Box<dyn std::error::Error + Send + Sync>> {
    let opened = match config.backend {
        Backend::Embedded => {
            let store = registry_store_local::LocalStore::open(&config.data_dir)
                .map_err(|error| format!("cannot open the embedded store in {}: {error}", config.data_dir.display()))?;
            let secrets = crate::exporters::embedded_secrets(&config.data_dir)?;
            Opened {
                dek: Some(DekBackend::new(Arc::new(store.clone()))),
                exporters: Some(ExporterService::new(Arc::new(store.clone()), Arc::new(secrets))),
                store: Arc::new(CachedStore::with_capacity(store, config.settings.cache_bytes)),
                description: format!("embedded {}", config.data_dir.display()),
                local_reads: None,
                home_exporters: None,
                follow: None,
            }
        }
        Backend::Memory => Opened {
            store: Arc::new(MemoryStore::new()),
            dek: Some(DekBackend::new(Arc::new(MemoryKeyStore::new()))),
            exporters: Some(ExporterService::new(
                Arc::new(MemoryExporterStore::new()),
                Arc::new(SecretBox::ephemeral()?),
            )),
            description: "memory".to_string(),
            local_reads: None,
            home_exporters: None,
            follow: None,
        },
        Backend::Aws => {
            use registry_store_aws::regions::{Deployment, RegionConfig};
            let env = registry_store_aws::AwsEnv::from_env().await?;
            let settings = &config.settings.regions;
            let regions = RegionConfig::from_settings(
                settings.home_region(),
                settings.home_bucket.as_deref(),
                &env.store.bucket,
                &settings.ack_regions,
                settings.ack_timeout(),
            );
            let follow = Follow::open(&env, regions.as_ref(), &settings.region_buckets, settings.home_marker_ttl())?;
            match (follow, regions) {
                (Some(mut follow), Some(regions)) => {
                    let configured = regions.home_region;
                    let home = follow.homes.remove(&configured).ok_or("the configured home has no stores")?;
                    let mut opened = open_aws(config, &env, home, true);
                    let others = follow.homes.into_iter().map(|(region, d)| (region, open_aws(config, &env, d, false)));
                    let others = others.collect();
                    opened.follow = Some(Following { watch: follow.watch, configured, others });
                    opened
                }
                (_, regions) => open_aws(config, &env, Deployment::open(&env, regions.as_ref()), true),
            }
        }
    };
    Ok(opened)
}

/// What `deployment` serves, behind the cache of `REGISTRY_CACHE_BYTES`; a home's exporters run in
/// this process only when `runs_exporters` (else they are served from their records only).
fn open_aws(
    config: &ServeConfig,
    env: &registry_store_aws::AwsEnv,
    deployment: registry_store_aws::regions::Deployment,
    runs_exporters: bool,
) -> Opened {
    use registry_store_aws::dek_registry::dek_backend;
    use registry_store_aws::regions::Deployment;
    let bytes = config.settings.cache_bytes;
    let description = format!("aws table {} bucket {}", env.store.table, env.store.bucket);
    // In the home region's table, fenced on its marker in a multi-region registry.
    let exporters = registry_store_aws::exporter_store::deployment_exporter_service(env, &deployment);
    match deployment {
        Deployment::Single(store) | Deployment::Home(store) => Opened {
            dek: dek_backend(&store),
            exporters: runs_exporters.then(|| exporters.clone()),
            store: Arc::new(CachedStore::with_capacity(store, bytes)),
            description,
            local_reads: None,
            home_exporters: (!runs_exporters).then_some(exporters),
            follow: None,
        },
        // Exporters are managed in the home region (their records are written there) and run there.
        Deployment::Read { reads, writes } => Opened {
            dek: dek_backend(&writes),
            exporters: None,
            home_exporters: Some(exporters),
            local_reads: Some((Arc::new(CachedStore::with_capacity(reads.clone(), bytes)), dek_backend(reads.local()))),
            store: Arc::new(CachedStore::with_capacity(writes, bytes)),
            description: format!("{description} (reads; writes in the home region)"),
            follow: None,
        },
    }
}
