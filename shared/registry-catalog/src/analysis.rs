//! Analyses of one or two schemas: field diff, complexity, validation and normal form.

use crate::fields::{Field, fields};
use crate::matching::snake_case;
use registry_schema::{ParsedSchema, SchemaError, SchemaType, Validation};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// A field named in a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldEntry {
    pub field: String,
    #[serde(rename = "type")]
    pub type_name: String,
}

/// A field whose type changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub field: String,
    pub old_type: String,
    pub new_type: String,
}

/// What changed between two versions, field by field (AxonOps' `POST /subjects/{s}/diff`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    pub added: Vec<FieldEntry>,
    pub removed: Vec<FieldEntry>,
    pub changed: Vec<FieldChange>,
}

/// The fields in `new` and not in `old`, in `old` and not in `new`, and in both with another type.
/// Fields pair by path with each segment in snake_case, so `userName` and `user_name` are one field;
/// entries name the field as the version holding it spells it (the new spelling for changes).
pub fn diff(old: &ParsedSchema, new: &ParsedSchema) -> FieldDiff {
    let keyed = |list: Vec<Field>| -> BTreeMap<String, Field> {
        list.into_iter()
            .map(|field| (field.path.split('.').map(snake_case).collect::<Vec<_>>().join("."), field))
            .collect()
    };
    let (old, new) = (keyed(fields(old)), keyed(fields(new)));
    let mut out = FieldDiff::default();
    for (key, field) in &new {
        match old.get(key) {
            None => out.added.push(FieldEntry { field: field.path.clone(), type_name: field.type_name.clone() }),
            Some(before) if before.type_name != field.type_name => out.changed.push(FieldChange {
                field: field.path.clone(),
                old_type: before.type_name.clone(),
                new_type: field.type_name.clone(),
            }),
            Some(_) => {}
        }
    }
    for (key, field) in &old {
        if !new.contains_key(key) {
            out.removed.push(FieldEntry { field: field.path.clone(), type_name: field.type_name.clone() });
        }
    }
    out
}

/// Structural size of a schema (AxonOps' `POST /schemas/complexity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Complexity {
    pub schema_type: SchemaType,
    pub field_count: usize,
    pub max_depth: usize,
    pub grade: &'static str,
}

/// Field count, deepest path, and the grade: A ≤15 fields and ≤3 levels, B ≤30 and ≤4, C ≤50 and
/// ≤5, D beyond.
pub fn complexity(schema: &ParsedSchema) -> Complexity {
    let listed = fields(schema);
    let field_count = listed.len();
    let max_depth = listed.iter().map(Field::depth).max().unwrap_or(0);
    let grade = match (field_count, max_depth) {
        (0..=15, 0..=3) => "A",
        (0..=30, 0..=4) => "B",
        (0..=50, 0..=5) => "C",
        _ => "D",
    };
    Complexity { schema_type: schema.schema_type(), field_count, max_depth, grade }
}

/// Whether a text parses as a new registration would (AxonOps' `POST /schemas/validate`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validated {
    pub is_valid: bool,
    pub schema_type: SchemaType,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
}

/// Parses `text` strictly (defaults checked, as for a new registration), without references.
pub fn validate(schema_type: SchemaType, text: &str) -> Validated {
    match ParsedSchema::parse(schema_type, text, &[], Validation::Strict, false) {
        Ok(_) => Validated { is_valid: true, schema_type, error: String::new() },
        Err(error) => Validated { is_valid: false, schema_type, error: error.to_string() },
    }
}

/// A schema's normal form and its SHA-256 (AxonOps' `POST /schemas/normalize`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Normalized {
    pub schema_type: SchemaType,
    pub canonical: String,
    pub fingerprint: String,
}

/// Confluent's normal form of `text` (what `?normalize=true` stores) and the hex SHA-256 of it:
/// two texts with the same fingerprint register as one schema under normalization.
pub fn normalize(schema_type: SchemaType, text: &str) -> Result<Normalized, SchemaError> {
    let parsed = ParsedSchema::parse(schema_type, text, &[], Validation::Lenient, true)?;
    let canonical = parsed.canonical_text().to_string();
    let fingerprint = hex::encode(Sha256::digest(canonical.as_bytes()));
    Ok(Normalized { schema_type, canonical, fingerprint })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avro(text: &str) -> ParsedSchema {
        ParsedSchema::parse(SchemaType::Avro, text, &[], Validation::Lenient, false).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn diff_pairs_renamed_conventions_and_reports_type_changes() {
        let v1 = avro(
            r#"{"type":"record","name":"U","fields":[{"name":"userName","type":"string"},{"name":"age","type":"int"},{"name":"gone","type":"string"}]}"#,
        );
        let v2 = avro(
            r#"{"type":"record","name":"U","fields":[{"name":"user_name","type":"string"},{"name":"age","type":"long"},{"name":"email","type":"string"}]}"#,
        );
        let diff = diff(&v1, &v2);
        assert_eq!(diff.added, vec![FieldEntry { field: "email".into(), type_name: "string".into() }]);
        assert_eq!(diff.removed, vec![FieldEntry { field: "gone".into(), type_name: "string".into() }]);
        assert_eq!(
            diff.changed,
            vec![FieldChange { field: "age".into(), old_type: "int".into(), new_type: "long".into() }]
        );
    }

    #[test]
    fn complexity_grades_by_count_and_depth() {
        let flat = avro(r#"{"type":"record","name":"F","fields":[{"name":"a","type":"int"}]}"#);
        assert_eq!((complexity(&flat).field_count, complexity(&flat).max_depth, complexity(&flat).grade), (1, 1, "A"));
        let many: Vec<String> = (0..31).map(|i| format!(r#"{{"name":"f{i}","type":"int"}}"#)).collect();
        let wide = avro(&format!(r#"{{"type":"record","name":"W","fields":[{}]}}"#, many.join(",")));
        assert_eq!(complexity(&wide).grade, "C");
    }

    #[test]
    fn validate_and_normalize() {
        assert!(validate(SchemaType::Avro, r#"{"type":"record","name":"R","fields":[]}"#).is_valid);
        let bad = validate(
            SchemaType::Avro,
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}"#,
        );
        assert!(!bad.is_valid && !bad.error.is_empty());
        let a = normalize(SchemaType::Json, r#"{"type":"object","properties":{"a":{"type":"string"}}}"#);
        let b = normalize(SchemaType::Json, r#"{ "properties":{"a":{"type":"string"}}, "type":"object" }"#);
        let (a, b) = (a.unwrap_or_else(|e| panic!("{e}")), b.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(a.fingerprint, b.fingerprint);
        assert!(normalize(SchemaType::Avro, "{").is_err());
    }
}
