//! Every environment variable the Lambda function reads (the only place it reads them; the AWS
//! store reads its own `REGISTRY_TABLE`, `REGISTRY_BUCKET` and `AWS_*` in `registry-store-aws`).

use registry_core::cache::DEFAULT_CACHE_BYTES;
use registry_core::{ChurnSettings, CompatibilityLevel, Limits, RegistrySettings};
use std::time::Duration;

/// The log filter used when `RUST_LOG` is unset.
pub const DEFAULT_LOG: &str = "info";

/// The function's settings, read once at init.
#[derive(Debug, Clone, PartialEq)]
pub struct LambdaConfig {
    /// `REGISTRY_DEFAULT_COMPATIBILITY` (default `BACKWARD`): the level when no config sets one.
    pub default_compatibility: CompatibilityLevel,
    /// `REGISTRY_CACHE_BYTES` (default 32 MiB): bound of the warm-instance cache of immutable data.
    pub cache_bytes: usize,
    /// `RUST_LOG` (default `info`): tracing-subscriber `EnvFilter` syntax.
    pub log_filter: String,
    /// `REGISTRY_CHURN_MAX_PER_HOUR` (default 50, 0 = off) and `REGISTRY_CHURN_ENFORCE` (`true`/`false`,
    /// default false): the per-instance churn guard (see `registry_core::churn`).
    pub churn: ChurnSettings,
    /// `REGISTRY_METRICS_NAMESPACE` (default `SchemaRegistry`) and `AWS_LAMBDA_FUNCTION_NAME` (the
    /// `Registry` dimension; `registry` when unset): where the EMF lines put the metrics.
    pub emf: crate::emf::EmfConfig,
    /// `REGISTRY_REQUIRE_OWNER` (unset: off): a new subject must carry this metadata property.
    pub require_owner: Option<String>,
    /// `REGISTRY_USAGE_GRANULARITY_DAYS` (default 1, 0 = off): period of the last-used marker.
    pub usage_granularity_days: u32,
    /// `REGISTRY_ANSWER_MEMORY_MS` (default 5000, 0 = off): how long an instance may answer lookups
    /// and an ID's existence from memory (changes made through other instances show after at most this).
    pub answer_memory: Duration,
    /// `REGISTRY_MAX_SCHEMA_BYTES` (default 1 MiB): largest schema text accepted (42209 above it).
    pub max_schema_bytes: usize,
    /// `REGISTRY_SCHEMA_MAX_DEPTH` (default 100), `REGISTRY_SCHEMA_MAX_NODES` (default 100,000) and
    /// `REGISTRY_SCHEMA_MAX_WORK` (default 200,000): budgets of every parse and compatibility check.
    pub limits: Limits,
    /// `REGISTRY_SCHEMA_WORKERS` (default: one per core): parses and checks running at once.
    pub schema_workers: usize,
}

/// A variable is set to a value the function cannot use. Init fails loudly with this.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// `REGISTRY_BACKEND` names a backend this function does not have.
    #[error("REGISTRY_BACKEND={0:?}: the Lambda function only serves the `aws` backend")]
    Backend(String),
    /// `REGISTRY_DEFAULT_COMPATIBILITY` is not one of the seven levels.
    #[error("REGISTRY_DEFAULT_COMPATIBILITY={0:?} is not a compatibility level (NONE, BACKWARD, ... FULL_TRANSITIVE)")]
    Compatibility(String),
    /// `REGISTRY_CACHE_BYTES` is not a non-negative integer.
    #[error("REGISTRY_CACHE_BYTES={0:?} is not a byte count")]
    CacheBytes(String),
    /// `REGISTRY_CHURN_MAX_PER_HOUR` is not a non-negative integer or `REGISTRY_CHURN_ENFORCE` not `true`/`false`.
    #[error("{0}={1:?} is not a valid churn guard setting")]
    Churn(&'static str, String),
    /// `REGISTRY_ANSWER_MEMORY_MS` is not a non-negative integer.
    #[error("REGISTRY_ANSWER_MEMORY_MS={0:?} is not a number of milliseconds")]
    AnswerMemory(String),
    /// `REGISTRY_USAGE_GRANULARITY_DAYS` is not a non-negative integer.
    #[error("REGISTRY_USAGE_GRANULARITY_DAYS={0:?} is not a number of days")]
    UsageGranularity(String),
    /// A size, budget or worker count (`REGISTRY_MAX_SCHEMA_BYTES`, `REGISTRY_SCHEMA_*`) is not a
    /// non-negative integer.
    #[error("{0}={1:?} is not a non-negative integer")]
    Count(&'static str, String),
}

/// `name` as a non-negative integer, `default` when unset.
fn count<T: std::str::FromStr>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match lookup(name) {
        None => Ok(default),
        Some(value) => value.trim().parse().map_err(|_| ConfigError::Count(name, value)),
    }
}

