//! Protobuf compatibility, table-driven from `<workspace>/tests/fixtures/protobuf-compat/`:
//! Confluent's `diff-schema-examples.json` (changes and verdict of each pair) and `levels.json`
//! (verdict per level, both directions and FULL), run through `ParsedSchema` and `compat::check`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use registry_schema::compat::{self, CompatibilityLevel, Rules};
use registry_schema::protobuf::ProtobufSchema;
use registry_schema::protobuf::compat::diff;
use registry_schema::{Dependency, Limits, ParsedSchema, SchemaFormat, SchemaType, Validation};
use serde_json::Value;
use std::path::PathBuf;
use support::check;

fn fixture(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/protobuf-compat").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn dependencies(case: &Value, key: &str) -> Vec<Dependency> {
    case[key]
        .as_array()
        .map(|deps| {
            deps.iter()
                .map(|d| Dependency {
                    name: d["name"].as_str().unwrap().to_string(),
                    schema_type: SchemaType::Protobuf,
                    schema: d["dependency"].as_str().unwrap().to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The schema under `case[side]` with the dependencies under `case[deps]`.
fn parse_side(case: &Value, side: &str, deps: &str, description: &str) -> ProtobufSchema {
    parse(case[side].as_str().unwrap(), &dependencies(case, deps), &format!("{description} ({side})"))
}

fn parse(text: &str, deps: &[Dependency], what: &str) -> ProtobufSchema {
    ProtobufSchema::parse(text, deps, Validation::Strict, false).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Runs `case_failures` over every case of the table `file` (at least `min_cases`), which pushes
/// what it finds wrong with the case named `description`; fails listing all of them.
fn assert_table(file: &str, min_cases: usize, mut case_failures: impl FnMut(&Value, &str, &mut Vec<String>)) {
    let cases = fixture(file);
    assert!(cases.len() >= min_cases, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        case_failures(case, case["description"].as_str().unwrap(), &mut failures);
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn confluent_diff_examples_give_the_same_changes_and_verdicts() {
    assert_table("diff-schema-examples.json", 54, |case, description, failures| {
        let original = parse_side(case, "original_schema", "original_dependencies", description);
        let update = parse_side(case, "update_schema", "update_dependencies", description);
        let mut got: Vec<String> = diff(&original, &update).iter().map(ToString::to_string).collect();
        let mut want: Vec<String> =
            case["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
        got.sort();
        want.sort();
        let compatible = case["compatible"].as_bool().unwrap();
        let verdict = check(
            CompatibilityLevel::Backward,
            &ParsedSchema::Protobuf(update.clone()),
            &[&ParsedSchema::Protobuf(original.clone())],
        )
        .is_empty();
        if got != want || verdict != compatible {
            failures
                .push(format!("{description}: changes {got:?} want {want:?}; compatible {verdict} want {compatible}"));
        }
    });
}

#[test]
fn level_table_verdicts_hold_in_both_directions_and_full() {
    assert_table("levels.json", 20, |case, description, failures| {
        let old = ParsedSchema::Protobuf(parse_side(case, "old", "old_dependencies", description));
        let new = ParsedSchema::Protobuf(parse_side(case, "new", "new_dependencies", description));
        let backward = case["backward"].as_bool().unwrap();
        let forward = case["forward"].as_bool().unwrap();
        for (level, want) in [
            (CompatibilityLevel::Backward, backward),
            (CompatibilityLevel::Forward, forward),
            (CompatibilityLevel::Full, backward && forward),
            (CompatibilityLevel::FullTransitive, backward && forward),
            (CompatibilityLevel::None, true),
        ] {
            let found = check(level, &new, &[&old]);
            if found.is_empty() != want {
                failures
                    .push(format!("{description} at {level}: compatible {} want {want}: {found:?}", found.is_empty()));
            }
        }
    });
}

#[test]
fn messages_carry_confluents_error_type_and_roles() {
    let old = "syntax = \"proto3\";\nmessage M {\n  int32 a = 1;\n}\n";
    let new = "syntax = \"proto3\";\nmessage M {\n  string a = 1;\n}\n";
    let parse = |t: &str| ParsedSchema::parse(SchemaType::Protobuf, t, &[], Validation::Strict, false).unwrap();
    let found = check(CompatibilityLevel::Backward, &parse(new), &[&parse(old)]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "FIELD_SCALAR_KIND_CHANGED");
    assert_eq!(found[0].path, "#/M/1");
    assert_eq!(
        found[0].message,
        "{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a SCALAR field at path '#/M/1' in the new \
         schema does not match its kind in the old schema\"}"
    );
    let full = check(CompatibilityLevel::Full, &parse(new), &[&parse(old)]);
    assert_eq!(full.len(), 2, "FULL reports the backward then the forward finding: {full:?}");
    assert!(full[1].message.contains("in the old schema does not match its kind in the new schema"), "{full:?}");
}

#[test]
fn recursive_messages_terminate() {
    let old = "syntax = \"proto3\";\nmessage Node {\n  Node next = 1;\n  int32 v = 2;\n}\n";
    let new = "syntax = \"proto3\";\nmessage Node {\n  Node next = 1;\n  int64 v = 2;\n  string tag = 3;\n}\n";
    let (old, new) = (parse(old, &[], "old"), parse(new, &[], "new"));
    let changes: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
    assert_eq!(changes, ["FIELD_ADDED #/Node/3"]);
}

#[test]
fn a_package_change_is_incompatible_unless_the_older_rule_is_chosen() {
    let parse = |t: &str| ParsedSchema::parse(SchemaType::Protobuf, t, &[], Validation::Strict, false).unwrap();
    let old = parse("syntax = \"proto3\";\npackage a;\nmessage M {\n  int32 n = 1;\n}\n");
    let new = parse("syntax = \"proto3\";\npackage b;\nmessage M {\n  int32 n = 1;\n}\n");
    let limits = Limits::default();
    let current = compat::check_within(CompatibilityLevel::Full, &new, &[&old], &limits).unwrap();
    let kinds: Vec<&str> = current.incompatibilities.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["PACKAGE_CHANGED", "PACKAGE_CHANGED"], "backward then forward");
    let older = Rules { protobuf_package_change: true };
    let checked = compat::check_with(CompatibilityLevel::Full, &new, &[&old], &limits, &older).unwrap();
    assert!(checked.incompatibilities.is_empty(), "{:?}", checked.incompatibilities);
    let other = parse("syntax = \"proto3\";\npackage b;\nmessage M {\n  string n = 1;\n}\n");
    let checked = compat::check_with(CompatibilityLevel::Backward, &other, &[&old], &limits, &older).unwrap();
    let kinds: Vec<&str> = checked.incompatibilities.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["FIELD_SCALAR_KIND_CHANGED"], "the older rule relaxes the package only");
}
