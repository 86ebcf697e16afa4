//! Properties of Avro compatibility over generated schemas: a schema always follows itself, FULL is
//! exactly BACKWARD and FORWARD, and FORWARD of (new, old) is BACKWARD of (old, new).

use proptest::prelude::*;
use registry_schema::compat::{self, CompatibilityLevel};
use registry_schema::{ParsedSchema, SchemaType, Validation};
use serde_json::{Value, json};

const PRIMITIVES: [&str; 8] = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"];

fn primitive() -> impl Strategy<Value = Value> {
    prop::sample::select(PRIMITIVES.to_vec()).prop_map(|name| json!(name))
}

/// A default valid for a non-union, non-named type, when there is an obvious one.
fn default_for(schema: &Value) -> Option<Value> {
    match schema.as_str()? {
        "null" => Some(Value::Null),
        "boolean" => Some(json!(false)),
        "int" | "long" => Some(json!(0)),
        "float" | "double" => Some(json!(0.5)),
        "bytes" | "string" => Some(json!("")),
        _ => None,
    }
}

/// Any Avro schema shape. Named types get the placeholder name "N"; [`name_uniquely`] fixes them up.
fn any_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        4 => primitive(),
        1 => prop::collection::btree_set("[A-E]", 1..4)
            .prop_map(|symbols| json!({"type": "enum", "name": "N", "symbols": symbols})),
        1 => (1usize..20).prop_map(|size| json!({"type": "fixed", "name": "N", "size": size})),
        1 => Just(json!({"type": "long", "logicalType": "timestamp-millis"})),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            inner.clone().prop_map(|values| json!({"type": "map", "values": values})),
            (
                prop::collection::btree_set(prop::sample::select(PRIMITIVES.to_vec()), 1..4),
                prop::option::of(inner.clone())
            )
                .prop_map(|(branches, extra)| {
                    let mut union: Vec<Value> = branches.into_iter().map(|b| json!(b)).collect();
                    if let Some(extra) = extra.filter(|e| e.is_object() && e.get("type") != Some(&json!("long"))) {
                        union.push(extra);
                    }
                    Value::Array(union)
                }),
            prop::collection::vec((inner, any::<bool>()), 0..5).prop_map(|fields| {
                let fields: Vec<Value> = fields
                    .into_iter()
                    .enumerate()
                    .map(|(i, (schema, with_default))| {
                        let mut field = json!({"name": format!("f{i}"), "type": schema});
                        if let (true, Some(default)) = (with_default, default_for(&field["type"])) {
                            field["default"] = default;
                        }
                        field
                    })
                    .collect();
                json!({"type": "record", "name": "N", "fields": fields})
            }),
        ]
    })
}

/// Gives every named type a distinct name (N0, N1, ...), so the schema never redefines a name.
fn name_uniquely(schema: &mut Value, next: &mut usize) {
    match schema {
        Value::Array(branches) => branches.iter_mut().for_each(|b| name_uniquely(b, next)),
        Value::Object(object) => {
            if object.get("name").is_some() {
                object.insert("name".into(), json!(format!("N{next}")));
                *next += 1;
            }
            for key in ["items", "values"] {
                if let Some(child) = object.get_mut(key) {
                    name_uniquely(child, next);
                }
            }
            if let Some(Value::Array(fields)) = object.get_mut("fields") {
                for field in fields {
                    if let Some(child) = field.get_mut("type") {
                        name_uniquely(child, next);
                    }
                }
            }
        }
        _ => {}
    }
}

fn valid_schema() -> impl Strategy<Value = Value> {
    any_schema().prop_map(|mut schema| {
        name_uniquely(&mut schema, &mut 0);
        schema
    })
}

