//! A bounded, short-lived memory of lookup answers (`POST /subjects/{s}`), so the stampede of a
//! Kafka Connect rebalance (every converter looking up its schema at once) is answered from
//! memory instead of reading the subject's rows and config on every request (measured: those
//! reads were most of the lookup's cost and all of its tail latency).
//!
//! What an answer depends on: the subject's rows, the effective `normalize` config, and the rows
//! its references name. This process forgets every remembered lookup after each write of rows or
//! config it makes (register, import, soft and hard deletes, config changes; see
//! [`super::recent`] for why a racing read is never kept), so it never answers from before its own
//! write. Another process or function instance may keep answering a lookup for at most
//! [`super::RegistrySettings::lookup_ttl`] after a change made elsewhere (a soft delete of the
//! matching version, say); Confluent's own clients cache lookup answers for far longer. Only
//! successful lookups are remembered: a schema registered elsewhere is found on the next request.

use super::recent::Recent;
use super::{LookupOptions, NewSchema, Registry};
use crate::model::SchemaRecord;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// Default [`super::RegistrySettings::lookup_ttl`].
pub const DEFAULT_LOOKUP_TTL: Duration = Duration::from_secs(5);

/// Bytes of remembered answers (schema text plus per-entry overhead): 16 MiB.
const MAX_BYTES: usize = 16 * 1024 * 1024;

/// Charged per answer on top of its schema text (key, table slot, record fields).
const ENTRY_OVERHEAD: usize = 256;

/// SHA-256 over everything the request says: subject, posted schema and options.
pub(super) type LookupKey = [u8; 32];

/// Lookup answers by request (shared, so a hit clones a pointer under the lock, not the schema).
pub(super) type RecentLookups = Recent<LookupKey, Arc<SchemaRecord>>;

/// Shards of the lookup memory, each a quarter of the bytes (so an answer of up to 2 MiB is kept).
const SHARDS: usize = 4;

pub(super) fn recent_lookups() -> RecentLookups {
    Recent::sharded(MAX_BYTES, SHARDS)
}

/// The key of a lookup request. Every part is length-prefixed, so no two requests share a key.
pub(super) fn lookup_key(subject: &str, schema: &NewSchema, options: LookupOptions) -> LookupKey {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_be_bytes());
        hash.update(bytes);
    };
    field(subject.as_bytes());
    field(&[u8::from(options.normalize), u8::from(options.include_deleted)]);
    field(schema.schema_type.as_str().as_bytes());
    field(schema.schema.as_deref().unwrap_or_default().as_bytes());
    field(&(schema.references.len() as u64).to_be_bytes());
    for reference in &schema.references {
        field(reference.name.as_bytes());
        field(reference.subject.as_bytes());
        field(&reference.version.to_be_bytes());
    }
    let json = |value: &Option<serde_json::Value>| value.as_ref().map(serde_json::Value::to_string).unwrap_or_default();
    field(json(&schema.metadata).as_bytes());
    field(json(&schema.rule_set).as_bytes());
    hash.finalize().into()
}

/// What a remembered answer costs toward [`MAX_BYTES`].
pub(super) fn answer_cost(record: &SchemaRecord) -> usize {
    ENTRY_OVERHEAD + record.subject.as_str().len() + record.body.schema.len()
}

impl Registry {
    /// Forgets every remembered lookup answer. Called after each write of rows or config this
    /// process makes, whatever its outcome (a failed write may still have been applied).
    pub(super) fn forget_lookups(&self) {
        self.recent_lookups.forget_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_schema::{SchemaReference, SchemaType};

    #[test]
    fn keys_separate_every_part_of_the_request() {
        let schema = NewSchema { schema: Some("\"int\"".into()), ..NewSchema::default() };
        let options = LookupOptions::default();
        let base = lookup_key("s", &schema, options);
        assert_eq!(base, lookup_key("s", &schema.clone(), options));
        assert_ne!(base, lookup_key("t", &schema, options));
        assert_ne!(base, lookup_key("s", &schema, LookupOptions { normalize: true, ..options }));
        assert_ne!(base, lookup_key("s", &schema, LookupOptions { include_deleted: true, ..options }));
        let other_text = NewSchema { schema: Some("\"long\"".into()), ..schema.clone() };
        assert_ne!(base, lookup_key("s", &other_text, options));
        let json = NewSchema { schema_type: SchemaType::Json, ..schema.clone() };
        assert_ne!(base, lookup_key("s", &json, options));
        let reference = |version| SchemaReference { name: "a".into(), subject: "b".into(), version };
        let referencing = NewSchema { references: vec![reference(1)], ..schema.clone() };
        assert_ne!(base, lookup_key("s", &referencing, options));
        let other_version = NewSchema { references: vec![reference(2)], ..schema.clone() };
        assert_ne!(lookup_key("s", &referencing, options), lookup_key("s", &other_version, options));
        let with_metadata = NewSchema { metadata: Some(serde_json::json!({"a": 1})), ..schema.clone() };
        assert_ne!(base, lookup_key("s", &with_metadata, options));
        let with_rules = NewSchema { rule_set: Some(serde_json::json!({"a": 1})), ..schema.clone() };
        assert_ne!(lookup_key("s", &with_metadata, options), lookup_key("s", &with_rules, options));
        // Length prefixes keep the subject and the text apart.
        let shifted = NewSchema { schema: Some("s\"int\"".into()), ..schema.clone() };
        assert_ne!(lookup_key("s", &shifted, options), lookup_key("ss", &schema, options));
    }
}
