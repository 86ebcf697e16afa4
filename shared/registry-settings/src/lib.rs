//! The settings every host of the registry reads, declared once: [`Settings`] is a clap `Args` whose
//! fields name their environment variable (`env = "..."`). `registry serve` and the admin commands
//! flatten it into their command line; the Lambda function parses the same type from its environment
//! ([`Settings::from_env`]). So a variable means the same thing, with the same default and the same
//! validation, wherever the registry runs.
//!
//! Settings of one host only stay with that host: the listener address (`PORT`, `REGISTRY_BIND`) and the
//! backend choice in `registry serve`, the EMF namespace in the Lambda function. The connection budgets
//! ([`ServerSettings`]) are declared here so both hosts accept the same values: `registry serve` applies
//! all of them, the Lambda function applies the body budget to each invocation. The AWS store reads
//! `REGISTRY_TABLE`, `REGISTRY_BUCKET` and the standard `AWS_*` variables itself.

use clap::Parser;
use registry_auth::{AuthConfig, AuthError, Authenticator, ConfiguredSource, ReloadPolicy};
use registry_core::cache::DEFAULT_CACHE_BYTES;
use registry_core::{ChurnSettings, CompatibilityLevel, Limits, RegistrySettings, Rules, default_schema_workers};
use registry_dek::model::LOCAL_KMS;
use registry_dek::{DekBackend, DekRegistry, LocalKms};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the registry and its HTTP application do, wherever they are hosted.
#[derive(Debug, Clone, clap::Args)]
pub struct Settings {
    /// Compatibility level used when neither the subject nor the global config sets one.
    #[arg(long, env = "REGISTRY_DEFAULT_COMPATIBILITY", default_value = "BACKWARD", value_parser = parse_level)]
    pub default_compatibility: CompatibilityLevel,

    /// Period of the per-subject last-used marker that `registry prune` reads, in days: at most
    /// one storage write per subject per period per process. 0 turns marking off.
    #[arg(long, env = "REGISTRY_USAGE_GRANULARITY_DAYS", default_value_t = 1)]
    pub usage_granularity_days: u32,

    /// Churn guard: new versions per subject per rolling hour before the registry warns and
    /// counts `churn_exceeded_total` (0 turns the guard off). Counted per process.
    #[arg(long, env = "REGISTRY_CHURN_MAX_PER_HOUR", default_value_t = 50)]
    pub churn_max_per_hour: u32,

    /// Churn guard: refuse new versions over the limit with 429 / error_code 42901 (`true`/`false`,
    /// any case).
    #[arg(long, env = "REGISTRY_CHURN_ENFORCE", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub churn_enforce: bool,

    /// Ownership policy: registering into a subject without live versions requires this metadata
    /// property (e.g. `owner`); refused with 422 / error_code 42201 otherwise. Unset or empty: no policy.
    #[arg(long, env = "REGISTRY_REQUIRE_OWNER")]
    pub require_owner: Option<String>,

    /// How long, in milliseconds, a process may answer lookups (`POST /subjects/{s}`) and the
    /// existence of an ID or guid from memory: deletes and config changes made through *another* process
    /// show after at most this long (this process sees its own at once). 0 turns the memory off.
    #[arg(long, env = "REGISTRY_ANSWER_MEMORY_MS", default_value_t = 5000)]
    pub answer_memory_ms: u64,

    /// Bound, in bytes, of the in-process cache of immutable data (bodies by fingerprint,
    /// fingerprint by guid) in front of a persistent store.
    #[arg(long, env = "REGISTRY_CACHE_BYTES", default_value_t = DEFAULT_CACHE_BYTES)]
    pub cache_bytes: usize,

    /// Largest schema text accepted, in bytes (42209 above it).
    #[arg(long, env = "REGISTRY_MAX_SCHEMA_BYTES", default_value_t = RegistrySettings::default().max_schema_bytes)]
    pub max_schema_bytes: usize,

    /// Deepest nesting of a schema text (42201 beyond it; at most 120, Protobuf at most 64).
    #[arg(long, env = "REGISTRY_SCHEMA_MAX_DEPTH", default_value_t = Limits::default().max_depth)]
    pub schema_max_depth: usize,

