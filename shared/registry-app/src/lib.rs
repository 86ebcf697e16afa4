//! The composition root: the one place that turns settings and opened stores into the application
//! both binaries serve. `registry serve` puts it behind its listener, the Lambda function behind
//! `lambda_http`; neither wires stores, caches, the DEK registry, exporters or regions itself.
//!
//! - [`Stores`]: one region's stores as a process serves them while that region is home: where
//!   writes commit (behind the answer cache), a read region's local replica, the DEK backends and
//!   the exporters' records.
//! - [`Topology`]: those stores once ([`Topology::One`]), or per region that may become home when
//!   the process follows the home marker ([`Topology::Following`]).
//! - [`assemble`]: the application over a topology: `registry_http::app` over one region's stores,
//!   a read region's reads and writes split by [`registry_http::regional`], and with the home marker
//!   followed one application per region, chosen per request.

mod exporters;
mod stores;

pub use exporters::Exporters;
pub use stores::{RegionCounters, Stores, Topology, region_config};

use registry_auth::Authenticator;
use registry_core::Registry;
use registry_http::AppOptions;
use registry_http::error::IncompatibleErrorCode;
use registry_http::http_cache::HttpConfig;
use registry_settings::{Settings, SettingsError};
use std::collections::BTreeMap;
use std::sync::Arc;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How `registry_http::app` is assembled from `settings`, with `authenticator` (built by the host
/// from the auth settings, which may need a secret fetched first). [`assemble`] adds each region's
/// DEK registry and exporters.
pub fn app_options(
    settings: &Settings,
    authenticator: Option<Arc<Authenticator>>,
) -> Result<AppOptions, SettingsError> {
    let http = match &settings.id_cache_control {
        None => HttpConfig::default(),
        Some(value) => HttpConfig::with_id_cache_control(value).map_err(SettingsError::CacheControl)?,
    };
    let incompatible_error_code =
        IncompatibleErrorCode::from_code(settings.incompatible_error_code).map_err(SettingsError::Parse)?;
    Ok(AppOptions {
        http,
        authenticator,
        request_budget: Default::default(),
        incompatible_error_code,
        deks: None,
        exporters: None,
        mcp: settings.mcp_enabled,
        answer_line: None,
        written: None,
    })
}

/// What [`assemble`] hands a host.
pub struct Assembled {
    /// The application to serve.
    pub app: axum::Router,
    /// The registry the host's metrics describe: this process's own region's (its local reads in a
    /// read region).
    pub registry: Registry,
    /// Per region's stores, what a host reports of its regional behaviour (fallbacks, ack waits).
    pub counters: Vec<RegionCounters>,
}

/// The application over `topology`, with `options` (authentication, budgets: the host's) completed
/// by each region's DEK registry and exporters. With [`Exporters::Run`] the exporters of the
/// configured home run in this process, their source this registry's own router; otherwise they
/// are served from their records only (another function runs them). `own_region` picks which
/// region's registry [`Assembled::registry`] is when the process follows the home marker.
pub fn assemble(
    settings: &Settings,
    topology: Topology,
    options: AppOptions,
    exporters: Exporters,
    own_region: Option<&str>,
) -> Result<Assembled, BoxError> {
    let options = AppOptions { written: exporters.written(), ..options };
    match topology {
        Topology::One(stores) => {
            let counters = vec![stores.counters.clone()];
            let (app, registry) = application(settings, *stores, options, &exporters)?;
            Ok(Assembled { app, registry, counters })
        }
        Topology::Following { watch, configured, homes } => {
            let (mut apps, mut counters, mut registry) = (BTreeMap::new(), Vec::new(), None);
            for (region, stores) in homes {
                counters.push(stores.counters.clone());
                let runs = if region == configured { exporters.clone() } else { Exporters::Serve };
                let (app, region_registry) = application(settings, stores, options.clone(), &runs)?;
                if Some(region.as_str()) == own_region || (registry.is_none() && region == configured) {
                    registry = Some(region_registry);
                }
                apps.insert(region, app);
            }
            let registry = registry.ok_or("REGISTRY_REGION_BUCKETS names neither this region nor the home")?;
            let home = registry_http::regional::home_from(move || {
                let watch = watch.clone();
                async move { watch.home().await }
            });
            let app = registry_http::regional::following(apps, home);
            Ok(Assembled { app, registry, counters })
        }
    }
}

/// The application over one region's `stores`, and the registry of its reads.
fn application(
    settings: &Settings,
    stores: Stores,
    mut options: AppOptions,
    exporters: &Exporters,
) -> Result<(axum::Router, Registry), BoxError> {
    let deks = |backend: Option<registry_dek::DekBackend>| backend.map(|b| settings.dek.registry(b)).transpose();
    let registry = Registry::new(stores.writes, settings.registry());
    options.deks = deks(stores.deks)?;
    if let Some(service) = stores.exporters {
        // A read region's exporters are the home's: managed here, run there.
        let runs = stores.reads.is_none() && matches!(exporters, Exporters::Run(_));
        options.exporters = Some(if runs { exporters.start(service, &registry) } else { Arc::new(service) });
    }
    match stores.reads {
        None => Ok((registry_http::app(registry.clone(), options), registry)),
        // A read region: reads from the local replica, writes through the home region; after each
        // write the local registry forgets what it remembers, so the process reads its own writes.
        Some((reads, read_deks)) => {
            let mut read_options = options.clone();
            read_options.deks = deks(read_deks)?;
            let local = Registry::new(reads, settings.registry());
            let app = registry_http::regional::app_forgetting(
                registry_http::app(local.clone(), read_options),
                registry_http::app(registry, options),
                local.clone(),
                stores.counters.fallbacks.unwrap_or_default(),
            );
            Ok((app, local))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_http::http_cache::DEFAULT_ID_CACHE_CONTROL;

    fn options(args: &[&str]) -> Result<AppOptions, SettingsError> {
        app_options(&Settings::from_args(args.iter().copied())?, None)
    }

    #[test]
    fn the_id_cache_control_is_the_http_default_unless_set_and_an_empty_one_sends_none() {
        let default = options(&[]).unwrap_or_else(|e| panic!("{e}"));
        let sent = default.http.id_cache_control.as_ref().and_then(|value| value.to_str().ok());
        assert_eq!(sent, Some(DEFAULT_ID_CACHE_CONTROL));
        assert!(options(&["--id-cache-control", ""]).is_ok_and(|options| options.http.id_cache_control.is_none()));
        assert!(matches!(options(&["--id-cache-control", "a\u{1}b"]), Err(SettingsError::CacheControl(_))));
    }

    #[test]
    fn the_incompatible_error_code_and_mcp_reach_the_application() {
        let default = options(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(default.incompatible_error_code, IncompatibleErrorCode::Current));
        assert!(!default.mcp);
        let set =
            options(&["--incompatible-error-code", "409", "--mcp-enabled=true"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(set.incompatible_error_code, IncompatibleErrorCode::Legacy));
        assert!(set.mcp);
    }
}
