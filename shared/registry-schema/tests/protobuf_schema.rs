//! Protobuf acceptance: proto2/proto3, well-known and dependency imports, errors, hostile input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_schema::protobuf::ProtobufSchema;
use registry_schema::{Dependency, ParsedSchema, SchemaError, SchemaFormat, SchemaType, Validation};

#[macro_use]
#[path = "support/format.rs"]
mod format;

format_helpers!(ProtobufSchema, Protobuf, "Protobuf");

const PROTO3: &str = r#"syntax = "proto3";
package com.acme;

message Order {
  string id = 1;
  repeated Line lines = 2;
  map<string, int64> totals = 3;
  oneof payment {
    string card = 4;
    string iban = 5;
  }
  Status status = 6;
}

message Line {
  string sku = 1;
  int32 quantity = 2;
}

enum Status {
  STATUS_UNKNOWN = 0;
  STATUS_PAID = 1;
}

service Orders {
  rpc Get(Order) returns (Order);
}
"#;

// ---- accepted schemas ----

#[test]
fn proto3_messages_enums_maps_oneofs_and_services_parse() {
    let schema = parse(PROTO3).unwrap();
    assert_eq!(schema.syntax(), "proto3");
    assert_eq!(schema.package(), "com.acme");
    let order = schema.linked().message_type.iter().find(|m| m.name() == "Order").unwrap();
    assert_eq!(order.field.len(), 6);
    assert_eq!(order.oneof_decl[0].name(), "payment");
}

#[test]
fn proto2_with_required_optional_and_defaults_parses() {
    let text = r#"syntax = "proto2";
message User {
  required string name = 1;
  optional int32 age = 2 [default = 18];
  repeated string tags = 3;
  extensions 100 to 199;
}"#;
    let schema = parse(text).unwrap();
    assert_eq!(schema.syntax(), "proto2");
    assert_eq!(schema.package(), "");
}

#[test]
fn file_without_syntax_line_is_proto2() {
    assert_eq!(parse("message A { optional string a = 1; }").unwrap().syntax(), "proto2");
}

#[test]
fn nested_messages_and_enums_resolve() {
    let text = "syntax = \"proto3\";\nmessage Outer {\n  message Inner { enum Kind { K0 = 0; } Kind kind = 1; }\n  Inner inner = 1;\n}";
    assert!(parse(text).is_ok());
}

/// `PROTO3` as Confluent's formatter prints it (fields, then oneofs; no blank line between types).
const PROTO3_STORED: &str = "syntax = \"proto3\";\npackage com.acme;\n\nmessage Order {\n  string id = 1;\n  repeated Line lines = 2;\n  map<string, int64> totals = 3;\n  Status status = 6;\n\n  oneof payment {\n    string card = 4;\n    string iban = 5;\n  }\n}\nmessage Line {\n  string sku = 1;\n  int32 quantity = 2;\n}\nenum Status {\n  STATUS_UNKNOWN = 0;\n  STATUS_PAID = 1;\n}\n\nservice Orders {\n  rpc Get (Order) returns (Order);\n}\n";

#[test]
fn stored_text_is_confluents_rendering() {
    let schema = parse(&format!("\n\n  {PROTO3}\n\n")).unwrap();
    assert_eq!(schema.canonical_text(), PROTO3_STORED);
    let parsed = ParsedSchema::parse(SchemaType::Protobuf, PROTO3, &[], Validation::Strict, false).unwrap();
    assert_eq!(parsed.schema_type(), SchemaType::Protobuf);
    assert_eq!(parsed.canonical_text(), PROTO3_STORED);
}

// ---- well-known types ----

#[test]
fn well_known_types_import_without_references() {
    let text = r#"syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/any.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/field_mask.proto";
message Event {
  google.protobuf.Timestamp at = 1;
  google.protobuf.Any payload = 2;
  google.protobuf.StringValue note = 3;
  google.protobuf.Struct attrs = 4;
  google.protobuf.Duration took = 5;
  google.protobuf.FieldMask mask = 6;
}
service S { rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty); }"#;
    assert!(parse(text).is_ok());
}

#[test]
fn descriptor_proto_is_available_for_custom_options() {
    let text = r#"syntax = "proto3";
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { string pii = 50001; }
message A { string email = 1 [(pii) = "yes"]; }"#;
    assert!(parse(text).is_ok());
}

