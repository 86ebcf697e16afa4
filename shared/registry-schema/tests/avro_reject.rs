//! Avro schemas that must be refused (each becomes a 42201 answer), with the reason given.

use registry_schema::avro::AvroSchema;
use registry_schema::{Dependency, SchemaError, SchemaFormat, SchemaType, Validation};

fn reject(text: &str) -> SchemaError {
    reject_with(text, &[], Validation::Strict)
}

fn reject_with(text: &str, deps: &[Dependency], validation: Validation) -> SchemaError {
    match AvroSchema::parse(text, deps, validation, false) {
        Ok(schema) => panic!("{text} should be rejected, got {}", schema.canonical_text()),
        Err(e) => e,
    }
}

fn reason(text: &str) -> String {
    match reject(text) {
        SchemaError::Parse { schema_type: SchemaType::Avro, reason } => reason,
        other => panic!("{text}: expected an Avro parse error, got {other:?}"),
    }
}

fn dep(name: &str, schema: &str) -> Dependency {
    Dependency { name: name.into(), schema_type: SchemaType::Avro, schema: schema.into() }
}

fn record_with_field(field: &str) -> String {
    format!(r#"{{"type":"record","name":"R","fields":[{field}]}}"#)
}

#[test]
fn invalid_json() {
    assert!(reason(r#"{"type":"record""#).starts_with("Invalid JSON"));
    assert!(reason("").starts_with("Invalid JSON"));
}

#[test]
fn non_schema_json_values() {
    assert!(reason("42").contains("not yet supported"));
    assert!(reason("true").contains("not yet supported"));
    assert!(reason("null").contains("not yet supported"));
}

#[test]
fn unknown_type_name_is_unresolved() {
    assert_eq!(reject(r#""strin""#), SchemaError::UnresolvedReference { name: "strin".into() });
    assert_eq!(reject(r#"{"type":"integer"}"#), SchemaError::UnresolvedReference { name: "integer".into() });
}

#[test]
fn type_keyword_that_is_not_a_name() {
    assert!(reason(r#"{"type":"no such"}"#).contains("Type not supported"));
}

#[test]
fn missing_or_non_text_type() {
    assert!(reason(r#"{"name":"R"}"#).contains("No type"));
    assert!(reason(r#"{"type":{"type":"int"}}"#).contains("No type"));
}

#[test]
fn bad_record_names() {
    assert!(reason(r#"{"type":"record","name":"1R","fields":[]}"#).contains("Illegal initial character"));
    assert!(reason(r#"{"type":"record","name":"R-x","fields":[]}"#).contains("Illegal character"));
    assert!(reason(r#"{"type":"record","name":"","fields":[]}"#).contains("Empty name"));
    assert!(reason(r#"{"type":"record","fields":[]}"#).contains("No name"));
}

#[test]
fn bad_namespace() {
    assert!(reason(r#"{"type":"record","name":"R","namespace":"a.1b","fields":[]}"#).contains("namespace"));
}

#[test]
fn named_after_a_primitive() {
    assert!(reason(r#"{"type":"fixed","name":"int","size":4}"#).contains("primitives"));
}

#[test]
fn bad_field_name() {
    assert!(reason(&record_with_field(r#"{"name":"a b","type":"int"}"#)).contains("Illegal character"));
    assert!(reason(&record_with_field(r#"{"type":"int"}"#)).contains("No field name"));
}

#[test]
fn field_without_type() {
    assert!(reason(&record_with_field(r#"{"name":"a"}"#)).contains("No field type"));
}

#[test]
fn record_without_fields() {
    assert!(reason(r#"{"type":"record","name":"R"}"#).contains("no fields"));
    assert!(reason(r#"{"type":"record","name":"R","fields":{}}"#).contains("no fields"));
}

#[test]
fn duplicate_field() {
    let r = reason(r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"long"}]}"#);
    assert!(r.contains("Duplicate field a"), "{r}");
}

#[test]
fn duplicate_enum_symbol() {
    assert!(reason(r#"{"type":"enum","name":"E","symbols":["A","B","A"]}"#).contains("Duplicate enum symbol: A"));
}

#[test]
fn bad_enum_symbol() {
    assert!(reason(r#"{"type":"enum","name":"E","symbols":["A","9"]}"#).contains("Illegal initial character"));
    assert!(reason(r#"{"type":"enum","name":"E","symbols":["A",1]}"#).contains("not a string"));
    assert!(reason(r#"{"type":"enum","name":"E"}"#).contains("no symbols"));
}

#[test]
fn enum_default_not_a_symbol() {
    assert!(reason(r#"{"type":"enum","name":"E","symbols":["A"],"default":"B"}"#).contains("Enum Default"));
}

#[test]
fn fixed_size_invalid() {
    assert!(reason(r#"{"type":"fixed","name":"F"}"#).contains("size"));
    assert!(reason(r#"{"type":"fixed","name":"F","size":-1}"#).contains("size"));
    assert!(reason(r#"{"type":"fixed","name":"F","size":"16"}"#).contains("size"));
    assert!(reason(r#"{"type":"fixed","name":"F","size":4294967296}"#).contains("size"));
}

#[test]
fn array_and_map_without_element_type() {
    assert!(reason(r#"{"type":"array"}"#).contains("items"));
    assert!(reason(r#"{"type":"map"}"#).contains("values"));
}

#[test]
fn union_rules() {
    assert!(reason(r#"["null",["int","long"]]"#).contains("Nested union"));
    assert!(reason(r#"["int","string","int"]"#).contains("Duplicate in union: int"));
    assert!(
        reason(r#"[{"type":"array","items":"int"},{"type":"array","items":"long"}]"#).contains("Duplicate in union")
    );
}

#[test]
fn redefined_named_type() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["A"]}},{"name":"b","type":{"type":"enum","name":"E","symbols":["B"]}}]}"#;
    assert!(reason(text).contains("Can't redefine: E"));
}

#[test]
fn bad_order_and_aliases() {
    assert!(reason(&record_with_field(r#"{"name":"a","type":"int","order":"up"}"#)).contains("Invalid order"));
    assert!(reason(&record_with_field(r#"{"name":"a","type":"int","aliases":"x"}"#)).contains("aliases not an array"));
    assert!(reason(&record_with_field(r#"{"name":"a","type":"int","aliases":[1]}"#)).contains("alias not a string"));
}

#[test]
fn default_of_wrong_type() {
    for (ty, default) in [
        (r#""int""#, r#""abc""#),
        (r#""int""#, "1.5"),
        (r#""int""#, "3000000000"),
        (r#""long""#, r#""1""#),
        (r#""string""#, "null"),
        (r#""boolean""#, "0"),
        (r#""null""#, "0"),
        (r#""bytes""#, "[1]"),
        (r#"{"type":"array","items":"int"}"#, r#"["a"]"#),
        (r#"{"type":"map","values":"int"}"#, "[]"),
        (r#"{"type":"enum","name":"E","symbols":["A"]}"#, "1"),
        (r#"{"type":"fixed","name":"F","size":1}"#, "1"),
        (r#"{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}"#, "5"),
        (r#"{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}"#, "{}"),
    ] {
        let text = record_with_field(&format!(r#"{{"name":"f","type":{ty},"default":{default}}}"#));
        let r = reason(&text);
        assert!(r.starts_with("Invalid default for field f"), "{text}: {r}");
    }
}

#[test]
fn union_default_must_match_first_branch() {
    let text = record_with_field(r#"{"name":"f","type":["null","string"],"default":"x"}"#);
    assert!(reason(&text).contains("Invalid default for field f"));
}

#[test]
fn valid_defaults_are_accepted() {
    for (ty, default) in [
        (r#"["string","null"]"#, r#""x""#),
        (r#"["null","string"]"#, "null"),
        (r#""long""#, "3000000000"),
        (r#""float""#, "1"),
        (r#"{"type":"record","name":"S","fields":[{"name":"x","type":"int","default":1}]}"#, "{}"),
    ] {
        let text = record_with_field(&format!(r#"{{"name":"f","type":{ty},"default":{default}}}"#));
        assert!(AvroSchema::parse(&text, &[], Validation::Strict, false).is_ok(), "{text}");
    }
}

#[test]
fn lenient_validation_keeps_invalid_defaults() {
    let text = record_with_field(r#"{"name":"f","type":"int","default":"abc"}"#);
    let schema = match AvroSchema::parse(&text, &[], Validation::Lenient, false) {
        Ok(s) => s,
        Err(e) => panic!("lenient parse failed: {e}"),
    };
    assert_eq!(
        schema.canonical_text(),
        r#"{"type":"record","name":"R","fields":[{"name":"f","type":"int","default":"abc"}]}"#
    );
    let apache_avro::Schema::Record(record) = schema.schema() else { panic!("not a record") };
    assert_eq!(record.fields[0].default, Some(serde_json::json!("abc")));
}

#[test]
fn non_numeric_string_default_for_double_is_always_rejected() {
    let text = record_with_field(r#"{"name":"f","type":"double","default":"abc"}"#);
    assert!(matches!(reject_with(&text, &[], Validation::Lenient), SchemaError::Parse { .. }));
}

#[test]
fn unresolvable_named_type() {
    let text = record_with_field(r#"{"name":"a","type":"com.acme.Missing"}"#);
    assert_eq!(reject(&text), SchemaError::UnresolvedReference { name: "com.acme.Missing".into() });
    let in_union = record_with_field(r#"{"name":"a","type":["null","Missing"]}"#);
    assert_eq!(reject(&in_union), SchemaError::UnresolvedReference { name: "Missing".into() });
}

#[test]
fn missing_reference_is_unresolved() {
    let address = r#"{"type":"record","name":"com.acme.Address","fields":[]}"#;
    let text = r#"{"type":"record","name":"com.acme.User","fields":[{"name":"a","type":"Address"},{"name":"p","type":"Phone"}]}"#;
    assert_eq!(
        reject_with(text, &[dep("com.acme.Address", address)], Validation::Strict),
        SchemaError::UnresolvedReference { name: "Phone".into() }
    );
}

#[test]
fn nested_reference_out_of_order_is_unresolved() {
    let country = r#"{"type":"enum","name":"Country","symbols":["FR"]}"#;
    let city = r#"{"type":"record","name":"City","fields":[{"name":"c","type":"Country"}]}"#;
    let err = reject_with(r#""City""#, &[dep("City", city), dep("Country", country)], Validation::Strict);
    assert_eq!(err, SchemaError::UnresolvedReference { name: "Country".into() });
}

#[test]
fn invalid_reference_text_names_the_reference() {
    let err = reject_with(r#""int""#, &[dep("bad.Ref", "{")], Validation::Strict);
    assert!(matches!(err, SchemaError::Parse { reason, .. } if reason.starts_with("reference bad.Ref")));
}

#[test]
fn redefining_a_referenced_type() {
    let address = r#"{"type":"record","name":"Address","fields":[]}"#;
    let err = reject_with(
        r#"{"type":"record","name":"Address","fields":[]}"#,
        &[dep("Address", address)],
        Validation::Strict,
    );
    assert!(matches!(err, SchemaError::Parse { reason, .. } if reason.contains("Can't redefine")));
}

#[test]
fn non_avro_reference() {
    let d = Dependency { name: "x".into(), schema_type: SchemaType::Json, schema: "{}".into() };
    assert!(matches!(reject_with(r#""int""#, &[d], Validation::Strict), SchemaError::Parse { .. }));
}

#[test]
fn deep_nesting_ends_with_too_deep() {
    for levels in [200, 10_000] {
        let arrays = format!("{}\"int\"{}", r#"{"type":"array","items":"#.repeat(levels), "}".repeat(levels));
        assert!(matches!(reject(&arrays), SchemaError::TooDeep { .. }), "arrays {levels}");
        let records = format!(
            "{}\"int\"{}",
            r#"{"type":"record","name":"R","fields":[{"name":"f","type":"#.repeat(levels),
            "}]}".repeat(levels)
        );
        assert!(matches!(reject(&records), SchemaError::TooDeep { .. }), "records {levels}");
        let unions = format!("{}\"int\"{}", "[".repeat(levels), "]".repeat(levels));
        assert!(matches!(reject(&unions), SchemaError::TooDeep { .. }), "unions {levels}");
    }
}

#[test]
fn moderate_nesting_within_limit_parses() {
    let levels = 40;
    let arrays = format!("{}\"int\"{}", r#"{"type":"array","items":"#.repeat(levels), "}".repeat(levels));
    assert!(AvroSchema::parse(&arrays, &[], Validation::Strict, false).is_ok());
}
