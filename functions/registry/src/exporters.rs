//! Schema linking on `registry serve`: the exporter service the `/exporters` routes use, and the
//! runner that keeps each exporter's destination current ([`registry_exporter::runner`]), its source
//! this registry's own router called in process. Credentials are sealed under a key kept in the data
//! directory (`exporter-credentials.key`, created on first start, readable by the owner only) on the
//! embedded store, a key that lives as long as the process on the memory store, and the KMS key
//! `REGISTRY_EXPORTER_KMS_KEY` on the aws store.

use registry_exporter::runner::{Pacing, Runner};
use registry_exporter::{ExporterService, SecretBox};
use registry_exporter_http::{HttpConnect, RouterApi};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Notify;

/// The key file's name in the data directory.
const KEY_FILE: &str = "exporter-credentials.key";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The sealing key of the embedded store in `dir`: read, or created (32 random bytes, hex).
pub fn embedded_secrets(dir: &Path) -> Result<SecretBox, BoxError> {
    let path = dir.join(KEY_FILE);
    let secret = match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().to_owned(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let text = SecretBox::generate_secret()?;
            write_private(&path, &text)?;
            text
        }
        Err(error) => return Err(format!("cannot read {}: {error}", path.display()).into()),
    };
    if secret.is_empty() {
        return Err(format!("{} is empty", path.display()).into());
    }
    Ok(SecretBox::new(secret.as_bytes())?)
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> Result<(), BoxError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| format!("cannot create {}: {error}", path.display()))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> Result<(), BoxError> {
    std::fs::write(path, text).map_err(|error| format!("cannot create {}: {error}", path.display()).into())
}

/// The exporter service's runner started with `source` (the registry's own router without
/// authentication) as the source. The returned [`Notify`] is to be notified after every write the
/// server serves.
pub fn start(service: ExporterService, source: axum::Router, pacing: Pacing) -> (Arc<ExporterService>, Arc<Notify>) {
    let trigger = Arc::new(Notify::new());
    Runner::new(service.clone(), Arc::new(RouterApi::new(source)), Arc::new(HttpConnect), pacing)
        .spawn(trigger.clone());
    (Arc::new(service), trigger)
}

/// Middleware: notifies `trigger` after every request that is not a read.
pub async fn notify_writes(
    trigger: Arc<Notify>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let write = !matches!(*request.method(), axum::http::Method::GET | axum::http::Method::HEAD);
    let response = next.run(request).await;
    if write && response.status().is_success() {
        trigger.notify_one();
    }
    response
}