    /// Most nodes of one schema with its references: JSON values (Avro, JSON Schema) or statements
    /// (Protobuf). 42201 beyond it.
    #[arg(long, env = "REGISTRY_SCHEMA_MAX_NODES", default_value_t = Limits::default().max_nodes)]
    pub schema_max_nodes: u64,

    /// Most work units of one compatibility check (pairs compared, findings copied, branches and
    /// symbols looked at). 42201 beyond it.
    #[arg(long, env = "REGISTRY_SCHEMA_MAX_WORK", default_value_t = Limits::default().max_work)]
    pub schema_max_work: u64,

    /// Protobuf compatibility: treat a package change as compatible, as Confluent Platform 7.x did
    /// before 2024 (`true`/`false`, any case). Default `false`: a package change is incompatible
    /// (`PACKAGE_CHANGED`), as in Confluent 7.6+ and 8.x.
    #[arg(long, env = "REGISTRY_PROTOBUF_PACKAGE_CHANGE_COMPATIBLE", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub protobuf_package_change_compatible: bool,

    /// Refuse (42201 "Conflicting reference versions") a schema whose reference closure binds one
    /// reference name at two versions (`true`/`false`, any case), as Confluent's
    /// `schema.providers.reference.versions.strict`. Default `false`: the first binding wins.
    #[arg(long, env = "REGISTRY_REFERENCE_VERSIONS_STRICT", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub reference_versions_strict: bool,

    /// Serve the MCP server at `/mcp` (tools over the REST API for assistants, `true`/`false`, any
    /// case). Default `false`: `/mcp` is 404.
    #[arg(long, env = "REGISTRY_MCP_ENABLED", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub mcp_enabled: bool,

    /// Parses and compatibility checks running at once, off the request threads (others queue).
    /// Default: one per core.
    #[arg(long, env = "REGISTRY_SCHEMA_WORKERS")]
    pub schema_workers: Option<usize>,

    /// `Cache-Control` of the `GET /schemas/ids/{id}` answers (empty: none). Unset: the HTTP
    /// layer's default, `public, max-age=0, must-revalidate` (`registry_http::http_cache` says why
    /// it makes shared caches revalidate).
    #[arg(long, env = "REGISTRY_ID_CACHE_CONTROL")]
    pub id_cache_control: Option<String>,

    /// The `error_code` of an incompatible-schema answer (HTTP 409 either way): 40901, as Confluent
    /// 8.0.4+/8.1.2+/8.2+ answer, or 409, as earlier releases did.
    #[arg(long, env = "REGISTRY_INCOMPATIBLE_ERROR_CODE", default_value = "40901", value_parser = parse_incompatible_code)]
    pub incompatible_error_code: u32,

    #[command(flatten)]
    pub auth: AuthArgs,

    #[command(flatten)]
    pub server: ServerSettings,

    #[command(flatten)]
    pub dek: DekSettings,

    #[command(flatten)]
    pub regions: RegionSettings,
}

/// A multi-region registry (`docs/multi-region.md`): every region reads its own replica of the
/// table and its own bucket, the home region commits every write. All unset: one region, as before.
/// The function's own region is the standard `AWS_REGION`; the table has the same name everywhere
/// (a global table) and `REGISTRY_BUCKET` is this region's bucket.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RegionSettings {
    /// The region that commits every write; unset: a single-region registry.
    #[arg(long, env = "REGISTRY_HOME_REGION")]
    pub home_region: Option<String>,

    /// The home region's bucket (schema bodies, ID ledger) that writes from another region use;
    /// unset: `REGISTRY_BUCKET` (right in the home region itself).
    #[arg(long, env = "REGISTRY_HOME_BUCKET")]
    pub home_bucket: Option<String>,

    /// Read regions (comma-separated; `region=bucket` to also wait for the body in that bucket)
    /// whose replicas must show a registration before it is acknowledged: RPO 0 for them.
    #[arg(long, env = "REGISTRY_ACK_REGIONS", default_value = "")]
    pub ack_regions: String,

    /// How long, in milliseconds, a registration waits for those replicas before it answers a
    /// retryable error (registering again is idempotent).
    #[arg(long, env = "REGISTRY_ACK_TIMEOUT_MS", default_value_t = 5_000)]
    pub ack_timeout_ms: u64,

    /// Every region's bucket (`region=bucket`, comma-separated). With it, a process follows the
    /// home marker in its own replica: writes go to the region the marker names (the home region
    /// above while no failover has written one), with no redeploy. Unset: the home is fixed.
    #[arg(long, env = "REGISTRY_REGION_BUCKETS", default_value = "")]
    pub region_buckets: String,

    /// How long, in milliseconds, a process trusts the home marker it last read (one strongly
    /// consistent GetItem of its replica per period): a failover reaches its writes within it.
    #[arg(long, env = "REGISTRY_HOME_MARKER_TTL_MS", default_value_t = 5_000)]
    pub home_marker_ttl_ms: u64,
}

