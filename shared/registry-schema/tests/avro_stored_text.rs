//! Stored text of Avro schemas: Java Avro `Schema.toString()` byte for byte (§6.3), references
//! and Confluent's normal form (§6.4).

use registry_schema::avro::AvroSchema;
use registry_schema::{Dependency, SchemaFormat, SchemaType, Validation};

fn stored(text: &str) -> String {
    match AvroSchema::parse(text, &[], Validation::Strict, false) {
        Ok(schema) => schema.canonical_text().to_string(),
        Err(e) => panic!("{text} should parse: {e}"),
    }
}

fn dep(name: &str, schema: &str) -> Dependency {
    Dependency { name: name.into(), schema_type: SchemaType::Avro, schema: schema.into() }
}

fn stored_with(text: &str, deps: &[Dependency]) -> String {
    match AvroSchema::parse(text, deps, Validation::Strict, false) {
        Ok(schema) => schema.canonical_text().to_string(),
        Err(e) => panic!("{text} should parse: {e}"),
    }
}

fn normalized(text: &str) -> String {
    match AvroSchema::parse(text, &[], Validation::Strict, true) {
        Ok(schema) => schema.canonical_text().to_string(),
        Err(e) => panic!("{text} should parse: {e}"),
    }
}

#[test]
fn primitive_object_form_becomes_bare_name() {
    assert_eq!(stored(r#"{"type":"int"}"#), r#""int""#);
    assert_eq!(stored(r#" "string" "#), r#""string""#);
}

#[test]
fn primitive_reserved_keys_are_dropped_but_custom_props_kept() {
    assert_eq!(stored(r#"{"type":"string","doc":"ignored"}"#), r#""string""#);
    assert_eq!(
        stored(r#"{"avro.java.string":"String","type":"string"}"#),
        r#"{"type":"string","avro.java.string":"String"}"#
    );
}

#[test]
fn record_keys_come_in_java_order() {
    let text = r#"{"fields":[{"type":"int","name":"a"}],"doc":"d","namespace":"n","name":"R","type":"record"}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"n","doc":"d","fields":[{"name":"a","type":"int"}]}"#
    );
}

#[test]
fn whitespace_is_removed() {
    let text = "{\n  \"type\" : \"record\",\n  \"name\" : \"R\",\n  \"fields\" : [ { \"name\" : \"a\", \"type\" : \"long\" } ]\n}";
    assert_eq!(stored(text), r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#);
}

#[test]
fn full_name_is_split_into_name_and_namespace() {
    assert_eq!(
        stored(r#"{"type":"record","name":"a.b.R","fields":[]}"#),
        r#"{"type":"record","name":"R","namespace":"a.b","fields":[]}"#
    );
}

#[test]
fn qualified_name_wins_over_namespace_key() {
    assert_eq!(
        stored(r#"{"type":"record","name":"a.b.R","namespace":"x.y","fields":[]}"#),
        r#"{"type":"record","name":"R","namespace":"a.b","fields":[]}"#
    );
}

#[test]
fn field_keys_come_in_java_order() {
    let text = r#"{"type":"record","name":"R","fields":[{"custom":1,"aliases":["old"],"order":"descending","default":5,"doc":"fd","type":"int","name":"a"}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","doc":"fd","default":5,"order":"descending","aliases":["old"],"custom":1}]}"#
    );
}

#[test]
fn ascending_order_is_dropped() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"ascending"}]}"#;
    assert_eq!(stored(text), r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#);
}

#[test]
fn ignore_order_is_kept_lower_case() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"IGNORE"}]}"#;
    assert_eq!(stored(text), r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"ignore"}]}"#);
}

