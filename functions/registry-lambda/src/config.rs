//! The function's settings: the registry's shared [`Settings`] (the same clap arguments, names,
//! defaults and validation as `registry serve`), parsed from the environment, plus what only a
//! Lambda host has. The AWS store reads `REGISTRY_TABLE`, `REGISTRY_BUCKET` and `AWS_*` itself.

use clap::Parser;
use registry_settings::Settings;

/// The log filter used when `RUST_LOG` is unset.
pub const DEFAULT_LOG: &str = "info";

/// Everything the function reads, once at init ([`LambdaConfig::from_env`]).
#[derive(Debug, Clone, Parser)]
#[command(name = "registry-lambda", no_binary_name = true, disable_help_flag = true, disable_version_flag = true)]
pub struct LambdaConfig {
    /// What the registry and its HTTP application do (shared with `registry serve`).
    #[command(flatten)]
    pub settings: Settings,

    /// Log filter (tracing-subscriber `EnvFilter` syntax); the function always logs JSON lines.
    #[arg(long, env = "RUST_LOG", default_value = DEFAULT_LOG)]
    pub log: String,

    /// The storage backend: the function serves only `aws` (DynamoDB + S3); anything else fails init.
    #[arg(long, env = "REGISTRY_BACKEND", default_value = "aws", value_parser = parse_backend)]
    pub backend: String,

    /// CloudWatch namespace of the EMF metric lines.
    #[arg(long, env = "REGISTRY_METRICS_NAMESPACE", default_value = "SchemaRegistry")]
    pub metrics_namespace: String,

    /// Time kept free before each invocation's deadline: a request still working then answers 504
    /// (Confluent's body, and a log line) instead of being killed by the runtime at the deadline.
    #[arg(long, env = "REGISTRY_DEADLINE_MARGIN_MS", default_value_t = 1_000)]
    pub deadline_margin_ms: u64,

    /// A Secrets Manager secret holding the accepted values of CloudFront's origin header, one per
    /// line: set, every request without one is answered 403 (`auth_origin`). Unset: no such check.
    #[arg(long, env = "REGISTRY_ORIGIN_SECRET")]
    pub origin_secret: Option<String>,

    /// The `Registry` dimension of the EMF lines (set by the Lambda runtime).
    #[arg(long, env = "AWS_LAMBDA_FUNCTION_NAME", default_value = "registry")]
    pub function_name: String,

    /// The exporter function of a multi-region registry: every region's exporter-credential key
    /// (key ARNs, comma-separated). Credentials are opened by the home region's KMS first, then by
    /// these in turn: a failover leaves credentials sealed by an earlier home's key. Unset: the
    /// home region's KMS only.
    #[arg(long, env = "REGISTRY_EXPORTER_KMS_KEYS", default_value = "")]
    pub exporter_kms_keys: String,
}

/// The variable naming what a function instance handles ([`HandlerKind`]). Read on its own, before
/// the API's settings: the exporter function needs none of them.
pub const HANDLER_VAR: &str = "REGISTRY_LAMBDA_HANDLER";

/// What a function instance handles: `api` (unset), the Confluent API behind the Function URL, or
/// `exporter`, the registry table's stream and the scheduled catch-up runs of its exporters (the
/// Terraform module's second function, `exporter.tf`). One bootstrap serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerKind {
    /// HTTP requests of the Confluent API (Function URL events).
    Api,
    /// DynamoDB stream batches of the registry table and scheduled catch-up runs.
    Exporter,
}

impl HandlerKind {
    /// The kind [`HANDLER_VAR`] names; unset is `api`, anything else unknown is an error.
    pub fn from_env() -> Result<Self, String> {
        Self::parse(std::env::var(HANDLER_VAR).ok().as_deref())
    }

    /// The kind `value` names (`None`: unset).
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("") | Some("api") => Ok(HandlerKind::Api),
            Some("exporter") => Ok(HandlerKind::Exporter),
            Some(other) => Err(format!("{HANDLER_VAR}={other:?}: expected api or exporter")),
        }
    }
}

impl LambdaConfig {
    /// Reads the process environment; a value the function cannot use is an error (init fails loudly).
    pub fn from_env() -> Result<Self, clap::Error> {
        Self::try_parse_from(std::iter::empty::<String>())
    }

    /// Each request's time budget: up to its invocation's deadline less the margin.
    pub fn request_budget(&self) -> registry_http::request_limits::RequestBudget {
        registry_http::request_limits::RequestBudget {
            fixed: None,
            deadline_margin: std::time::Duration::from_millis(self.deadline_margin_ms),
        }
    }

    /// The key ARNs of [`LambdaConfig::exporter_kms_keys`].
    pub fn exporter_kms_keys(&self) -> Vec<String> {
        self.exporter_kms_keys.split(',').map(str::trim).filter(|key| !key.is_empty()).map(str::to_owned).collect()
    }

    /// Where the EMF lines put the metrics.
    pub fn emf(&self) -> crate::emf::EmfConfig {
        crate::emf::EmfConfig { namespace: self.metrics_namespace.clone(), registry: self.function_name.clone() }
    }
}

fn parse_backend(value: &str) -> Result<String, String> {
    if value.trim().eq_ignore_ascii_case("aws") {
        Ok("aws".to_string())
    } else {
        Err(format!("REGISTRY_BACKEND={value:?}: the Lambda function only serves the `aws` backend"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::CompatibilityLevel;

    fn config(args: &[&str]) -> Result<LambdaConfig, clap::Error> {
        LambdaConfig::try_parse_from(args.iter().copied())
    }

    #[test]
    fn defaults_when_unset() {
        let config = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.settings.registry().default_compatibility, CompatibilityLevel::Backward);
        assert_eq!(config.log, DEFAULT_LOG);
        assert_eq!((config.emf().namespace.as_str(), config.emf().registry.as_str()), ("SchemaRegistry", "registry"));
    }

    #[test]
    fn shared_settings_are_read_as_registry_serve_reads_them() {
        let config = config(&["--default-compatibility", "FULL_TRANSITIVE", "--id-cache-control", "no-cache"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.settings.registry().default_compatibility, CompatibilityLevel::FullTransitive);
        let options = registry_app::app_options(&config.settings, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(options.http.id_cache_control.as_ref().and_then(|v| v.to_str().ok()), Some("no-cache"));
    }

    #[test]
    fn the_handler_is_the_api_unless_the_exporter_is_asked_for() {
        assert_eq!(HandlerKind::parse(None), Ok(HandlerKind::Api));
        assert_eq!(HandlerKind::parse(Some("api")), Ok(HandlerKind::Api));
        assert_eq!(HandlerKind::parse(Some("exporter")), Ok(HandlerKind::Exporter));
        assert!(HandlerKind::parse(Some("stream")).is_err());
    }

    #[test]
    fn the_exporter_keys_are_a_comma_separated_list() {
        let keys = config(&["--exporter-kms-keys", " arn:aws:kms:us-east-1:1:key/a, ,arn:aws:kms:eu-west-1:1:key/b"])
            .unwrap_or_else(|e| panic!("{e}"))
            .exporter_kms_keys();
        assert_eq!(keys, ["arn:aws:kms:us-east-1:1:key/a", "arn:aws:kms:eu-west-1:1:key/b"]);
        assert!(config(&[]).unwrap_or_else(|e| panic!("{e}")).exporter_kms_keys().is_empty());
    }

    #[test]
    fn only_the_aws_backend_is_served() {
        assert!(config(&["--backend", "AWS"]).is_ok());
        assert!(config(&["--backend", "embedded"]).is_err());
    }
}