impl RegionSettings {
    /// The home region, when one is set (empty counts as unset).
    pub fn home_region(&self) -> Option<&str> {
        self.home_region.as_deref().map(str::trim).filter(|region| !region.is_empty())
    }

    /// How long a registration waits for the acknowledging replicas.
    pub fn ack_timeout(&self) -> Duration {
        Duration::from_millis(self.ack_timeout_ms)
    }

    /// How long the home marker last read is trusted.
    pub fn home_marker_ttl(&self) -> Duration {
        Duration::from_millis(self.home_marker_ttl_ms)
    }
}

/// The DEK registry's KMS settings (`/dek-registry/v1/...`, client-side field-level encryption).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DekSettings {
    /// Secret of the `local-kms` KMS: with it the registry generates and unwraps the DEKs of shared
    /// `local-kms` KEKs (a client's local KMS driver with the same secret reads them too). Unset:
    /// no `local-kms` here. For tests and local runs; in AWS use `aws-kms` KEKs.
    #[arg(long, env = "REGISTRY_LOCAL_KMS_SECRET", hide_env_values = true)]
    pub local_kms_secret: Option<String>,

    /// A file holding the `local-kms` secret (surrounding whitespace ignored); instead of
    /// `REGISTRY_LOCAL_KMS_SECRET`.
    #[arg(long, env = "REGISTRY_LOCAL_KMS_SECRET_FILE")]
    pub local_kms_secret_file: Option<PathBuf>,
}

impl DekSettings {
    /// The `local-kms` secret, from the variable or the file; `None` when neither is set.
    fn local_kms_secret(&self) -> Result<Option<String>, SettingsError> {
        if let Some(secret) = non_empty(self.local_kms_secret.as_deref()) {
            return Ok(Some(secret.to_owned()));
        }
        let Some(path) = &self.local_kms_secret_file else { return Ok(None) };
        let text = std::fs::read_to_string(path).map_err(|error| {
            SettingsError::Dek(format!("REGISTRY_LOCAL_KMS_SECRET_FILE {}: {error}", path.display()))
        })?;
        match non_empty(Some(&text)) {
            Some(secret) => Ok(Some(secret.to_owned())),
            None => Err(SettingsError::Dek(format!("REGISTRY_LOCAL_KMS_SECRET_FILE {} is empty", path.display()))),
        }
    }

    /// The DEK registry over `backend` (its key store, and the KMS implementations it brings,
    /// such as `aws-kms` on AWS), with `local-kms` added when a secret is configured.
    pub fn registry(&self, backend: DekBackend) -> Result<Arc<DekRegistry>, SettingsError> {
        let mut kms = backend.kms;
        if let Some(secret) = self.local_kms_secret()? {
            let local = LocalKms::new(&secret).map_err(|error| SettingsError::Dek(error.to_string()))?;
            kms = kms.with(LOCAL_KMS, Arc::new(local));
        }
        Ok(Arc::new(DekRegistry::new(backend.key_store, kms)))
    }
}

