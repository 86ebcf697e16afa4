//! The advisory analyses of AxonOps Schema Registry, computed as its handlers compute them so its
//! users get the same answers: quality score, field-set similarity, subject-name strategies,
//! subject-name patterns and the steps of a migration between two schemas.

use crate::fields::Field;
use crate::matching::{MatchError, Matcher, snake_case};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One category of [`Quality`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QualityCategory {
    pub score: u32,
    pub max_score: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

/// `POST /schemas/quality`: four categories of 25 points (as AxonOps's handler answers them: a
/// map by name, `details` per category, `quick_wins` left out when empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quality {
    pub overall_score: u32,
    pub max_score: u32,
    pub grade: &'static str,
    pub categories: BTreeMap<&'static str, QualityCategory>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quick_wins: Vec<String>,
}

/// 25 × `part / whole`, rounded down; 25 when there is nothing to count.
fn share(part: usize, whole: usize) -> u32 {
    (25 * part).checked_div(whole).map_or(25, |score| u32::try_from(score).unwrap_or(25))
}

/// The quality of a schema with `fields` and text `text`: snake_case names, documented fields,
/// specific types (not `string`, `bytes`, `any`, `object`), and evolution readiness (a default
/// somewhere +10, a `namespace`/`package` +8, any `doc`/`description` +7). Grades A ≥ 90, B ≥ 80,
/// C ≥ 70, D ≥ 60, else F.
pub fn quality(fields: &[Field], text: &str) -> Quality {
    let mut quick_wins = Vec::new();
    let mut naming = QualityCategory { score: 0, max_score: 25, details: Vec::new() };
    let mut good = 0;
    for field in fields {
        if !field.name.is_empty() && !field.name.chars().any(|c| c.is_uppercase() || c == '-' || c == ' ') {
            good += 1;
        } else {
            naming.details.push(format!("Field '{}' does not follow snake_case convention", field.name));
            quick_wins.push(format!("Rename '{}' to '{}'", field.name, snake_case(&field.name)));
        }
    }
    naming.score = share(good, fields.len());

    let mut documentation = QualityCategory { score: 0, max_score: 25, details: Vec::new() };
    let documented = fields.iter().filter(|f| f.documented).count();
    documentation.score = share(documented, fields.len());
    if !fields.is_empty() && documented == 0 {
        documentation.details.push("No fields have documentation".into());
        quick_wins.push("Add documentation/descriptions to fields".into());
    } else if documented < fields.len() {
        documentation.details.push("Only some fields have documentation".into());
    }

    let mut type_safety = QualityCategory { score: 0, max_score: 25, details: Vec::new() };
    let mut specific = 0;
    for field in fields {
        if matches!(field.type_name.to_lowercase().as_str(), "string" | "bytes" | "any" | "object") {
            type_safety.details.push(format!("Field '{}' uses generic type '{}'", field.name, field.type_name));
        } else {
            specific += 1;
        }
    }
    type_safety.score = share(specific, fields.len());

    let mut evolution = QualityCategory { score: 0, max_score: 25, details: Vec::new() };
    if fields.iter().any(|f| f.has_default) {
        evolution.score += 10;
        evolution.details.push("Fields with defaults enable backward-compatible evolution".into());
    } else if !fields.is_empty() {
        evolution.details.push("No fields have default values; consider adding defaults for evolution safety".into());
        quick_wins.push("Add default values to optional fields".into());
    }
    if text.contains("namespace") || text.contains("package") {
        evolution.score += 8;
    } else {
        evolution.details.push("No namespace/package declaration found".into());
        quick_wins.push("Add a namespace to prevent naming conflicts".into());
    }
    if text.contains("\"doc\"") || text.contains("\"description\"") {
        evolution.score += 7;
    } else {
        evolution.details.push("Schema-level documentation is missing".into());
    }

    let categories = BTreeMap::from([
        ("naming", naming),
        ("documentation", documentation),
        ("type_safety", type_safety),
        ("evolution", evolution),
    ]);
    let overall_score: u32 = categories.values().map(|c| c.score).sum();
    let max_score: u32 = categories.values().map(|c| c.max_score).sum();
    let percent = (100 * overall_score).checked_div(max_score).unwrap_or(0);
    let grade = match percent {
        90.. => "A",
        80.. => "B",
        70.. => "C",
        60.. => "D",
        _ => "F",
    };
    Quality { overall_score, max_score, grade, categories, quick_wins }
}

/// The snake_case names of `fields` (how similarity compares them).
pub fn name_set(fields: &[Field]) -> BTreeSet<String> {
    fields.iter().map(|f| snake_case(&f.name)).collect()
}

/// Jaccard similarity of two name sets and the names they share (sorted); `None` when both are
/// empty.
pub fn similarity(source: &BTreeSet<String>, target: &BTreeSet<String>) -> Option<(f64, Vec<String>)> {
    let union = source.union(target).count();
    if union == 0 {
        return None;
    }
    let shared: Vec<String> = source.intersection(target).cloned().collect();
    #[allow(clippy::cast_precision_loss)] // both counts are at most 2 × MAX_FIELDS
    let score = shared.len() as f64 / union as f64;
    Some((score, shared))
}

/// `POST /subjects/validate`: `subject` under a Kafka subject-name strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameCheck {
    pub subject: String,
    pub strategy: String,
    pub valid: bool,
    /// `null` when valid, as AxonOps's answer.
    pub issues: Option<Vec<String>>,
    pub suggestion: String,
}