#[test]
fn confluent_known_imports_resolve_without_references() {
    // The shape Kafka Connect's ProtobufConverter emits for decimal, date and time columns.
    let text = r#"syntax = "proto3";
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
message ConnectDefault1 {
  confluent.type.Decimal DEC = 1 [(confluent.field_meta) = {
    params: [
      {
        value: "4",
        key: "precision"
      }
    ]
  }];
  google.type.Date D = 2;
  google.type.TimeOfDay T = 3;
}"#;
    assert!(parse(text).is_ok(), "{:?}", parse(text).err());
}

#[test]
fn every_google_type_import_links() {
    let files = [
        ("calendar_period", "CalendarPeriod"),
        ("color", "Color"),
        ("date", "Date"),
        ("datetime", "DateTime"),
        ("dayofweek", "DayOfWeek"),
        ("decimal", "Decimal"),
        ("expr", "Expr"),
        ("fraction", "Fraction"),
        ("interval", "Interval"),
        ("latlng", "LatLng"),
        ("money", "Money"),
        ("month", "Month"),
        ("phone_number", "PhoneNumber"),
        ("postal_address", "PostalAddress"),
        ("quaternion", "Quaternion"),
        ("timeofday", "TimeOfDay"),
    ];
    for (file, type_name) in files {
        let text = format!(
            "syntax = \"proto3\";\nimport \"google/type/{file}.proto\";\nmessage A {{ google.type.{type_name} v = 1; }}"
        );
        assert!(parse(&text).is_ok(), "{file}: {:?}", parse(&text).err());
    }
}

#[test]
fn a_dependency_takes_precedence_over_a_known_import() {
    // Only the dependency declares `Iso`: the text links only if the dependency is the file imported.
    let own = "syntax = \"proto3\";\npackage google.type;\nmessage Date { string iso = 1; }\nmessage Iso { string text = 1; }";
    let text = "syntax = \"proto3\";\nimport \"google/type/date.proto\";\nmessage A { google.type.Date d = 1; google.type.Iso i = 2; }";
    let schema = parse_with(text, &[dependency("google/type/date.proto", own)]).unwrap();
    let types: Vec<&str> = schema.linked().message_type[0].field.iter().map(|f| f.type_name()).collect();
    assert_eq!(types, [".google.type.Date", ".google.type.Iso"]);
}

#[test]
fn well_known_type_without_its_import_is_rejected() {
    let message = reason(parse("syntax = \"proto3\";\nmessage A { google.protobuf.Timestamp at = 1; }"));
    assert!(message.contains("google.protobuf.Timestamp"), "{message}");
}

// ---- dependency imports ----

const MONEY: &str =
    "syntax = \"proto3\";\npackage acme.types;\nmessage Money { string currency = 1; int64 units = 2; }";

#[test]
fn import_resolves_to_a_dependency_by_path() {
    let text = "syntax = \"proto3\";\nimport \"acme/money.proto\";\nmessage Price { acme.types.Money amount = 1; }";
    assert!(parse_with(text, &[dependency("acme/money.proto", MONEY)]).is_ok());
}

#[test]
fn dependencies_may_import_earlier_dependencies() {
    let line = "syntax = \"proto3\";\npackage acme.orders;\nimport \"acme/money.proto\";\nmessage Line { acme.types.Money price = 1; }";
    let deps = [dependency("acme/money.proto", MONEY), dependency("acme/line.proto", line)];
    let text =
        "syntax = \"proto3\";\nimport \"acme/line.proto\";\nmessage Order { repeated acme.orders.Line lines = 1; }";
    assert!(parse_with(text, &deps).is_ok());
    assert_eq!(
        parse_with(text, &deps[1..]).unwrap_err(),
        SchemaError::UnresolvedReference { name: "acme/money.proto".into() }
    );
}

#[test]
fn missing_import_is_an_unresolved_reference_naming_the_path() {
    let text = "syntax = \"proto3\";\nimport \"acme/money.proto\";\nmessage Price { acme.types.Money amount = 1; }";
    assert_eq!(parse(text).unwrap_err(), SchemaError::UnresolvedReference { name: "acme/money.proto".into() });
}

#[test]
fn type_from_a_dependency_that_was_not_imported_is_rejected() {
    let text = "syntax = \"proto3\";\nmessage Price { acme.types.Money amount = 1; }";
    let message = reason(parse_with(text, &[dependency("acme/money.proto", MONEY)]));
    assert!(message.contains("acme.types.Money"), "{message}");
}

#[test]
fn dependency_named_like_the_internal_input_file_does_not_clash() {
    let dep = "syntax = \"proto3\";\nmessage Shared { string v = 1; }";
    let text = "syntax = \"proto3\";\nimport \"schema.proto\";\nmessage Mine { Shared s = 1; }";
    assert!(parse_with(text, &[dependency("schema.proto", dep)]).is_ok());
}

