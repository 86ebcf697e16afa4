//! `lambda-emulator`: serves a Lambda function binary as a Function URL on a local port, under the
//! Runtime API emulator of `api_tests::lambda` (for scripts/clients-test.sh and manual runs).
//!
//! Usage: `lambda-emulator [--port 9000] [--instances 4] [--timeout-secs 60] [--log FILE] [BINARY]`
//! (BINARY defaults to `registry-lambda` next to this executable). The function gets this process's
//! environment (`REGISTRY_TABLE`, `AWS_ENDPOINT_URL`, ...). Requests go to plain paths
//! (`http://127.0.0.1:9000/subjects`). Prints one line when the first instance is ready, with its
//! init time (spawn → first `GET /runtime/invocation/next`); on SIGTERM or Ctrl-C kills the
//! instances by PID, prints every instance's init time and exits.

use api_tests::lambda::{FunctionConfig, LambdaEmulator, function_binary};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn usage(problem: &str) -> ExitCode {
    eprintln!("lambda-emulator: {problem}");
    eprintln!("usage: lambda-emulator [--port N] [--instances N] [--timeout-secs N] [--log FILE] [BINARY]");
    ExitCode::from(2)
}

fn millis(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

#[tokio::main]
async fn main() -> ExitCode {
    let (mut port, mut instances, mut timeout, mut log, mut binary) = (9000u16, 4usize, 60u64, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
        let parsed = match arg.as_str() {
            "--port" => value("--port").and_then(|v| v.parse().map(|v| port = v).map_err(|e| format!("--port: {e}"))),
            "--instances" => value("--instances")
                .and_then(|v| v.parse().map(|v: usize| instances = v.max(1)).map_err(|e| format!("--instances: {e}"))),
            "--timeout-secs" => value("--timeout-secs")
                .and_then(|v| v.parse().map(|v| timeout = v).map_err(|e| format!("--timeout-secs: {e}"))),
            "--log" => value("--log").map(|v| log = Some(PathBuf::from(v))),
            flag if flag.starts_with('-') => Err(format!("unknown flag {flag}")),
            path => {
                binary = Some(PathBuf::from(path));
                Ok(())
            }
        };
        if let Err(problem) = parsed {
            return usage(&problem);
        }
    }
    let binary = binary.unwrap_or_else(function_binary);
    let mut config = FunctionConfig::new(&binary, Vec::new());
    config.max_instances = instances;
    config.timeout = Duration::from_secs(timeout);
    config.log = log;
    let function = match LambdaEmulator::start(config, port).await {
        Ok(function) => function,
        Err(error) => {
            eprintln!("lambda-emulator: {error}");
            return ExitCode::FAILURE;
        }
    };
    match function.first_init().await {
        Ok(init) => eprintln!(
            "lambda-emulator: {} serves {} as a Function URL (instance 1 init, spawn → first /runtime/invocation/next: {})",
            function.url(),
            binary.display(),
            millis(init)
        ),
        Err(error) => {
            eprintln!("lambda-emulator: {error}");
            function.stop().await;
            return ExitCode::FAILURE;
        }
    }
    let terminated = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated => {}
    }
    let inits: Vec<String> = function.init_times().into_iter().map(millis).collect();
    eprintln!("lambda-emulator: stopping; {} instance(s), init times {}", inits.len(), inits.join(", "));
    function.stop().await;
    ExitCode::SUCCESS
}
