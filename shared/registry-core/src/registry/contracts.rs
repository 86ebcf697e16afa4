//! Data contracts: Confluent's `metadata` and `ruleSet` shapes, their validation (42210), the
//! config merge (default ← specific ← override), the `confluent:version` stamp, and the CP 8 `guid`.
//!
//! The registry stores and serves rules; it never executes them (clients do). Values are kept in
//! Confluent's normal form: what Jackson would write back after reading them into `Metadata`/`RuleSet`
//! (unknown fields dropped, tags/params/properties sorted, `kind`/`mode` defaulted, empty parts
//! omitted), so two spellings of the same contract are the same schema, as in Confluent.

use crate::error::RegistryError;
use crate::model::Guid;
use md5::{Digest, Md5};
use registry_schema::SchemaReference;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Metadata property Confluent stamps with the version number (`Metadata.CONFLUENT_VERSION`).
pub const CONFLUENT_VERSION: &str = "confluent:version";

/// Confluent's `Metadata`: tags per path, free-form string properties, sensitive property names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, BTreeSet<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub sensitive: BTreeSet<String>,
}

/// Whether a rule checks (`CONDITION`) or rewrites (`TRANSFORM`, Confluent's default) data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RuleKind {
    #[default]
    Transform,
    Condition,
}

/// When a rule runs: migration modes (`UPGRADE`, `DOWNGRADE`, `UPDOWN`) or domain/encoding modes
/// (`WRITE`, `READ`, `WRITEREAD`, Confluent's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RuleMode {
    Upgrade,
    Downgrade,
    Updown,
    Write,
    Read,
    #[default]
    Writeread,
}

impl RuleMode {
    fn is_migration(self) -> bool {
        matches!(self, RuleMode::Upgrade | RuleMode::Downgrade | RuleMode::Updown)
    }

    fn wire_name(self) -> &'static str {
        match self {
            RuleMode::Upgrade => "UPGRADE",
            RuleMode::Downgrade => "DOWNGRADE",
            RuleMode::Updown => "UPDOWN",
            RuleMode::Write => "WRITE",
            RuleMode::Read => "READ",
            RuleMode::Writeread => "WRITEREAD",
        }
    }
}

/// Confluent's `Rule`. `disabled` is always written, as Jackson writes a primitive boolean.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    #[serde(default)]
    pub kind: RuleKind,
    #[serde(default)]
    pub mode: RuleMode,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub rule_type: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tags: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_success: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<String>,
    #[serde(default)]
    pub disabled: bool,
}

/// Confluent's `RuleSet`: migration, domain and (CP 8) encoding rules, each list in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleSet {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub migration_rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domain_rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub encoding_rules: Vec<Rule>,
}

impl RuleSet {
    /// Confluent's `RuleSet.validate`: names unique across all lists, each rule named (a letter
    /// or `_`, then letters, digits, `_` or `-`, at most 256 characters) and typed, several
    /// comma-separated actions only in `WRITEREAD` and `UPDOWN`, migration rules in migration
    /// modes, domain and encoding rules in domain modes. The error text is Confluent's (42210).
    pub fn validate(&self) -> Result<(), RegistryError> {
        let invalid = |reason: String| RegistryError::InvalidRuleSet { reason };
        let mut names: HashSet<Option<&str>> = HashSet::new();
        let lists = [
            (&self.migration_rules, true, "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"),
            (&self.domain_rules, false, "Domain rules can only be WRITE, READ, WRITEREAD"),
            (&self.encoding_rules, false, "Encoding rules can only be WRITE, READ, WRITEREAD"),
        ];
        for (rules, migration, mode_message) in lists {
            for rule in rules {
                let name = rule.name.as_deref();
                if !names.insert(name) {
                    return Err(invalid(format!("Found rule with duplicate name '{}'", name.unwrap_or("null"))));
                }
                validate_name(name).map_err(invalid)?;
                if rule.rule_type.is_none() {
                    return Err(invalid("Missing rule type".to_string()));
                }
                let several = |action: &Option<String>| action.as_deref().is_some_and(|a| a.contains(','));
                let single_action_mode = !matches!(rule.mode, RuleMode::Writeread | RuleMode::Updown);
                if single_action_mode && (several(&rule.on_success) || several(&rule.on_failure)) {
                    return Err(invalid("Multiple actions only valid with WRITEREAD and UPDOWN".to_string()));
                }
                if rule.mode.is_migration() != migration {
                    return Err(invalid(mode_message.to_string()));
                }
            }
        }
        Ok(())
    }
}