#[test]
fn error_inside_a_dependency_names_that_file() {
    let text = "syntax = \"proto3\";\nimport \"bad.proto\";\nmessage A { string a = 1; }";
    let message = reason(parse_with(text, &[dependency("bad.proto", "syntax = \"proto3\";\nmessage B {")]));
    assert!(message.starts_with("bad.proto: "), "{message}");
}

// ---- rejected schemas ----

#[test]
fn syntax_error_reports_the_parser_message_with_line_and_column() {
    let message = reason(parse("syntax = \"proto3\";\nmessage A {\n  string a = ;\n}"));
    assert!(message.contains("line 3 column"), "{message}");
    assert!(message.contains("expected"), "{message}");
}

#[test]
fn json_text_is_not_a_proto_file() {
    assert!(parse(r#"{"type":"record","name":"A","fields":[]}"#).is_err());
}

#[test]
fn proto3_rejects_required_fields() {
    assert!(parse("syntax = \"proto3\";\nmessage A { required string a = 1; }").is_err());
}

#[test]
fn duplicate_field_numbers_are_rejected() {
    let message = reason(parse("syntax = \"proto3\";\nmessage A { string a = 1; string b = 1; }"));
    assert!(message.contains('1'), "{message}");
}

#[test]
fn proto3_enum_must_start_at_zero() {
    assert!(parse("syntax = \"proto3\";\nenum E { E_ONE = 1; }").is_err());
}

#[test]
fn undefined_field_type_is_rejected_by_name_and_position() {
    // Linking runs without source positions; a failure is described with them.
    let message = reason(parse("syntax = \"proto3\";\nmessage A {\n  string a = 1;\n  Missing m = 2;\n}"));
    assert!(message.contains("Missing") && message.contains("line 4 column 3"), "{message}");
}

#[test]
fn an_error_inside_a_dependency_is_located_in_that_file() {
    let bad = "syntax = \"proto3\";\nmessage B {\n  Nowhere n = 1;\n}";
    let text = "syntax = \"proto3\";\nimport \"bad.proto\";\nmessage A { B b = 1; }";
    let message = reason(parse_with(text, &[dependency("bad.proto", bad)]));
    assert!(message.starts_with("bad.proto: ") && message.contains("line 3 column 3"), "{message}");
}

#[test]
fn unknown_syntax_is_rejected() {
    assert!(parse("syntax = \"proto4\";\nmessage A {}").is_err());
}

// ---- hostile input ----

#[test]
fn ten_thousand_nested_messages_fail_without_overflow() {
    let text = format!("syntax = \"proto3\";\n{}{}", "message M { ".repeat(10_000), "}".repeat(10_000));
    assert_eq!(parse(&text).unwrap_err(), SchemaError::TooDeep { limit: registry_schema::protobuf::MAX_DEPTH });
}

#[test]
fn deeply_nested_option_values_fail_without_overflow() {
    let text = format!("syntax = \"proto3\";\noption (x) = {}{};", "{ a: ".repeat(10_000), "}".repeat(10_000));
    assert!(matches!(parse(&text), Err(SchemaError::TooDeep { .. })));
}

#[test]
fn deep_nesting_inside_a_dependency_is_refused_too() {
    let dep = format!("{}{}", "message M { ".repeat(10_000), "}".repeat(10_000));
    let text = "syntax = \"proto3\";\nimport \"deep.proto\";";
    assert!(matches!(parse_with(text, &[dependency("deep.proto", &dep)]), Err(SchemaError::TooDeep { .. })));
}

fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(512 * 1024).spawn(work).unwrap().join().unwrap()
}

#[test]
fn protoc_message_nesting_limit_of_31_holds_on_a_small_stack() {
    let nested =
        |levels: usize| format!("syntax = \"proto3\";\n{}{}", "message M { ".repeat(levels), "}".repeat(levels));
    let (at_limit, beyond) = (nested(31), nested(32));
    assert!(on_small_stack(move || parse(&at_limit).is_ok()));
    let message = reason(on_small_stack(move || parse(&beyond)));
    assert!(message.contains("recursion limit"), "{message}");
}

#[test]
fn option_values_nested_to_the_limit_end_in_an_error_on_a_small_stack() {
    let levels = registry_schema::protobuf::MAX_DEPTH - 1;
    let text = format!("syntax = \"proto3\";\noption (x) = {}{};", "{ a: ".repeat(levels), "}".repeat(levels));
    let outcome = on_small_stack(move || parse(&text).map(|s| s.canonical_text().len()));
    assert!(matches!(outcome, Err(SchemaError::Parse { .. })), "{outcome:?}");
}
