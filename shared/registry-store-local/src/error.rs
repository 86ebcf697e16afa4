//! The backend's private error and its single mapping into [`StoreError`].

use registry_core::StoreError;
use rusqlite::ErrorCode;

/// What can go wrong inside this crate, before it is classified for the registry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LocalError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Corrupt(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("blocking task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("{0}")]
    Unsupported(String),
    /// No ID of the context is left to allocate (`StoreError::Limit`).
    #[error("the schema ID space of context {0} is exhausted")]
    IdsExhausted(registry_core::Context),
}

/// Shorthand for results inside this crate.
pub(crate) type LocalResult<T> = Result<T, LocalError>;

impl From<LocalError> for StoreError {
    fn from(error: LocalError) -> Self {
        match error {
            LocalError::Conflict(message) => StoreError::Conflict(message),
            LocalError::Corrupt(message) => StoreError::Corrupt(message),
            LocalError::IdsExhausted(context) => StoreError::ids_exhausted(&context),
            LocalError::Sqlite(sqlite) => from_sqlite(sqlite),
            other @ (LocalError::Io(_) | LocalError::Join(_) | LocalError::Unsupported(_)) => {
                StoreError::Other(Box::new(other))
            }
        }
    }
}

fn from_sqlite(error: rusqlite::Error) -> StoreError {
    match &error {
        rusqlite::Error::SqliteFailure(failure, _) => match failure.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => StoreError::Unavailable(error.to_string()),
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => StoreError::Corrupt(error.to_string()),
            _ => StoreError::Other(Box::new(error)),
        },
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..)
        | rusqlite::Error::Utf8Error(..) => StoreError::Corrupt(error.to_string()),
        _ => StoreError::Other(Box::new(error)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_unavailable_and_conversion_failures_are_corrupt() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(5), None);
        assert!(matches!(StoreError::from(LocalError::Sqlite(busy)), StoreError::Unavailable(_)));
        let bad = rusqlite::Error::IntegralValueOutOfRange(0, 1 << 40);
        assert!(matches!(StoreError::from(LocalError::Sqlite(bad)), StoreError::Corrupt(_)));
        assert!(matches!(StoreError::from(LocalError::Conflict("x".into())), StoreError::Conflict(_)));
    }
}