/// Checks `subject` under `strategy` (`topic_name`, the default, `record_name` or
/// `topic_record_name`); an unknown strategy checks nothing (valid), as AxonOps's handler.
pub fn check_subject_name(subject: &str, strategy: &str) -> NameCheck {
    let strategy = if strategy.is_empty() { "topic_name" } else { strategy };
    let (mut issues, mut suggestion) = (Vec::new(), String::new());
    match strategy {
        "topic_name" if !subject.ends_with("-key") && !subject.ends_with("-value") => {
            issues.push("TopicNameStrategy subjects must end with '-key' or '-value'".to_string());
            suggestion = format!("{subject}-value");
        }
        "record_name" if !subject.split('.').all(is_identifier) => {
            issues.push("RecordNameStrategy subjects must be valid qualified names (e.g., com.example.User)".into());
        }
        "topic_record_name" if !subject.contains('-') => {
            issues.push("TopicRecordNameStrategy subjects must contain a topic and record name".into());
        }
        _ => {}
    }
    NameCheck {
        subject: subject.to_string(),
        strategy: strategy.to_string(),
        valid: issues.is_empty(),
        issues: (!issues.is_empty()).then_some(issues),
        suggestion,
    }
}

fn is_identifier(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How `POST /subjects/match` compares subject names.
#[derive(Debug, Clone)]
pub enum SubjectPattern {
    Regex(Matcher),
    /// Lower-case glob, `*` for any run of characters.
    Glob(String),
    Fuzzy(Matcher),
}

impl SubjectPattern {
    /// `mode` is `regex` (the default), `glob` or `fuzzy` (at `threshold`, default 0.6).
    pub fn new(pattern: &str, mode: &str, threshold: f64) -> Result<Self, MatchError> {
        match mode {
            "" | "regex" => Ok(SubjectPattern::Regex(Matcher::type_name(pattern, true)?)),
            "glob" => {
                Matcher::text(pattern, false)?;
                Ok(SubjectPattern::Glob(pattern.to_lowercase()))
            }
            "fuzzy" => Ok(SubjectPattern::Fuzzy(Matcher::field(pattern, crate::FieldMode::Fuzzy, threshold)?)),
            other => Err(MatchError(format!("unknown mode '{other}': use regex, glob or fuzzy"))),
        }
    }

    pub fn matches(&self, subject: &str) -> bool {
        match self {
            SubjectPattern::Regex(matcher) | SubjectPattern::Fuzzy(matcher) => matcher.score(subject).is_some(),
            SubjectPattern::Glob(pattern) => glob(pattern, &subject.to_lowercase()),
        }
    }
}

/// `*`-glob over whole strings (lower-cased by the caller).
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return pattern == text };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `POST /subjects/{s}/migrate`: the steps from `current`'s fields to `target`'s, as AxonOps
/// words them (fields compared by name: each added one, then each removed one).
pub fn migration_steps(current: &[Field], target: &[Field]) -> Vec<String> {
    let have: BTreeSet<&str> = current.iter().map(|f| f.name.as_str()).collect();
    let want: BTreeSet<&str> = target.iter().map(|f| f.name.as_str()).collect();
    let mut steps = Vec::new();
    for field in target.iter().filter(|f| !have.contains(f.name.as_str())) {
        steps.push(format!("Add field '{}' (type: {}) with a default value", field.name, field.type_name));
    }
    for field in current.iter().filter(|f| !want.contains(f.name.as_str())) {
        steps.push(format!("Remove field '{}' (may require compatibility level change)", field.name));
    }
    if steps.is_empty() {
        steps.push("No migration steps needed — schemas have the same fields".into());
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::fields;
    use registry_schema::{ParsedSchema, SchemaType, Validation};

    fn fields_of(schema_type: SchemaType, text: &str) -> Vec<Field> {
        fields(
            &ParsedSchema::parse(schema_type, text, &[], Validation::Lenient, false).unwrap_or_else(|e| panic!("{e}")),
        )
    }

    #[test]
    fn quality_of_a_tidy_and_a_sloppy_schema() {
        let tidy = r#"{"type":"record","name":"Order","namespace":"shop","doc":"An order","fields":[
            {"name":"order_id","type":"long","doc":"id"},
            {"name":"placed_at","type":{"type":"long","logicalType":"timestamp-millis"},"doc":"when","default":0}]}"#;
        let got = quality(&fields_of(SchemaType::Avro, tidy), tidy);
        assert_eq!((got.overall_score, got.max_score, got.grade), (100, 100, "A"), "{got:?}");
        let sloppy = r#"{"type":"record","name":"Order","fields":[{"name":"orderId","type":"string"}]}"#;
        let got = quality(&fields_of(SchemaType::Avro, sloppy), sloppy);
        assert_eq!(got.overall_score, 0, "{got:?}");
        assert_eq!(got.grade, "F");
        assert!(got.quick_wins.contains(&"Rename 'orderId' to 'order_id'".to_string()), "{got:?}");
    }

    #[test]
    fn json_descriptions_and_proto3_defaults_count() {
        let json = r#"{"type":"object","properties":{"id":{"type":"integer","description":"id","default":1}}}"#;
        let listed = fields_of(SchemaType::Json, json);
        assert!(listed[0].documented && listed[0].has_default, "{listed:?}");
        let proto = "syntax = \"proto3\";\nmessage M { int64 id = 1; }\n";
        let listed = fields_of(SchemaType::Protobuf, proto);
        assert!(!listed[0].documented && listed[0].has_default, "{listed:?}");
    }

    #[test]
    fn similarity_is_jaccard_over_snake_case_names() {
        let a = name_set(&fields_of(
            SchemaType::Avro,
            r#"{"type":"record","name":"A","fields":[{"name":"userName","type":"string"},{"name":"age","type":"int"}]}"#,
        ));
        let b = name_set(&fields_of(
            SchemaType::Json,
            r#"{"type":"object","properties":{"user_name":{"type":"string"},"email":{"type":"string"}}}"#,
        ));
        let (score, shared) = similarity(&a, &b).unwrap_or_else(|| panic!("no union"));
        assert!((score - 1.0 / 3.0).abs() < 1e-9, "{score}");
        assert_eq!(shared, vec!["user_name".to_string()]);
        assert_eq!(similarity(&BTreeSet::new(), &BTreeSet::new()), None);
    }

    #[test]
    fn subject_name_strategies() {
        let check = check_subject_name("orders", "");
        assert_eq!(
            (check.valid, check.strategy.as_str(), check.suggestion.as_str()),
            (false, "topic_name", "orders-value")
        );
        assert!(check_subject_name("orders-key", "topic_name").valid);
        assert!(check_subject_name("com.example.User", "record_name").valid);
        assert!(!check_subject_name("com.1x.User", "record_name").valid);
        assert!(!check_subject_name("com..User", "record_name").valid);
        assert!(check_subject_name("orders-com.example.Order", "topic_record_name").valid);
        assert!(!check_subject_name("orders", "topic_record_name").valid);
        assert_eq!(check_subject_name("orders-key", "").issues, None);
    }

    #[test]
    fn subject_patterns() {
        let glob = SubjectPattern::new("Orders-*", "glob", 0.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(glob.matches("orders-value") && glob.matches("orders-avro-key") && !glob.matches("my-orders-value"));
        let inner = SubjectPattern::new("*ord*val*", "glob", 0.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(inner.matches("x-orders-value") && !inner.matches("values-ord"));
        let exact = SubjectPattern::new("orders", "glob", 0.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(exact.matches("ORDERS") && !exact.matches("orders-value"));
        let regex = SubjectPattern::new("^pay.*-value$", "", 0.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(regex.matches("payments-value") && !regex.matches("payments-key"));
        let fuzzy = SubjectPattern::new("orders-valeu", "fuzzy", 0.8).unwrap_or_else(|e| panic!("{e}"));
        assert!(fuzzy.matches("orders-value") && !fuzzy.matches("users-key"));
        assert!(SubjectPattern::new("(", "regex", 0.6).is_err());
        assert!(SubjectPattern::new("x", "sql", 0.6).is_err());
    }

    #[test]
    fn migration_adds_then_removes() {
        let current =
            fields_of(SchemaType::Avro, r#"{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}"#);
        let target =
            fields_of(SchemaType::Avro, r#"{"type":"record","name":"A","fields":[{"name":"b","type":"long"}]}"#);
        assert_eq!(
            migration_steps(&current, &target),
            vec![
                "Add field 'b' (type: long) with a default value".to_string(),
                "Remove field 'a' (may require compatibility level change)".to_string(),
            ]
        );
        assert_eq!(migration_steps(&current, &current).len(), 1);
    }
}