/// Time and connection budgets of the HTTP server. Defaults: a client has 10 s to send a request's
/// headers, from the connection's acceptance for its first request and from the first byte for later
/// ones (a silent or slow-header client holds nothing longer), 30 s to send its body (4 MiB at about
/// 140 KiB/s), and may keep an idle connection 75 s (longer than the 60 s idle timeout of AWS load
/// balancers, so a balancer never reuses a connection the server is closing); at most 900 connections
/// are open at once (below the usual 1024 open-file limit, with room for the store's files), at most
/// 100 of them from one client address; an answer the client does not read within 10 s is abandoned;
/// at the limit, the connection waiting longest for a request (idle keep-alive) or stalled longest
/// (silent since accepted, sending its head, not reading its answer) is closed to admit a new one.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ServerSettings {
    /// Milliseconds a client may take to send a request's headers: the first request's from the
    /// connection's acceptance, later ones' from their first byte; the connection is closed after it.
    /// `registry serve` only (the Lambda front end reads requests).
    #[arg(long, env = "REGISTRY_HEADER_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,

    /// Milliseconds a client may take to send a request's body, from the end of its headers (408
    /// after it). In the Lambda function, the time budget of one invocation (504 after it).
    #[arg(long, env = "REGISTRY_BODY_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,

    /// Milliseconds a response may wait for the client to read it (no 16 KiB of it accepted by the
    /// socket in that time) before it is abandoned and the connection closed. `registry serve` only.
    #[arg(long, env = "REGISTRY_WRITE_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub write_timeout_ms: u64,

    /// Milliseconds a keep-alive connection may stay idle between requests before it is closed.
    /// `registry serve` only.
    #[arg(long, env = "REGISTRY_IDLE_TIMEOUT_MS", default_value_t = 75_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,

    /// Connections open at once; further clients wait in the listen backlog until one closes.
    /// `registry serve` only.
    #[arg(long, env = "REGISTRY_MAX_CONNECTIONS", default_value_t = 900, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Connections open at once from one client address (an IPv6 client's /64); a further one is
    /// closed at once. `registry serve` only.
    #[arg(long, env = "REGISTRY_MAX_CONNECTIONS_PER_PEER", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_peer: u32,
}

impl ServerSettings {
    /// How long a client may take to send a request's headers.
    pub fn header_timeout(&self) -> Duration {
        Duration::from_millis(self.header_timeout_ms)
    }

    /// How long a client may take to send a request's body (the Lambda function: one invocation).
    pub fn body_timeout(&self) -> Duration {
        Duration::from_millis(self.body_timeout_ms)
    }

    /// How long a connection may stay idle between requests.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }

    /// How long a response may wait for its client to read it.
    pub fn write_timeout(&self) -> Duration {
        Duration::from_millis(self.write_timeout_ms)
    }
}

/// Where users and bearer-token keys come from (see `registry_auth::config`). Auth is on as soon as
/// one users source or the JWT issuer is set; empty values count as unset.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AuthArgs {
    /// Path of the users file for HTTP Basic authentication.
    #[arg(long, env = "REGISTRY_USERS_FILE")]
    pub users_file: Option<PathBuf>,
    /// The users file content itself.
    #[arg(long, env = "REGISTRY_USERS", hide_env_values = true)]
    pub users: Option<String>,
    /// Name or ARN of a Secrets Manager secret holding the users file (fetched by the Lambda host).
    #[arg(long, env = "REGISTRY_USERS_SECRET")]
    pub users_secret: Option<String>,
    /// Bearer tokens: the required `iss`.
    #[arg(long, env = "REGISTRY_JWT_ISSUER")]
    pub jwt_issuer: Option<String>,
    /// Bearer tokens: the required member of `aud`.
    #[arg(long, env = "REGISTRY_JWT_AUDIENCE")]
    pub jwt_audience: Option<String>,
    /// Bearer tokens: the issuer's JWKS document as a local file (never fetched).
    #[arg(long, env = "REGISTRY_JWKS_FILE")]
    pub jwks_file: Option<PathBuf>,
    /// Bearer tokens: the issuer's JWKS document itself.
    #[arg(long, env = "REGISTRY_JWKS", hide_env_values = true)]
    pub jwks: Option<String>,
    /// Bearer tokens: a Secrets Manager secret holding the JWKS document (fetched by the Lambda host).
    #[arg(long, env = "REGISTRY_JWKS_SECRET")]
    pub jwks_secret: Option<String>,
    /// Bearer tokens: the claim carrying `registry:read|write|admin` (default `scope`).
    #[arg(long, env = "REGISTRY_JWT_ROLE_CLAIM")]
    pub jwt_role_claim: Option<String>,
    /// Seconds after which a running process reads its users file and JWKS (files or secrets) again:
    /// the longest a removed user, a changed password or a removed signing key keeps working. 0: read
    /// once at start.
    #[arg(long, env = "REGISTRY_AUTH_RELOAD_SECONDS", default_value_t = 60)]
    pub auth_reload_seconds: u64,
    /// An opaque label of the auth configuration, logged at start. The Terraform module sets it from
    /// the JWKS it writes, so a JWKS change updates the function and replaces every warm instance.
    #[arg(long, env = "REGISTRY_AUTH_REVISION")]
    pub auth_revision: Option<String>,
}

