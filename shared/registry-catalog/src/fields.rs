//! The fields of a parsed schema, as the analysis endpoints see them: each named field with its
//! dot-separated path from the root (`address.street`) and a type name.
//!
//! - Avro: record fields, walked through nested records, arrays, maps and unions, over the
//!   resolved text (referenced types written in full, so a reference's fields are included). A
//!   named type used again is not walked again (its fields were listed where it was defined).
//!   Type names: primitives as written, the logical type when there is one (`decimal`,
//!   `timestamp-millis`), a named type's full name, `array<T>`, `map<T>`, unions as `null|T`.
//! - JSON Schema: `properties`, walked through nested objects and array `items`; the type is the
//!   `type` keyword (`a|b` for a list), else the `$ref` target, else `format`-less `any`.
//! - Protobuf: message fields of the file, walked into the file's own nested and top-level
//!   messages; scalar types by their proto names, message and enum types by full name (types
//!   from imported files are named, not walked: their fields belong to the referenced subject).
//!
//! Walks are bounded: at most [`MAX_FIELDS`] fields and [`MAX_DEPTH`] levels per schema, so a
//! search's cost per schema is bounded whatever was stored.

use protox::prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use protox::prost_reflect::prost_types::{DescriptorProto, FileDescriptorProto};
use registry_schema::ParsedSchema;
use serde_json::Value;
use std::collections::HashSet;

/// Most fields listed from one schema.
pub const MAX_FIELDS: usize = 10_000;
/// Deepest nesting walked.
pub const MAX_DEPTH: usize = 64;

/// One field of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its own name.
    pub name: String,
    /// Dot-separated names from the root (`address.street`).
    pub path: String,
    /// The type name (see the module documentation).
    pub type_name: String,
    /// Whether it carries documentation (Avro `doc`, JSON Schema `description`; Protobuf comments
    /// are not kept by the parser, so never for Protobuf).
    pub documented: bool,
    /// Whether a reader missing it gets a default (Avro and JSON Schema `default`; every proto3
    /// field, and proto2 fields with `[default = ...]`).
    pub has_default: bool,
}

impl Field {
    /// Nesting level: 1 for a top-level field.
    pub fn depth(&self) -> usize {
        self.path.split('.').count()
    }
}

/// The fields of `schema`, in the order the schema declares them (depth first).
pub fn fields(schema: &ParsedSchema) -> Vec<Field> {
    let mut out = Fields::default();
    match schema {
        ParsedSchema::Avro(avro) => {
            if let Ok(root) = serde_json::from_str::<Value>(avro.resolved_text()) {
                out.avro_type(&root, "", None, 0);
            }
        }
        ParsedSchema::Json(json) => {
            if let Ok(root) = serde_json::from_str::<Value>(json.canonical_text()) {
                out.json_object(&root, "", 0);
            }
        }
        ParsedSchema::Protobuf(proto) => out.protobuf_file(proto.linked()),
    }
    out.list
}

#[derive(Debug, Default)]
struct Fields {
    list: Vec<Field>,
    /// Named types already walked (Avro full names, Protobuf message names).
    walked: HashSet<String>,
    /// Whether the Protobuf file walked is proto3 (every field has a default).
    proto3: bool,
}

/// What [`Field::documented`] and [`Field::has_default`] record.
#[derive(Debug, Clone, Copy)]
struct Marks {
    documented: bool,
    has_default: bool,
}

impl Marks {
    /// The marks of a JSON field declaration documented by its `doc_key` string.
    fn of(declaration: &Value, doc_key: &str) -> Self {
        let documented = declaration.get(doc_key).and_then(Value::as_str).is_some_and(|doc| !doc.trim().is_empty());
        Marks { documented, has_default: declaration.get("default").is_some() }
    }
}

impl Fields {
    fn push(&mut self, prefix: &str, name: &str, type_name: String, marks: Marks) -> Option<String> {
        if self.list.len() >= MAX_FIELDS {
            return None;
        }
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
        let Marks { documented, has_default } = marks;
        self.list.push(Field { name: name.to_string(), path: path.clone(), type_name, documented, has_default });
        Some(path)
    }

