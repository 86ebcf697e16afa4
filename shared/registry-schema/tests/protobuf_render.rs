//! Protobuf stored text: Confluent's formatter (`ProtobufSchemaUtils.toString`) and normal form
//! (`toNormalizedString`): round trips, layout variants, normalization, and hostile input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use registry_schema::protobuf::ProtobufSchema;
use registry_schema::{ParsedSchema, SchemaFormat, SchemaType, Validation};
use std::path::PathBuf;

fn stored(text: &str) -> String {
    ProtobufSchema::parse(text, &[], Validation::Strict, false)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .canonical_text()
        .to_string()
}

fn normalized(text: &str) -> String {
    ProtobufSchema::parse(text, &[], Validation::Strict, true)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .canonical_text()
        .to_string()
}

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/protobuf-render").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Schemas in Confluent's own layout (its tests and clients' registrations) store unchanged.
const CONFLUENT_FORMATTED: &[&str] = &[
    "syntax = \"proto3\";\npackage com.acme;\n\nmessage MyRecord {\n  string f1 = 1;\n}\n",
    "syntax = \"proto3\";\npackage io.confluent.kafka.serializers.protobuf.test;\n\nimport \"google/protobuf/timestamp.proto\";\n\nmessage TestMessage {\n  string test_string = 1;\n  bool test_bool = 2;\n  bytes test_bytes = 3;\n  double test_double = 4;\n  float test_float = 5;\n  fixed32 test_fixed32 = 6;\n  fixed64 test_fixed64 = 7;\n  int32 test_int32 = 8;\n  int64 test_int64 = 9;\n  sfixed32 test_sfixed32 = 10;\n  sfixed64 test_sfixed64 = 11;\n  sint32 test_sint32 = 12;\n  sint64 test_sint64 = 13;\n  uint32 test_uint32 = 14;\n  uint64 test_uint64 = 15;\n  .google.protobuf.Timestamp test_timestamp = 16;\n}\n",
    "syntax = \"proto3\";\npackage pkg;\n\noption java_package = \"io.confluent.x\";\noption java_outer_classname = \"Outer\";\n\nmessage Outer {\n  repeated Inner inners = 1;\n  map<string, int64> totals = 2;\n  Kind kind = 3;\n\n  oneof choice {\n    string a = 4;\n    int32 b = 5;\n  }\n\n  message Inner {\n    reserved 2, 4 to 6;\n  \n    string id = 1;\n  }\n  enum Kind {\n    KIND_UNSPECIFIED = 0;\n    KIND_ONE = 1;\n  }\n}\n",
    "syntax = \"proto2\";\n\nmessage User {\n  required string name = 1;\n  optional int32 age = 2 [default = 18];\n  repeated string tags = 3 [packed = false];\n\n  extensions 100 to 199;\n}\n",
    "syntax = \"proto3\";\n\nmessage Req {\n  string q = 1;\n}\nmessage Resp {\n  repeated string hits = 1;\n}\n\nservice Search {\n  rpc Find (Req) returns (Resp);\n  rpc Watch (stream Req) returns (stream Resp);\n}\n",
];

#[test]
fn confluent_formatted_text_round_trips_byte_for_byte() {
    for text in CONFLUENT_FORMATTED {
        assert_eq!(stored(text), *text);
    }
}

#[test]
fn every_construct_is_printed_as_confluents_formatter_prints_it() {
    let rendered = stored(&fixture("shop.input.proto"));
    assert_eq!(rendered, fixture("shop.stored.proto"));
    assert_eq!(stored(&rendered), rendered, "the stored text is a fixed point");
}

#[test]
fn layout_and_comment_variants_store_the_same_text() {
    let canonical = CONFLUENT_FORMATTED[2];
    let variants = [
        "// header\nsyntax=\"proto3\";package pkg;option java_package=\"io.confluent.x\";option java_outer_classname=\"Outer\";\nmessage Outer{repeated Inner inners=1;map<string,int64>totals=2;Kind kind=3;oneof choice{string a=4;int32 b=5;}\nmessage Inner{reserved 2,4 to 6;string id=1;}enum Kind{KIND_UNSPECIFIED=0;KIND_ONE=1;}}",
        "syntax = \"proto3\";\n\n\npackage pkg;\n/* block\n comment */\noption java_package = \"io.confluent.x\";\noption java_outer_classname = \"Outer\";\n\nmessage Outer {\n\n    repeated Inner inners = 1; // trailing\n    map < string , int64 > totals = 2;\n    Kind kind = 3;\n    message Inner {\n        string id = 1;\n        reserved 2, 4 to 6;\n    }\n    oneof choice {\n        string a = 4;\n        int32 b = 5;\n    }\n    enum Kind {\n        KIND_UNSPECIFIED = 0;\n        KIND_ONE = 1;\n    }\n}\n\n\n",
    ];
    for variant in variants {
        assert_eq!(stored(variant), canonical, "variant:\n{variant}");
    }
}

