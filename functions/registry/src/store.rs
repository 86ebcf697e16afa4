//! Opens the configured storage backend. Add a backend by adding one arm to [`open`].

use crate::config::{Backend, ServeConfig};
use registry_core::{CachedStore, MemoryStore, Store};
use registry_dek::{DekBackend, MemoryKeyStore};
use registry_exporter::{ExporterService, MemoryExporterStore, SecretBox};
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
        },
        Backend::Aws => {
            let env = registry_store_aws::AwsEnv::from_env().await?;
            let exporters = registry_store_aws::exporter_store::exporter_service(&env);
            let store = registry_store_aws::AwsStore::with_path_style(&env.sdk, env.store, env.s3_path_style)
                .with_kms_key_arns(env.kms_key_arns);
            let names = store.config();
            Opened {
                dek: registry_store_aws::dek_registry::dek_backend(&store),
                exporters: Some(exporters),
                store: Arc::new(CachedStore::with_capacity(store, config.settings.cache_bytes)),
                description: format!("aws table {} bucket {}", names.table, names.bucket),
            }
        }
    };
    Ok(opened)
}