    /// Walks an Avro type at `prefix` (the path of the field holding it), listing the fields of
    /// the records it contains; returns its type name.
    fn avro_type(&mut self, schema: &Value, prefix: &str, namespace: Option<&str>, depth: usize) -> String {
        match schema {
            Value::String(name) => qualified(name, namespace),
            Value::Array(branches) => branches
                .iter()
                .map(|branch| self.avro_type(branch, prefix, namespace, depth))
                .collect::<Vec<_>>()
                .join("|"),
            Value::Object(object) => {
                let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
                if let Some(logical) = object.get("logicalType").and_then(Value::as_str) {
                    return logical.to_string();
                }
                match kind {
                    "record" | "error" | "enum" | "fixed" => {
                        let name = object.get("name").and_then(Value::as_str).unwrap_or("");
                        let own_namespace = object.get("namespace").and_then(Value::as_str).or(namespace);
                        let full = qualified(name, own_namespace);
                        let record_namespace = full.rsplit_once('.').map(|(space, _)| space.to_string());
                        if matches!(kind, "record" | "error") && self.walked.insert(full.clone()) && depth < MAX_DEPTH {
                            for field in object.get("fields").and_then(Value::as_array).into_iter().flatten() {
                                let Some(field_name) = field.get("name").and_then(Value::as_str) else { continue };
                                let field_type = field.get("type").unwrap_or(&Value::Null);
                                let marks = Marks::of(field, "doc");
                                let Some(path) = self.push(prefix, field_name, String::new(), marks) else { break };
                                let index = self.list.len() - 1;
                                let type_name =
                                    self.avro_type(field_type, &path, record_namespace.as_deref(), depth + 1);
                                if let Some(entry) = self.list.get_mut(index) {
                                    entry.type_name = type_name;
                                }
                            }
                        }
                        full
                    }
                    "array" => {
                        let items = object.get("items").unwrap_or(&Value::Null);
                        format!("array<{}>", self.avro_type(items, prefix, namespace, depth))
                    }
                    "map" => {
                        let values = object.get("values").unwrap_or(&Value::Null);
                        format!("map<{}>", self.avro_type(values, prefix, namespace, depth))
                    }
                    primitive => primitive.to_string(),
                }
            }
            _ => String::new(),
        }
    }

    /// Lists the properties of a JSON Schema object at `prefix`, and of the objects nested in them.
    fn json_object(&mut self, schema: &Value, prefix: &str, depth: usize) {
        if depth >= MAX_DEPTH {
            return;
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        for (name, property) in properties {
            let marks = Marks::of(property, "description");
            let Some(path) = self.push(prefix, name, json_type(property), marks) else { return };
            self.json_object(property, &path, depth + 1);
            if let Some(items) = property.get("items") {
                self.json_object(items, &path, depth + 1);
            }
        }
    }

    fn protobuf_file(&mut self, file: &FileDescriptorProto) {
        self.proto3 = file.syntax.as_deref() == Some("proto3");
        let package = file.package.as_deref().unwrap_or("");
        for message in &file.message_type {
            let full = qualified(message.name(), Some(package));
            self.protobuf_message(file, message, &full, "", 0);
        }
    }

    /// Lists `message`'s fields at `prefix`, walking into message types the file defines.
    fn protobuf_message(
        &mut self,
        file: &FileDescriptorProto,
        message: &DescriptorProto,
        full: &str,
        prefix: &str,
        depth: usize,
    ) {
        if depth >= MAX_DEPTH || !self.walked.insert(full.to_string()) {
            return;
        }
        let proto3 = self.proto3;
        for field in &message.field {
            let type_name = match field.r#type() {
                Type::Message | Type::Enum | Type::Group => field.type_name().trim_start_matches('.').to_string(),
                scalar => scalar.as_str_name().trim_start_matches("TYPE_").to_ascii_lowercase(),
            };
            let type_name = if field.label() == Label::Repeated { format!("repeated {type_name}") } else { type_name };
            let nested = field.type_name().trim_start_matches('.').to_string();
            let marks = Marks { documented: false, has_default: proto3 || field.default_value.is_some() };
            let Some(path) = self.push(prefix, field.name(), type_name, marks) else { return };
            if field.r#type() == Type::Message
                && let Some(found) = find_message(file, &nested)
            {
                self.protobuf_message(file, found, &nested, &path, depth + 1);
            }
        }
    }
}

