//! The content address of a schema: SHA-256 over what makes two registrations "the same schema".
//!
//! Confluent's identity (§6.1 of the API notes) is MD5 over the stored text, then each reference
//! (name, subject, version) in order, then metadata and rule set when present. We hash the same
//! fields with SHA-256, plus the schema type: the fingerprint is also the S3 key of the stored
//! body, and that body records its type, so two formats with byte-identical text (possible: an
//! Avro record is also a valid JSON Schema document) must not share one body.
//!
//! Every field is length-prefixed so that no two different inputs hash the same byte stream.

use crate::{SchemaReference, SchemaType};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// SHA-256 content address of a stored schema body. Displays as 64 lower-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// Fingerprint of a schema: its type, stored text, references (order matters, as in
    /// Confluent) and the optional data-contract parts, given as compact JSON text.
    pub fn of(
        schema_type: SchemaType,
        canonical_text: &str,
        references: &[SchemaReference],
        metadata: Option<&str>,
        rule_set: Option<&str>,
    ) -> Fingerprint {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_be_bytes());
            hasher.update(bytes);
        };
        field(b"schema-registry/v1");
        field(schema_type.as_str().as_bytes());
        field(canonical_text.as_bytes());
        field(&(references.len() as u64).to_be_bytes());
        for reference in references {
            field(reference.name.as_bytes());
            field(reference.subject.as_bytes());
            field(&reference.version.to_be_bytes());
        }
        field(metadata.unwrap_or("").as_bytes());
        field(rule_set.unwrap_or("").as_bytes());
        Fingerprint(hasher.finalize().into())
    }

    /// Lower-case hex, the form used in storage keys.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", self.to_hex())
    }
}

/// Error for a string that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a SHA-256 fingerprint: {0:?}")]
pub struct BadFingerprint(pub String);

impl FromStr for Fingerprint {
    type Err = BadFingerprint;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(s, &mut bytes).map_err(|_| BadFingerprint(s.to_string()))?;
        Ok(Fingerprint(bytes))
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str, version: i32) -> SchemaReference {
        SchemaReference { name: name.into(), subject: "s".into(), version }
    }

    #[test]
    fn hex_round_trips() {
        let fp = Fingerprint::of(SchemaType::Avro, "\"string\"", &[], None, None);
        assert_eq!(fp.to_hex().len(), 64);
        assert_eq!(fp.to_hex().parse::<Fingerprint>(), Ok(fp));
        assert!("xyz".parse::<Fingerprint>().is_err());
    }

    #[test]
    fn every_identity_field_changes_the_fingerprint() {
        let base = Fingerprint::of(SchemaType::Avro, "\"string\"", &[], None, None);
        assert_ne!(base, Fingerprint::of(SchemaType::Json, "\"string\"", &[], None, None));
        assert_ne!(base, Fingerprint::of(SchemaType::Avro, "\"int\"", &[], None, None));
        assert_ne!(base, Fingerprint::of(SchemaType::Avro, "\"string\"", &[reference("a", 1)], None, None));
        assert_ne!(base, Fingerprint::of(SchemaType::Avro, "\"string\"", &[], Some("{}"), None));
        assert_ne!(base, Fingerprint::of(SchemaType::Avro, "\"string\"", &[], None, Some("{}")));
    }

    #[test]
    fn reference_order_matters_and_fields_do_not_run_together() {
        let ab = Fingerprint::of(SchemaType::Avro, "x", &[reference("a", 1), reference("b", 1)], None, None);
        let ba = Fingerprint::of(SchemaType::Avro, "x", &[reference("b", 1), reference("a", 1)], None, None);
        assert_ne!(ab, ba);
        let split1 = Fingerprint::of(SchemaType::Avro, "x", &[reference("ab", 1)], None, None);
        let split2 = Fingerprint::of(SchemaType::Avro, "x", &[reference("a", 1)], None, None);
        assert_ne!(split1, split2);
    }
}
