//! JSON Schema acceptance: per-draft validity, stored text, references, and hostile input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_schema::json_schema::{Draft, JsonSchema};
use registry_schema::{Dependency, ParsedSchema, SchemaError, SchemaFormat, SchemaType, Validation};
use std::net::TcpListener;

#[macro_use]
#[path = "support/format.rs"]
mod format;

format_helpers!(JsonSchema, Json, "JSON");

/// `text` parsed with normalization on, which must succeed.
fn parse_normalized(text: &str) -> JsonSchema {
    JsonSchema::parse(text, &[], Validation::Strict, true).unwrap()
}

const DRAFT4: &str = "http://json-schema.org/draft-04/schema#";
const DRAFT6: &str = "http://json-schema.org/draft-06/schema#";
const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";
const DRAFT2019: &str = "https://json-schema.org/draft/2019-09/schema";
const DRAFT2020: &str = "https://json-schema.org/draft/2020-12/schema";

fn with_draft(url: &str, body: &str) -> String {
    format!(r#"{{"$schema":"{url}",{body}}}"#)
}

/// Confluent's `JsonSchemaTest.testRecursiveMetaSchemaReference` and `...WithDraft_2020_12` (commit
/// 5d7e0dfa9f5), and the same `$ref` to each bundled meta-schema (drafts 4, 6, 7; `http` and `https`, with
/// and without `#`): it resolves from the bundled copy, never the network.
#[test]
fn a_ref_to_a_draft_meta_schema_resolves_from_the_bundled_copy() {
    let confluent = [
        r#"{"$schema":"https://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"$ref":"https://json-schema.org/draft-07/schema#"}}}"#,
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}"#,
    ];
    for text in confluent {
        JsonSchema::parse(text, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    for draft in ["draft-04", "draft-06", "draft-07"] {
        for scheme in ["http", "https"] {
            for hash in ["", "#"] {
                let meta = format!("{scheme}://json-schema.org/{draft}/schema{hash}");
                let text = format!(r#"{{"type":"object","properties":{{"x":{{"$ref":"{meta}"}}}}}}"#);
                JsonSchema::parse(&text, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{meta}: {e}"));
            }
        }
    }
    let unknown = r#"{"properties":{"x":{"$ref":"https://json-schema.org/draft-05/schema#"}}}"#;
    let error = JsonSchema::parse(unknown, &[], Validation::Strict, false).unwrap_err();
    assert!(matches!(error, SchemaError::UnresolvedReference { .. }), "{error}");
}

// ---- valid documents, one or more per draft ----

#[test]
fn each_declared_draft_is_detected_and_accepts_its_own_keywords() {
    let cases = [
        (DRAFT4, r#""type":"number","minimum":0,"exclusiveMinimum":true"#, Draft::Draft4),
        (DRAFT6, r#""type":"number","exclusiveMinimum":0,"const":3"#, Draft::Draft6),
        (DRAFT7, r#""if":{"type":"string"},"then":{"minLength":1},"else":{"type":"number"}"#, Draft::Draft7),
        (DRAFT2019, r#""$defs":{"a":{"type":"string"}},"dependentRequired":{"a":["b"]}"#, Draft::Draft201909),
        (DRAFT2020, r#""type":"array","prefixItems":[{"type":"string"}],"items":false"#, Draft::Draft202012),
    ];
    for (url, body, expected) in cases {
        let schema = parse(&with_draft(url, body)).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(schema.draft(), expected, "{url}");
    }
}

#[test]
fn no_schema_keyword_means_draft_7_like_confluent() {
    let schema = parse(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#).unwrap();
    assert_eq!(schema.draft(), Draft::Draft7);
    // Draft 7 forbids the draft-4 boolean form of exclusiveMinimum.
    assert!(parse(r#"{"type":"number","exclusiveMinimum":true}"#).is_err());
}

#[test]
fn boolean_schemas_are_accepted() {
    assert_eq!(parse("true").unwrap().canonical_text(), "true");
    assert_eq!(parse(" false ").unwrap().canonical_text(), "false");
}

#[test]
fn local_refs_inside_the_document_resolve() {
    let text = r##"{"definitions":{"name":{"type":"string"}},"properties":{"n":{"$ref":"#/definitions/name"}}}"##;
    assert!(parse(text).is_ok());
    let modern = with_draft(DRAFT2020, r##""$defs":{"n":{"type":"string"}},"items":{"$ref":"#/$defs/n"}"##);
    assert!(parse(&modern).is_ok());
}

// ---- invalid documents per draft ----

#[test]
fn draft4_rejects_numeric_exclusive_minimum() {
    assert!(parse(&with_draft(DRAFT4, r#""exclusiveMinimum":5"#)).is_err());
}

#[test]
fn draft6_rejects_boolean_exclusive_maximum() {
    assert!(parse(&with_draft(DRAFT6, r#""maximum":5,"exclusiveMaximum":true"#)).is_err());
}

#[test]
fn draft7_rejects_unknown_type_name_with_location() {
    let message = reason(parse(r#"{"properties":{"age":{"type":"integr"}}}"#));
    assert!(message.contains("integr"), "{message}");
    assert!(message.contains("/properties/age/type"), "{message}");
}

#[test]
fn draft2019_rejects_negative_min_length() {
    let message = reason(parse(&with_draft(DRAFT2019, r#""minLength":-1"#)));
    assert!(message.contains("-1"), "{message}");
}

#[test]
fn draft2020_rejects_non_array_prefix_items() {
    assert!(parse(&with_draft(DRAFT2020, r#""prefixItems":{"type":"string"}"#)).is_err());
}

#[test]
fn required_must_be_an_array_of_strings() {
    assert!(parse(r#"{"required":"name"}"#).is_err());
    assert!(parse(r#"{"required":[1]}"#).is_err());
}

#[test]
fn invalid_regex_pattern_is_rejected() {
    assert!(parse(r#"{"type":"string","pattern":"(unclosed"}"#).is_err());
}

#[test]
fn non_json_text_is_rejected_with_position() {
    let message = reason(parse(r#"{"type":"string""#));
    assert!(message.starts_with("not valid JSON"), "{message}");
    assert!(message.contains("line 1"), "{message}");
    assert!(parse("").is_err());
    assert!(parse("syntax = \"proto3\";").is_err());
}

#[test]
fn json_that_is_not_a_schema_is_rejected_with_its_kind() {
    for (text, kind) in [("[1,2]", "an array"), ("\"string\"", "a string"), ("42", "a number"), ("null", "null")] {
        let message = reason(parse(text));
        assert!(message.contains("object or a boolean"), "{text}: {message}");
        assert!(message.contains(kind), "{text}: {message}");
    }
}

#[test]
fn reserved_dollar_dollar_property_names_only_fail_strict_validation() {
    let text = r#"{"type":"object","properties":{"$$id":{"type":"string"}}}"#;
    assert!(reason(parse(text)).contains("$$"));
    assert!(JsonSchema::parse(text, &[], Validation::Lenient, false).is_ok());
}

// ---- stored text ----

#[test]
fn stored_text_is_compact_and_keeps_key_order() {
    let schema = parse("{\n  \"type\" : \"object\",\n  \"properties\" : { \"b\" : {}, \"a\" : {} }\n}").unwrap();
    assert_eq!(schema.canonical_text(), r#"{"type":"object","properties":{"b":{},"a":{}}}"#);
    let reordered = parse(r#"{"properties":{"b":{},"a":{}},"type":"object"}"#).unwrap();
    assert_ne!(schema.canonical_text(), reordered.canonical_text());
}

#[test]
fn whitespace_variants_store_the_same_text() {
    let a = parse(r#"{"type":"string","maxLength":3}"#).unwrap();
    let b = parse("{ \"type\":\t\"string\",\r\n \"maxLength\": 3 }").unwrap();
    assert_eq!(a.canonical_text(), b.canonical_text());
}

#[test]
fn normalize_sorts_keys_recursively_so_key_order_variants_match() {
    let a = parse_normalized(r#"{"type":"object","properties":{"b":{"type":"string","maxLength":2},"a":{}}}"#);
    let b = parse_normalized(r#"{"properties":{"a":{},"b":{"maxLength":2,"type":"string"}},"type":"object"}"#);
    assert_eq!(a.canonical_text(), r#"{"properties":{"a":{},"b":{"maxLength":2,"type":"string"}},"type":"object"}"#);
    assert_eq!(a.canonical_text(), b.canonical_text());
}

#[test]
fn normalize_keeps_array_order() {
    let schema = parse_normalized(r#"{"enum":["b","a"],"required":["z","y"]}"#);
    assert_eq!(schema.canonical_text(), r#"{"enum":["b","a"],"required":["z","y"]}"#);
}

#[test]
fn strings_are_re_escaped_minimally() {
    let schema = parse(r#"{"description":"caf\u00e9 \"q\" \/ tab\t"}"#).unwrap();
    assert_eq!(schema.canonical_text(), "{\"description\":\"caf\u{e9} \\\"q\\\" / tab\\t\"}");
}

#[test]
fn dispatch_through_parsed_schema_returns_the_same_text() {
    let parsed =
        ParsedSchema::parse(SchemaType::Json, r#"{ "type": "integer" }"#, &[], Validation::Strict, false).unwrap();
    assert_eq!(parsed.schema_type(), SchemaType::Json);
    assert_eq!(parsed.canonical_text(), r#"{"type":"integer"}"#);
}

// ---- references ----

const ADDRESS: &str = r#"{"type":"object","properties":{"street":{"type":"string"}}}"#;

#[test]
fn relative_ref_resolves_to_a_dependency_by_name() {
    let text = r#"{"type":"object","properties":{"home":{"$ref":"address.json"}}}"#;
    assert!(parse_with(text, &[dependency("address.json", ADDRESS)]).is_ok());
}

#[test]
fn ref_relative_to_the_root_id_resolves_to_a_dependency() {
    let text = r#"{"$id":"https://example.com/schemas/customer.json","properties":{"home":{"$ref":"address.json"}}}"#;
    assert!(parse_with(text, &[dependency("address.json", ADDRESS)]).is_ok());
}

#[test]
fn absolute_ref_resolves_to_a_dependency_named_by_url() {
    let text = r##"{"properties":{"home":{"$ref":"https://example.com/address.json#/properties/street"}}}"##;
    assert!(parse_with(text, &[dependency("https://example.com/address.json", ADDRESS)]).is_ok());
}

#[test]
fn dependencies_may_refer_to_earlier_dependencies() {
    let country = r#"{"type":"string","enum":["NL","DE"]}"#;
    let address = r#"{"type":"object","properties":{"country":{"$ref":"country.json"}}}"#;
    let deps = [dependency("country.json", country), dependency("address.json", address)];
    assert!(parse_with(r#"{"properties":{"home":{"$ref":"address.json"}}}"#, &deps).is_ok());
    // Without the transitive dependency the chain does not resolve.
    let missing = parse_with(r#"{"properties":{"home":{"$ref":"address.json"}}}"#, &deps[1..]);
    assert_eq!(missing.unwrap_err(), SchemaError::UnresolvedReference { name: "country.json".into() });
}

#[test]
fn missing_dependency_is_an_unresolved_reference_naming_it() {
    let result = parse(r#"{"properties":{"home":{"$ref":"address.json"}}}"#);
    assert_eq!(result.unwrap_err(), SchemaError::UnresolvedReference { name: "address.json".into() });
}

#[test]
fn dangling_local_pointer_is_rejected() {
    assert!(parse(r##"{"properties":{"a":{"$ref":"#/definitions/nope"}}}"##).is_err());
}

#[test]
fn dependency_that_is_not_json_is_rejected_naming_it() {
    let message = reason(parse_with(r#"{"$ref":"a.json"}"#, &[dependency("a.json", "{oops")]));
    assert!(message.contains("a.json"), "{message}");
}

#[test]
fn remote_ref_is_refused_without_any_connection_attempt() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/remote.json", listener.local_addr().unwrap());
    let result = parse(&format!(r#"{{"properties":{{"x":{{"$ref":"{url}"}}}}}}"#));
    assert_eq!(result.unwrap_err(), SchemaError::UnresolvedReference { name: url });
    assert!(listener.accept().is_err(), "the parser connected to the $ref URL");
}

#[test]
fn remote_meta_schema_is_never_fetched() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/meta", listener.local_addr().unwrap());
    let schema = parse(&format!(r#"{{"$schema":"{url}","type":"string"}}"#)).unwrap();
    assert_eq!(schema.draft(), Draft::Draft7);
    assert!(listener.accept().is_err(), "the parser connected to the $schema URL");
}

// ---- hostile input ----

#[test]
fn recursive_schemas_are_accepted() {
    assert!(parse(r##"{"type":"object","properties":{"next":{"$ref":"#"}}}"##).is_ok());
    let tree = r##"{"definitions":{"node":{"properties":{"children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},"$ref":"#/definitions/node"}"##;
    assert!(parse(tree).is_ok());
}

#[test]
fn reference_cycles_end_without_hanging_or_overflow() {
    let texts = [
        r##"{"$ref":"#"}"##.to_string(),
        r##"{"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}"##
            .to_string(),
        r##"{"type":"object","properties":{"next":{"$ref":"#"}}}"##.to_string(),
    ];
    for text in texts {
        let outcome = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || parse(&text).map(|s| s.canonical_text().len()))
            .unwrap()
            .join();
        assert!(outcome.is_ok(), "parsing a $ref cycle panicked");
    }
}

#[test]
fn dependencies_referring_to_each_other_end_without_overflow() {
    let deps = [
        dependency("a.json", r#"{"properties":{"b":{"$ref":"b.json"}}}"#),
        dependency("b.json", r#"{"properties":{"a":{"$ref":"a.json"}}}"#),
    ];
    let outcome = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || parse_with(r#"{"$ref":"a.json"}"#, &deps).map(|s| s.canonical_text().len()))
        .unwrap()
        .join();
    assert!(outcome.is_ok(), "parsing mutually referring dependencies panicked");
}

#[test]
fn ten_thousand_nested_arrays_fail_without_overflow() {
    let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(matches!(parse(&text), Err(SchemaError::TooDeep { .. })));
}

#[test]
fn deeply_nested_subschemas_fail_without_overflow() {
    let text = format!("{}{{}}{}", r#"{"items":"#.repeat(10_000), "}".repeat(10_000));
    assert!(matches!(parse(&text), Err(SchemaError::TooDeep { .. })));
}

#[test]
fn nesting_just_under_the_limit_still_compiles_on_a_small_stack() {
    let levels = registry_schema::Limits::default().max_depth / 2 - 1;
    let text = format!("{}{{}}{}", r#"{"properties":{"a":"#.repeat(levels), "}}".repeat(levels));
    let outcome = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || parse(&text).map(|s| s.canonical_text().len()))
        .unwrap()
        .join()
        .unwrap();
    assert!(outcome.is_ok(), "{outcome:?}");
}
