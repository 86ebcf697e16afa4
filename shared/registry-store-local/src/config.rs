//! `LocalConfig`: where the embedded store keeps its data, read from the environment in one place.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable naming the data directory.
pub const DATA_DIR_VAR: &str = "REGISTRY_DATA_DIR";

/// The data directory used when [`DATA_DIR_VAR`] is unset or empty.
pub const DEFAULT_DATA_DIR: &str = "./data";

/// Settings of the embedded store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// Directory holding the database; created on open if missing.
    pub data_dir: PathBuf,
}

impl LocalConfig {
    /// Reads [`DATA_DIR_VAR`] (default [`DEFAULT_DATA_DIR`]). The only place this crate reads
    /// the environment.
    pub fn from_env() -> LocalConfig {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// As [`LocalConfig::from_env`], with variables looked up through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> LocalConfig {
        let data_dir =
            lookup(DATA_DIR_VAR).filter(|dir| !dir.is_empty()).unwrap_or_else(|| OsString::from(DEFAULT_DATA_DIR));
        LocalConfig { data_dir: PathBuf::from(data_dir) }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_comes_from_the_variable_or_defaults() {
        let set = LocalConfig::from_lookup(|name| (name == DATA_DIR_VAR).then(|| OsString::from("/var/lib/registry")));
        assert_eq!(set.data_dir, PathBuf::from("/var/lib/registry"));
        assert_eq!(LocalConfig::from_lookup(|_| None).data_dir, PathBuf::from("./data"));
        assert_eq!(LocalConfig::from_lookup(|_| Some(OsString::new())).data_dir, PathBuf::from("./data"));
    }
}
