//! `Guid`: a schema's CP 8 identity (Confluent's MD5 over text, references, metadata and rule
//! set), the key of the guid → fingerprint index ([`crate::Store::bind_guid`]).

use super::SchemaBody;
use std::fmt;

/// The 16 bytes of a schema's guid. `Display` prints Java's `UUID.toString()` (8-4-4-4-12
/// lower-case hex), the form Confluent serves; [`Guid::parse`] reads it back in any case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub [u8; 16]);

impl Guid {
    /// The guid of a stored body: [`crate::registry::contracts::guid`] over its text,
    /// references, metadata and rule set. Pure; equal bodies always have equal guids.
    pub fn of(body: &SchemaBody) -> Guid {
        crate::registry::contracts::guid_of(
            &body.schema,
            &body.references,
            body.metadata.as_ref(),
            body.rule_set.as_ref(),
        )
    }

    /// Reads the 8-4-4-4-12 hex form (either case); `None` for anything else.
    pub fn parse(text: &str) -> Option<Guid> {
        let groups: Vec<&str> = text.split('-').collect();
        let shaped = groups.len() == 5
            && groups
                .iter()
                .zip([8, 4, 4, 4, 12])
                .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
        if !shaped {
            return None;
        }
        let hex: Vec<u8> = groups.concat().into_bytes();
        let mut bytes = [0u8; 16];
        for (byte, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
            let text = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(text, 16).ok()?;
        }
        Some(Guid(bytes))
    }

    /// 32 lower-case hex digits, no dashes: the form stores use in keys.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(32);
        for byte in self.0 {
            hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
            hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
        }
        hex
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.to_hex();
        write!(f, "{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_text_round_trips_in_either_case() {
        let text = "095d71cf-1255-6b9d-5e33-0ad575b3df5d";
        let guid = Guid::parse(text);
        assert_eq!(guid.map(|g| g.to_string()).as_deref(), Some(text));
        assert_eq!(Guid::parse(&text.to_ascii_uppercase()), guid);
        assert_eq!(guid.map(|g| g.to_hex()).as_deref(), Some("095d71cf12556b9d5e330ad575b3df5d"));
    }

    #[test]
    fn other_shapes_are_not_guids() {
        for bad in [
            "095d71cf12556b9d5e330ad575b3df5d",
            "095d71cf-1255-6b9d-5e33-0ad575b3df5",
            "095d71cf-1255-6b9d-5e33-0ad575b3df5dd",
            "095d71cg-1255-6b9d-5e33-0ad575b3df5d",
            "095d71cf-1255-6b9d-5e33+0ad575b3df5d",
            "",
        ] {
            assert_eq!(Guid::parse(bad), None, "{bad:?}");
        }
    }
}
