//! The command line and every environment variable the `registry` binary reads (the only place it reads them).

use clap::{Parser, Subcommand, ValueEnum};
use registry_core::CompatibilityLevel;
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

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. Later issues add admin subcommands here.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Confluent REST API over HTTP until SIGINT or SIGTERM.
    Serve(ServeConfig),
    /// Create the DynamoDB table and S3 bucket (`REGISTRY_TABLE`, `REGISTRY_BUCKET`) if they do
    /// not exist, with the module's definitions. For emulators and first runs (`make run-aws`).
    AwsInit,
    /// Add or replace a user in the users file (`REGISTRY_USERS_FILE`); the password is read from stdin.
    Passwd(crate::passwd::PasswdArgs),
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

    /// `Cache-Control` of the immutable `GET /schemas/ids/{id}` answers (empty: none). See
    /// `registry_http::http_cache` for why the default is safe and when to choose `no-cache`.
    #[arg(long, env = "REGISTRY_ID_CACHE_CONTROL", default_value = registry_http::http_cache::DEFAULT_ID_CACHE_CONTROL)]
    pub id_cache_control: String,
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
    }

    #[test]
    fn unknown_backend_and_level_are_rejected() {
        assert!(serve(&["--backend", "cassandra"]).is_err());
        assert!(serve(&["--default-compatibility", "SIDEWAYS"]).is_err());
        assert!(serve(&["--port", "70000"]).is_err());
    }
}
