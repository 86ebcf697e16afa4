//! Fresh DEK key material in the format Confluent's clients decrypt with: the serialized Tink key
//! proto of the algorithm (`AesGcmKey` for the GCM algorithms, `AesSivKey` for AES256_SIV),
//! version 0, with random key bytes.

use crate::model::DekAlgorithm;
use aws_lc_rs::error::Unspecified;

/// `AesGcmKey.key_value` is field 3, `AesSivKey.key_value` field 2 (both `bytes`, wire type 2);
/// `version` 0 is the proto3 default and is not written.
fn key_field_tag(algorithm: DekAlgorithm) -> u8 {
    match algorithm {
        DekAlgorithm::Aes128Gcm | DekAlgorithm::Aes256Gcm => (3 << 3) | 2,
        DekAlgorithm::Aes256Siv => (2 << 3) | 2,
    }
}

/// Key bytes per algorithm (AES256_SIV holds two 256-bit keys).
pub fn key_size(algorithm: DekAlgorithm) -> usize {
    match algorithm {
        DekAlgorithm::Aes128Gcm => 16,
        DekAlgorithm::Aes256Gcm => 32,
        DekAlgorithm::Aes256Siv => 64,
    }
}

/// A new random key of `algorithm`, serialized as the client's Tink key proto.
pub fn generate_key_material(algorithm: DekAlgorithm) -> Result<Vec<u8>, Unspecified> {
    let size = key_size(algorithm);
    let mut material = vec![0u8; size + 2];
    material[0] = key_field_tag(algorithm);
    // Sizes are at most 64: a one-byte varint length.
    material[1] = size as u8;
    aws_lc_rs::rand::fill(&mut material[2..])?;
    Ok(material)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_material_is_the_tink_key_proto_of_the_algorithm() -> Result<(), Unspecified> {
        let gcm = generate_key_material(DekAlgorithm::Aes256Gcm)?;
        assert_eq!(&gcm[..2], &[0x1a, 32]);
        assert_eq!(gcm.len(), 34);
        assert_eq!(&generate_key_material(DekAlgorithm::Aes128Gcm)?[..2], &[0x1a, 16]);
        let siv = generate_key_material(DekAlgorithm::Aes256Siv)?;
        assert_eq!(&siv[..2], &[0x12, 64]);
        assert_eq!(siv.len(), 66);
        assert_ne!(generate_key_material(DekAlgorithm::Aes256Gcm)?, gcm, "keys are random");
        Ok(())
    }
}
