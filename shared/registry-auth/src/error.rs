//! `AuthError`: configuration and users-file failures (never a request outcome, never a secret).

/// Loading or saving the auth configuration failed. Messages name files, lines and variables, never a
/// password or a hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A users-file line is not a valid entry.
    #[error("users file line {line}: {reason}")]
    UsersFile {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// The JWKS or the issuer/audience settings are unusable.
    #[error("JWKS: {0}")]
    Jwks(String),
    /// Environment variables are missing or contradict each other.
    #[error("auth configuration: {0}")]
    Config(String),
    /// Hashing a password failed (bad cost parameters or no randomness).
    #[error("password hashing: {0}")]
    Hash(String),
}
