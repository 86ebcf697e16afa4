//! Confluent's input checks of KEK names, subjects and KMS key IDs (`DekRegistryResource`,
//! `CreateKekRequest.validate`).

use crate::error::DekError;
use crate::model::{AWS_KMS, AZURE_KMS, GCP_KMS, normalize_kms_type};

/// Longest KEK name.
pub const NAME_MAX_LENGTH: usize = 256;

/// Longest DEK subject, in bytes: the bound of registry subjects (a store may key by the subject;
/// DynamoDB sort keys hold 1024 bytes). Confluent sets none.
pub const SUBJECT_MAX_BYTES: usize = registry_core::Subject::MAX_BYTES;

/// Longest `doc`, `kmsProps` (keys and values together) and `encryptedKeyMaterial`, in bytes.
/// Far above real values (a wrapped key is a few hundred bytes), and low enough that a KEK or DEK
/// record fits one DynamoDB item (400 KB) even with every character escaped in its JSON.
/// Confluent sets none.
pub const FIELD_MAX_BYTES: usize = 16 * 1024;

/// Longest `kmsKeyId`, in bytes (a KMS key ARN is under 300).
pub const KMS_KEY_ID_MAX_BYTES: usize = 2048;

/// Longest `kmsType`, in bytes (Confluent's types are a few characters: `aws-kms`, `hcvault`).
pub const KMS_TYPE_MAX_BYTES: usize = 256;

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

/// A DEK subject: not empty, no control characters, at most [`SUBJECT_MAX_BYTES`].
pub fn check_subject(subject: &str) -> Result<(), DekError> {
    if subject.is_empty() || subject.len() > SUBJECT_MAX_BYTES || subject.chars().any(char::is_control) {
        return Err(DekError::InvalidKey("subject".into()));
    }
    Ok(())
}

/// A field of `bytes` bytes where at most `max` fit: 42271 naming the field above it.
pub fn check_size(field: &str, bytes: usize, max: usize) -> Result<(), DekError> {
    if bytes > max { Err(DekError::InvalidKey(field.into())) } else { Ok(()) }
}

/// The bytes `kmsProps` holds, keys and values together.
pub fn props_bytes(props: &std::collections::BTreeMap<String, String>) -> usize {
    props.iter().map(|(key, value)| key.len() + value.len()).sum()
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
        assert!(check_subject(&"s".repeat(SUBJECT_MAX_BYTES)).is_ok());
        let too_long = "s".repeat(SUBJECT_MAX_BYTES + 1);
        assert!(matches!(check_subject(&too_long), Err(DekError::InvalidKey(field)) if field == "subject"));
    }

    #[test]
    fn sizes_are_bounded_per_field() {
        assert!(check_size("doc", FIELD_MAX_BYTES, FIELD_MAX_BYTES).is_ok());
        assert!(
            matches!(check_size("doc", FIELD_MAX_BYTES + 1, FIELD_MAX_BYTES), Err(DekError::InvalidKey(field)) if field == "doc")
        );
        let props = std::collections::BTreeMap::from([("k".to_owned(), "vv".to_owned())]);
        assert_eq!(props_bytes(&props), 3);
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
