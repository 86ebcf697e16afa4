//! Argon2id password hashing (PHC strings with a random salt) and constant-time verification.

use crate::error::AuthError;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

/// Cost parameters of a new hash. [`HashCost::DEFAULT`] is argon2's default (19 MiB, 2 passes), the OWASP
/// minimum for argon2id; tests use [`HashCost::TEST`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashCost {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes over memory.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
}

impl HashCost {
    /// argon2's defaults: m=19456 KiB, t=2, p=1.
    pub const DEFAULT: HashCost = HashCost {
        memory_kib: Params::DEFAULT_M_COST,
        iterations: Params::DEFAULT_T_COST,
        parallelism: Params::DEFAULT_P_COST,
    };
    /// The cheapest parameters argon2 accepts: for tests only, never for real users.
    pub const TEST: HashCost = HashCost { memory_kib: 8, iterations: 1, parallelism: 1 };
}

/// Hashes `password` with argon2id and a fresh random salt into a PHC string
/// (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`). Two calls never return the same string.
pub fn hash_password(password: &str, cost: HashCost) -> Result<String, AuthError> {
    let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
        .map_err(|error| AuthError::Hash(error.to_string()))?;
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let hash = argon2.hash_password(password.as_bytes()).map_err(|error| AuthError::Hash(error.to_string()))?;
    Ok(hash.to_string())
}

/// Whether `phc` is an argon2 PHC string this crate can verify against (used when loading users).
pub fn is_valid_hash(phc: &str) -> bool {
    argon2::password_hash::phc::PasswordHash::new(phc)
        .map(|hash| hash.algorithm.as_str().starts_with("argon2") && hash.hash.is_some())
        .unwrap_or(false)
}

/// Whether `password` matches `phc`, using the parameters stored in `phc`. The comparison of the
/// derived key is constant-time; a malformed `phc` never matches.
pub fn verify_password(password: &str, phc: &str) -> bool {
    Argon2::default().verify_password(password.as_bytes(), phc).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_only_their_password() {
        let hash = hash_password("correct horse", HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
        assert!(hash.starts_with("$argon2id$v=19$m=8,t=1,p=1$"), "{hash}");
        assert!(is_valid_hash(&hash));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("correct horsf", &hash));
        assert!(!verify_password("", &hash));
    }

    #[test]
    fn salts_differ() {
        let first = hash_password("same", HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
        let second = hash_password("same", HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(first, second);
        assert!(verify_password("same", &first) && verify_password("same", &second));
    }

    #[test]
    fn malformed_hashes_never_match() {
        for bad in ["", "plain-text-password", "$argon2id$v=19$m=8,t=1,p=1$", "$2b$12$abcdefghijklmnopqrstuv"] {
            assert!(!is_valid_hash(bad), "{bad}");
            assert!(!verify_password("plain-text-password", bad), "{bad}");
        }
    }

    #[test]
    fn default_cost_is_argon2_default() {
        let hash = hash_password("pw", HashCost::DEFAULT).unwrap_or_else(|e| panic!("{e}"));
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");
    }
}
