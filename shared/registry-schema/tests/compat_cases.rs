//! Table-driven Avro compatibility cases from `<workspace>/tests/fixtures/compat/*.json`.
//!
//! Each case is `{"description", "level", "previous": [schemas, newest first], "new": schema, "compatible": bool}`
//! with an optional `"errors": [{"kind", "path", "previous_index"?}]` listing the expected findings in order.
//! Schemas are JSON values; their compact text is what gets parsed. Every case goes through
//! `ParsedSchema::parse` and `compat::check`, as the registry does.

use registry_schema::compat::{self, CompatibilityLevel};
use registry_schema::{Incompatibility, ParsedSchema, SchemaType, Validation};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    level: String,
    previous: Vec<serde_json::Value>,
    new: serde_json::Value,
    compatible: bool,
    #[serde(default)]
    errors: Option<Vec<ExpectedError>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedError {
    kind: String,
    path: String,
    #[serde(default)]
    previous_index: usize,
}

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/compat")
}

fn load_cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap_or_else(|e| panic!("{}: {e}", fixture_dir().display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed: Vec<Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not a case table: {e}", file.display()));
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        cases.extend(parsed.into_iter().map(|case| (name.clone(), case)));
    }
    cases
}

fn parse(value: &serde_json::Value) -> Result<ParsedSchema, String> {
    let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
    ParsedSchema::parse(SchemaType::Avro, &text, &[], Validation::Strict, false).map_err(|e| format!("{text}: {e}"))
}

fn run(case: &Case) -> Result<Vec<Incompatibility>, String> {
    let level: CompatibilityLevel = case.level.parse().map_err(|e| format!("{e}"))?;
    let new = parse(&case.new)?;
    let previous = case.previous.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
    let previous: Vec<&ParsedSchema> = previous.iter().collect();
    compat::check(level, &new, &previous).map_err(|e| e.to_string())
}

fn mismatch(case: &Case, found: &[Incompatibility]) -> Option<String> {
    if found.is_empty() != case.compatible {
        return Some(format!("expected compatible={}, got {found:#?}", case.compatible));
    }
    let expected = case.errors.as_ref()?;
    let got: Vec<(&str, &str, usize)> =
        found.iter().map(|i| (i.kind.as_str(), i.path.as_str(), i.previous_index)).collect();
    let want: Vec<(&str, &str, usize)> =
        expected.iter().map(|e| (e.kind.as_str(), e.path.as_str(), e.previous_index)).collect();
    (got != want).then(|| format!("expected findings {want:?}, got {got:?}"))
}

#[test]
fn every_fixture_case_gets_its_verdict() {
    let cases = load_cases();
    assert!(cases.len() >= 150, "only {} cases found in {}", cases.len(), fixture_dir().display());
    let mut failures = Vec::new();
    for (file, case) in &cases {
        match run(case) {
            Ok(found) => {
                if let Some(why) = mismatch(case, &found) {
                    failures.push(format!("{file}: {}: {why}", case.description));
                }
            }
            Err(e) => failures.push(format!("{file}: {}: setup failed: {e}", case.description)),
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn fixtures_cover_every_level_and_both_verdicts() {
    let cases = load_cases();
    for level in CompatibilityLevel::ALL {
        let at_level: Vec<&Case> = cases.iter().map(|(_, c)| c).filter(|c| c.level == level.as_str()).collect();
        assert!(at_level.iter().any(|c| c.compatible), "no compatible case at {level}");
        if level != CompatibilityLevel::None {
            assert!(at_level.iter().any(|c| !c.compatible), "no incompatible case at {level}");
        }
        if level.is_transitive() {
            assert!(
                at_level.iter().any(|c| !c.compatible && c.previous.len() >= 2),
                "no {level} case where an older version decides the verdict"
            );
        }
    }
}

fn one(level: &str, previous: serde_json::Value, new: serde_json::Value) -> Vec<Incompatibility> {
    let case = Case {
        description: String::new(),
        level: level.into(),
        previous: vec![previous],
        new,
        compatible: false,
        errors: None,
    };
    run(&case).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn backward_message_matches_confluent_text() {
    let old = serde_json::json!({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]});
    let new = serde_json::json!({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"}, {"name": "x", "type": "string"}]});
    let found = one("BACKWARD", old, new);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].message,
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'x' at path '/fields/1' in the new \
         schema has no default value and is missing in the old schema', additionalInfo:'x'}"
    );
}

#[test]
fn forward_message_swaps_new_and_old() {
    let old = serde_json::json!({"type": "enum", "name": "E", "symbols": ["A"]});
    let new = serde_json::json!({"type": "enum", "name": "E", "symbols": ["A", "C", "B"]});
    let found = one("FORWARD", old, new);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].message,
        "{errorType:'MISSING_ENUM_SYMBOLS', description:'The old schema is missing enum symbols '[B, C]' at path \
         '/symbols' in the new schema', additionalInfo:'[B, C]'}"
    );
}

#[test]
fn type_name_fixed_and_union_messages_match_confluent_text() {
    let found = one("BACKWARD", serde_json::json!("string"), serde_json::json!("int"));
    assert_eq!(
        found[0].message,
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/') of a field in the new schema does not match \
         with the old schema', additionalInfo:'reader type: INT not compatible with writer type: STRING'}"
    );
    let found = one(
        "BACKWARD",
        serde_json::json!({"type": "fixed", "name": "a.F", "size": 4}),
        serde_json::json!({"type": "fixed", "name": "G", "size": 8}),
    );
    let messages: Vec<&str> = found.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "{errorType:'NAME_MISMATCH', description:'The name of the schema has changed (path '/name')', \
             additionalInfo:'expected: a.F'}",
            "{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at path '/size' in the new \
             schema does not match with the old schema', additionalInfo:'expected: 4, found: 8'}",
        ]
    );
    let found = one("FORWARD", serde_json::json!(["null", "int"]), serde_json::json!(["null", "int", "string"]));
    assert_eq!(
        found[0].message,
        "{errorType:'MISSING_UNION_BRANCH', description:'The old schema is missing a type inside a union field at \
         path '/2' in the new schema', additionalInfo:'reader union lacking writer type: STRING'}"
    );
}
