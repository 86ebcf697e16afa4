//! Inline tags per format, with the entity paths Confluent's `inlineTaggedEntities` gives (the shapes of
//! its `AvroSchemaTest`, `JsonSchemaTest` and `ProtobufSchemaTest` cases).

use registry_schema::tags::{EntityKind, SchemaTags};
use registry_schema::{ParsedSchema, SchemaType, Validation};

fn tagged(schema_type: SchemaType, text: &str) -> Vec<(String, EntityKind, Vec<String>)> {
    let parsed = ParsedSchema::parse(schema_type, text, &[], Validation::Strict, false)
        .unwrap_or_else(|error| panic!("{error}: {text}"));
    parsed
        .inline_tagged_entities()
        .all()
        .into_iter()
        .map(|SchemaTags { schema_entity, tags }| (schema_entity.entity_path, schema_entity.entity_type, tags))
        .collect()
}

fn entity(path: &str, kind: EntityKind, tags: &[&str]) -> (String, EntityKind, Vec<String>) {
    (path.to_string(), kind, tags.iter().map(|t| t.to_string()).collect())
}

use EntityKind::{Field, Record};

#[test]
fn avro_records_by_full_name_and_their_fields_through_unions_arrays_and_maps() {
    let text = r#"{"type":"record","name":"Person","namespace":"com.example","confluent:tags":["PII"],
      "fields":[{"name":"name","type":"string","confluent:tags":["PII","NAME"]},
                {"name":"children","type":{"type":"array","items":"Person"}},
                {"name":"attributes","type":{"type":"map","values":["null",{"type":"record","name":"Nested",
                   "fields":[{"name":"id","type":"int","confluent:tags":["KEY"]}]}]}},
                {"name":"other","type":["null",{"type":"record","name":"Other","namespace":"org",
                   "confluent:tags":["EXT"],"fields":[]}]}]}"#;
    assert_eq!(
        tagged(SchemaType::Avro, text),
        [
            entity("com.example.Person", Record, &["PII"]),
            entity("com.example.Person.name", Field, &["PII", "NAME"]),
            entity("com.example.Nested.id", Field, &["KEY"]),
            entity("org.Other", Record, &["EXT"]),
        ]
    );
}

#[test]
fn json_objects_properties_arrays_definitions_and_refs_by_confluents_paths() {
    let text = r##"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","confluent:tags":["ROOT"],
      "definitions":{"MetricData":{"type":"object","properties":{"name":{"type":"string","confluent:tags":["PII"]}}}},
      "properties":{
        "f1":{"$ref":"#/definitions/MetricData","confluent:tags":["REF"]},
        "list":{"type":"array","items":{"type":"object","properties":{"field1":{"type":"string","confluent:tags":["IN"]}}}},
        "choice":{"oneOf":[{"type":"object","properties":{"x":{"type":"string","confluent:tags":["X"]}}},{"type":"null"}]}}}"##;
    assert_eq!(
        tagged(SchemaType::Json, text),
        [
            entity("object", Record, &["ROOT"]),
            entity("object.f1", Field, &["REF"]),
            entity("object.list.array.object.field1", Field, &["IN"]),
            // Subschemas in Confluent's order: `null` before `object`.
            entity("object.choice.oneOf.1.object.x", Field, &["X"]),
            entity("object.definitions.MetricData.object.name", Field, &["PII"]),
        ]
    );
}

#[test]
fn protobuf_message_and_field_meta_in_literal_and_dotted_forms() {
    let text = r#"syntax = "proto3";
package acme;
import "confluent/meta.proto";

message SampleRecord {
  option (confluent.message_meta) = { tags: ["OTHER", "PII"] };
  string my_field1 = 1 [(confluent.field_meta).tags = "PRIVATE", (confluent.field_meta).tags = "PII"];
  oneof choice {
    int32 my_field2 = 2 [(confluent.field_meta) = { tags: "ONEOF" }];
  }
  message NestedRecord {
    option (confluent.message_meta).tags = "NESTED";
    int64 nested_field1 = 1 [(confluent.field_meta) = { doc: "d", tags: ["PII"] }];
  }
}
"#;
    assert_eq!(
        tagged(SchemaType::Protobuf, text),
        [
            entity("SampleRecord", Record, &["OTHER", "PII"]),
            entity("SampleRecord.my_field2", Field, &["ONEOF"]),
            entity("SampleRecord.my_field1", Field, &["PRIVATE", "PII"]),
            entity("SampleRecord.NestedRecord", Record, &["NESTED"]),
            entity("SampleRecord.NestedRecord.nested_field1", Field, &["PII"]),
        ]
    );
}

#[test]
fn matching_keeps_entities_with_a_wanted_tag_or_every_one_for_a_star() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","confluent:tags":["PII","X"]},
      {"name":"b","type":"int","confluent:tags":["Y"]}]}"#;
    let parsed = ParsedSchema::parse(SchemaType::Avro, text, &[], Validation::Strict, false)
        .unwrap_or_else(|error| panic!("{error}"));
    let paths = |wanted: &[&str]| {
        let wanted: Vec<String> = wanted.iter().map(|t| t.to_string()).collect();
        parsed
            .inline_tagged_entities()
            .matching(&wanted)
            .into_iter()
            .map(|t| t.schema_entity.entity_path)
            .collect::<Vec<_>>()
    };
    assert_eq!(paths(&["PII"]), ["R.a"]);
    assert_eq!(paths(&["*"]), ["R.a", "R.b"]);
    assert!(paths(&["NONE"]).is_empty());
}
