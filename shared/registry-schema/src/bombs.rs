//! Hostile schemas, one generator per class of super-linear input, shared by the hostile-input tests (this
//! crate's and the API suite's) and the `bombs` benchmark. Each returns an (old, new) pair of texts that
//! differ where the work is largest, so a compatibility check has to walk all of it.

/// Avro records `R0 .. R{depth}` where each record uses the next one twice (a DAG: the second use is by
/// name). Without a memo of (reader, writer) pairs the walk visits 2^depth records.
pub fn avro_dag(depth: usize) -> (String, String) {
    let build = |leaf: &str| {
        let mut schema = format!(r#"{{"type":"record","name":"R{depth}","fields":[{{"name":"v","type":"{leaf}"}}]}}"#);
        for level in (0..depth).rev() {
            let next = level + 1;
            schema = format!(
                r#"{{"type":"record","name":"R{level}","fields":[{{"name":"a","type":{schema}}},{{"name":"b","type":"R{next}"}}]}}"#
            );
        }
        schema
    };
    (build("int"), build("string"))
}

/// An Avro union of `branches` fixed types; the new schema lists them in reverse order.
pub fn avro_wide_union(branches: usize) -> (String, String) {
    let fixed = |i: usize| format!(r#"{{"type":"fixed","name":"F{i}","size":{}}}"#, 1 + i % 16);
    let union = |order: &mut dyn Iterator<Item = usize>| order.map(fixed).collect::<Vec<_>>().join(",");
    let record =
        |union: String| format!(r#"{{"type":"record","name":"U","fields":[{{"name":"u","type":[{union}]}}]}}"#);
    (record(union(&mut (0..branches))), record(union(&mut (0..branches).rev())))
}

/// An Avro enum of `symbols` symbols; the new one lists them in reverse and drops the first, so every
/// symbol must be looked up and one is missing.
pub fn avro_wide_enum(symbols: usize) -> (String, String) {
    let list =
        |order: &mut dyn Iterator<Item = usize>| order.map(|i| format!("\"S{i}\"")).collect::<Vec<_>>().join(",");
    let schema = |list: String| format!(r#"{{"type":"enum","name":"E","symbols":[{list}]}}"#);
    (schema(list(&mut (0..symbols))), schema(list(&mut (1..symbols).rev())))
}

/// A JSON Schema whose definitions `d0 .. d{depth}` each refer to the next twice (a `$ref` DAG).
pub fn json_ref_dag(depth: usize) -> (String, String) {
    let build = |leaf: &str| {
        let mut definitions = vec![format!(r#""d{depth}":{{"type":"{leaf}"}}"#)];
        for level in 0..depth {
            let next = level + 1;
            definitions.push(format!(
                r##""d{level}":{{"type":"object","properties":{{"a":{{"$ref":"#/definitions/d{next}"}},"b":{{"$ref":"#/definitions/d{next}"}}}}}}"##
            ));
        }
        format!(r##"{{"$ref":"#/definitions/d0","definitions":{{{}}}}}"##, definitions.join(","))
    };
    (build("integer"), build("string"))
}

/// A JSON Schema `enum` of `values` numbers; the new one lists them in reverse, each written another way
/// (`7` as `7.0`), and drops the first, so every value is looked up by value and one is missing.
pub fn json_wide_enum(values: usize) -> (String, String) {
    let list = |order: &mut dyn Iterator<Item = String>| order.collect::<Vec<_>>().join(",");
    let schema = |list: String| format!(r#"{{"enum":[{list}]}}"#);
    (
        schema(list(&mut (0..values).map(|i| i.to_string()))),
        schema(list(&mut (1..values).rev().map(|i| format!("{i}.0")))),
    )
}

/// Two JSON Schemas whose `const` integers differ only in the 23rd digit, beyond what an `f64` holds.
pub fn json_long_integer_const() -> (String, String) {
    let schema = |last: u8| format!(r#"{{"const":1234567890123456789012{last}}}"#);
    (schema(3), schema(4))
}

/// A JSON Schema `oneOf` of `branches` distinct objects; the new one reverses them and changes each
/// branch's type, so no pair matches and every pair is compared.
pub fn json_wide_one_of(branches: usize) -> (String, String) {
    let build = |kind: &str, order: &mut dyn Iterator<Item = usize>| {
        let items: Vec<String> = order
            .map(|i| format!(r#"{{"type":"object","properties":{{"p{i}":{{"type":"{kind}"}}}},"required":["p{i}"]}}"#))
            .collect();
        format!(r#"{{"oneOf":[{}]}}"#, items.join(","))
    };
    (build("integer", &mut (0..branches)), build("string", &mut (0..branches).rev()))
}

/// A Protobuf file of `messages` messages, each referring to the next and to the previous one.
pub fn protobuf_mutual_messages(messages: usize) -> (String, String) {
    let build = |kind: &str| {
        let mut text = String::from("syntax = \"proto3\";\npackage bomb;\n");
        for i in 0..messages {
            let next = (i + 1) % messages;
            let previous = (i + messages - 1) % messages;
            text.push_str(&format!(
                "message M{i} {{ M{next} next = 1; M{previous} previous = 2; {kind} value = 3; }}\n"
            ));
        }
        text
    };
    (build("int32"), build("string"))
}

/// A Protobuf message of `fields` fields; the new one changes every field's type. Field numbers skip
/// the range Protobuf reserves (19000 to 19999).
pub fn protobuf_wide_message(fields: usize) -> (String, String) {
    let build = |kind: &str| {
        let mut text = String::from("syntax = \"proto3\";\npackage bomb;\nmessage Wide {\n");
        for i in 0..fields {
            let number = if i + 1 < 19_000 { i + 1 } else { i + 1001 };
            text.push_str(&format!("  {kind} f{i} = {number};\n"));
        }
        text.push_str("}\n");
        text
    };
    (build("int32"), build("string"))
}

/// Not a bomb: a large Protobuf API file of the shape real ones take (resource messages with comments,
/// options, maps, oneofs and references, enums, one service), which must stay accepted under the default
/// budgets. `messages` messages of eight fields, an enum of eight values per ten messages, an rpc per two
/// messages; the new text adds a field to every message (a compatible change).
pub fn protobuf_large_api(messages: usize) -> (String, String) {
    let build = |added: &str| {
        let mut text =
            String::from("syntax = \"proto3\";\npackage acme.api.v1;\n\noption java_multiple_files = true;\n\n");
        for i in 0..messages {
            let parent = if i == 0 { "string".to_string() } else { format!("Resource{}", i - 1) };
            text.push_str(&format!(
                "// A resource of kind {i}.\nmessage Resource{i} {{\n  // Its name.\n  string name = 1 [json_name = \"name\"];\n  \
                 int64 create_time = 2;\n  repeated string tags = 3;\n  map<string, string> labels = 4;\n  {parent} parent = 5;\n  \
                 State{} state = 6;\n  oneof source {{\n    string uri = 7;\n    bytes content = 8 [deprecated = true];\n  }}\n{added}}}\n\n",
                i / 10
            ));
        }
        for e in 0..messages.div_ceil(10) {
            text.push_str(&format!("enum State{e} {{\n  STATE{e}_UNSPECIFIED = 0;\n"));
            for v in 1..8 {
                text.push_str(&format!("  STATE{e}_V{v} = {v};\n"));
            }
            text.push_str("}\n\n");
        }
        text.push_str("service Resources {\n");
        for i in (0..messages).step_by(2) {
            text.push_str(&format!("  rpc Get{i}(Resource{i}) returns (Resource{i});\n"));
        }
        text.push_str("}\n");
        text
    };
    (build(""), build("  optional int32 revision = 9;\n"))
}