#[test]
fn a_file_without_a_syntax_statement_keeps_none() {
    assert_eq!(stored("message A { optional int32 x = 1; }"), "\nmessage A {\n  optional int32 x = 1;\n}\n");
    assert_eq!(
        stored("package p; message A { optional int32 x = 1; }"),
        "package p;\n\nmessage A {\n  optional int32 x = 1;\n}\n"
    );
}

#[test]
fn messages_with_several_sections_separate_them_with_blank_lines() {
    let text =
        "syntax = \"proto3\";\nmessage A {\n  message B {\n    option deprecated = true;\n    int32 x = 1;\n  }\n}\n";
    assert_eq!(
        stored(text),
        "syntax = \"proto3\";\n\nmessage A {\n  message B {\n    option deprecated = true;\n  \n    int32 x = 1;\n  }\n}\n"
    );
}

#[test]
fn normalize_sorts_fields_imports_options_and_constants_and_qualifies_names() {
    let text = "syntax = \"proto3\";\npackage p;\nimport \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/duration.proto\";\noption java_package = \"x\";\noption go_package = \"y\";\nmessage M {\n  google.protobuf.Timestamp at = 3;\n  map<string, Item> items = 2;\n  E e = 1;\n  oneof o { string b = 6; string a = 5; }\n  message Item { int32 n = 1; }\n}\nenum E { E_A = 0; E_C = 2; E_B = 1; }\n";
    assert_eq!(
        normalized(text),
        "syntax = \"proto3\";\npackage p;\n\nimport \"google/protobuf/duration.proto\";\nimport \"google/protobuf/timestamp.proto\";\n\noption go_package = \"y\";\noption java_package = \"x\";\n\nmessage M {\n  .p.E e = 1;\n  map<string, .p.M.Item> items = 2;\n  .google.protobuf.Timestamp at = 3;\n\n  oneof o {\n    string a = 5;\n    string b = 6;\n  }\n\n  message Item {\n    int32 n = 1;\n  }\n}\nenum E {\n  E_A = 0;\n  E_B = 1;\n  E_C = 2;\n}\n"
    );
}

/// Confluent's `ProtobufSchemaTest.testNormalizationWithNestedComplexCustomOptions` and
/// `testNormalizationWithRepeatedNestedCustomOptions` (DGS-24835, eec1a8b62bf): dotted-path assignments of
/// one custom option become one message literal under its fully qualified name, deep-merged through a
/// singular message field and listed through a repeated one.
#[test]
fn normalize_aggregates_dotted_custom_options_as_confluent() {
    for case in ["nested-complex-custom-options", "repeated-nested-custom-options"] {
        let input = fixture(&format!("{case}.input.proto"));
        let expected = fixture(&format!("{case}.normalized.proto"));
        assert_eq!(normalized(&input), expected, "{case}");
    }
}

#[test]
fn normalize_identifies_reordered_schemas_and_is_idempotent() {
    let a = "syntax = \"proto3\";\nmessage M {\n  int32 a = 1;\n  string b = 2;\n  reserved 9, 7;\n}\n";
    let b = "syntax = \"proto3\";\nmessage M {\n  reserved 7;\n  reserved 9;\n  string b = 2;\n  .M x = 3;\n  int32 a = 1;\n}\n";
    let b_without_x = b.replace("  .M x = 3;\n", "");
    assert_eq!(normalized(a), normalized(&b_without_x));
    assert_ne!(stored(a), stored(&b_without_x), "without normalize the order is kept");
    let once = normalized(b);
    assert_eq!(normalized(&once), once);
    assert!(once.contains("  .M x = 3;\n"), "{once}");
}

#[test]
fn normalize_drops_the_proto2_syntax_line() {
    assert_eq!(
        normalized("syntax = \"proto2\";\nmessage A { optional int32 x = 1; }"),
        "\nmessage A {\n  optional int32 x = 1;\n}\n"
    );
}

