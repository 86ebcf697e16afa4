//! The command line and every environment variable the `registry` binary reads (the only place it reads them).

use clap::{Parser, Subcommand, ValueEnum};
use registry_core::{ChurnSettings, CompatibilityLevel, Limits, RegistrySettings, default_schema_workers};
use std::path::PathBuf;
use std::time::Duration;

/// The log filter used when `RUST_LOG` is unset or does not parse.
pub const DEFAULT_LOG: &str = "info";

/// `registry`: a Confluent-compatible Schema Registry.
#[derive(Debug, Parser)]
#[command(name = "registry", version, about)]
pub struct Cli {
    /// Log filter (tracing-subscriber `EnvFilter` syntax).
    #[arg(long, env = "RUST_LOG", default_value = DEFAULT_LOG, global = true)]
    pub log: String,

    /// Log line format: `text` (human-readable) or `json` (one JSON object per line, for log
    /// pipelines; the per-request lines carry operation, subject, status, latency and request id).
    #[arg(long, env = "REGISTRY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands: `serve`, `aws-init`, `passwd` and the admin commands (`admin/`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Confluent REST API over HTTP until SIGINT or SIGTERM.
    Serve(ServeConfig),
    /// Create the DynamoDB table and S3 bucket (`REGISTRY_TABLE`, `REGISTRY_BUCKET`) if they do
    /// not exist, with the module's definitions. For emulators and first runs (`make run-aws`).
    AwsInit,
    /// Add or replace a user in the users file (`REGISTRY_USERS_FILE`); the password is read from stdin.
    Passwd(crate::passwd::PasswdArgs),
    /// Copy every subject, version, schema, config and mode from a registry (`--from URL`) or an
    /// export (`--from-file`) into this one in IMPORT mode, keeping IDs and versions; resumable.
    Import(Box<ImportArgs>),
    /// Write a JSON-lines backup of the configured store (or of `--url`) to `--to FILE`.
    Export(Box<ExportArgs>),
    /// Soft- then hard-delete subjects unused for `--inactive-days` (or listed in `--subjects-from`).
    Prune(Box<PruneArgs>),
    /// Delete versions older than the newest `--keep` where compatibility is not transitive.
    CapVersions(Box<CapArgs>),
    /// List subjects by owner with last registration, last use and live version count.
    Report(Box<ReportArgs>),
}