/// Longest rule name, in UTF-16 units as Java counts them (Confluent's `Rule.NAME_MAX_LENGTH`).
const RULE_NAME_MAX_LENGTH: usize = 256;

fn validate_name(name: Option<&str>) -> Result<(), String> {
    let Some(name) = name else {
        return Err("Missing rule name".to_string());
    };
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Err("Empty rule name".to_string());
    };
    if name.encode_utf16().count() > RULE_NAME_MAX_LENGTH {
        return Err("Rule name too long".to_string());
    }
    if !(first.is_alphabetic() || first == '_') {
        return Err(format!("Illegal initial character in rule name: {name}"));
    }
    if !chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
        return Err(format!("Illegal character in rule name: {name}"));
    }
    Ok(())
}

/// Reads stored or posted metadata JSON into Confluent's shape (42201 when it has another shape).
pub fn metadata_of(value: &serde_json::Value) -> Result<Metadata, RegistryError> {
    serde_json::from_value(value.clone())
        .map_err(|e| RegistryError::InvalidSchema { reason: format!("Invalid metadata: {e}") })
}

/// Reads stored or posted rule-set JSON into Confluent's shape (42210 when it has another shape).
pub fn rule_set_of(value: &serde_json::Value) -> Result<RuleSet, RegistryError> {
    serde_json::from_value(value.clone()).map_err(|e| RegistryError::InvalidRuleSet { reason: format!("{e}") })
}

/// The normal form of posted metadata (see the module doc).
pub fn normalize_metadata(value: &serde_json::Value) -> Result<serde_json::Value, RegistryError> {
    Ok(to_json(&metadata_of(value)?))
}

/// The normal form of a posted rule set, validated (42210).
pub fn normalize_rule_set(value: &serde_json::Value) -> Result<serde_json::Value, RegistryError> {
    let rule_set = rule_set_of(value)?;
    rule_set.validate()?;
    Ok(to_json(&rule_set))
}

/// Serialises a contract part; these types always serialise.
pub fn to_json<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Confluent's `Metadata.mergeMetadata(old, new)`: tags and properties of `new` win per key,
/// sensitive names are united; a missing side yields the other.
pub fn merge_metadata(old: Option<Metadata>, new: Option<Metadata>) -> Option<Metadata> {
    match (old, new) {
        (None, new) => new,
        (old, None) => old,
        (Some(mut old), Some(new)) => {
            old.tags.extend(new.tags);
            old.properties.extend(new.properties);
            old.sensitive.extend(new.sensitive);
            Some(old)
        }
    }
}

/// Confluent's `RuleSet.mergeRuleSets(old, new)`: per list, old rules named like a new rule are
/// dropped and the new rules appended; a missing side yields the other.
pub fn merge_rule_sets(old: Option<RuleSet>, new: Option<RuleSet>) -> Option<RuleSet> {
    match (old, new) {
        (None, new) => new,
        (old, None) => old,
        (Some(old), Some(new)) => Some(RuleSet {
            migration_rules: merge_rules(old.migration_rules, new.migration_rules),
            domain_rules: merge_rules(old.domain_rules, new.domain_rules),
            encoding_rules: merge_rules(old.encoding_rules, new.encoding_rules),
        }),
    }
}

fn merge_rules(old: Vec<Rule>, new: Vec<Rule>) -> Vec<Rule> {
    if old.is_empty() {
        return new;
    }
    if new.is_empty() {
        return old;
    }
    let replaced: HashSet<&Option<String>> = new.iter().map(|r| &r.name).collect();
    let mut merged: Vec<Rule> = old.iter().filter(|r| !replaced.contains(&r.name)).cloned().collect();
    merged.extend(new);
    merged
}

/// Sets `confluent:version` to `version` (creating the metadata when absent).
pub fn stamp_confluent_version(metadata: Option<Metadata>, version: i32) -> Metadata {
    let mut metadata = metadata.unwrap_or_default();
    metadata.properties.insert(CONFLUENT_VERSION.to_string(), version.to_string());
    metadata
}

/// Confluent's schema `guid` (CP 8): MD5 over the stored text, each reference (name, subject,
/// 4-byte big-endian version), then `0x01` and the metadata hash when metadata is present, then
/// `0x01` and each rule's hash when a rule set is present (`Schema.updateHash`), printed as a UUID.
/// Contract parts that do not read as Confluent's shapes hash as their compact JSON text.
pub fn guid(
    schema: &str,
    references: &[SchemaReference],
    metadata: Option<&serde_json::Value>,
    rule_set: Option<&serde_json::Value>,
) -> String {
    guid_of(schema, references, metadata, rule_set).to_string()
}

