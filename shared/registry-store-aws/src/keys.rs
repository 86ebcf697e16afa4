//! DynamoDB key layout: every partition/sort key builder and parser, pure and unit-tested.
//!
//! One table with a string partition key [`PK`] and a string sort key [`SK`], no secondary index.
//! Numbers inside keys are zero-padded to 10 digits (i32::MAX has 10) so lexical order is numeric
//! order. A subject is always the last component of a key, so `#` inside a subject is unambiguous.
//!
//! Schema IDs are per context. The default context keeps the keys it had before contexts
//! existed; a named context's ID keys are the default's with `:<context>` appended
//! ([`in_context`]): a context name never holds `:`, and what it is appended to has a fixed shape,
//! so no two contexts share a key.

use registry_core::{Context, Fingerprint, Guid, SchemaId, Scope, Subject, Version};

/// Partition key attribute name.
pub const PK: &str = "pk";
/// Sort key attribute name.
pub const SK: &str = "sk";

/// Partition of the ID counters: `COUNTER` / `ID` is the default context's, `COUNTER` /
/// `ID:<context>` a named context's (which also says whether the context is listed).
pub const COUNTER_PK: &str = "COUNTER";
/// Sort key of the default context's counter inside [`COUNTER_PK`].
const COUNTER_SK: &str = "ID";
/// Sort-key prefix of the named contexts' counters inside [`COUNTER_PK`].
pub const NAMED_COUNTER_SK_PREFIX: &str = "ID:";
/// Partition of the subject index (one item per subject, sort key = subject name).
pub const SUBJECTS_PK: &str = "SUBJECTS";
/// Sort key of the id → fingerprint item inside `ID#<id>`.
pub const ID_BINDING_SK: &str = "FP";
/// Sort key of the default context's fingerprint → id item inside `FP#<hex>`.
const FP_BINDING_SK: &str = "ID";
/// Sort key of the guid → fingerprint item inside `GUID#<hex>`.
pub const GUID_BINDING_SK: &str = "FP";
/// Sort-key prefix of version rows inside `S#<subject>`.
pub const VERSION_SK_PREFIX: &str = "V#";
/// Sort-key prefix of edge items (rows by id, referrers).
pub const EDGE_SK_PREFIX: &str = "R#";

/// A version number zero-padded to 10 digits.
pub fn padded(n: i32) -> String {
    format!("{n:010}")
}

/// Partition of a subject's version rows.
pub fn subject_pk(subject: &Subject) -> String {
    format!("S#{subject}")
}

/// Sort key of version `version` of a subject.
pub fn version_sk(version: Version) -> String {
    format!("{VERSION_SK_PREFIX}{}", padded(version.0))
}

/// `key` of the default context's layout as `context` has it: unchanged for the default
/// context, `<key>:<context>` for a named one.
pub fn in_context(key: &str, context: &Context) -> String {
    if context.is_default() { key.to_string() } else { format!("{key}:{}", context.name()) }
}

/// Sort key of `context`'s ID counter inside [`COUNTER_PK`].
pub fn counter_sk(context: &Context) -> String {
    in_context(COUNTER_SK, context)
}

/// The named context whose counter has sort key `sk`; `None` for the default context's.
pub fn context_of_counter_sk(sk: &str) -> Option<&str> {
    sk.strip_prefix(NAMED_COUNTER_SK_PREFIX)
}

/// Partition of schema id `id` in `context`: holds the id → fingerprint item and the rows-by-id
/// edges of that context's rows.
pub fn id_pk(context: &Context, id: SchemaId) -> String {
    in_context(&format!("ID#{}", padded(id.0)), context)
}

/// Sort key of the fingerprint → id item of `context` inside `FP#<hex>`.
pub fn fingerprint_binding_sk(context: &Context) -> String {
    in_context(FP_BINDING_SK, context)
}

/// Partition of the fingerprint → id item.
pub fn fingerprint_pk(fingerprint: &Fingerprint) -> String {
    format!("FP#{}", fingerprint.to_hex())
}

/// Partition of the guid → fingerprint item: `GUID#` and the guid's 32 hex digits.
pub fn guid_pk(guid: &Guid) -> String {
    guid_pk_of_hex(&guid.to_hex())
}

/// [`guid_pk`] of a guid given as its hex digits.
pub fn guid_pk_of_hex(hex: &str) -> String {
    format!("GUID#{hex}")
}

/// Attribute of the guid item holding the ID its fingerprint is bound to in `context` while a row
/// of that context carries it: `id` for the default context (as before contexts), `id:<context>`.
pub fn guid_id_attribute(context: &Context) -> String {
    in_context(GUID_ID, context)
}

/// The named context whose ID the guid item's attribute `name` holds; `None` for any other.
pub fn context_of_guid_id_attribute(name: &str) -> Option<&str> {
    name.strip_prefix(GUID_ID).and_then(|rest| rest.strip_prefix(':'))
}

/// [`guid_id_attribute`] of the default context.
const GUID_ID: &str = "id";

/// Partition of the referrer edges of (subject, version): the rows that reference it.
pub fn referenced_pk(subject: &str, version: i32) -> String {
    format!("REF#{}#{subject}", padded(version))
}

