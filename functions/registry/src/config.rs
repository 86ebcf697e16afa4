//! The command line and every environment variable the `registry` binary reads (the only place it reads them).

use clap::{Parser, Subcommand, ValueEnum};
use registry_settings::Settings;
use std::path::PathBuf;

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
    Serve(Box<ServeConfig>),
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
    /// After a restore of the DynamoDB table: raise its ID counter past every ID the ledger in the
    /// bucket records as issued, so no ID is handed out again (`REGISTRY_TABLE`, `REGISTRY_BUCKET`).
    RestoreCheck(RestoreCheckArgs),
    /// Multi-region: make `--to REGION` the home region. Raises every ID counter in that region's
    /// replica past what the old home may have issued (plus `--gap`), then writes the home marker
    /// that fences the old home (docs/multi-region.md). Failback is the same command.
    Failover(FailoverArgs),
}

/// `registry failover`.
#[derive(Debug, Clone, clap::Args)]
pub struct FailoverArgs {
    /// The region that becomes the home; the command works on its replica of `REGISTRY_TABLE`.
    #[arg(long)]
    pub to: String,
    /// That region's bucket (its replica of the ID ledger); default `REGISTRY_BUCKET`.
    #[arg(long)]
    pub bucket: Option<String>,
    /// IDs skipped past the highest one the new home's replica shows in each context: at least
    /// the most IDs the old home can allocate within the replication lag (peak allocations per
    /// second times the worst lag in seconds).
    #[arg(long, default_value_t = 10_000)]
    pub gap: u32,
    /// The region that was home, whose replica of the table the failover writes the new marker
    /// in directly (so it commits nothing more); default: the region the marker in `--to`'s
    /// replica names, else `REGISTRY_HOME_REGION`. Reached before anything is written: if it
    /// cannot be, the failover refuses unless `--accept-loss`.
    #[arg(long, env = "REGISTRY_HOME_REGION")]
    pub from: Option<String>,
    /// Fail over without reaching the old home (a lost region). It keeps committing until the
    /// marker replicates to it: IDs stay safe (the gap and the floor), but a version, config or
    /// mode it acknowledges then may be lost (docs/multi-region.md, "What a failover can lose").
    #[arg(long)]
    pub accept_loss: bool,
}

/// `registry restore-check`.
#[derive(Debug, Clone, clap::Args)]
pub struct RestoreCheckArgs {
    /// Report the counter and the ledger; raise nothing.
    #[arg(long)]
    pub dry_run: bool,
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
    pub selection: SelectionArgs,
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

    /// What the registry and its HTTP application do (shared with the Lambda function).
    #[command(flatten)]
    pub settings: Settings,
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

/// What an admin command waits for and holds of a remote registry (`--from`, `--to`, `--url`), which
/// it does not trust: a silent, endless or redirecting answer ends the command with an error naming
/// the request and the bound.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct RemoteArgs {
    /// Milliseconds to wait for a connection to a remote registry.
    #[arg(long, env = "REGISTRY_REMOTE_CONNECT_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub remote_connect_timeout_ms: u64,
    /// Milliseconds one request to a remote registry may take, until the last byte of its answer.
    #[arg(long, env = "REGISTRY_REMOTE_TIMEOUT_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub remote_timeout_ms: u64,
    /// Largest answer read from a remote registry, in bytes.
    #[arg(long, env = "REGISTRY_REMOTE_MAX_ANSWER_BYTES", default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub remote_max_answer_bytes: u64,
    /// Most pages of a paged listing (`GET /contexts`, 1000 names a page) read from a remote registry.
    #[arg(long, env = "REGISTRY_REMOTE_MAX_PAGES", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub remote_max_pages: u32,
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
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// The configured store (same flags and variables as `serve`).
    #[command(flatten)]
    pub store: ServeConfig,
}