/// A setting holds a value the host cannot use; start-up fails with it.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The environment does not parse (unknown level, not a number, ...).
    #[error("{0}")]
    Parse(String),
    /// `REGISTRY_ID_CACHE_CONTROL` is not a valid header value.
    #[error("REGISTRY_ID_CACHE_CONTROL: {0}")]
    CacheControl(String),
    /// The auth settings are inconsistent or their files unreadable.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The DEK registry's settings are unusable (an unreadable secret file).
    #[error("{0}")]
    Dek(String),
}

/// The environment alone, as a command without flags (what [`Settings::from_env`] parses).
#[derive(Debug, Parser)]
#[command(name = "registry-settings", no_binary_name = true, disable_help_flag = true, disable_version_flag = true)]
struct FromEnv {
    #[command(flatten)]
    settings: Settings,
}

impl Settings {
    /// Reads the process environment exactly as `registry serve` reads it (same names, defaults
    /// and validation), for hosts without a command line.
    pub fn from_env() -> Result<Settings, SettingsError> {
        Self::from_args(std::iter::empty::<String>())
    }

    /// Flags (`--default-compatibility FULL ...`) over the environment; for tests and hosts.
    pub fn from_args<I, T>(args: I) -> Result<Settings, SettingsError>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        FromEnv::try_parse_from(args)
            .map(|parsed| parsed.settings)
            .map_err(|error| SettingsError::Parse(error.to_string()))
    }

    /// The registry settings these values select (the others keep their defaults).
    pub fn registry(&self) -> RegistrySettings {
        let answer_memory = Duration::from_millis(self.answer_memory_ms);
        RegistrySettings {
            default_compatibility: self.default_compatibility,
            usage_granularity_days: self.usage_granularity_days,
            require_owner: non_empty(self.require_owner.as_deref()).map(str::to_string),
            churn: ChurnSettings { max_per_hour: self.churn_max_per_hour, enforce: self.churn_enforce },
            live_id_ttl: answer_memory,
            lookup_ttl: answer_memory,
            max_schema_bytes: self.max_schema_bytes,
            limits: Limits {
                max_depth: self.schema_max_depth,
                max_nodes: self.schema_max_nodes,
                max_work: self.schema_max_work,
            },
            compat_rules: Rules { protobuf_package_change: self.protobuf_package_change_compatible },
            reference_versions_strict: self.reference_versions_strict,
            schema_workers: self.schema_workers.unwrap_or_else(default_schema_workers),
        }
    }
}

impl AuthArgs {
    /// The auth configuration these values describe (`AuthConfig::is_enabled` false when none is set).
    pub fn config(&self) -> Result<AuthConfig, AuthError> {
        let path = |path: &Option<PathBuf>| path.as_ref().map(|path| path.display().to_string());
        let text = |text: &Option<String>| non_empty(text.as_deref()).map(str::to_string);
        AuthConfig::from_lookup(|name| {
            match name {
                "REGISTRY_USERS_FILE" => path(&self.users_file),
                "REGISTRY_USERS" => text(&self.users),
                "REGISTRY_USERS_SECRET" => text(&self.users_secret),
                "REGISTRY_JWT_ISSUER" => text(&self.jwt_issuer),
                "REGISTRY_JWT_AUDIENCE" => text(&self.jwt_audience),
                "REGISTRY_JWKS_FILE" => path(&self.jwks_file),
                "REGISTRY_JWKS" => text(&self.jwks),
                "REGISTRY_JWKS_SECRET" => text(&self.jwks_secret),
                "REGISTRY_JWT_ROLE_CLAIM" => text(&self.jwt_role_claim),
                _ => None,
            }
            .filter(|value| !value.trim().is_empty())
        })
    }