/// [`guid`] as its 16 bytes.
pub fn guid_of(
    schema: &str,
    references: &[SchemaReference],
    metadata: Option<&serde_json::Value>,
    rule_set: Option<&serde_json::Value>,
) -> Guid {
    let mut md = Md5::new();
    md.update(schema.as_bytes());
    for reference in references {
        md.update(reference.name.as_bytes());
        md.update(reference.subject.as_bytes());
        md.update(reference.version.to_be_bytes());
    }
    if let Some(value) = metadata {
        md.update([1u8]);
        match metadata_of(value) {
            Ok(metadata) => hash_metadata(&mut md, &metadata),
            Err(_) => md.update(value.to_string().as_bytes()),
        }
    }
    if let Some(value) = rule_set {
        md.update([1u8]);
        match rule_set_of(value) {
            Ok(rules) => {
                let all = rules.migration_rules.iter().chain(&rules.domain_rules).chain(&rules.encoding_rules);
                all.for_each(|rule| hash_rule(&mut md, rule));
            }
            Err(_) => md.update(value.to_string().as_bytes()),
        }
    }
    Guid(md.finalize().into())
}

fn hash_metadata(md: &mut Md5, metadata: &Metadata) {
    for (path, tags) in &metadata.tags {
        md.update(path.as_bytes());
        tags.iter().for_each(|tag| md.update(tag.as_bytes()));
    }
    for (key, value) in &metadata.properties {
        md.update(key.as_bytes());
        md.update(value.as_bytes());
    }
    metadata.sensitive.iter().for_each(|name| md.update(name.as_bytes()));
}

fn hash_rule(md: &mut Md5, rule: &Rule) {
    let optional = |md: &mut Md5, text: &Option<String>| {
        if let Some(text) = text {
            md.update(text.as_bytes());
        }
    };
    optional(md, &rule.name);
    optional(md, &rule.doc);
    md.update(match rule.kind {
        RuleKind::Transform => "TRANSFORM",
        RuleKind::Condition => "CONDITION",
    });
    md.update(rule.mode.wire_name());
    optional(md, &rule.rule_type);
    rule.tags.iter().for_each(|tag| md.update(tag.as_bytes()));
    for (key, value) in &rule.params {
        md.update(key.as_bytes());
        md.update(value.as_bytes());
    }
    optional(md, &rule.expr);
    optional(md, &rule.on_success);
    optional(md, &rule.on_failure);
    if rule.disabled {
        md.update([1u8]);
    }
}

/// Whether `text` is a guid as [`guid`] prints it (so a malformed path is a plain 404).
pub fn is_guid(text: &str) -> bool {
    Guid::parse(text).is_some()
}

/// A config with its contract defaults and overrides in normal form; rule sets validated (42210).
pub fn normalize_config(mut config: crate::model::ConfigRecord) -> Result<crate::model::ConfigRecord, RegistryError> {
    config.default_metadata = config.default_metadata.as_ref().map(normalize_metadata).transpose()?;
    config.override_metadata = config.override_metadata.as_ref().map(normalize_metadata).transpose()?;
    config.default_rule_set = config.default_rule_set.as_ref().map(normalize_rule_set).transpose()?;
    config.override_rule_set = config.override_rule_set.as_ref().map(normalize_rule_set).transpose()?;
    Ok(config)
}

