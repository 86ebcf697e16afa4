//! Confluent's JSON Schema `SchemaDiffTest` unit cases, ported: exact `multipleOf` decimals, Kafka Connect's
//! `connect.type: bytes` tolerance, and recursive `oneOf` unions through `$ref` cycles, which must terminate
//! within the work budget and must not hide an incompatible change behind the pair memo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use registry_schema::compat::{self, CompatibilityLevel};
use registry_schema::json_schema::compat::differences;
use registry_schema::{Limits, ParsedSchema, SchemaType, Validation};
use serde_json::{Value, json};

fn parse(value: &Value) -> ParsedSchema {
    ParsedSchema::parse(SchemaType::Json, &value.to_string(), &[], Validation::Strict, false)
        .unwrap_or_else(|e| panic!("{value}: {e}"))
}

fn changes(original: &Value, update: &Value) -> Vec<String> {
    let (ParsedSchema::Json(original), ParsedSchema::Json(update)) = (parse(original), parse(update)) else {
        unreachable!("parsed as JSON")
    };
    differences(&original, &update).iter().map(|d| format!("{} {}", d.change.as_str(), d.json_path())).collect()
}

#[test]
fn a_fractional_multiple_of_grows_to_a_whole_multiple() {
    let (half, ten) = (json!({"type": "number", "multipleOf": 0.5}), json!({"type": "number", "multipleOf": 10}));
    assert_eq!(changes(&half, &ten), ["MULTIPLE_OF_EXPANDED #/multipleOf"]);
    assert_eq!(changes(&ten, &half), ["MULTIPLE_OF_REDUCED #/multipleOf"]);
    let point_one = json!({"type": "number", "multipleOf": 0.1});
    let point_three = json!({"type": "number", "multipleOf": 0.3});
    assert_eq!(changes(&point_one, &point_three), ["MULTIPLE_OF_EXPANDED #/multipleOf"], "exact, not binary");
    let three = json!({"type": "number", "multipleOf": 3});
    assert_eq!(changes(&ten, &three), ["MULTIPLE_OF_CHANGED #/multipleOf"]);
}

#[test]
fn a_multiple_of_written_with_another_scale_is_no_change() {
    let text = |literal: &str| format!("{{\"type\":\"number\",\"multipleOf\":{literal}}}");
    let parse = |t: &str| ParsedSchema::parse(SchemaType::Json, t, &[], Validation::Strict, false).unwrap();
    let (ParsedSchema::Json(a), ParsedSchema::Json(b)) = (parse(&text("0.5")), parse(&text("0.50"))) else {
        unreachable!("parsed as JSON")
    };
    assert!(differences(&a, &b).is_empty());
}

#[test]
fn connect_bytes_decimals_may_change_their_json_type() {
    let decimal = |ty: &str, connect: &str| {
        json!({"type": ty, "title": "org.apache.kafka.connect.data.Decimal", "connect.version": 1,
               "connect.type": connect, "connect.parameters": {"scale": "2"}})
    };
    assert!(changes(&decimal("string", "bytes"), &decimal("number", "bytes")).is_empty());
    let (old, new) = (parse(&decimal("string", "bytes")), parse(&decimal("number", "bytes")));
    assert!(support::check(CompatibilityLevel::Full, &new, &[&old]).is_empty());
    assert_eq!(changes(&decimal("string", "int64"), &decimal("number", "int64")), ["TYPE_CHANGED #/"]);
    assert_eq!(changes(&decimal("string", "bytes"), &decimal("number", "int64")), ["TYPE_CHANGED #/"]);
}

#[test]
fn properties_alone_make_an_object_schema_before_2019_09() {
    assert!(!changes(&json!({}), &json!({"properties": {}})).is_empty());
}

/// Twelve product types, each with two properties that are a `oneOf` of all twelve (`SchemaDiffTest`).
fn trade_schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/json-compat/recursive-trade.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"))
}

#[test]
fn a_recursive_one_of_union_terminates_within_the_default_budget() {
    let schema = parse(&trade_schema());
    let checked = compat::check_within(CompatibilityLevel::Full, &schema, &[&schema], &Limits::default()).unwrap();
    assert!(checked.incompatibilities.is_empty());
    assert!(checked.work < Limits::default().max_work / 2, "{} units", checked.work);
}

/// Confluent's `testRecursiveOneOfUnionDetectsIncompatibleChange` (350fdb61080, 33657e5b611): each `$ref`
/// of a union is its own subschema, so the twelve alike definitions are matched one to one and the changed
/// one is left without a partner. Found within the default budget: a memoized pair's differences are
/// shared wherever the pair is met again instead of copied (copying them cost 258,777 units here, over the
/// 200,000 budget, so this answered 42201).
#[test]
fn a_recursive_one_of_union_still_sees_a_deep_type_change() {
    let mut changed = trade_schema();
    changed["definitions"]["Asset"]["properties"]["id"]["type"] = json!("number");
    let (new, old) = (parse(&changed), parse(&trade_schema()));
    let checked = compat::check_within(CompatibilityLevel::Backward, &new, &[&old], &Limits::default())
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(checked.incompatibilities.iter().any(|i| i.kind == "COMBINED_TYPE_SUBSCHEMAS_CHANGED"), "{checked:?}");
    assert!(checked.work < Limits::default().max_work * 3 / 4, "{} units", checked.work);
}

/// `T0` and `T1` carry an `id` of the given types and a `ref` that is a one-subschema `oneOf`:
/// `T0.ref → T2`, `T1.ref → T2`, `T2.ref → T0` (a cycle); the root property is `oneOf[T0, T1]`.
fn memo_masking_schema(t0_id: &str, t1_id: &str) -> Value {
    let object = |id: &str, target: &str| {
        json!({"type": "object", "additionalProperties": true, "properties": {
            "id": {"type": id}, "ref": {"oneOf": [{"$ref": format!("#/definitions/{target}")}]}}})
    };
    json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": true,
           "definitions": {"T0": object(t0_id, "T2"), "T1": object(t1_id, "T2"), "T2": object("integer", "T0")},
           "properties": {"root": {"oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}]}}})
}

#[test]
fn the_pair_memo_does_not_hide_an_incompatibility_behind_a_cycle() {
    let (old, new) =
        (parse(&memo_masking_schema("integer", "boolean")), parse(&memo_masking_schema("boolean", "number")));
    let found = support::check(CompatibilityLevel::Backward, &new, &[&old]);
    assert!(!found.is_empty(), "a recursive oneOf incompatibility must not be masked");
    let same = parse(&memo_masking_schema("integer", "boolean"));
    assert!(support::check(CompatibilityLevel::Full, &same, &[&old]).is_empty());
}
