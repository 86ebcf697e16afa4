//! A bounded cache of posted schema → stored (canonical) text, for lookups (`POST /subjects/{s}`).
//!
//! Why it is safe: parsing is a pure function of the posted text, its type, the parse options
//! (validation, normalize) and the *content* of the schemas its references resolve to. The key is a
//! SHA-256 over all of them, taken after the references were resolved by consistent reads on
//! every call, so a reference whose (subject, version) now names other content is a different
//! key. Only successful parses are cached. The cache never decides which version matches: the
//! subject's rows are still read on every lookup.

use super::support::posted_body;
use super::{NewSchema, Registry};
use crate::bounded::BoundedMap;
use crate::error::RegistryError;
use crate::model::{Context, SchemaBody};
use registry_schema::{Dependency, Validation};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes of canonical text (plus per-entry overhead) the cache keeps: 8 MiB.
pub(super) const PARSE_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// Charged per entry on top of the text (key, table slot, `Arc` header).
const ENTRY_OVERHEAD: usize = 96;

type Key = [u8; 32];

/// The cache; shared by the clones of one [`Registry`].
#[derive(Debug)]
pub(super) struct ParseCache {
    map: Mutex<BoundedMap<Key, Arc<str>>>,
}

impl ParseCache {
    pub(super) fn new(max_bytes: usize) -> ParseCache {
        ParseCache { map: Mutex::new(BoundedMap::new(max_bytes)) }
    }

    fn map(&self) -> MutexGuard<'_, BoundedMap<Key, Arc<str>>> {
        self.map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, key: &Key) -> Option<Arc<str>> {
        self.map().get(key)
    }

    fn put(&self, key: Key, text: Arc<str>) {
        let bytes = ENTRY_OVERHEAD + text.len();
        self.map().insert(key, text, bytes);
    }

    /// Entries held (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map().len()
    }
}

fn key(schema: &NewSchema, text: &str, dependencies: &[Dependency], validation: Validation, normalize: bool) -> Key {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_be_bytes());
        hash.update(bytes);
    };
    field(schema.schema_type.as_str().as_bytes());
    field(&[u8::from(validation == Validation::Strict), u8::from(normalize)]);
    field(text.as_bytes());
    for dependency in dependencies {
        field(dependency.name.as_bytes());
        field(dependency.schema_type.as_str().as_bytes());
        field(dependency.schema.as_bytes());
    }
    hash.finalize().into()
}

impl Registry {
    /// The body a posted schema would be stored as (what its fingerprint is computed from), parsed
    /// leniently as lookups parse it, from the cache when this exact input was parsed before.
    /// Errors as [`Registry::parse_new`].
    pub(super) async fn canonical_body(
        &self,
        context: &Context,
        schema: &NewSchema,
        text: &str,
        normalize: bool,
    ) -> Result<SchemaBody, RegistryError> {
        let validation = Validation::Lenient;
        let (references, dependencies) = self.resolve_references(context, schema).await?;
        let key = key(schema, text, &dependencies, validation, normalize);
        let canonical = match self.parse_cache.get(&key) {
            Some(canonical) => canonical,
            None => {
                let parsed = self
                    .parse_in_pool(schema.schema_type, text.to_string(), dependencies, validation, normalize)
                    .await?;
                let canonical: Arc<str> = Arc::from(parsed.canonical_text());
                self.parse_cache.put(key, Arc::clone(&canonical));
                canonical
            }
        };
        Ok(posted_body(schema, canonical.to_string(), references))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_kept_and_recent_entries_survive() {
        let cache = ParseCache::new(64 * 1024);
        for i in 0..1000u32 {
            let mut k = [0u8; 32];
            k[..4].copy_from_slice(&i.to_be_bytes());
            cache.put(k, Arc::from("x".repeat(200)));
        }
        assert!(cache.len() < 1000, "old entries were dropped");
        let mut last = [0u8; 32];
        last[..4].copy_from_slice(&999u32.to_be_bytes());
        assert!(cache.get(&last).is_some());
        assert!(cache.get(&[0u8; 32]).is_none());
    }

    #[test]
    fn keys_separate_type_options_text_and_dependency_content() {
        let schema = NewSchema { schema: Some("\"int\"".into()), ..NewSchema::default() };
        let dep = |text: &str| Dependency {
            name: "a".into(),
            schema_type: registry_schema::SchemaType::Avro,
            schema: text.into(),
        };
        let base = key(&schema, "\"int\"", &[dep("x")], Validation::Lenient, false);
        assert_eq!(base, key(&schema, "\"int\"", &[dep("x")], Validation::Lenient, false));
        assert_ne!(base, key(&schema, "\"int\"", &[dep("y")], Validation::Lenient, false));
        assert_ne!(base, key(&schema, "\"int\"", &[dep("x")], Validation::Strict, false));
        assert_ne!(base, key(&schema, "\"int\"", &[dep("x")], Validation::Lenient, true));
        assert_ne!(base, key(&schema, "\"long\"", &[dep("x")], Validation::Lenient, false));
        let json = NewSchema { schema_type: registry_schema::SchemaType::Json, ..schema.clone() };
        assert_ne!(base, key(&json, "\"int\"", &[dep("x")], Validation::Lenient, false));
    }
}