/// The value of metadata property `key` in stored metadata, if any.
pub fn property<'a>(metadata: Option<&'a serde_json::Value>, key: &str) -> Option<&'a str> {
    metadata?.get("properties")?.get(key)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule_set(value: serde_json::Value) -> RuleSet {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    fn reason(value: serde_json::Value) -> String {
        match rule_set(value).validate() {
            Err(RegistryError::InvalidRuleSet { reason }) => reason,
            other => panic!("expected 42210, got {other:?}"),
        }
    }

    #[test]
    fn rule_sets_fail_with_confluents_messages() {
        assert_eq!(reason(json!({"domainRules": [{"type": "CEL"}]})), "Missing rule name");
        assert_eq!(reason(json!({"domainRules": [{"name": "", "type": "CEL"}]})), "Empty rule name");
        assert_eq!(
            reason(json!({"domainRules": [{"name": "1a", "type": "CEL"}]})),
            "Illegal initial character in rule name: 1a"
        );
        assert_eq!(
            reason(json!({"domainRules": [{"name": "a.b", "type": "CEL"}]})),
            "Illegal character in rule name: a.b"
        );
        assert!(rule_set(json!({"domainRules": [{"name": "a-b", "type": "CEL"}]})).validate().is_ok());
        let longest = "r".repeat(256);
        assert!(rule_set(json!({"domainRules": [{"name": longest, "type": "CEL"}]})).validate().is_ok());
        let too_long = "r".repeat(257);
        assert_eq!(reason(json!({"domainRules": [{"name": too_long, "type": "CEL"}]})), "Rule name too long");
        let actions = |mode: &str| json!({"domainRules": [{"name": "a", "type": "CEL", "mode": mode, "onFailure": "ERROR,NONE"}]});
        assert_eq!(reason(actions("WRITE")), "Multiple actions only valid with WRITEREAD and UPDOWN");
        assert!(rule_set(actions("WRITEREAD")).validate().is_ok());
        assert_eq!(reason(json!({"domainRules": [{"name": "a"}]})), "Missing rule type");
        assert_eq!(
            reason(
                json!({"domainRules": [{"name": "a", "type": "CEL"}], "migrationRules": [{"name": "a", "type": "JSONATA", "mode": "UPGRADE"}]})
            ),
            "Found rule with duplicate name 'a'"
        );
        assert_eq!(
            reason(json!({"migrationRules": [{"name": "up", "type": "JSONATA"}]})),
            "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"
        );
        assert_eq!(
            reason(json!({"domainRules": [{"name": "d", "type": "CEL", "mode": "UPDOWN"}]})),
            "Domain rules can only be WRITE, READ, WRITEREAD"
        );
        assert!(rule_set(json!({"domainRules": [{"name": "_ok9", "type": "CEL", "mode": "READ"}]})).validate().is_ok());
    }

    #[test]
    fn normal_form_defaults_kind_and_mode_sorts_and_drops_unknown_fields() {
        let posted = json!({"domainRules": [{"type": "CEL", "name": "r", "tags": ["b", "a"], "params": {"z": "1", "a": "2"}, "bogus": 1}]});
        let normal = normalize_rule_set(&posted).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            serde_json::to_string(&normal).unwrap_or_default(),
            r#"{"domainRules":[{"name":"r","kind":"TRANSFORM","mode":"WRITEREAD","type":"CEL","tags":["a","b"],"params":{"a":"2","z":"1"},"disabled":false}]}"#
        );
        let metadata = normalize_metadata(&json!({"sensitive": ["s"], "properties": {"b": "2", "a": "1"}}));
        assert_eq!(metadata.ok(), Some(json!({"properties": {"a": "1", "b": "2"}, "sensitive": ["s"]})));
    }

    #[test]
    fn merges_follow_confluent_default_then_specific_then_override() {
        let old = metadata_of(&json!({"properties": {"owner": "a", "keep": "1"}, "sensitive": ["x"]})).ok();
        let new = metadata_of(&json!({"properties": {"owner": "b"}, "sensitive": ["y"]})).ok();
        let merged = merge_metadata(old, new).unwrap_or_default();
        assert_eq!(merged.properties.get("owner").map(String::as_str), Some("b"));
        assert_eq!(merged.properties.get("keep").map(String::as_str), Some("1"));
        assert_eq!(merged.sensitive.len(), 2);
        let old = rule_set(json!({"domainRules": [{"name": "a", "type": "CEL"}, {"name": "b", "type": "CEL"}]}));
        let new = rule_set(json!({"domainRules": [{"name": "a", "type": "CEL", "expr": "x"}]}));
        let merged = merge_rule_sets(Some(old), Some(new)).unwrap_or_default();
        let names: Vec<_> = merged.domain_rules.iter().map(|r| (r.name.clone(), r.expr.clone())).collect();
        assert_eq!(names, vec![(Some("b".into()), None), (Some("a".into()), Some("x".into()))]);
    }

    #[test]
    fn guid_is_confluents_md5_printed_as_a_uuid() {
        // Expected values computed independently with Python's hashlib + uuid over the same bytes.
        assert_eq!(guid("\"string\"", &[], None, None), "095d71cf-1255-6b9d-5e33-0ad575b3df5d");
        let metadata = json!({"properties": {"owner": "team-a"}});
        assert_eq!(guid("\"string\"", &[], Some(&metadata), None), "9b9f0344-c519-7923-9fa9-d5301d664ca2");
        let reference = SchemaReference { name: "r".into(), subject: "s".into(), version: 1 };
        let rules = json!({"domainRules": [{"name": "checkLen", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "size(message.f) < 10"}]});
        assert_eq!(guid("x", &[reference], None, Some(&rules)), "67d81428-00a5-a6f1-6b9a-942d36688b1f");
        assert!(is_guid("095d71cf-1255-6b9d-5e33-0ad575b3df5d"));
        assert!(!is_guid("095d71cf12556b9d5e330ad575b3df5d"));
    }
}
