//! The `registry` command: parses the command line and runs the chosen subcommand.

mod access_line;
mod admin;
mod aws_init;
mod config;
mod exporters;
mod log_writer;
mod passwd;
mod serve;
mod store;

use access_line::AccessLine;
use clap::Parser;
use config::{Cli, Command, LogFormat};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

/// The server's allocator. Under load glibc's took about a tenth of the server's CPU (`perf`):
/// chunks over 1 KiB and per-thread caches drained by frees on the other worker went through its
/// arenas (`_int_malloc`, `malloc_consolidate`); mimalloc's per-thread pages took half that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let started = Instant::now();
    let cli = Cli::parse();
    let (_flushed, access_line) = init_tracing(&cli.log, cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match cli.command {
        Command::Serve(config) => runtime.block_on(serve::run(*config, started, access_line)),
        Command::AwsInit => runtime.block_on(aws_init::run()),
        Command::Passwd(args) => passwd::run(&args),
        Command::Import(args) => runtime.block_on(admin::import(*args)),
        Command::Export(args) => runtime.block_on(admin::export(*args)),
        Command::Prune(args) => runtime.block_on(admin::prune(*args)),
        Command::CapVersions(args) => runtime.block_on(admin::cap_versions(*args)),
        Command::Report(args) => runtime.block_on(admin::report(*args)),
        Command::RestoreCheck(args) => runtime.block_on(admin::restore_check(args)),
        Command::Failover(args) => runtime.block_on(admin::failover(args)),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr through the writer thread ([`log_writer`]); the guard writes out what is still
/// queued when `main` returns. With it, the access line `registry serve` writes by hand through the
/// same writer ([`access_line`]), unless the lines are colored (text on a terminal).
fn init_tracing(filter: &str, format: LogFormat) -> (log_writer::Flushed, Option<AccessLine>) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(config::DEFAULT_LOG));
    let (writer, flushed) = log_writer::queued_stderr();
    let colored = format == LogFormat::Text && std::io::stderr().is_terminal();
    let access_line = (!colored).then(|| AccessLine::new(writer.clone(), format));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_writer(writer);
    match format {
        LogFormat::Json => builder.json().with_ansi(false).init(),
        LogFormat::Text => builder.with_ansi(colored).init(),
    }
    (flushed, access_line)
}