/// Separates the subject from the version in an edge's sort key: U+0001 sorts below every
/// character a subject may hold (subjects have no control characters), so edges sort by
/// (subject, version) exactly as the registry orders rows, and a listing can page through them.
pub const EDGE_SEPARATOR: char = '\u{1}';

/// Sort key of an edge pointing at the row (subject, version): `R#<subject>␁<ver:010>`.
pub fn edge_sk(subject: &Subject, version: Version) -> String {
    format!("{EDGE_SK_PREFIX}{subject}{EDGE_SEPARATOR}{}", padded(version.0))
}

/// A sort key above every edge sort key (`R$`: `$` follows `#`), to bound a range of edges.
pub const EDGES_END: &str = "R$";

/// Keys of the config item (`CONFIG`) or mode item (`MODE`) at `scope`.
pub fn scoped(kind: &str, scope: &Scope) -> (String, String) {
    match scope {
        Scope::Global => (kind.to_string(), "GLOBAL".to_string()),
        Scope::Subject(subject) => (kind.to_string(), format!("S#{subject}")),
    }
}

/// The S3 key of a schema body: `schemas/<sha256 hex>`.
pub fn body_key(fingerprint: &Fingerprint) -> String {
    format!("schemas/{}", fingerprint.to_hex())
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::SchemaType;
    use registry_core::testkit::subject;

    #[test]
    fn version_keys_sort_numerically() {
        let keys: Vec<String> = [1, 2, 9, 10, 100, i32::MAX].iter().map(|v| version_sk(Version(*v))).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(version_sk(Version(7)), "V#0000000007");
    }

    #[test]
    fn edges_sort_by_subject_then_version() {
        let rows = [("a", 2), ("a", 10), ("a b", 1), ("a#", 1), ("a#1", 1), ("a-b", 3), ("ab", 1), ("é", 1)];
        let mut expected: Vec<(Subject, Version)> = rows.iter().map(|(s, v)| (subject(s), Version(*v))).collect();
        expected.sort();
        let mut by_key: Vec<(String, (Subject, Version))> =
            expected.iter().map(|(s, v)| (edge_sk(s, *v), (s.clone(), *v))).collect();
        by_key.sort();
        let in_key_order: Vec<(Subject, Version)> = by_key.into_iter().map(|(_, row)| row).collect();
        assert_eq!(in_key_order, expected);
        assert!(by_key_bounds(&edge_sk(&subject("\u{10FFFF}"), Version(i32::MAX))));
    }

    fn by_key_bounds(key: &str) -> bool {
        key.starts_with(EDGE_SK_PREFIX) && key < EDGES_END
    }

    #[test]
    fn subjects_with_separators_do_not_collide() {
        assert_ne!(edge_sk(&subject("a#1"), Version(2)), edge_sk(&subject("a"), Version(12)));
        assert_ne!(referenced_pk("x#0000000001", 2), referenced_pk("x", 1));
        assert_ne!(subject_pk(&subject("a")), subject_pk(&subject("a ")));
    }

    #[test]
    fn body_key_is_the_fingerprint_hex() {
        let fp = Fingerprint::of(SchemaType::Avro, "\"string\"", &[], None, None);
        assert_eq!(body_key(&fp), format!("schemas/{}", fp.to_hex()));
        assert_eq!(body_key(&fp).len(), "schemas/".len() + 64);
    }

    #[test]
    fn guid_keys_are_the_dashless_hex_in_their_own_partition() {
        let guid = Guid([0xab; 16]);
        assert_eq!(guid_pk(&guid), format!("GUID#{}", "ab".repeat(16)));
        let fp = Fingerprint([0xab; 32]);
        assert_ne!(guid_pk(&guid), fingerprint_pk(&fp));
    }

    #[test]
    fn the_default_context_keeps_its_keys_and_named_ones_get_their_own() {
        let (default, team) = (Context::DEFAULT, Context::parse(".team").unwrap_or_else(|e| panic!("{e}")));
        assert_eq!((counter_sk(&default), fingerprint_binding_sk(&default)), ("ID".into(), "ID".into()));
        assert_eq!(id_pk(&default, SchemaId(7)), "ID#0000000007");
        assert_eq!(counter_sk(&team), "ID:.team");
        assert_eq!(fingerprint_binding_sk(&team), "ID:.team");
        assert_eq!(id_pk(&team, SchemaId(7)), "ID#0000000007:.team");
        assert_eq!(context_of_counter_sk(&counter_sk(&team)), Some(".team"));
        assert_eq!(context_of_counter_sk(&counter_sk(&default)), None);
        assert_eq!((guid_id_attribute(&default), guid_id_attribute(&team)), ("id".into(), "id:.team".into()));
        assert_eq!(context_of_guid_id_attribute(&guid_id_attribute(&team)), Some(".team"));
        assert_eq!(context_of_guid_id_attribute("id"), None);
        assert_eq!(context_of_guid_id_attribute("fingerprint"), None);
        let nested = Context::parse(".team#0000000001").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(id_pk(&nested, SchemaId(7)), id_pk(&team, SchemaId(7)));
    }

    #[test]
    fn scopes_get_distinct_keys() {
        assert_ne!(scoped("CONFIG", &Scope::Global), scoped("CONFIG", &Scope::Subject(subject("GLOBAL"))));
        assert_ne!(scoped("CONFIG", &Scope::Global), scoped("MODE", &Scope::Global));
    }
}
