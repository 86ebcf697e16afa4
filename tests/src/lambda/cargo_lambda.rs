//! The function under cargo-lambda's own runtime emulator (`cargo lambda watch`), the tool a Rust
//! Lambda developer runs locally, instead of the project's ([`super::LambdaEmulator`]): with
//! `API_LAMBDA_RUNTIME=cargo-lambda`, every `lambda::<case>` starts `cargo lambda watch` on a port
//! of its own with the case's environment, and sends its requests to the Function URL path
//! cargo-lambda serves (`/lambda-url/registry-lambda/...`). cargo-lambda hands every invocation the
//! constant deadline `600000` and runs the function with `cargo run`, so the function is the debug
//! build the suite already made (found through `CARGO_TARGET_DIR` like every cargo command).
//!
//! The executable is `CARGO_LAMBDA` when set (scripts/test.sh points it at the project's venv),
//! else `cargo-lambda` on `PATH`. Each watch runs in a process group of its own, killed whole (the
//! watcher, `cargo run` and the function) when the case ends or the value is dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The variable that selects cargo-lambda's emulator for the lambda cases.
pub const RUNTIME_VAR: &str = "API_LAMBDA_RUNTIME";

/// Whether the lambda cases run under `cargo lambda watch` (`API_LAMBDA_RUNTIME=cargo-lambda`).
pub fn selected() -> bool {
    std::env::var(RUNTIME_VAR).is_ok_and(|runtime| runtime == "cargo-lambda")
}

/// Connection attempts while `cargo lambda watch` starts its server, 100 ms apart: a work count
/// that only a watcher that never listens reaches.
const START_ATTEMPTS: usize = 3000;

/// A running `cargo lambda watch` serving `registry-lambda`.
#[derive(Debug)]
pub struct CargoLambdaWatch {
    child: std::process::Child,
    url: String,
}

impl CargoLambdaWatch {
    /// Starts `cargo lambda watch` for `registry-lambda` with `env` added to this process's
    /// environment (the function inherits it), its output appended to `log`, and waits until it
    /// accepts connections.
    pub async fn start(env: &[(String, String)], log: &Path) -> Result<CargoLambdaWatch, String> {
        let port = free_port()?;
        let output = std::fs::OpenOptions::new().create(true).append(true).open(log);
        let output = output.map_err(|e| format!("{}: {e}", log.display()))?;
        let errors = output.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
        let executable = std::env::var_os("CARGO_LAMBDA").map_or_else(|| PathBuf::from("cargo-lambda"), PathBuf::from);
        let mut command = std::process::Command::new(&executable);
        command
            .args(["lambda", "watch", "--package", "registry-lambda", "--invoke-address", "127.0.0.1"])
            .args(["--invoke-port", &port.to_string(), "--ignore-changes", "--quiet"])
            .current_dir(workspace_root())
            .envs(env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(errors);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().map_err(|e| format!("{}: {e}", executable.display()))?;
        let watch = CargoLambdaWatch { child, url: format!("http://127.0.0.1:{port}/lambda-url/registry-lambda") };
        // Only a TCP connection: a request to `/` would start an instance of a function named `_`.
        for _ in 0..START_ATTEMPTS {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(watch);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("cargo lambda watch never listened on {port} (its output: {})", log.display()))
    }

    /// The base URL of the function (its Function URL path on cargo-lambda's server).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills the watcher's process group (the watcher, `cargo run` and the function) and reaps it.
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for CargoLambdaWatch {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// The workspace's root: `cargo lambda watch` reads its `Cargo.toml`.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|e| format!("no free port: {e}"))
}