    /// How often a running process reads its users and keys again (`REGISTRY_AUTH_RELOAD_SECONDS`).
    pub fn reload_policy(&self) -> ReloadPolicy {
        ReloadPolicy::every(Duration::from_secs(self.auth_reload_seconds))
    }

    /// The authenticator for a host that reads its users from local sources only (a users secret
    /// or a JWKS secret is an error here: the Lambda host reads them through its `SecretReader`), its
    /// files read again on [`AuthArgs::reload_policy`]'s schedule. `None` when auth is off; a
    /// configured but unusable source is an error, never an open server.
    pub fn authenticator(&self) -> Result<Option<Arc<Authenticator>>, AuthError> {
        let config = self.config()?;
        let Some(authenticator) = Authenticator::from_config(&config, None)? else { return Ok(None) };
        let source = Arc::new(ConfiguredSource::new(config, None));
        Ok(Some(Arc::new(authenticator.reloading(source, self.reload_policy()))))
    }
}

fn non_empty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|text| !text.is_empty())
}

fn parse_level(value: &str) -> Result<CompatibilityLevel, String> {
    value.trim().parse::<CompatibilityLevel>().map_err(|_| {
        let names: Vec<&str> = CompatibilityLevel::ALL.iter().map(|level| level.as_str()).collect();
        format!("unknown compatibility level {value:?}; expected one of {}", names.join(", "))
    })
}

