//! The `serialized` form of a Protobuf schema: a base64-encoded `FileDescriptorProto`, as
//! confluent-kafka's `ProtobufSerializer` registers it and `?format=serialized` answers it.
//!
//! Confluent accepts that form on input (its `ProtobufSchema` falls back to base64 when the text
//! does not parse) and stores the `.proto` text it renders from the descriptor; [`to_proto_text`]
//! is that rendering. [`to_base64`] is the way back, for `?format=serialized`.

use super::render::options::quote_escaping;
use protox::prost::Message;
use protox::prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use protox::prost_reflect::prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto, ServiceDescriptorProto,
};
use std::fmt::Write;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (RFC 4648, with `=` padding) of `bytes`.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional, no whitespace); `None` for anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in body.bytes() {
        let value = ALPHABET.iter().position(|&a| a == c)?;
        acc = (acc << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The descriptor `text` encodes, when it is base64 of a `FileDescriptorProto` that names at
/// least one message, enum or service (so that ordinary `.proto` text never qualifies).
pub fn decode(text: &str) -> Option<FileDescriptorProto> {
    let bytes = base64_decode(text)?;
    let file = FileDescriptorProto::decode(bytes.as_slice()).ok()?;
    let declares = !file.message_type.is_empty() || !file.enum_type.is_empty() || !file.service.is_empty();
    declares.then_some(file)
}

/// Base64 of `file` encoded as a `FileDescriptorProto`, without source code info.
pub fn to_base64(file: &FileDescriptorProto) -> String {
    let mut file = file.clone();
    file.source_code_info = None;
    base64_encode(&file.encode_to_vec())
}

/// `.proto` text declaring what `file` declares: syntax, package, imports, the common file
/// options, messages (fields, maps, oneofs, nested types, reserved ranges and names, extension
/// ranges), enums and services. Custom options are not rendered.
pub fn to_proto_text(file: &FileDescriptorProto) -> String {
    let mut out = String::new();
    let syntax = match file.syntax() {
        "" => "proto2",
        other => other,
    };
    let proto3 = syntax == "proto3";
    let _ = writeln!(out, "syntax = {};", quote(syntax));
    if !file.package().is_empty() {
        let _ = writeln!(out, "package {};", file.package());
    }
    out.push('\n');
    for (index, dependency) in file.dependency.iter().enumerate() {
        let public = file.public_dependency.iter().any(|&i| usize::try_from(i).ok() == Some(index));
        let weak = file.weak_dependency.iter().any(|&i| usize::try_from(i).ok() == Some(index));
        let kind = if public {
            "public "
        } else if weak {
            "weak "
        } else {
            ""
        };
        let _ = writeln!(out, "import {kind}{};", quote(dependency));
    }
    let options = file_options(file);
    for (name, value) in &options {
        let _ = writeln!(out, "option {name} = {value};");
    }
    if !file.dependency.is_empty() || !options.is_empty() {
        out.push('\n');
    }
    for message in &file.message_type {
        render_message(&mut out, message, proto3, 0);
    }
    for enumeration in &file.enum_type {
        render_enum(&mut out, enumeration, 0);
    }
    for service in &file.service {
        render_service(&mut out, service);
    }
    out
}

/// `[(name, &options.name), ...]`: each file option named as its descriptor field is.
macro_rules! by_field_name {
    ($options:ident: $($field:ident),+ $(,)?) => {
        [$((stringify!($field), &$options.$field)),+]
    };
}

fn file_options(file: &FileDescriptorProto) -> Vec<(&'static str, String)> {
    let Some(o) = &file.options else { return Vec::new() };
    let strings = by_field_name!(o:
        java_package, java_outer_classname, go_package, objc_class_prefix, csharp_namespace, swift_prefix,
        php_class_prefix, php_namespace, php_metadata_namespace, ruby_package,
    );
    let flags = by_field_name!(o:
        java_multiple_files, java_generic_services, cc_generic_services, py_generic_services, cc_enable_arenas,
        deprecated,
    );
    let mut options: Vec<(&'static str, String)> =
        strings.into_iter().filter_map(|(name, value)| value.as_ref().map(|v| (name, quote(v)))).collect();
    options.extend(flags.into_iter().filter_map(|(name, value)| value.map(|v| (name, v.to_string()))));
    let optimize = match o.optimize_for {
        Some(2) => Some("CODE_SIZE"),
        Some(3) => Some("LITE_RUNTIME"),
        Some(1) => Some("SPEED"),
        _ => None,
    };
    options.extend(optimize.map(|mode| ("optimize_for", mode.to_string())));
    options
}

fn render_message(out: &mut String, message: &DescriptorProto, proto3: bool, depth: usize) {
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}message {} {{", message.name());
    let inner = "  ".repeat(depth + 1);
    let mut oneofs_done = vec![false; message.oneof_decl.len()];
    for field in &message.field {
        match real_oneof(field) {
            Some(index) => {
                if oneofs_done.get(index).copied().unwrap_or(true) {
                    continue;
                }
                oneofs_done[index] = true;
                let name = message.oneof_decl.get(index).map_or("", |o| o.name());
                let _ = writeln!(out, "{inner}oneof {name} {{");
                for member in message.field.iter().filter(|f| real_oneof(f) == Some(index)) {
                    render_field(out, message, member, proto3, depth + 2, true);
                }
                let _ = writeln!(out, "{inner}}}");
            }
            None => render_field(out, message, field, proto3, depth + 1, false),
        }
    }
    for range in &message.reserved_range {
        let _ = writeln!(out, "{inner}reserved {};", range_text(range.start(), range.end() - 1, 536_870_911));
    }
    if !message.reserved_name.is_empty() {
        let names: Vec<String> = message.reserved_name.iter().map(|n| quote(n)).collect();
        let _ = writeln!(out, "{inner}reserved {};", names.join(", "));
    }
    for range in &message.extension_range {
        let _ = writeln!(out, "{inner}extensions {};", range_text(range.start(), range.end() - 1, 536_870_911));
    }
    for nested in message.nested_type.iter().filter(|n| !is_map_entry(n)) {
        render_message(out, nested, proto3, depth + 1);
    }
    for enumeration in &message.enum_type {
        render_enum(out, enumeration, depth + 1);
    }
    let _ = writeln!(out, "{pad}}}");
}

fn real_oneof(field: &FieldDescriptorProto) -> Option<usize> {
    match field.oneof_index {
        Some(index) if !field.proto3_optional() => usize::try_from(index).ok(),
        _ => None,
    }
}

fn is_map_entry(message: &DescriptorProto) -> bool {
    message.options.as_ref().and_then(|o| o.map_entry).unwrap_or(false)
}

fn render_field(
    out: &mut String,
    parent: &DescriptorProto,
    field: &FieldDescriptorProto,
    proto3: bool,
    depth: usize,
    in_oneof: bool,
) {
    let pad = "  ".repeat(depth);
    let map_entry = (field.label() == Label::Repeated && field.r#type() == Type::Message)
        .then(|| {
            let entry_name = field.type_name().rsplit('.').next().unwrap_or_default();
            parent.nested_type.iter().find(|n| n.name() == entry_name && is_map_entry(n))
        })
        .flatten();
    let type_text = match map_entry {
        Some(entry) => {
            let part = |number| entry.field.iter().find(|f| f.number() == number).map(type_name).unwrap_or_default();
            format!("map<{}, {}>", part(1), part(2))
        }
        None => type_name(field),
    };
    let label = match field.label() {
        _ if in_oneof || map_entry.is_some() => "",
        Label::Repeated => "repeated ",
        Label::Required => "required ",
        Label::Optional if !proto3 || field.proto3_optional() => "optional ",
        Label::Optional => "",
    };
    let _ = write!(out, "{pad}{label}{type_text} {} = {}", field.name(), field.number());
    let mut options = Vec::new();
    if let Some(default) = &field.default_value {
        let value = match field.r#type() {
            Type::String => quote(default),
            Type::Bytes => format!("\"{default}\""),
            _ => default.clone(),
        };
        options.push(format!("default = {value}"));
    }
    if let Some(json_name) = field.json_name.as_ref().filter(|name| **name != default_json_name(field.name())) {
        options.push(format!("json_name = {}", quote(json_name)));
    }
    if let Some(o) = &field.options {
        options.extend(o.packed.map(|packed| format!("packed = {packed}")));
        options.extend(o.deprecated.map(|deprecated| format!("deprecated = {deprecated}")));
    }
    if !options.is_empty() {
        let _ = write!(out, " [{}]", options.join(", "));
    }
    out.push_str(";\n");
}

fn type_name(field: &FieldDescriptorProto) -> String {
    match super::source::scalar_name(field.r#type()) {
        Some(scalar) => scalar.to_string(),
        None => field.type_name().to_string(),
    }
}

/// protoc's default `json_name`: underscores removed, the letter after each upper-cased.
fn default_json_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn render_enum(out: &mut String, enumeration: &EnumDescriptorProto, depth: usize) {
    let pad = "  ".repeat(depth);
    let inner = "  ".repeat(depth + 1);
    let _ = writeln!(out, "{pad}enum {} {{", enumeration.name());
    if let Some(allow) = enumeration.options.as_ref().and_then(|o| o.allow_alias) {
        let _ = writeln!(out, "{inner}option allow_alias = {allow};");
    }
    for value in &enumeration.value {
        let deprecated = value.options.as_ref().and_then(|o| o.deprecated);
        let suffix = deprecated.map(|d| format!(" [deprecated = {d}]")).unwrap_or_default();
        let _ = writeln!(out, "{inner}{} = {}{suffix};", value.name(), value.number());
    }
    for range in &enumeration.reserved_range {
        let _ = writeln!(out, "{inner}reserved {};", range_text(range.start(), range.end(), i32::MAX));
    }
    if !enumeration.reserved_name.is_empty() {
        let names: Vec<String> = enumeration.reserved_name.iter().map(|n| quote(n)).collect();
        let _ = writeln!(out, "{inner}reserved {};", names.join(", "));
    }
    let _ = writeln!(out, "{pad}}}");
}

fn render_service(out: &mut String, service: &ServiceDescriptorProto) {
    let _ = writeln!(out, "service {} {{", service.name());
    for method in &service.method {
        let stream = |on: bool| if on { "stream " } else { "" };
        let _ = writeln!(
            out,
            "  rpc {}({}{}) returns ({}{});",
            method.name(),
            stream(method.client_streaming()),
            method.input_type(),
            stream(method.server_streaming()),
            method.output_type()
        );
    }
    out.push_str("}\n");
}

/// `N`, `N to M` or `N to max` for an inclusive range.
fn range_text(start: i32, end_inclusive: i32, max: i32) -> String {
    match end_inclusive {
        end if end == start => start.to_string(),
        end if end >= max => format!("{start} to max"),
        end => format!("{start} to {end}"),
    }
}

/// A `.proto` string literal (only quotes, backslashes and line breaks escaped).
fn quote(text: &str) -> String {
    quote_escaping(text, &[('"', "\\\""), ('\\', "\\\\"), ('\n', "\\n")])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::ProtobufSchema;
    use crate::{ParsedSchema, SchemaFormat, SchemaType, Validation};

    /// What confluent-kafka 2.16's ProtobufSerializer posts for a proto3 file with a nested
    /// message, a map, a oneof, a proto3 `optional`, an enum, reserved ranges and names, a
    /// well-known import and a file option (built with the Python protobuf runtime).
    const PYTHON_ORDER: &str = "ChBzaG9wL29yZGVyLnByb3RvEgRzaG9wGh9nb29nbGUvcHJvdG9idWYvdGltZXN0YW1wLnByb3RvIrgDCgVPcmRlchIZCghvcmRlcl9pZBgBIAEoCVIHb3JkZXJJZBImCgVsaW5lcxgCIAMoCzIQLnNob3AuT3JkZXIuTGluZVIFbGluZXMSOwoKYXR0cmlidXRlcxgDIAMoCzIbLnNob3AuT3JkZXIuQXR0cmlidXRlc0VudHJ5UgphdHRyaWJ1dGVzEhQKBGNhcmQYBCABKAlIAFIEY2FyZBIUCgRjYXNoGAUgASgISABSBGNhc2gSFwoEbm90ZRgGIAEoCUgBUgRub3RliAEBEiQKBnN0YXR1cxgHIAEoDjIMLnNob3AuU3RhdHVzUgZzdGF0dXMSNwoJcGxhY2VkX2F0GAggASgLMhouZ29vZ2xlLnByb3RvYnVmLlRpbWVzdGFtcFIIcGxhY2VkQXQaKgoETGluZRIQCgNza3UYASABKAlSA3NrdRIQCgNxdHkYAiABKAVSA3F0eRo9Cg9BdHRyaWJ1dGVzRW50cnkSEAoDa2V5GAEgASgJUgNrZXkSFAoFdmFsdWUYAiABKAlSBXZhbHVlOgI4AUIJCgdwYXltZW50QgcKBV9ub3RlSgQIChAMUgZsZWdhY3kqLwoGU3RhdHVzEhIKDlNUQVRVU19VTktOT1dOEAASEQoNU1RBVFVTX1BMQUNFRBABQhJaEGV4YW1wbGUuY29tL3Nob3BiBnByb3RvMw==";

    fn parse(text: &str) -> ProtobufSchema {
        ProtobufSchema::parse(text, &[], Validation::Strict, false).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(base64_decode("Zm9vYg").as_deref(), Some(&b"foob"[..]), "padding is optional");
        assert_eq!(base64_decode("Zm9v!"), None);
        assert_eq!(base64_decode("Z"), None);
        assert_eq!(base64_decode("Zm==="), None);
    }

    #[test]
    fn python_serializer_descriptor_is_rendered_to_proto_text() {
        parse(PYTHON_ORDER);
        let text = to_proto_text(&decode(PYTHON_ORDER).unwrap_or_else(|| panic!("fixture decodes")));
        assert!(text.starts_with("syntax = \"proto3\";\npackage shop;\n"), "{text}");
        for line in [
            "import \"google/protobuf/timestamp.proto\";",
            "option go_package = \"example.com/shop\";",
            "  string order_id = 1;",
            "  repeated .shop.Order.Line lines = 2;",
            "  map<string, string> attributes = 3;",
            "  oneof payment {\n    string card = 4;\n    bool cash = 5;\n  }",
            "  optional string note = 6;",
            "  .shop.Status status = 7;",
            "  .google.protobuf.Timestamp placed_at = 8;",
            "  reserved 10 to 11;",
            "  reserved \"legacy\";",
            "  message Line {\n    string sku = 1;\n    int32 qty = 2;\n  }",
            "enum Status {\n  STATUS_UNKNOWN = 0;\n  STATUS_PLACED = 1;\n}",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains("AttributesEntry"), "map entries render as map<K, V>: {text}");
        assert!(!text.contains("_note"), "proto3 optional's synthetic oneof is not rendered: {text}");
    }

    #[test]
    fn rendered_text_declares_the_same_messages_as_the_descriptor() {
        let posted = decode(PYTHON_ORDER).unwrap_or_else(|| panic!("fixture decodes"));
        let schema = parse(PYTHON_ORDER);
        let linked = schema.linked();
        let fields = |file: &FileDescriptorProto| -> Vec<(String, i32, Option<i32>, String)> {
            file.message_type[0]
                .field
                .iter()
                .map(|f| (f.name().to_string(), f.number(), f.r#type, f.type_name().to_string()))
                .collect()
        };
        assert_eq!(fields(linked), fields(&posted));
        assert_eq!(linked.message_type[0].oneof_decl, posted.message_type[0].oneof_decl);
        assert_eq!(linked.enum_type, posted.enum_type);
    }

    #[test]
    fn the_same_descriptor_always_gives_the_same_stored_text_and_fingerprint() {
        let once = ParsedSchema::parse(SchemaType::Protobuf, PYTHON_ORDER, &[], Validation::Strict, false);
        let again = ParsedSchema::parse(SchemaType::Protobuf, PYTHON_ORDER, &[], Validation::Strict, false);
        let (once, again) = (once.unwrap_or_else(|e| panic!("{e}")), again.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(once.canonical_text(), again.canonical_text());
        let rendered = parse(once.canonical_text());
        assert_eq!(rendered.canonical_text(), once.canonical_text(), "rendered text is a fixed point");
    }

    #[test]
    fn serialized_format_round_trips_through_the_descriptor() {
        let text =
            "syntax = \"proto3\";\npackage ops;\n\nmessage Beat {\n  int64 at = 1;\n  repeated string tags = 2;\n}";
        let schema = parse(text);
        let serialized = schema.serialized();
        let descriptor = decode(&serialized).unwrap_or_else(|| panic!("serialized form decodes"));
        assert_eq!(descriptor.package(), "ops");
        assert_eq!(descriptor.message_type[0].name(), "Beat");
        let posted = parse(&serialized);
        assert_eq!(
            posted.canonical_text(),
            schema.canonical_text(),
            "posting the serialized form stores the same text"
        );
        let stored = schema.canonical_text().to_string();
        let parsed = ParsedSchema::Protobuf(schema);
        assert_eq!(parsed.formatted("serialized"), Some(serialized));
        assert_eq!(parsed.formatted("ignore_extensions"), Some(stored), "no extensions: the stored text");
        assert_eq!(parsed.formatted("no-such-format"), None);
    }

    #[test]
    fn text_that_only_looks_like_base64_is_still_parsed_as_proto() {
        assert!(decode("abcd").is_none(), "bytes that are not a descriptor declaring types");
        let error = ProtobufSchema::parse("messageX", &[], Validation::Strict, false);
        assert!(error.is_err());
    }
}
