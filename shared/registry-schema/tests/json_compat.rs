//! JSON Schema compatibility against Confluent's own diff tables (ported as data under
//! `tests/fixtures/json-compat/`): the exact change list `SchemaDiff.compare` reports, in order, and the verdict
//! at BACKWARD, FORWARD and FULL through `registry_schema::compat::check`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use registry_schema::compat::CompatibilityLevel;
use registry_schema::json_schema::compat::differences;
use registry_schema::{ParsedSchema, SchemaType, Validation};
use serde_json::Value;
use std::path::PathBuf;
use support::check;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/json-compat")
}

fn parse(value: &Value) -> ParsedSchema {
    ParsedSchema::parse(SchemaType::Json, &value.to_string(), &[], Validation::Strict, false)
        .unwrap_or_else(|e| panic!("{value}: {e}"))
}

fn json(schema: &ParsedSchema) -> &registry_schema::json_schema::JsonSchema {
    match schema {
        ParsedSchema::Json(s) => s,
        _ => unreachable!("parsed as JSON"),
    }
}

fn compatible(level: CompatibilityLevel, new: &ParsedSchema, old: &ParsedSchema) -> bool {
    check(level, new, &[old]).is_empty()
}

/// Runs one Confluent table; returns (cases, failures).
fn run_table(file: &str) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(fixtures().join(file)).unwrap();
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["description"].as_str().unwrap();
        let original = parse(&case["original_schema"]);
        let update = parse(&case["update_schema"]);
        let expected: Vec<&str> = case["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let found: Vec<String> = differences(json(&original), json(&update))
            .iter()
            .map(|d| format!("{} {}", d.change.as_str(), d.json_path()))
            .collect();
        if found != expected {
            failures.push(format!("{file}: {name}: changes {found:?}, Confluent {expected:?}"));
        }
        let verdict = case["compatible"].as_bool().unwrap();
        let backward = compatible(CompatibilityLevel::Backward, &update, &original);
        let forward_reversed = compatible(CompatibilityLevel::Forward, &original, &update);
        let reverse = compatible(CompatibilityLevel::Backward, &original, &update);
        let full = compatible(CompatibilityLevel::Full, &update, &original);
        if backward != verdict || forward_reversed != verdict {
            failures.push(format!(
                "{file}: {name}: backward {backward}, forward-reversed {forward_reversed}, Confluent {verdict}"
            ));
        }
        if full != (verdict && reverse) {
            failures.push(format!("{file}: {name}: FULL {full} but backward {verdict} and reverse {reverse}"));
        }
    }
    (cases.len(), failures)
}

/// Every case of Confluent's table `file` (at least `min_cases` of them) agrees with Confluent.
fn assert_table_agrees(file: &str, min_cases: usize) {
    let (count, failures) = run_table(file);
    assert!(count >= min_cases, "{count} cases");
    assert!(failures.is_empty(), "{} of {count} failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn confluent_diff_schema_examples() {
    assert_table_agrees("diff-schema-examples.json", 104);
}

#[test]
fn confluent_diff_combined_schema_examples() {
    assert_table_agrees("diff-combined-schema-examples.json", 28);
}

#[test]
fn confluent_diff_schema_examples_2020_12() {
    assert_table_agrees("diff-schema-examples-2020-12.json", 110);
}

#[test]
fn confluent_diff_combined_schema_examples_2020_12() {
    assert_table_agrees("diff-combined-schema-examples-2020-12.json", 18);
}