/// `registry report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// `table` (aligned columns, UTC dates) or `json` (one array of objects, times in ms).
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// The metadata property that names a subject's owner.
    #[arg(long, default_value = "owner")]
    pub owner_property: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Output of `registry report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
}

/// Everything `registry serve` needs, from flags or environment variables.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeConfig {
    /// TCP port to listen on (all interfaces).
    #[arg(long, env = "PORT", default_value_t = 8081)]
    pub port: u16,

    /// Address to bind.
    #[arg(long, env = "REGISTRY_BIND", default_value = "0.0.0.0")]
    pub bind: String,

    /// Storage backend.
    #[arg(long, env = "REGISTRY_BACKEND", value_enum, default_value_t = Backend::Embedded)]
    pub backend: Backend,

    /// Directory of the embedded store (created if missing).
    #[arg(long, env = "REGISTRY_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

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

    /// Churn guard: refuse new versions over the limit with 429 / error_code 42901 (`true`/`false`).
    #[arg(long, env = "REGISTRY_CHURN_ENFORCE", default_value_t = false, action = clap::ArgAction::Set)]
    pub churn_enforce: bool,

    /// Ownership policy: registering into a subject without live versions requires this metadata
    /// property (e.g. `owner`); refused with 422 / error_code 42201 otherwise. Unset: no policy.
    #[arg(long, env = "REGISTRY_REQUIRE_OWNER")]
    pub require_owner: Option<String>,

    /// How long, in milliseconds, a process may answer lookups (`POST /subjects/{s}`) and the
    /// existence of an ID from memory: deletes and config changes made through *another* process
    /// show after at most this long (this process sees its own at once). 0 turns the memory off.
    #[arg(long, env = "REGISTRY_ANSWER_MEMORY_MS", default_value_t = 5000)]
    pub answer_memory_ms: u64,

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

    /// Parses and compatibility checks running at once, off the request threads (others queue).
    /// Default: one per core.
    #[arg(long, env = "REGISTRY_SCHEMA_WORKERS")]
    pub schema_workers: Option<usize>,

    /// `Cache-Control` of the immutable `GET /schemas/ids/{id}` answers (empty: none). See
    /// `registry_http::http_cache` for why the default is safe and when to choose `no-cache`.
    #[arg(long, env = "REGISTRY_ID_CACHE_CONTROL", default_value = registry_http::http_cache::DEFAULT_ID_CACHE_CONTROL)]
    pub id_cache_control: String,
}

impl ServeConfig {
    /// The registry settings these flags select (other settings keep their defaults).
    pub fn settings(&self) -> RegistrySettings {
        let answer_memory = Duration::from_millis(self.answer_memory_ms);
        RegistrySettings {
            default_compatibility: self.default_compatibility,
            usage_granularity_days: self.usage_granularity_days,
            require_owner: self.require_owner.clone(),
            churn: ChurnSettings { max_per_hour: self.churn_max_per_hour, enforce: self.churn_enforce },
            live_id_ttl: answer_memory,
            lookup_ttl: answer_memory,
            max_schema_bytes: self.max_schema_bytes,
            limits: Limits {
                max_depth: self.schema_max_depth,
                max_nodes: self.schema_max_nodes,
                max_work: self.schema_max_work,
            },
            schema_workers: self.schema_workers.unwrap_or_else(default_schema_workers),
        }
    }
}

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (colored on a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

/// Where schemas, versions and config are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// On local disk in `REGISTRY_DATA_DIR` (SQLite); survives restarts.
    Embedded,
    /// In process memory; lost on exit.
    Memory,
    /// DynamoDB `REGISTRY_TABLE` + S3 `REGISTRY_BUCKET`, via the standard AWS variables
    /// (`AWS_REGION`, credentials, `AWS_ENDPOINT_URL[_DYNAMODB|_S3]` for emulators).
    Aws,
}

/// Where an admin command works: `--url` (a running registry) or else the configured store.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// Work on the registry at this URL instead of the configured store.
    #[arg(long)]
    pub url: Option<String>,
    /// `USER:PASSWORD` for `--url` (HTTP basic auth).
    #[arg(long)]
    pub user: Option<String>,
    /// The configured store (same flags and variables as `serve`).
    #[command(flatten)]
    pub store: ServeConfig,
}

/// `registry import`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The registry to copy from.
    #[arg(long, conflicts_with = "from_file", required_unless_present = "from_file")]
    pub from: Option<String>,
    /// An export (`registry export`) to restore instead.
    #[arg(long)]
    pub from_file: Option<PathBuf>,
    /// `USER:PASSWORD` for `--from`.
    #[arg(long)]
    pub from_user: Option<String>,
    /// The registry to copy into (through its API, which must allow IMPORT mode).
    #[arg(long, conflicts_with = "to_store")]
    pub to: Option<String>,
    /// `USER:PASSWORD` for `--to`.
    #[arg(long)]
    pub to_user: Option<String>,
    /// Write into the configured store directly (the default without `--to`).
    #[arg(long)]
    pub to_store: bool,
    /// Report what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The configured store (same flags and variables as `serve`).
    #[command(flatten)]
    pub store: ServeConfig,
}

/// `registry export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The file to write (JSON lines).
    #[arg(long = "to")]
    pub file: PathBuf,
    /// Read the registry and report; write no file.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `registry prune`.
