//! Opens the configured storage backend as the composition root's stores ([`registry_app`]). Add a
//! backend by adding one arm to [`open`].

use crate::config::{Backend, ServeConfig};
use registry_app::{RegionCounters, Stores, Topology};
use registry_core::{CachedStore, MemoryStore};
use registry_dek::{DekBackend, MemoryKeyStore};
use registry_exporter::{ExporterService, MemoryExporterStore, SecretBox};
use std::sync::Arc;

/// Opens the backend `config` names. Both persistent backends sit behind a bounded cache of
/// immutable answers (bodies by fingerprint, fingerprint by ID) of `REGISTRY_CACHE_BYTES`, as in the Lambda
/// function. Fails if the embedded store cannot open its directory, or
/// if the AWS backend lacks `REGISTRY_TABLE` / `REGISTRY_BUCKET`.
pub async fn open(config: &ServeConfig) -> Result<Topology, Box<dyn std::error::Error + Send + Sync>> {
    let stores = match config.backend {
        Backend::Embedded => {
            let store = registry_store_local::LocalStore::open(&config.data_dir)
                .map_err(|error| format!("cannot open the embedded store in {}: {error}", config.data_dir.display()))?;
            let secrets = crate::exporters::embedded_secrets(&config.data_dir)?;
            Stores {
                deks: Some(DekBackend::new(Arc::new(store.clone()))),
                exporters: Some(ExporterService::new(Arc::new(store.clone()), Arc::new(secrets))),
                writes: Arc::new(CachedStore::with_capacity(store, config.settings.cache_bytes)),
                reads: None,
                description: format!("embedded {}", config.data_dir.display()),
                counters: RegionCounters::default(),
            }
        }
        Backend::Memory => Stores {
            writes: Arc::new(MemoryStore::new()),
            deks: Some(DekBackend::new(Arc::new(MemoryKeyStore::new()))),
            exporters: Some(ExporterService::new(
                Arc::new(MemoryExporterStore::new()),
                Arc::new(SecretBox::ephemeral()?),
            )),
            reads: None,
            description: "memory".to_string(),
            counters: RegionCounters::default(),
        },
        Backend::Aws => {
            let env = registry_store_aws::AwsEnv::from_env().await?;
            return Topology::aws(&config.settings, &env);
        }
    };
    Ok(Topology::One(Box::new(stores)))
}
