//! KEKs and DEKs as the registry stores them. Field names follow Confluent's JSON so a stored
//! record and an answer read the same; plaintext key material is not part of the model (it only
//! ever exists in an answer, see the service).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;

/// `kmsType` of AWS KMS keys (Confluent normalises every `aws*` spelling to it).
pub const AWS_KMS: &str = "aws-kms";
/// `kmsType` of Azure Key Vault keys.
pub const AZURE_KMS: &str = "azure-kms";
/// `kmsType` of Google Cloud KMS keys.
pub const GCP_KMS: &str = "gcp-kms";
/// `kmsType` of the secret-in-configuration KMS (tests and local runs).
pub const LOCAL_KMS: &str = "local-kms";

/// The first DEK version; also the version a create without one gets.
pub const MIN_VERSION: i32 = 1;

/// A key-encryption key: a pointer to a key in a KMS, never the key itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kek {
    pub name: String,
    pub kms_type: String,
    pub kms_key_id: String,
    #[serde(default)]
    pub kms_props: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The registry may use the key itself: it generates DEKs and unwraps them for readers.
    #[serde(default)]
    pub shared: bool,
    /// Milliseconds since the epoch of the last write.
    #[serde(default)]
    pub ts: i64,
    #[serde(default)]
    pub deleted: bool,
}

impl Kek {
    /// Confluent's `isEquivalent`: the same key definition, whatever its time and deleted flag.
    pub fn is_equivalent(&self, other: &Kek) -> bool {
        self.name == other.name
            && self.kms_type == other.kms_type
            && self.kms_key_id == other.kms_key_id
            && self.kms_props == other.kms_props
            && self.doc == other.doc
            && self.shared == other.shared
    }
}

/// Confluent's normalisation of `kmsType`: any `aws…`, `azure…`, `gcp…` spelling (any case)
/// becomes the canonical name; other types are kept as given.
pub fn normalize_kms_type(kms_type: &str) -> String {
    let lower = kms_type.to_lowercase();
    if lower.starts_with("aws") {
        AWS_KMS.to_owned()
    } else if lower.starts_with("azure") {
        AZURE_KMS.to_owned()
    } else if lower.starts_with("gcp") {
        GCP_KMS.to_owned()
    } else {
        kms_type.to_owned()
    }
}

registry_core::wire_names! {
    /// The DEK algorithms of Confluent's `DekFormat`, by Confluent's names.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    pub enum DekAlgorithm {
        Aes128Gcm = "AES128_GCM",
        #[default]
        Aes256Gcm = "AES256_GCM",
        Aes256Siv = "AES256_SIV",
    }
}

impl DekAlgorithm {
    pub const ALL: [DekAlgorithm; 3] = [DekAlgorithm::Aes128Gcm, DekAlgorithm::Aes256Gcm, DekAlgorithm::Aes256Siv];
}

/// An algorithm name that is not one of Confluent's.
#[derive(Debug, thiserror::Error)]
#[error("unknown DEK algorithm {0:?}")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for DekAlgorithm {
    type Err = UnknownAlgorithm;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        DekAlgorithm::from_wire_name(name).ok_or_else(|| UnknownAlgorithm(name.to_owned()))
    }
}

/// Where a DEK lives: one key per (KEK, subject, algorithm, version).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DekId {
    pub kek_name: String,
    pub subject: String,
    pub algorithm: DekAlgorithm,
    pub version: i32,
}

/// The versions of one subject's DEKs under one KEK with one algorithm: a [`DekId`] but for the
/// version, as listings and latest-version reads address them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DekSeries<'a> {
    pub kek_name: &'a str,
    pub subject: &'a str,
    pub algorithm: DekAlgorithm,
}

/// A data-encryption key as stored: only its wrapped form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dek {
    pub kek_name: String,
    pub subject: String,
    pub version: i32,
    #[serde(default)]
    pub algorithm: DekAlgorithm,
    /// Base64 of the key material wrapped by the KEK's KMS.
    pub encrypted_key_material: String,
    /// Milliseconds since the epoch of the last write.
    #[serde(default)]
    pub ts: i64,
    #[serde(default)]
    pub deleted: bool,
    /// Wrapped keys a `rewrap` replaced under a non-shared KEK, oldest first, kept in the record so that
    /// data encrypted under them stays recoverable (the registry cannot check that a client's new
    /// material wraps the same key); never in an answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub superseded_key_materials: Vec<String>,
}

/// Most wrapped keys one DEK version keeps in [`Dek::superseded_key_materials`]: with the current one
/// they fit one DynamoDB item at the largest `encryptedKeyMaterial`. A replacement past it is refused.
pub const MAX_SUPERSEDED_KEY_MATERIALS: usize = 16;

impl Dek {
    pub fn id(&self) -> DekId {
        DekId {
            kek_name: self.kek_name.clone(),
            subject: self.subject.clone(),
            algorithm: self.algorithm,
            version: self.version,
        }
    }

    /// Confluent's `isEquivalent`: the same key, whatever its time and deleted flag.
    pub fn is_equivalent(&self, other: &Dek) -> bool {
        self.id() == other.id() && self.encrypted_key_material == other.encrypted_key_material
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kms_type_normalisation_follows_confluent() {
        assert_eq!(normalize_kms_type("AWS"), AWS_KMS);
        assert_eq!(normalize_kms_type("aws-kms"), AWS_KMS);
        assert_eq!(normalize_kms_type("Azure-KMS"), AZURE_KMS);
        assert_eq!(normalize_kms_type("gcp"), GCP_KMS);
        assert_eq!(normalize_kms_type("local-kms"), LOCAL_KMS);
        assert_eq!(normalize_kms_type("HcVault"), "HcVault");
    }

    #[test]
    fn algorithm_names_round_trip_and_default_is_aes256_gcm() {
        for algorithm in DekAlgorithm::ALL {
            assert_eq!(algorithm.as_str().parse::<DekAlgorithm>().ok(), Some(algorithm));
            assert_eq!(serde_json::to_string(&algorithm).ok(), Some(format!("\"{algorithm}\"")));
        }
        assert!("AES512_GCM".parse::<DekAlgorithm>().is_err());
        assert_eq!(DekAlgorithm::default(), DekAlgorithm::Aes256Gcm);
    }

    #[test]
    fn stored_dek_json_uses_confluent_names() -> Result<(), serde_json::Error> {
        let dek = Dek {
            kek_name: "k".into(),
            subject: "s".into(),
            version: 1,
            algorithm: DekAlgorithm::Aes256Siv,
            encrypted_key_material: "ZW0=".into(),
            ts: 5,
            deleted: false,
            superseded_key_materials: Vec::new(),
        };
        let json = serde_json::to_value(&dek)?;
        assert_eq!(json["kekName"], "k");
        assert_eq!(json["encryptedKeyMaterial"], "ZW0=");
        assert_eq!(json["algorithm"], "AES256_SIV");
        assert_eq!(serde_json::from_value::<Dek>(json)?, dek);
        Ok(())
    }
}