#[test]
fn references_keep_their_imports_and_names_as_written() {
    let dep = registry_schema::Dependency {
        name: "acme/money.proto".into(),
        schema_type: SchemaType::Protobuf,
        schema: "syntax = \"proto3\";\npackage acme.money;\nmessage Money { int64 units = 1; }".into(),
    };
    let text = "syntax = \"proto3\";\npackage acme;\nimport \"acme/money.proto\";\nmessage Order { acme.money.Money total = 1; }";
    let parsed =
        ParsedSchema::parse(SchemaType::Protobuf, text, std::slice::from_ref(&dep), Validation::Strict, false).unwrap();
    assert_eq!(
        parsed.canonical_text(),
        "syntax = \"proto3\";\npackage acme;\n\nimport \"acme/money.proto\";\n\nmessage Order {\n  acme.money.Money total = 1;\n}\n"
    );
    let normal = ParsedSchema::parse(SchemaType::Protobuf, text, &[dep], Validation::Strict, true).unwrap();
    assert!(normal.canonical_text().contains("  .acme.money.Money total = 1;\n"), "{}", normal.canonical_text());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = ProtobufSchema::parse(&text, &[], Validation::Strict, false);
        let _ = ProtobufSchema::parse(&text, &[], Validation::Strict, true);
    }

    #[test]
    fn proto_like_text_never_panics(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "syntax = \"proto3\";", "message A {", "}", "int32 a = 1;", "oneof o {", "map<string, A> m = 2;",
                "reserved 3 to max;", "enum E { E0 = 0; }", "option (x) = { a: [1, 2] };", "repeated A r = 4;",
                "extend A { int32 e = 100; }", "\"", "/*", "{", "=", ";", "service S { rpc R (A) returns (A); }",
            ]),
            0..24,
        )
    ) {
        let text = parts.join("\n");
        let _ = ProtobufSchema::parse(&text, &[], Validation::Strict, false);
        let _ = ProtobufSchema::parse(&text, &[], Validation::Strict, true);
    }

    #[test]
    fn stored_text_of_generated_messages_is_a_fixed_point(
        fields in prop::collection::btree_map(1u32..200, (prop::sample::select(vec!["int32", "string", "bytes", "double", "Inner", "map<string, Inner>"]), any::<bool>()), 1..8),
        normalize in any::<bool>(),
    ) {
        let mut text = String::from("syntax = \"proto3\";\npackage g;\nmessage M {\n");
        for (number, (ty, repeated)) in fields.iter().rev() {
            let label = if *repeated && !ty.starts_with("map") { "repeated " } else { "" };
            text.push_str(&format!("  {label}{ty} f{number} = {number};\n"));
        }
        text.push_str("  message Inner { int32 x = 1; }\n}\n");
        let once = ProtobufSchema::parse(&text, &[], Validation::Strict, normalize).unwrap().canonical_text().to_string();
        let again = ProtobufSchema::parse(&once, &[], Validation::Strict, normalize).unwrap().canonical_text().to_string();
        prop_assert_eq!(again, once);
    }
}

/// `?format=ignore_extensions` (Confluent's `FormatContext(ignoreExtensions)`): no `extend`
/// blocks, no extension ranges, no custom options except Confluent's `(confluent.*)`.
#[test]
fn ignore_extensions_drops_extensions_and_custom_options_but_confluent_s() {
    let text = r#"syntax = "proto2";
package acme;

import "google/protobuf/descriptor.proto";
import "confluent/meta.proto";

extend google.protobuf.FieldOptions {
  optional string pii = 50001;
}

message Person {
  optional string name = 1 [(pii) = "yes", (confluent.field_meta).doc = "the name"];
  extensions 100 to 199;
}

extend Person {
  optional int32 age = 100;
}
"#;
    let schema = ProtobufSchema::parse(text, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{e}"));
    let stored = schema.canonical_text();
    for kept in ["extend Person", "extensions 100 to 199", "(pii) = \"yes\"", "(confluent.field_meta).doc"] {
        assert!(stored.contains(kept), "{kept} in {stored}");
    }
    let without = schema.without_extensions();
    assert_eq!(
        without,
        concat!(
            "syntax = \"proto2\";\npackage acme;\n\n",
            "import \"google/protobuf/descriptor.proto\";\nimport \"confluent/meta.proto\";\n\n",
            "message Person {\n  optional string name = 1 [(confluent.field_meta).doc = \"the name\"];\n}\n"
        )
    );
    let parsed = ParsedSchema::parse(SchemaType::Protobuf, text, &[], Validation::Strict, false).unwrap();
    assert_eq!(parsed.formatted("ignore_extensions").as_deref(), Some(without));
    // A file without extensions renders as stored.
    let plain = "syntax = \"proto3\";\npackage acme;\n\nmessage Beat {\n  int64 at = 1;\n}\n";
    let plain = ProtobufSchema::parse(plain, &[], Validation::Strict, false).unwrap();
    assert_eq!(plain.without_extensions(), plain.canonical_text());
}