/// `name` qualified by `namespace` unless it is a primitive or already qualified.
fn qualified(name: &str, namespace: Option<&str>) -> String {
    const PRIMITIVES: [&str; 8] = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"];
    match namespace {
        Some(space) if !space.is_empty() && !name.contains('.') && !PRIMITIVES.contains(&name) => {
            format!("{space}.{name}")
        }
        _ => name.to_string(),
    }
}

/// A JSON Schema property's type name.
fn json_type(property: &Value) -> String {
    match property.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
        _ => match property.get("$ref").and_then(Value::as_str) {
            Some(target) => target.to_string(),
            None => "any".to_string(),
        },
    }
}

/// The message of `file` with full name `full` (top-level or nested).
fn find_message<'a>(file: &'a FileDescriptorProto, full: &str) -> Option<&'a DescriptorProto> {
    let package = file.package.as_deref().unwrap_or("");
    let local = if package.is_empty() { full } else { full.strip_prefix(package)?.strip_prefix('.')? };
    let mut parts = local.split('.');
    let first = parts.next()?;
    let mut current = file.message_type.iter().find(|m| m.name() == first)?;
    for part in parts {
        current = current.nested_type.iter().find(|m| m.name() == part)?;
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_schema::{SchemaType, Validation};

    fn parsed(schema_type: SchemaType, text: &str) -> ParsedSchema {
        ParsedSchema::parse(schema_type, text, &[], Validation::Lenient, false).unwrap_or_else(|e| panic!("{e}"))
    }

    fn listed(schema: &ParsedSchema) -> Vec<(String, String)> {
        fields(schema).into_iter().map(|f| (f.path, f.type_name)).collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn avro_nested_records_unions_and_logical_types() {
        let schema = parsed(
            SchemaType::Avro,
            r#"{"type":"record","name":"Order","namespace":"shop","fields":[
                {"name":"customer_id","type":"long"},
                {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
                {"name":"address","type":["null",{"type":"record","name":"Address","fields":[
                    {"name":"street","type":"string"}]}]},
                {"name":"previous","type":{"type":"array","items":"Address"}},
                {"name":"tags","type":{"type":"map","values":"string"}}]}"#,
        );
        assert_eq!(
            listed(&schema),
            pairs(&[
                ("customer_id", "long"),
                ("total", "decimal"),
                ("address", "null|shop.Address"),
                ("address.street", "string"),
                ("previous", "array<shop.Address>"),
                ("tags", "map<string>"),
            ])
        );
    }

    #[test]
    fn json_schema_nested_objects_and_items() {
        let schema = parsed(
            SchemaType::Json,
            r#"{"type":"object","properties":{"id":{"type":"integer"},
                "customer":{"type":"object","properties":{"email":{"type":["string","null"]}}},
                "lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}}"#,
        );
        assert_eq!(
            listed(&schema),
            pairs(&[
                ("id", "integer"),
                ("customer", "object"),
                ("customer.email", "string|null"),
                ("lines", "array"),
                ("lines.sku", "string"),
            ])
        );
    }

    #[test]
    fn protobuf_messages_nested_and_repeated() {
        let schema = parsed(
            SchemaType::Protobuf,
            "syntax = \"proto3\";\npackage shop;\nmessage Order {\n  int64 customer_id = 1;\n  Address address = 2;\n  repeated string tags = 3;\n  message Address { string street = 1; }\n}\n",
        );
        assert_eq!(
            listed(&schema),
            pairs(&[
                ("customer_id", "int64"),
                ("address", "shop.Order.Address"),
                ("address.street", "string"),
                ("tags", "repeated string"),
            ])
        );
    }

    #[test]
    fn recursive_types_end() {
        let schema = parsed(
            SchemaType::Avro,
            r#"{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}"#,
        );
        assert_eq!(listed(&schema), pairs(&[("next", "null|Node")]));
    }
}
