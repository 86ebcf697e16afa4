//! JSON Schema compatibility by level (`tests/fixtures/json-compat/levels.json`), through references, with
//! Confluent's verbose messages and normalized schemas; and property tests: no input panics the checker, and
//! every valid schema is compatible with itself at every level.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use registry_schema::compat::CompatibilityLevel;
use registry_schema::{Dependency, ParsedSchema, SchemaType, Validation};
use serde_json::{Value, json};
use std::path::PathBuf;
use support::check;

fn parse(text: &str, dependencies: &[Dependency]) -> ParsedSchema {
    ParsedSchema::parse(SchemaType::Json, text, dependencies, Validation::Strict, false)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn level_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/json-compat/levels.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let level: CompatibilityLevel = case["level"].as_str().unwrap().parse().unwrap();
        let old = parse(&case["old"].to_string(), &[]);
        let new = parse(&case["new"].to_string(), &[]);
        let found = check(level, &new, &[&old]);
        if found.is_empty() != case["compatible"].as_bool().unwrap() {
            failures.push(format!("{} at {level}: {:?}", case["description"], found));
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

fn dependency(name: &str, schema: &Value) -> Dependency {
    Dependency { name: name.into(), schema_type: SchemaType::Json, schema: schema.to_string() }
}

#[test]
fn changes_inside_a_referenced_schema_are_found_through_the_reference() {
    let main = r#"{"type":"object","properties":{"home":{"$ref":"address.json"}}}"#;
    let v1 = json!({"type":"object","properties":{"street":{"type":"string"}}});
    let v2 = json!({"type":"object","properties":{"street":{"type":"number"}}});
    let old = parse(main, &[dependency("address.json", &v1)]);
    let new = parse(main, &[dependency("address.json", &v2)]);
    let found = check(CompatibilityLevel::Backward, &new, &[&old]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, "TYPE_CHANGED");
    assert_eq!(found[0].path, "#/properties/home/properties/street");
    let same = parse(main, &[dependency("address.json", &v1)]);
    assert!(check(CompatibilityLevel::FullTransitive, &same, &[&old]).is_empty());
}

#[test]
fn references_resolve_against_the_root_id_and_into_fragments() {
    let main = r#"{"$id":"https://example.com/schemas/order.json","type":"object",
        "properties":{"amount":{"$ref":"money.json#/definitions/amount"}}}"#;
    let v1 = json!({"definitions":{"amount":{"type":"integer"}}});
    let v2 = json!({"definitions":{"amount":{"type":"number"}}});
    let old = parse(main, &[dependency("money.json", &v1)]);
    let new = parse(main, &[dependency("money.json", &v2)]);
    assert!(check(CompatibilityLevel::Backward, &new, &[&old]).is_empty());
    let forward = check(CompatibilityLevel::Forward, &new, &[&old]);
    assert_eq!(forward.iter().map(|i| i.kind.as_str()).collect::<Vec<_>>(), ["TYPE_NARROWED"]);
}

#[test]
fn verbose_messages_are_confluents_difference_strings_with_reader_first() {
    let old = parse(r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#, &[]);
    let new = parse(r#"{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":false}"#, &[]);
    let backward = check(CompatibilityLevel::Backward, &new, &[&old]);
    assert_eq!(
        backward[0].message,
        "{errorType:\"TYPE_CHANGED\", description:\"A type at path '#/properties/a' is different between the new schema and the old schema\"}"
    );
    let forward = check(CompatibilityLevel::Forward, &new, &[&old]);
    assert!(forward[0].message.contains("between the old schema and the new schema"), "{}", forward[0].message);
    let removed = parse(r#"{"type":"object","properties":{},"additionalProperties":false}"#, &[]);
    let found = check(CompatibilityLevel::Backward, &removed, &[&old]);
    assert_eq!(found[0].kind, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL");
    assert_eq!(
        found[0].message,
        "{errorType:\"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL\", description:\"The new schema has a closed content model and is missing a property or item present at path '#/properties/a' in the old schema\"}"
    );
    let full = check(CompatibilityLevel::Full, &removed, &[&old]);
    assert!(full.is_empty() || full.iter().any(|i| i.message.contains("new schema has a closed content model")));
}

#[test]
fn normalized_and_submitted_forms_are_fully_compatible() {
    let text = r#"{"type":"object","required":["b"],"properties":{"b":{"type":"string"},"a":{"enum":[2,1]}}}"#;
    let raw = parse(text, &[]);
    let normalized = ParsedSchema::parse(SchemaType::Json, text, &[], Validation::Strict, true).unwrap();
    assert_ne!(raw.canonical_text(), normalized.canonical_text());
    assert!(check(CompatibilityLevel::FullTransitive, &normalized, &[&raw]).is_empty());
}

fn schema_like() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec!["string", "number", "integer", "boolean", "null", "object", "array"])
            .prop_map(|t| json!({ "type": t })),
        prop::collection::vec(0i64..4, 0..4).prop_map(|v| json!({ "enum": v })),
        (0u32..20).prop_map(|n| json!({"type":"string","maxLength": n})),
        (0i64..20).prop_map(|n| json!({"minimum": n, "multipleOf": n})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/definitions/x"})),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let name = prop::sample::select(vec!["a", "b", "bar", "foo", "S_1"]);
        prop_oneof![
            (prop::collection::btree_map(name.clone(), inner.clone(), 0..4), prop::collection::vec(name, 0..3), any::<bool>())
                .prop_map(|(props, required, closed)| json!({"properties": props, "required": required, "additionalProperties": !closed, "definitions": {"x": {"type": "string"}}})),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| json!({ "anyOf": v })),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({ "oneOf": v, "type": "object" })),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({ "allOf": v })),
            inner.clone().prop_map(|v| json!({ "not": v })),
            (prop::collection::vec(inner.clone(), 0..3), inner.clone())
                .prop_map(|(items, rest)| json!({"type": "array", "items": items, "additionalItems": rest})),
            inner.clone().prop_map(|v| json!({"patternProperties": {"^S_": v}, "additionalProperties": false})),
        ]
    })
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z$#/]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["type", "properties", "items", "anyOf", "$ref", "not", "enum", "x"]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_valid_schema_is_compatible_with_itself(schema in schema_like()) {
        if let Ok(parsed) = ParsedSchema::parse(SchemaType::Json, &schema.to_string(), &[], Validation::Strict, false) {
            for level in CompatibilityLevel::ALL {
                let found = check(level, &parsed, &[&parsed]);
                prop_assert!(found.is_empty(), "{schema} at {level}: {found:?}");
            }
        }
    }

    #[test]
    fn arbitrary_pairs_never_panic(a in prop_oneof![schema_like(), any_json()], b in prop_oneof![schema_like(), any_json()]) {
        let parse = |v: &Value| ParsedSchema::parse(SchemaType::Json, &v.to_string(), &[], Validation::Lenient, false);
        if let (Ok(a), Ok(b)) = (parse(&a), parse(&b)) {
            let full = check(CompatibilityLevel::Full, &a, &[&b]);
            let backward = check(CompatibilityLevel::Backward, &a, &[&b]);
            let forward = check(CompatibilityLevel::Forward, &a, &[&b]);
            prop_assert_eq!(full.len(), backward.len() + forward.len());
        }
    }
}
