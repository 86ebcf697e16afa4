//! The exporters API's errors, with the status and `error_code` Confluent's exporters API
//! documents for each (Confluent Cloud / Platform Schema Registry API reference, "Exporters (v1)":
//! 40450 not found; 40950 missing or invalid name; 40951 missing or invalid config; 40952 invalid
//! subjects; 40960 already exists; 40963 not paused; 40964 too many exporters). The HTTP layer maps
//! each variant once.

use registry_core::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ExporterError {
    /// 404 / 40450.
    #[error("Exporter '{0}' not found")]
    NotFound(String),
    /// 409 / 40950: a missing or malformed name.
    #[error("Missing or invalid exporter name: {0}")]
    InvalidName(String),
    /// 409 / 40951: a missing or invalid config, context type or context (what is wrong).
    #[error("Missing or invalid exporter config: {0}")]
    InvalidConfig(String),
    /// 409 / 40952: invalid subjects or subject rename format (what is wrong).
    #[error("Invalid exporter subjects: {0}")]
    InvalidSubjects(String),
    /// 409 / 40960.
    #[error("Exporter '{0}' already exists")]
    AlreadyExists(String),
    /// 409 / 40963: a change that needs the exporter paused first (update, config, reset, resume).
    #[error("Exporter '{0}' not paused")]
    NotPaused(String),
    /// 409 / 40964.
    #[error("Too many exporters: at most {0}")]
    TooMany(usize),
    /// 500 / 50001: a stored credential does not open with this host's key.
    #[error("{0}")]
    Secret(String),
    /// Storage failed (5xx), or kept conflicting beyond the retry budget.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ExporterError {
    /// `(HTTP status, error_code)` of this error, as Confluent answers it.
    pub fn status_and_code(&self) -> (u16, u32) {
        match self {
            ExporterError::NotFound(_) => (404, 40450),
            ExporterError::InvalidName(_) => (409, 40950),
            ExporterError::InvalidConfig(_) => (409, 40951),
            ExporterError::InvalidSubjects(_) => (409, 40952),
            ExporterError::AlreadyExists(_) => (409, 40960),
            ExporterError::NotPaused(_) => (409, 40963),
            ExporterError::TooMany(_) => (409, 40964),
            ExporterError::Secret(_) => (500, 50001),
            ExporterError::Store(StoreError::Unavailable(_)) => (503, 50003),
            ExporterError::Store(_) => (500, 50001),
        }
    }
}