/// Records named "R" over a small pool of field names and types, so that pairs are often but not
/// always compatible.
fn small_record() -> impl Strategy<Value = Value> {
    let field_type = prop::sample::select(vec![
        json!("int"),
        json!("long"),
        json!("double"),
        json!("string"),
        json!("bytes"),
        json!(["null", "int"]),
        json!(["null", "string", "long"]),
        json!({"type": "enum", "name": "E", "symbols": ["A", "B"]}),
        json!({"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}),
        json!({"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "A"}),
        json!({"type": "array", "items": "int"}),
        json!({"type": "array", "items": "long"}),
        json!({"type": "map", "values": "string"}),
    ]);
    prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c", "d"]), (field_type, any::<bool>()), 0..4)
        .prop_map(|fields| {
            let fields: Vec<Value> = fields
                .into_iter()
                .map(|(name, (schema, with_default))| {
                    let mut field = json!({"name": name, "type": schema});
                    if with_default {
                        let default = match &field["type"] {
                            Value::Array(_) => Value::Null,
                            Value::Object(o) if o.get("type") == Some(&json!("enum")) => json!("A"),
                            Value::Object(o) if o.get("type") == Some(&json!("array")) => json!([]),
                            Value::Object(_) => json!({}),
                            other => default_for(other).unwrap_or(Value::Null),
                        };
                        field["default"] = default;
                    }
                    field
                })
                .collect();
            json!({"type": "record", "name": "R", "fields": fields})
        })
}

fn parse(schema: &Value) -> Option<ParsedSchema> {
    ParsedSchema::parse(SchemaType::Avro, &schema.to_string(), &[], Validation::Strict, false).ok()
}

fn compatible(level: CompatibilityLevel, new: &ParsedSchema, previous: &[&ParsedSchema]) -> bool {
    compat::check(level, new, previous).is_ok_and(|found| found.is_empty())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_valid_schema_is_compatible_with_itself_at_every_level(schema in valid_schema()) {
        let parsed = ParsedSchema::parse(SchemaType::Avro, &schema.to_string(), &[], Validation::Strict, false);
        prop_assert!(parsed.is_ok(), "generator made an invalid schema: {} ({:?})", schema, parsed.err());
        let Ok(parsed) = parsed else { return Ok(()) };
        for level in CompatibilityLevel::ALL {
            let found = compat::check(level, &parsed, &[&parsed, &parsed]).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(found.is_empty(), "{schema} vs itself at {level}: {found:?}");
        }
    }

    #[test]
    fn full_is_backward_and_forward(old in small_record(), new in small_record()) {
        let (Some(old), Some(new)) = (parse(&old), parse(&new)) else {
            return Err(TestCaseError::reject("invalid pair"));
        };
        let backward = compatible(CompatibilityLevel::Backward, &new, &[&old]);
        let forward = compatible(CompatibilityLevel::Forward, &new, &[&old]);
        prop_assert_eq!(compatible(CompatibilityLevel::Full, &new, &[&old]), backward && forward);
        prop_assert_eq!(compatible(CompatibilityLevel::FullTransitive, &new, &[&old, &new]), backward && forward);
        prop_assert_eq!(forward, compatible(CompatibilityLevel::Backward, &old, &[&new]));
    }

    #[test]
    fn full_findings_are_forward_then_backward_findings(old in small_record(), new in small_record()) {
        let (Some(old), Some(new)) = (parse(&old), parse(&new)) else {
            return Err(TestCaseError::reject("invalid pair"));
        };
        let within = |level| compat::check(level, &new, &[&old]).map_err(|e| TestCaseError::fail(e.to_string()));
        let mut expected = within(CompatibilityLevel::Forward)?;
        expected.extend(within(CompatibilityLevel::Backward)?);
        prop_assert_eq!(within(CompatibilityLevel::Full)?, expected);
    }
}

#[test]
fn the_pair_generator_yields_both_verdicts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut yes, mut no) = (0, 0);
    for _ in 0..200 {
        let (Ok(old), Ok(new)) = (small_record().new_tree(&mut runner), small_record().new_tree(&mut runner)) else {
            continue;
        };
        if let (Some(old), Some(new)) = (parse(&old.current()), parse(&new.current())) {
            if compatible(CompatibilityLevel::Full, &new, &[&old]) { yes += 1 } else { no += 1 }
        }
    }
    assert!(yes >= 10 && no >= 10, "FULL verdicts: {yes} compatible, {no} incompatible");
}