/// Which subjects an admin command works on (every subject of every context by default).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SelectionArgs {
    /// Only subjects of this context (`.team-a`, `team-a`; `.` is the default context); repeatable.
    #[arg(long)]
    pub context: Vec<String>,
    /// Only subjects whose name in their context starts with this (`:.ctx:prefix`: qualified).
    #[arg(long)]
    pub subject_prefix: Option<String>,
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
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Bounds on `--from` and `--to`.
    #[command(flatten)]
    pub remote: RemoteArgs,
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
    pub selection: SelectionArgs,
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
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Cap subjects with a transitive compatibility level too.
    #[arg(long)]
    pub force: bool,
    /// Report what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::CompatibilityLevel;
    use std::time::Duration;

    fn serve(args: &[&str]) -> Result<ServeConfig, clap::Error> {
        let argv = ["registry", "serve"].iter().chain(args).copied();
        let cli = Cli::try_parse_from(argv)?;
        match cli.command {
            Command::Serve(config) => Ok(*config),
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
        assert_eq!(config.settings.default_compatibility, CompatibilityLevel::FullTransitive);
        assert_eq!(config.settings.usage_granularity_days, 1, "one marker write per subject per day by default");
        let config = serve(&["--usage-granularity-days", "0"]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(config.settings.usage_granularity_days, 0);
    }

    #[test]
    fn churn_guard_and_log_format_flags() {
        let config = serve(&[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!((config.settings.churn_max_per_hour, config.settings.churn_enforce), (50, false));
        let config = serve(&["--churn-max-per-hour", "0", "--churn-enforce", "true"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((config.settings.churn_max_per_hour, config.settings.churn_enforce), (0, true));
        assert!(serve(&["--churn-enforce", "maybe"]).is_err());
        let cli =
            Cli::try_parse_from(["registry", "--log-format", "json", "aws-init"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cli.log_format, LogFormat::Json);
        assert!(Cli::try_parse_from(["registry", "--log-format", "xml", "aws-init"]).is_err());
    }

    #[test]
    fn answer_memory_is_set_in_milliseconds_and_zero_turns_it_off() {
        let defaults = serve(&[]).unwrap_or_else(|error| panic!("{error}")).settings.registry();
        assert_eq!((defaults.lookup_ttl, defaults.live_id_ttl), (Duration::from_secs(5), Duration::from_secs(5)));
        let off = serve(&["--answer-memory-ms", "0"]).unwrap_or_else(|error| panic!("{error}")).settings.registry();
        assert_eq!((off.lookup_ttl, off.live_id_ttl), (Duration::ZERO, Duration::ZERO));
        assert!(serve(&["--answer-memory-ms", "5s"]).is_err());
    }

    #[test]
    fn remote_bounds_have_defaults_and_refuse_zero() {
        let import = |args: &[&str]| {
            let argv = ["registry", "import", "--from", "http://source"].iter().chain(args).copied();
            Cli::try_parse_from(argv).map(|cli| match cli.command {
                Command::Import(args) => args.remote,
                other => panic!("parsed as {other:?}"),
            })
        };
        let defaults = import(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                defaults.remote_connect_timeout_ms,
                defaults.remote_timeout_ms,
                defaults.remote_max_answer_bytes,
                defaults.remote_max_pages
            ),
            (10_000, 60_000, 64 << 20, 100)
        );
        let set = import(&["--remote-timeout-ms", "300", "--remote-max-pages", "2"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((set.remote_timeout_ms, set.remote_max_pages), (300, 2));
        assert!(import(&["--remote-max-answer-bytes", "0"]).is_err());
    }

    #[test]
    fn unknown_backend_and_level_are_rejected() {
        assert!(serve(&["--backend", "cassandra"]).is_err());
        assert!(serve(&["--default-compatibility", "SIDEWAYS"]).is_err());
        assert!(serve(&["--port", "70000"]).is_err());
    }

    /// Every `env = "..."` of a command and its subcommands.
    fn env_names(command: &clap::Command) -> std::collections::BTreeSet<String> {
        let mut names: std::collections::BTreeSet<String> = command
            .get_arguments()
            .filter_map(|arg| arg.get_env())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        for sub in command.get_subcommands() {
            names.extend(env_names(sub));
        }
        names
    }

    /// (variables, host) of each row of the README's configuration table.
    fn readme_rows() -> Vec<(Vec<String>, String)> {
        let readme = include_str!("../../../README.md");
        let section = readme.split("## Configuration").nth(1).unwrap_or_default();
        let section = section.split("\n## ").next().unwrap_or_default();
        section
            .lines()
            .filter(|line| line.starts_with("| `"))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let names = cells[1].split(',').map(|name| name.trim().trim_matches('`').to_string()).collect();
                (names, cells[2].to_string())
            })
            .collect()
    }

    /// Read by the AWS store itself (`registry-store-aws`), in both hosts, not through the settings,
    /// by the exporters' service (`registry-exporter`: where exporters may send), and by the Lambda
    /// main before its settings (which handler it is).
    const READ_OUTSIDE_THE_SETTINGS: [&str; 6] = [
        "REGISTRY_TABLE",
        "REGISTRY_BUCKET",
        "REGISTRY_KMS_KEY_ARNS",
        registry_store_aws::exporter_secrets::KEY_VAR,
        registry_exporter::destination::ALLOWED_VAR,
        registry_lambda::config::HANDLER_VAR,
    ];

    #[test]
    fn every_documented_variable_is_read_by_the_hosts_the_readme_names() {
        use clap::CommandFactory;
        let serve = env_names(&Cli::command());
        let lambda = env_names(&registry_lambda::LambdaConfig::command());
        let rows = readme_rows();
        assert!(rows.len() > 15, "the configuration table was not found: {rows:?}");
        let mut documented = std::collections::BTreeSet::new();
        for (names, host) in rows {
            for name in names {
                documented.insert(name.clone());
                if READ_OUTSIDE_THE_SETTINGS.contains(&name.as_str()) {
                    continue;
                }
                // Tables without a host column (the budgets under it) apply to both hosts.
                let (by_serve, by_lambda) = match host.as_str() {
                    "serve" | "admin" => (true, false),
                    "Lambda" => (false, true),
                    _ => (true, true),
                };
                assert!(
                    !by_serve || serve.contains(&name),
                    "{name} is documented but `registry serve` does not read it"
                );
                assert!(
                    !by_lambda || lambda.contains(&name),
                    "{name} is documented but the Lambda function does not read it"
                );
            }
        }
        let runtime_set = ["AWS_LAMBDA_FUNCTION_NAME"];
        for name in serve.iter().chain(&lambda).filter(|name| !runtime_set.contains(&name.as_str())) {
            assert!(documented.contains(name), "{name} is read but not in the README's configuration table");
        }
    }
}