#[test]
fn custom_record_props_keep_input_order_before_aliases() {
    let text = r#"{"aliases":["Old"],"zeta":true,"type":"record","alpha":[1],"name":"R","fields":[]}"#;
    assert_eq!(stored(text), r#"{"type":"record","name":"R","fields":[],"zeta":true,"alpha":[1],"aliases":["Old"]}"#);
}

#[test]
fn enum_keys_and_default() {
    let text = r#"{"default":"B","symbols":["A","B"],"name":"E","type":"enum","doc":"e","x":"y"}"#;
    assert_eq!(stored(text), r#"{"type":"enum","name":"E","doc":"e","symbols":["A","B"],"default":"B","x":"y"}"#);
}

#[test]
fn fixed_keys() {
    assert_eq!(
        stored(r#"{"size":16,"name":"F","namespace":"n","type":"fixed"}"#),
        r#"{"type":"fixed","name":"F","namespace":"n","size":16}"#
    );
}

#[test]
fn array_and_map_keys() {
    assert_eq!(stored(r#"{"items":{"type":"long"},"type":"array"}"#), r#"{"type":"array","items":"long"}"#);
    assert_eq!(stored(r#"{"values":"bytes","type":"map","p":1}"#), r#"{"type":"map","values":"bytes","p":1}"#);
}

#[test]
fn union_branches_are_written_in_order() {
    assert_eq!(stored(r#"[ "null" , {"type":"string"} ]"#), r#"["null","string"]"#);
}

#[test]
fn nested_type_in_same_namespace_drops_namespace() {
    let text = r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"e","type":{"type":"enum","name":"E","namespace":"n","symbols":["X"]}}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}}]}"#
    );
}

#[test]
fn nested_type_inherits_enclosing_namespace() {
    let text = r#"{"type":"record","name":"n.R","fields":[{"name":"f","type":{"type":"fixed","name":"F","size":2}},{"name":"g","type":"n.F"}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"f","type":{"type":"fixed","name":"F","size":2}},{"name":"g","type":"F"}]}"#
    );
}

#[test]
fn nested_type_in_other_namespace_keeps_it() {
    let text = r#"{"type":"record","name":"a.R","fields":[{"name":"f","type":{"type":"enum","name":"b.E","symbols":["X"]}},{"name":"g","type":"b.E"}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":{"type":"enum","name":"E","namespace":"b","symbols":["X"]}},{"name":"g","type":"b.E"}]}"#
    );
}

#[test]
fn null_namespace_inside_namespaced_record_is_explicit() {
    let text = r#"{"type":"record","name":"a.R","fields":[{"name":"f","type":{"type":"enum","name":"E","namespace":"","symbols":["X"]}}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":{"type":"enum","name":"E","namespace":"","symbols":["X"]}}]}"#
    );
}

#[test]
fn named_type_defined_once_then_by_name() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":["null","E"]},{"name":"c","type":{"type":"array","items":"E"}}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":["null","E"]},{"name":"c","type":{"type":"array","items":"E"}}]}"#
    );
}

#[test]
fn recursive_record_refers_to_itself_by_name() {
    let text =
        r#"{"type":"record","name":"n.Node","fields":[{"name":"next","type":["null","n.Node"],"default":null}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"Node","namespace":"n","fields":[{"name":"next","type":["null","Node"],"default":null}]}"#
    );
}

#[test]
fn logical_types_keep_their_properties_in_input_order() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"d","type":{"precision":9,"logicalType":"decimal","type":"bytes","scale":2}},{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"bytes","precision":9,"logicalType":"decimal","scale":2}},{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#
    );
}

#[test]
fn named_type_aliases_are_shortened_in_own_namespace() {
    let text = r#"{"type":"record","name":"a.R","aliases":["a.Old","b.Other","Plain","Plain"],"fields":[]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","namespace":"a","fields":[],"aliases":["Old","b.Other","Plain"]}"#
    );
}

#[test]
fn field_aliases_are_deduplicated() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","aliases":["x","y","x"]}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","aliases":["x","y"]}]}"#
    );
}

#[test]
fn defaults_are_written_as_given_with_java_numbers() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1.50},{"name":"b","type":"float","default":"2"},{"name":"c","type":{"type":"map","values":"int"},"default":{"k":1}},{"name":"d","type":"double","default":1e-5}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1.5},{"name":"b","type":"float","default":2.0},{"name":"c","type":{"type":"map","values":"int"},"default":{"k":1}},{"name":"d","type":"double","default":1.0E-5}]}"#
    );
}

