//! Numbers in schema text keep every digit: the stored text and the fingerprint of two schemas that
//! differ only beyond what an `f64` holds are different, and compatibility compares numbers by value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_schema::canonical::Fingerprint;
use registry_schema::compat::CompatibilityLevel;
use registry_schema::{ParsedSchema, SchemaType, Validation};

fn parse(schema_type: SchemaType, text: &str) -> ParsedSchema {
    ParsedSchema::parse(schema_type, text, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn stored(schema_type: SchemaType, text: &str) -> String {
    parse(schema_type, text).canonical_text().to_string()
}

fn fingerprint(schema_type: SchemaType, text: &str) -> Fingerprint {
    Fingerprint::of(schema_type, &stored(schema_type, text), &[], None, None)
}

fn compatible(schema_type: SchemaType, new: &str, old: &str) -> bool {
    let (new, old) = (parse(schema_type, new), parse(schema_type, old));
    registry_schema::compat::check(CompatibilityLevel::Full, &new, &[&old]).expect("within the budgets").is_empty()
}

#[test]
fn json_schema_integers_beyond_64_bits_keep_their_digits() {
    let (a, b) = (r#"{"const":12345678901234567890123}"#, r#"{"const":12345678901234567890124}"#);
    assert_eq!(stored(SchemaType::Json, a), a);
    assert_eq!(stored(SchemaType::Json, b), b);
    assert_ne!(fingerprint(SchemaType::Json, a), fingerprint(SchemaType::Json, b));
    let many = r#"{"enum":[-340282366920938463463374607431768211457,1.000000000000000000000000001]}"#;
    assert_eq!(stored(SchemaType::Json, many), many);
}

#[test]
fn json_schema_keeps_long_decimals_in_keywords_and_normalized_text() {
    let text = r#"{"type":"number","minimum":0.30000000000000000000001,"maximum":1e400000}"#;
    let outcome = ParsedSchema::parse(SchemaType::Json, text, &[], Validation::Strict, true);
    // Beyond f64's range is refused by the JSON reader, as before; within it, every digit is kept.
    assert!(outcome.is_err(), "1e400000 is out of range");
    let text = r#"{"type":"number","minimum":0.30000000000000000000001,"default":99999999999999999999999}"#;
    let normalized = ParsedSchema::parse(SchemaType::Json, text, &[], Validation::Strict, true).unwrap();
    assert_eq!(
        normalized.canonical_text(),
        r#"{"default":99999999999999999999999,"minimum":0.30000000000000000000001,"type":"number"}"#
    );
}

#[test]
fn numbers_an_f64_holds_are_stored_as_before() {
    let text = r#"{"type":"integer","minimum":0,"maximum":1e2,"multipleOf":0.50,"default":-0}"#;
    let before = serde_json::from_str::<serde_json::Value>(text).unwrap().to_string();
    assert_eq!(stored(SchemaType::Json, text), before);
}

#[test]
fn json_schema_compatibility_compares_numbers_by_value() {
    let json = SchemaType::Json;
    assert!(compatible(json, r#"{"const":1}"#, r#"{"const":1.0}"#), "1 and 1.0 are the same number");
    assert!(compatible(json, r#"{"enum":[100,"a"]}"#, r#"{"enum":["a",1e2]}"#));
    assert!(!compatible(json, r#"{"const":12345678901234567890123}"#, r#"{"const":12345678901234567890124}"#));
    assert!(!compatible(json, r#"{"enum":[12345678901234567890123]}"#, r#"{"enum":[12345678901234567890124]}"#));
}

#[test]
fn avro_integers_beyond_64_bits_keep_their_digits_in_defaults_and_properties() {
    let record = |default: &str, prop: &str| {
        format!(
            r#"{{"type":"record","name":"R","fields":[{{"name":"a","type":"double","default":{default}}}],"x-limit":{prop}}}"#
        )
    };
    let a = record("12345678901234567890123", "98765432109876543210987");
    let b = record("12345678901234567890124", "98765432109876543210987");
    let c = record("12345678901234567890123", "98765432109876543210988");
    for text in [&a, &b, &c] {
        assert_eq!(&stored(SchemaType::Avro, text), text, "Java writes big integers with all their digits");
    }
    assert_ne!(fingerprint(SchemaType::Avro, &a), fingerprint(SchemaType::Avro, &b));
    assert_ne!(fingerprint(SchemaType::Avro, &a), fingerprint(SchemaType::Avro, &c));
    // Decimals are doubles in Java Avro too: written as `Double.toString` writes the nearest double.
    let decimal = record("1.50", "2.5e3");
    assert_eq!(stored(SchemaType::Avro, &decimal), record("1.5", "2500.0"));
}

#[test]
fn protobuf_integer_defaults_keep_their_digits() {
    // Protobuf is not JSON: its numbers are read by the Protobuf parser, integers to the full 64 bits.
    let text = "syntax = \"proto2\";\n\nmessage M {\n  optional uint64 u = 1 [default = 18446744073709551615];\n  optional sint64 s = 2 [default = -9223372036854775808];\n}\n";
    let stored = stored(SchemaType::Protobuf, text);
    assert!(stored.contains("[default = 18446744073709551615]"), "{stored}");
    assert!(stored.contains("[default = -9223372036854775808]"), "{stored}");
}