fn parse_incompatible_code(value: &str) -> Result<u32, String> {
    match value.trim().parse::<u32>() {
        Ok(code @ (40901 | 409)) => Ok(code),
        _ => Err(format!("{value:?} is not 40901 or 409")),
    }
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{value:?} is neither true nor false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Settings, SettingsError> {
        Settings::from_args(args.iter().copied())
    }

    #[test]
    fn defaults_match_the_registry_defaults() {
        let settings = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        let registry = settings.registry();
        assert_eq!(registry.default_compatibility, CompatibilityLevel::Backward);
        assert_eq!(registry.usage_granularity_days, 1);
        assert_eq!(registry.churn, ChurnSettings { max_per_hour: 50, enforce: false });
        assert_eq!((registry.lookup_ttl, registry.live_id_ttl), (Duration::from_secs(5), Duration::from_secs(5)));
        assert_eq!(registry.require_owner, None);
        assert_eq!(settings.cache_bytes, DEFAULT_CACHE_BYTES);
        assert!(!settings.auth.config().unwrap_or_else(|e| panic!("{e}")).is_enabled());
    }

    #[test]
    fn values_are_parsed_and_validated() {
        let settings = parse(&[
            "--default-compatibility",
            "full_transitive",
            "--churn-max-per-hour",
            "10",
            "--churn-enforce",
            "TRUE",
            "--answer-memory-ms",
            "0",
            "--require-owner",
            " owner ",
            "--cache-bytes",
            "1048576",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let registry = settings.registry();
        assert_eq!(registry.default_compatibility, CompatibilityLevel::FullTransitive);
        assert_eq!(registry.churn, ChurnSettings { max_per_hour: 10, enforce: true });
        assert_eq!((registry.lookup_ttl, registry.live_id_ttl), (Duration::ZERO, Duration::ZERO));
        assert_eq!(registry.require_owner.as_deref(), Some("owner"));
        assert_eq!(settings.cache_bytes, 1 << 20);
        for bad in [
            &["--default-compatibility", "SIDEWAYS"][..],
            &["--churn-enforce", "yes"],
            &["--churn-max-per-hour", "-5"],
            &["--answer-memory-ms", "5s"],
            &["--cache-bytes", "-1"],
            &["--usage-granularity-days", "daily"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_incompatible_error_code_is_40901_unless_set_to_409() {
        let code = |args: &[&str]| parse(args).map(|s| s.incompatible_error_code);
        assert!(matches!(code(&[]), Ok(40901)));
        assert!(matches!(code(&["--incompatible-error-code", "409"]), Ok(409)));
        assert!(code(&["--incompatible-error-code", "40900"]).is_err());
    }

    #[test]
    fn auth_sources_are_exclusive_and_empty_ones_are_unset() {
        let one = parse(&["--users", "[]", "--jwt-issuer", ""]).unwrap_or_else(|e| panic!("{e}"));
        assert!(one.auth.config().is_ok_and(|config| config.is_enabled() && config.jwt.is_none()));
        let two = parse(&["--users", "x", "--users-secret", "y"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(two.auth.config().is_err());
        let partial_jwt = parse(&["--jwt-issuer", "https://idp"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(partial_jwt.auth.config().is_err());
    }

    #[test]
    fn schema_budgets_and_workers_are_set_by_flags() {
        let defaults = parse(&[]).unwrap_or_else(|e| panic!("{e}")).registry();
        assert_eq!(defaults.limits, Limits::default());
        assert_eq!(defaults.max_schema_bytes, 1024 * 1024);
        let flags = [
            "--max-schema-bytes=4096",
            "--schema-max-depth=20",
            "--schema-max-nodes=500",
            "--schema-max-work=1000",
            "--schema-workers=3",
        ];
        let set = parse(&flags).unwrap_or_else(|e| panic!("{e}")).registry();
        assert_eq!(set.max_schema_bytes, 4096);
        assert_eq!(set.limits, Limits { max_depth: 20, max_nodes: 500, max_work: 1000 });
        assert_eq!(set.schema_workers, 3);
        assert!(parse(&["--schema-max-work", "lots"]).is_err());
    }

    #[test]
    fn the_protobuf_package_rule_is_the_newest_unless_chosen() {
        let defaults = parse(&[]).unwrap_or_else(|e| panic!("{e}")).registry();
        assert_eq!(defaults.compat_rules, Rules::default());
        assert!(!defaults.compat_rules.protobuf_package_change);
        let older = parse(&["--protobuf-package-change-compatible=TRUE"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(older.registry().compat_rules.protobuf_package_change);
        assert!(parse(&["--protobuf-package-change-compatible=yes-please"]).is_err());
    }

    #[test]
    fn mcp_is_off_unless_enabled() {
        assert!(!parse(&[]).unwrap_or_else(|e| panic!("{e}")).mcp_enabled);
        assert!(parse(&["--mcp-enabled=true"]).unwrap_or_else(|e| panic!("{e}")).mcp_enabled);
        assert!(parse(&["--mcp-enabled=yes please"]).is_err());
    }

    #[test]
    fn reference_versions_are_lenient_unless_strict_is_chosen() {
        assert!(!parse(&[]).unwrap_or_else(|e| panic!("{e}")).registry().reference_versions_strict);
        let strict = parse(&["--reference-versions-strict=True"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(strict.registry().reference_versions_strict);
        assert!(parse(&["--reference-versions-strict=sometimes"]).is_err());
    }

    #[test]
    fn server_budgets_have_defaults_and_refuse_zero() {
        let defaults = parse(&[]).unwrap_or_else(|e| panic!("{e}")).server;
        assert_eq!(
            (defaults.header_timeout(), defaults.body_timeout(), defaults.idle_timeout(), defaults.max_connections),
            (Duration::from_secs(10), Duration::from_secs(30), Duration::from_secs(75), 900)
        );
        assert_eq!(defaults.max_connections_per_peer, 100);
        let flags = [
            "--header-timeout-ms=200",
            "--body-timeout-ms=300",
            "--idle-timeout-ms=400",
            "--max-connections=2",
            "--max-connections-per-peer=1",
        ];
        let set = parse(&flags).unwrap_or_else(|e| panic!("{e}")).server;
        assert_eq!(
            (set.header_timeout_ms, set.body_timeout_ms, set.idle_timeout_ms, set.max_connections),
            (200, 300, 400, 2)
        );
        assert_eq!(set.max_connections_per_peer, 1);
        let bad_flags =
            ["--header-timeout-ms=0", "--body-timeout-ms=-1", "--idle-timeout-ms=1s", "--max-connections=0"];
        for bad in bad_flags.into_iter().chain(["--max-connections-per-peer=0"]) {
            assert!(parse(&[bad]).is_err(), "{bad}");
        }
    }
}
