//! Shared helpers of the schema_registry_converter suite: where the registry under test is, unique
//! topic names, and reading the Confluent wire prefix.

use schema_registry_converter::async_impl::schema_registry::SrSettings;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The registry under test, from `REGISTRY_URL` (set by `scripts/clients-test.sh`).
///
/// Panics when the variable is unset: the suite has nothing to test without a server.
pub fn registry_url() -> String {
    match std::env::var("REGISTRY_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!("REGISTRY_URL is not set: run the suite through scripts/clients-test.sh"),
    }
}

/// Converter settings for the registry under test, with no proxy, so every call goes to it.
///
/// Panics when the HTTP client cannot be built.
pub fn settings() -> SrSettings {
    SrSettings::new_builder(registry_url())
        .no_proxy()
        .build()
        .unwrap_or_else(|error| panic!("cannot build SrSettings: {error:?}"))
}

/// A topic name no other test (in this run or an earlier one on the same data) uses.
pub fn unique_topic(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
    format!("{prefix}-{}-{}-{}", std::process::id(), nanos, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The schema ID in Confluent framing (magic byte 0x00, then 4 big-endian bytes), or `None` when
/// `bytes` is not framed.
pub fn wire_id(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [0, a, b, c, d, ..] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_id_reads_the_big_endian_id_after_the_magic_byte() {
        assert_eq!(wire_id(&[0, 0, 0, 1, 2, 99]), Some(258));
        assert_eq!(wire_id(&[1, 0, 0, 0, 1]), None);
        assert_eq!(wire_id(&[0, 0, 0]), None);
    }
}