#[derive(Debug, Clone, clap::Args)]
pub struct PruneArgs {
    /// Prune subjects not registered into or looked up for this many days.
    #[arg(long, required_unless_present = "subjects_from")]
    pub inactive_days: Option<u32>,
    /// Refuse to hard-delete a subject active within this many days (topic retention).
    #[arg(long)]
    pub min_age: Option<u32>,
    /// Prune the subjects listed in this file (one per line) instead.
    #[arg(long)]
    pub subjects_from: Option<PathBuf>,
    /// Report what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `registry cap-versions`.
#[derive(Debug, Clone, clap::Args)]
pub struct CapArgs {
    /// Live versions kept per subject.
    #[arg(long)]
    pub keep: usize,
    /// Only subjects starting with this.
    #[arg(long, default_value = "")]
    pub subject_prefix: String,
    /// Cap subjects with a transitive compatibility level too.
    #[arg(long)]
    pub force: bool,
    /// Report what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

fn parse_level(value: &str) -> Result<CompatibilityLevel, String> {
    value.parse::<CompatibilityLevel>().map_err(|_| {
        let names: Vec<&str> = CompatibilityLevel::ALL.iter().map(|level| level.as_str()).collect();
        format!("unknown compatibility level {value:?}; expected one of {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(args: &[&str]) -> Result<ServeConfig, clap::Error> {
        let argv = ["registry", "serve"].iter().chain(args).copied();
        let cli = Cli::try_parse_from(argv)?;
        match cli.command {
            Command::Serve(config) => Ok(config),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn aws_init_is_a_subcommand() {
        let cli = Cli::try_parse_from(["registry", "aws-init"]).unwrap_or_else(|error| panic!("{error}"));
        assert!(matches!(cli.command, Command::AwsInit));
    }

    #[test]
    fn flags_override_defaults() {
        let config = serve(&["--port", "9000", "--backend", "memory", "--default-compatibility", "full_transitive"])
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(config.port, 9000);
        assert_eq!(config.backend, Backend::Memory);
        assert_eq!(config.default_compatibility, CompatibilityLevel::FullTransitive);
        assert_eq!(config.usage_granularity_days, 1, "one marker write per subject per day by default");
        let config = serve(&["--usage-granularity-days", "0"]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(config.usage_granularity_days, 0);
    }

    #[test]
    fn churn_guard_and_log_format_flags() {
        let config = serve(&[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!((config.churn_max_per_hour, config.churn_enforce), (50, false));
        let config = serve(&["--churn-max-per-hour", "0", "--churn-enforce", "true"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((config.churn_max_per_hour, config.churn_enforce), (0, true));
        assert!(serve(&["--churn-enforce", "maybe"]).is_err());
        let cli =
            Cli::try_parse_from(["registry", "--log-format", "json", "aws-init"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cli.log_format, LogFormat::Json);
        assert!(Cli::try_parse_from(["registry", "--log-format", "xml", "aws-init"]).is_err());
    }

    #[test]
    fn answer_memory_is_set_in_milliseconds_and_zero_turns_it_off() {
        let defaults = serve(&[]).unwrap_or_else(|error| panic!("{error}")).settings();
        assert_eq!((defaults.lookup_ttl, defaults.live_id_ttl), (Duration::from_secs(5), Duration::from_secs(5)));
        let off = serve(&["--answer-memory-ms", "0"]).unwrap_or_else(|error| panic!("{error}")).settings();
        assert_eq!((off.lookup_ttl, off.live_id_ttl), (Duration::ZERO, Duration::ZERO));
        assert!(serve(&["--answer-memory-ms", "5s"]).is_err());
    }

    #[test]
    fn schema_budgets_and_workers_are_set_by_flags() {
        let defaults = serve(&[]).unwrap_or_else(|error| panic!("{error}")).settings();
        assert_eq!(defaults.limits, Limits::default());
        assert_eq!(defaults.max_schema_bytes, 1024 * 1024);
        let flags = [
            "--max-schema-bytes=4096",
            "--schema-max-depth=20",
            "--schema-max-nodes=500",
            "--schema-max-work=1000",
            "--schema-workers=3",
        ];
        let set = serve(&flags).unwrap_or_else(|error| panic!("{error}")).settings();
        assert_eq!(set.max_schema_bytes, 4096);
        assert_eq!(set.limits, Limits { max_depth: 20, max_nodes: 500, max_work: 1000 });
        assert_eq!(set.schema_workers, 3);
        assert!(serve(&["--schema-max-work", "lots"]).is_err());
    }

    #[test]
    fn unknown_backend_and_level_are_rejected() {
        assert!(serve(&["--backend", "cassandra"]).is_err());
        assert!(serve(&["--default-compatibility", "SIDEWAYS"]).is_err());
        assert!(serve(&["--port", "70000"]).is_err());
    }
}