impl LambdaConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|value| !value.trim().is_empty()))
    }

    /// Reads variables through `lookup` (`None` = unset). Pure, for tests.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        if let Some(backend) = lookup("REGISTRY_BACKEND").filter(|backend| !backend.eq_ignore_ascii_case("aws")) {
            return Err(ConfigError::Backend(backend));
        }
        let default_compatibility = match lookup("REGISTRY_DEFAULT_COMPATIBILITY") {
            None => CompatibilityLevel::Backward,
            Some(value) => value.trim().parse().map_err(|_| ConfigError::Compatibility(value))?,
        };
        let cache_bytes = match lookup("REGISTRY_CACHE_BYTES") {
            None => DEFAULT_CACHE_BYTES,
            Some(value) => value.trim().parse().map_err(|_| ConfigError::CacheBytes(value))?,
        };
        let log_filter = lookup("RUST_LOG").unwrap_or_else(|| DEFAULT_LOG.to_string());
        let mut churn = ChurnSettings::default();
        if let Some(value) = lookup("REGISTRY_CHURN_MAX_PER_HOUR") {
            churn.max_per_hour =
                value.trim().parse().map_err(|_| ConfigError::Churn("REGISTRY_CHURN_MAX_PER_HOUR", value))?;
        }
        if let Some(value) = lookup("REGISTRY_CHURN_ENFORCE") {
            churn.enforce = match value.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(ConfigError::Churn("REGISTRY_CHURN_ENFORCE", value)),
            };
        }
        let emf = crate::emf::EmfConfig {
            namespace: lookup("REGISTRY_METRICS_NAMESPACE").unwrap_or_else(|| "SchemaRegistry".to_string()),
            registry: lookup("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_else(|| "registry".to_string()),
        };
        let require_owner = lookup("REGISTRY_REQUIRE_OWNER").map(|property| property.trim().to_string());
        let usage_granularity_days = match lookup("REGISTRY_USAGE_GRANULARITY_DAYS") {
            None => RegistrySettings::default().usage_granularity_days,
            Some(value) => value.trim().parse().map_err(|_| ConfigError::UsageGranularity(value))?,
        };
        let answer_memory = match lookup("REGISTRY_ANSWER_MEMORY_MS") {
            None => RegistrySettings::default().lookup_ttl,
            Some(value) => Duration::from_millis(value.trim().parse().map_err(|_| ConfigError::AnswerMemory(value))?),
        };
        let defaults = RegistrySettings::default();
        let max_schema_bytes = count(&lookup, "REGISTRY_MAX_SCHEMA_BYTES", defaults.max_schema_bytes)?;
        let limits = Limits {
            max_depth: count(&lookup, "REGISTRY_SCHEMA_MAX_DEPTH", defaults.limits.max_depth)?,
            max_nodes: count(&lookup, "REGISTRY_SCHEMA_MAX_NODES", defaults.limits.max_nodes)?,
            max_work: count(&lookup, "REGISTRY_SCHEMA_MAX_WORK", defaults.limits.max_work)?,
        };
        let schema_workers = count(&lookup, "REGISTRY_SCHEMA_WORKERS", defaults.schema_workers)?;
        Ok(LambdaConfig {
            max_schema_bytes,
            limits,
            schema_workers,
            default_compatibility,
            cache_bytes,
            log_filter,
            churn,
            emf,
            require_owner,
            usage_granularity_days,
            answer_memory,
        })
    }

    /// The registry settings these variables select (other settings keep their defaults).
    pub fn settings(&self) -> RegistrySettings {
        RegistrySettings {
            default_compatibility: self.default_compatibility,
            churn: self.churn,
            require_owner: self.require_owner.clone(),
            usage_granularity_days: self.usage_granularity_days,
            live_id_ttl: self.answer_memory,
            lookup_ttl: self.answer_memory,
            max_schema_bytes: self.max_schema_bytes,
            limits: self.limits,
            schema_workers: self.schema_workers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<LambdaConfig, ConfigError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        LambdaConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn defaults_when_unset() {
        let config = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.default_compatibility, CompatibilityLevel::Backward);
        assert_eq!(config.cache_bytes, DEFAULT_CACHE_BYTES);
        assert_eq!(config.log_filter, DEFAULT_LOG);
    }

    #[test]
    fn terraform_values_are_read() {
        let config = config(&[
            ("REGISTRY_BACKEND", "aws"),
            ("REGISTRY_DEFAULT_COMPATIBILITY", "FULL_TRANSITIVE"),
            ("REGISTRY_CACHE_BYTES", "1048576"),
            ("RUST_LOG", "debug"),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.settings().default_compatibility, CompatibilityLevel::FullTransitive);
        assert_eq!(config.cache_bytes, 1 << 20);
        assert_eq!(config.log_filter, "debug");
    }

    #[test]
    fn ownership_policy_and_usage_marker_are_read() {
        let defaults = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(defaults.settings().require_owner, None);
        assert_eq!(defaults.settings().usage_granularity_days, 1);
        let set = config(&[("REGISTRY_REQUIRE_OWNER", "owner"), ("REGISTRY_USAGE_GRANULARITY_DAYS", "7")])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(set.settings().require_owner.as_deref(), Some("owner"));
        assert_eq!(set.settings().usage_granularity_days, 7);
        assert_eq!(
            config(&[("REGISTRY_USAGE_GRANULARITY_DAYS", "daily")]),
            Err(ConfigError::UsageGranularity("daily".into()))
        );
    }

    #[test]
    fn answer_memory_is_read_in_milliseconds_and_zero_turns_it_off() {
        let defaults = config(&[]).unwrap_or_else(|e| panic!("{e}")).settings();
        assert_eq!((defaults.lookup_ttl, defaults.live_id_ttl), (Duration::from_secs(5), Duration::from_secs(5)));
        let off = config(&[("REGISTRY_ANSWER_MEMORY_MS", "0")]).unwrap_or_else(|e| panic!("{e}")).settings();
        assert_eq!((off.lookup_ttl, off.live_id_ttl), (Duration::ZERO, Duration::ZERO));
        let set = config(&[("REGISTRY_ANSWER_MEMORY_MS", "250")]).unwrap_or_else(|e| panic!("{e}")).settings();
        assert_eq!(set.lookup_ttl, Duration::from_millis(250));
        assert_eq!(config(&[("REGISTRY_ANSWER_MEMORY_MS", "5s")]), Err(ConfigError::AnswerMemory("5s".into())));
    }

    #[test]
    fn schema_budgets_and_workers_are_read() {
        let defaults = config(&[]).unwrap_or_else(|e| panic!("{e}")).settings();
        assert_eq!(defaults.limits, Limits::default());
        assert_eq!(defaults.max_schema_bytes, 1024 * 1024);
        let set = config(&[
            ("REGISTRY_MAX_SCHEMA_BYTES", "4096"),
            ("REGISTRY_SCHEMA_MAX_DEPTH", "20"),
            ("REGISTRY_SCHEMA_MAX_NODES", "500"),
            ("REGISTRY_SCHEMA_MAX_WORK", "1000"),
            ("REGISTRY_SCHEMA_WORKERS", "3"),
        ])
        .unwrap_or_else(|e| panic!("{e}"))
        .settings();
        assert_eq!(set.max_schema_bytes, 4096);
        assert_eq!(set.limits, Limits { max_depth: 20, max_nodes: 500, max_work: 1000 });
        assert_eq!(set.schema_workers, 3);
        assert_eq!(
            config(&[("REGISTRY_SCHEMA_MAX_WORK", "lots")]),
            Err(ConfigError::Count("REGISTRY_SCHEMA_MAX_WORK", "lots".into()))
        );
    }

    #[test]
    fn unusable_values_fail_init() {
        assert_eq!(config(&[("REGISTRY_BACKEND", "embedded")]), Err(ConfigError::Backend("embedded".into())));
        assert_eq!(
            config(&[("REGISTRY_DEFAULT_COMPATIBILITY", "SIDEWAYS")]),
            Err(ConfigError::Compatibility("SIDEWAYS".into()))
        );
        assert_eq!(config(&[("REGISTRY_CACHE_BYTES", "-1")]), Err(ConfigError::CacheBytes("-1".into())));
        assert!(matches!(config(&[("REGISTRY_CHURN_MAX_PER_HOUR", "-5")]), Err(ConfigError::Churn(..))));
        assert!(matches!(config(&[("REGISTRY_CHURN_ENFORCE", "yes")]), Err(ConfigError::Churn(..))));
    }

    #[test]
    fn churn_guard_and_metrics_settings_are_read() {
        let defaults = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((defaults.churn.max_per_hour, defaults.churn.enforce), (50, false));
        assert_eq!((defaults.emf.namespace.as_str(), defaults.emf.registry.as_str()), ("SchemaRegistry", "registry"));
        let config = config(&[
            ("REGISTRY_CHURN_MAX_PER_HOUR", "10"),
            ("REGISTRY_CHURN_ENFORCE", "TRUE"),
            ("REGISTRY_METRICS_NAMESPACE", "Team/Registry"),
            ("AWS_LAMBDA_FUNCTION_NAME", "team-registry"),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.settings().churn, ChurnSettings { max_per_hour: 10, enforce: true });
        assert_eq!((config.emf.namespace.as_str(), config.emf.registry.as_str()), ("Team/Registry", "team-registry"));
    }
}
