//! Confluent's input checks of KEK names, subjects and KMS key IDs (`DekRegistryResource`,
//! `CreateKekRequest.validate`).

use crate::error::DekError;
use crate::model::{AWS_KMS, AZURE_KMS, GCP_KMS, normalize_kms_type};

/// Longest KEK name.
pub const NAME_MAX_LENGTH: usize = 256;

/// A KEK name: 1..=256 characters, a letter or `_` first, then letters, digits, `_` or `-`.
pub fn check_name(name: &str) -> Result<(), DekError> {
    let mut chars = name.chars();
    let valid_first = chars.next().is_some_and(|first| first.is_alphabetic() || first == '_');
    let valid_rest = chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if valid_first && valid_rest && name.chars().count() <= NAME_MAX_LENGTH {
        Ok(())
    } else {
        Err(DekError::InvalidKey("name".into()))
    }
}

/// A DEK subject: not empty, no control characters.
pub fn check_subject(subject: &str) -> Result<(), DekError> {
    if subject.is_empty() || subject.chars().any(char::is_control) {
        return Err(DekError::InvalidKey("subject".into()));
    }
    Ok(())
}

/// The minimal key ID checks Confluent makes per KMS type (the KMS checks the rest).
pub fn check_kms_key_id(kms_type: &str, kms_key_id: &str) -> Result<(), DekError> {
    let valid = match normalize_kms_type(kms_type).as_str() {
        AWS_KMS => kms_key_id.starts_with("arn:aws:kms:"),
        AZURE_KMS => kms_key_id.starts_with("https://"),
        GCP_KMS => kms_key_id.starts_with("projects/"),
        _ if kms_type == "hcvault" => kms_key_id.starts_with("https://") || kms_key_id.starts_with("http://"),
        _ => true,
    };
    if valid { Ok(()) } else { Err(DekError::InvalidKey("kmsKeyId".into())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_confluent() {
        for good in ["k", "_k", "kek-1_a", "Ünïcode"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        let too_long = "k".repeat(NAME_MAX_LENGTH + 1);
        for bad in ["", "1k", "-k", "k.k", "k/k", "k k", too_long.as_str()] {
            assert!(matches!(check_name(bad), Err(DekError::InvalidKey(field)) if field == "name"), "{bad}");
        }
    }

    #[test]
    fn subjects_refuse_empty_and_control_characters() {
        assert!(check_subject("orders-value").is_ok());
        assert!(check_subject(":.ctx:orders").is_ok());
        assert!(check_subject("").is_err());
        assert!(check_subject("a\nb").is_err());
    }

    #[test]
    fn key_ids_checked_per_kms_type() {
        assert!(check_kms_key_id("aws-kms", "arn:aws:kms:us-east-1:1:key/x").is_ok());
        assert!(check_kms_key_id("AWS", "key/x").is_err());
        assert!(check_kms_key_id("gcp-kms", "projects/p").is_ok());
        assert!(check_kms_key_id("azure-kms", "http://vault").is_err());
        assert!(check_kms_key_id("hcvault", "http://vault").is_ok());
        assert!(check_kms_key_id("local-kms", "anything").is_ok());
    }
}
