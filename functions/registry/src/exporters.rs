//! Schema linking on `registry serve` (run in process by [`registry_app::Exporters::Run`], its source
//! this registry's own router): what seals the credentials. They are sealed under a key kept in the data
//! directory (`exporter-credentials.key`, created on first start, readable by the owner only) on the
//! embedded store, a key that lives as long as the process on the memory store, and the KMS key
//! `REGISTRY_EXPORTER_KMS_KEY` on the aws store.

use registry_exporter::SecretBox;
use std::path::Path;

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