#[test]
fn nan_default_for_double_is_quoted() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":"NaN"}]}"#;
    assert_eq!(stored(text), r#"{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":"NaN"}]}"#);
}

#[test]
fn strings_are_escaped_like_jackson() {
    let text = r#"{"type":"record","name":"R","doc":"line\nnext \"q\" / é \u0001","fields":[]}"#;
    assert_eq!(stored(text), r#"{"type":"record","name":"R","doc":"line\nnext \"q\" / é \u0001","fields":[]}"#);
}

#[test]
fn error_type_is_kept() {
    assert_eq!(
        stored(r#"{"type":"error","name":"Oops","fields":[]}"#),
        r#"{"type":"error","name":"Oops","fields":[]}"#
    );
}

#[test]
fn object_type_naming_a_defined_type_becomes_a_reference() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":{"type":"E"}}]}"#;
    assert_eq!(
        stored(text),
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":"E"}]}"#
    );
}

#[test]
fn key_order_variants_give_the_same_text() {
    let a =
        r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int","default":1,"doc":"x"}]}"#;
    let b =
        r#"{"fields":[{"doc":"x","default":1,"type":"int","name":"a"}],"namespace":"n","name":"R","type":"record"}"#;
    assert_eq!(stored(a), stored(b));
}

#[test]
fn stored_text_is_idempotent() {
    let text = r#"{"type":"record","name":"a.R","aliases":["a.X"],"fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"],"default":"A"}},{"name":"f","type":["null","E"],"default":null,"order":"descending","p":1}],"q":2}"#;
    let once = stored(text);
    assert_eq!(stored(&once), once);
}

// ---- references ----

const ADDRESS: &str =
    r#"{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"street","type":"string"}]}"#;

#[test]
fn referenced_type_is_written_by_name_only() {
    let text = r#"{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"com.acme.Address"}]}"#;
    assert_eq!(
        stored_with(text, &[dep("com.acme.Address", ADDRESS)]),
        r#"{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"}]}"#
    );
}

#[test]
fn referenced_type_in_other_namespace_keeps_full_name() {
    let text = r#"{"type":"record","name":"other.User","fields":[{"name":"home","type":"com.acme.Address"}]}"#;
    assert_eq!(
        stored_with(text, &[dep("com.acme.Address", ADDRESS)]),
        r#"{"type":"record","name":"User","namespace":"other","fields":[{"name":"home","type":"com.acme.Address"}]}"#
    );
}

#[test]
fn union_of_references_is_written_by_names() {
    let event = r#"{"type":"record","name":"com.acme.Event","fields":[]}"#;
    assert_eq!(
        stored_with(r#"["com.acme.Address","com.acme.Event"]"#, &[dep("a", ADDRESS), dep("e", event)]),
        r#"["com.acme.Address","com.acme.Event"]"#
    );
}

#[test]
fn nested_references_resolve_in_dependency_order() {
    let country = r#"{"type":"enum","name":"geo.Country","symbols":["FR","DE"]}"#;
    let city = r#"{"type":"record","name":"geo.City","fields":[{"name":"country","type":"geo.Country"}]}"#;
    let text = r#"{"type":"record","name":"Trip","fields":[{"name":"to","type":"geo.City"},{"name":"via","type":"geo.Country"}]}"#;
    let schema =
        match AvroSchema::parse(text, &[dep("geo.Country", country), dep("geo.City", city)], Validation::Strict, false)
        {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
    assert_eq!(
        schema.canonical_text(),
        r#"{"type":"record","name":"Trip","fields":[{"name":"to","type":"geo.City"},{"name":"via","type":"geo.Country"}]}"#
    );
    assert!(schema.named_types().contains_key("geo.City"));
    assert!(schema.named_types().contains_key("geo.Country"));
    assert!(schema.named_types().contains_key("Trip"));
}

#[test]
fn dependency_named_types_resolve_every_ref_in_apache_schema() {
    let text = r#"{"type":"record","name":"com.acme.User","fields":[{"name":"home","type":"Address"},{"name":"work","type":"Address"}]}"#;
    let schema = match AvroSchema::parse(text, &[dep("com.acme.Address", ADDRESS)], Validation::Strict, false) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let apache_avro::Schema::Record(record) = schema.schema() else { panic!("not a record") };
    assert_eq!(record.fields.len(), 2);
    let address = &schema.named_types()["com.acme.Address"];
    assert!(matches!(address, apache_avro::Schema::Record(r) if r.fields[0].name == "street"));
}

#[test]
fn apache_schema_keeps_field_defaults() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":["null","string"],"default":null},{"name":"b","type":"int","default":3},{"name":"c","type":"int"}]}"#;
    let schema = match AvroSchema::parse(text, &[], Validation::Strict, false) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let apache_avro::Schema::Record(record) = schema.schema() else { panic!("not a record") };
    assert_eq!(record.fields[0].default, Some(serde_json::Value::Null));
    assert_eq!(record.fields[1].default, Some(serde_json::json!(3)));
    assert_eq!(record.fields[2].default, None);
}

// ---- normal form ----

#[test]
fn normal_form_uses_full_names_and_name_first() {
    let text = r#"{"type":"record","namespace":"n","name":"R","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}},{"name":"f","type":"E"}]}"#;
    assert_eq!(
        normalized(text),
        r#"{"name":"n.R","type":"record","fields":[{"name":"e","type":{"name":"n.E","type":"enum","symbols":["A"]}},{"name":"f","type":"n.E"}]}"#
    );
}

#[test]
fn normal_form_sorts_properties_and_aliases() {
    let a = r#"{"type":"record","name":"R","b":1,"a":2,"aliases":["Z","Y"],"fields":[{"name":"x","type":"int","q":1,"p":2,"doc":"d","default":0}]}"#;
    let b = r#"{"a":2,"fields":[{"p":2,"default":0,"doc":"d","q":1,"type":"int","name":"x"}],"aliases":["Y","Z"],"name":"R","b":1,"type":"record"}"#;
    assert_eq!(normalized(a), normalized(b));
    assert_eq!(
        normalized(a),
        r#"{"name":"R","type":"record","fields":[{"name":"x","type":"int","doc":"d","default":0,"p":2,"q":1}],"aliases":["Y","Z"],"a":2,"b":1}"#
    );
}

#[test]
fn normal_form_differs_from_stored_text_only_in_layout() {
    let text = r#"{"type":"record","name":"n.R","fields":[{"name":"a","type":"int"}]}"#;
    assert_ne!(normalized(text), stored(text));
    assert_eq!(normalized(&normalized(text)), normalized(text));
}

#[test]
fn resolved_text_writes_referenced_types_in_full_where_first_used() {
    let country = r#"{"type":"enum","name":"geo.Country","symbols":["FR","DE"]}"#;
    let city = r#"{"type":"record","name":"geo.City","fields":[{"name":"country","type":"geo.Country"}]}"#;
    let text = r#"{"type":"record","name":"Trip","fields":[{"name":"to","type":"geo.City"},{"name":"via","type":"geo.Country"}]}"#;
    let deps = [dep("geo.Country", country), dep("geo.City", city)];
    let schema = match AvroSchema::parse(text, &deps, Validation::Strict, false) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    // Java's `Schema.toString()`: City in full at its first use, Country in full inside it (its
    // namespace is City's, so not repeated), then by full name outside `geo`.
    assert_eq!(
        schema.resolved_text(),
        concat!(
            r#"{"type":"record","name":"Trip","fields":[{"name":"to","type":{"type":"record","name":"City","namespace":"geo","#,
            r#""fields":[{"name":"country","type":{"type":"enum","name":"Country","symbols":["FR","DE"]}}]}},"#,
            r#"{"name":"via","type":"geo.Country"}]}"#
        )
    );
    let plain = r#"{"type":"record","name":"Trip","fields":[{"name":"at","type":"long"}]}"#;
    assert_eq!(stored(plain), plain);
    let parsed = AvroSchema::parse(plain, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.resolved_text(), parsed.canonical_text());
}
