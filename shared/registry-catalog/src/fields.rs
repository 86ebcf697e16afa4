//! The fields of a parsed schema, as the analysis endpoints see them: each named field with its
//! dot-separated path from the root (`address.street`) and a type name.
//!
//! - Avro: record fields, walked through nested records, arrays, maps and unions, over the
//!   resolved text (referenced types written in full, so a reference's fields are included). A
//!   named type used again is not walked again (its fields were listed where it was defined).
//!   Type names: primitives as written, the logical type when there is one (`decimal`,
//!   `timestamp-millis`), a named type's full name, `array<T>`, `map<T>`, unions as `null|T`.
//! - JSON Schema: `properties`, walked through nested objects, array `items` and `$ref`s (local
//!   ones, `#/definitions/...`, and those naming a referenced schema, `address.json` or
//!   `address.json#/...`, so a reference's fields are included); the type is the `type` keyword
//!   (`a|b` for a list), else the `$ref` as written, else `any`. A `$ref` is not followed again
//!   inside itself (recursive definitions end).
//! - Protobuf: message fields, walked into the messages of the file and of its imports (so a
//!   referenced message's fields are included); scalar types by their proto names, message and
//!   enum types by full name. A message is walked once.
//!
//! Walks are bounded: at most [`MAX_FIELDS`] fields and [`MAX_DEPTH`] levels per schema, so a
//! search's cost per schema is bounded whatever was stored.

use protox::prost_reflect::prost_types::field_descriptor_proto::Label;
use protox::prost_reflect::prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto,
};
use registry_schema::ParsedSchema;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

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
                // Converted when a `$ref` first reaches them: a schema that names none costs nothing.
                let documents: Vec<OnceCell<Value>> = json.dependencies().iter().map(|_| OnceCell::new()).collect();
                let mut walk =
                    JsonWalk { dependencies: json.dependencies(), documents: &documents, following: HashSet::new() };
                walk.object(&mut out, &root, &root, "", 0);
            }
        }
        ParsedSchema::Protobuf(proto) => {
            let index = ProtoIndex::of(proto.linked(), proto.dependency_files());
            let file = proto.linked();
            let package = file.package.as_deref().unwrap_or("");
            for message in &file.message_type {
                let full = qualified(message.name(), Some(package));
                out.protobuf_message(&index, &full, "", 0);
            }
        }
    }
    out.list
}

#[derive(Debug, Default)]
struct Fields {
    list: Vec<Field>,
    /// Named types already walked (Avro full names, Protobuf message names).
    walked: HashSet<String>,
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

    /// Lists the fields of the message named `full` at `prefix`, walking into the messages its
    /// fields hold.
    fn protobuf_message(&mut self, index: &ProtoIndex<'_>, full: &str, prefix: &str, depth: usize) {
        let Some(&(message, proto3)) = index.messages.get(full) else { return };
        if depth >= MAX_DEPTH || !self.walked.insert(full.to_string()) {
            return;
        }
        for field in &message.field {
            let named = index.named_type(full, field);
            let type_name = match (&named, field.r#type()) {
                (Some(name), _) => name.clone(),
                (None, scalar) => scalar.as_str_name().trim_start_matches("TYPE_").to_ascii_lowercase(),
            };
            let type_name = if field.label() == Label::Repeated { format!("repeated {type_name}") } else { type_name };
            let marks = Marks { documented: false, has_default: proto3 || field.default_value.is_some() };
            let Some(path) = self.push(prefix, field.name(), type_name, marks) else { return };
            if let Some(name) = named {
                self.protobuf_message(index, &name, &path, depth + 1);
            }
        }
    }
}

/// How a JSON Schema's properties are walked: the referenced documents a `$ref` may name (each
/// converted once, when first reached), and the targets of the `$ref`s being followed (so a
/// recursive definition ends).
struct JsonWalk<'a> {
    dependencies: &'a [(String, registry_schema::json_value::Value)],
    documents: &'a [OnceCell<Value>],
    following: HashSet<*const Value>,
}

impl<'a> JsonWalk<'a> {
    /// Lists the properties of `schema` (a part of `document`) at `prefix`, and those of the
    /// objects nested in them or reached by `$ref`.
    fn object(&mut self, out: &mut Fields, schema: &'a Value, document: &'a Value, prefix: &str, depth: usize) {
        if depth >= MAX_DEPTH {
            return;
        }
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
            && let Some((target, target_document)) = self.resolve(reference, document)
            && self.following.insert(target as *const Value)
        {
            self.object(out, target, target_document, prefix, depth + 1);
            self.following.remove(&(target as *const Value));
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        for (name, property) in properties {
            let marks = Marks::of(property, "description");
            let Some(path) = out.push(prefix, name, json_type(property), marks) else { return };
            self.object(out, property, document, &path, depth + 1);
            if let Some(items) = property.get("items") {
                self.object(out, items, document, &path, depth + 1);
            }
        }
    }

    /// The schema `reference` points at, and the document holding it: `#/...` inside `document`,
    /// `name` or `name#/...` inside the referenced document of that reference name (or `$id`).
    fn resolve(&self, reference: &str, document: &'a Value) -> Option<(&'a Value, &'a Value)> {
        let (name, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let target_document = if name.is_empty() {
            document
        } else {
            let by_id = |(_, text): &(String, registry_schema::json_value::Value)| {
                text.get("$id").and_then(registry_schema::json_value::Value::as_str) == Some(name)
            };
            let index = (self.dependencies.iter().position(|(dependency, _)| dependency == name))
                .or_else(|| self.dependencies.iter().position(by_id))?;
            self.documents[index].get_or_init(|| self.dependencies[index].1.to_serde())
        };
        Some((target_document.pointer(fragment)?, target_document))
    }
}

/// Every message and enum a Protobuf schema can name, its own file's and its imports', by full
/// name without the leading dot; each message with whether its file is proto3.
struct ProtoIndex<'a> {
    messages: HashMap<String, (&'a DescriptorProto, bool)>,
    enums: HashSet<String>,
}

impl<'a> ProtoIndex<'a> {
    fn of(file: &'a FileDescriptorProto, imports: &'a [FileDescriptorProto]) -> Self {
        let mut index = ProtoIndex { messages: HashMap::new(), enums: HashSet::new() };
        for file in imports.iter().chain(std::iter::once(file)) {
            let proto3 = file.syntax.as_deref() == Some("proto3");
            index.collect(file.package.as_deref().unwrap_or(""), &file.message_type, &file.enum_type, proto3);
        }
        index
    }

    fn collect(&mut self, scope: &str, messages: &'a [DescriptorProto], enums: &[EnumDescriptorProto], proto3: bool) {
        self.enums.extend(enums.iter().map(|enumeration| scoped(scope, enumeration.name())));
        for message in messages {
            let full = scoped(scope, message.name());
            self.collect(&full, &message.nested_type, &message.enum_type, proto3);
            self.messages.insert(full, (message, proto3));
        }
    }

    /// The full name of the message or enum type of `field`, declared in the message named
    /// `scope`; `None` for a scalar. The linked file names it in full (`.shop.Address`); an
    /// import, as written, is resolved as protoc does, in the enclosing scopes innermost first
    /// (a name found nowhere is kept as written).
    fn named_type(&self, scope: &str, field: &FieldDescriptorProto) -> Option<String> {
        let written = field.type_name.as_deref()?;
        if let Some(full) = written.strip_prefix('.') {
            return Some(full.to_string());
        }
        let mut scope = scope;
        loop {
            let candidate = scoped(scope, written);
            if self.messages.contains_key(&candidate) || self.enums.contains(&candidate) {
                return Some(candidate);
            }
            if scope.is_empty() {
                return Some(written.to_string());
            }
            scope = scope.rsplit_once('.').map_or("", |(outer, _)| outer);
        }
    }
}

/// `name` declared in `scope` (a package or a message's full name).
fn scoped(scope: &str, name: &str) -> String {
    if scope.is_empty() { name.to_string() } else { format!("{scope}.{name}") }
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

    fn with_reference(schema_type: SchemaType, name: &str, referenced: &str, text: &str) -> ParsedSchema {
        let dependency =
            registry_schema::Dependency { name: name.to_string(), schema_type, schema: referenced.to_string() };
        ParsedSchema::parse(schema_type, text, &[dependency], Validation::Lenient, false)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn json_schema_refs_local_and_to_a_referenced_schema() {
        let schema = with_reference(
            SchemaType::Json,
            "address.json",
            r##"{"type":"object","properties":{"street":{"type":"string"},"geo":{"$ref":"#/definitions/geo"}},
                "definitions":{"geo":{"type":"object","properties":{"lat":{"type":"number"}}}}}"##,
            r##"{"type":"object","properties":{
                "billing":{"$ref":"address.json"},
                "customer":{"$ref":"#/definitions/customer"}},
                "definitions":{"customer":{"type":"object","properties":{"customer_id":{"type":"string"}}}}}"##,
        );
        assert_eq!(
            listed(&schema),
            pairs(&[
                ("billing", "address.json"),
                ("billing.street", "string"),
                ("billing.geo", "#/definitions/geo"),
                ("billing.geo.lat", "number"),
                ("customer", "#/definitions/customer"),
                ("customer.customer_id", "string"),
            ])
        );
    }

    #[test]
    fn json_schema_recursive_refs_end() {
        let schema = parsed(
            SchemaType::Json,
            r##"{"type":"object","properties":{"root":{"$ref":"#/definitions/node"}},
                "definitions":{"node":{"type":"object","properties":{"next":{"$ref":"#/definitions/node"}}}}}"##,
        );
        assert_eq!(listed(&schema), pairs(&[("root", "#/definitions/node"), ("root.next", "#/definitions/node")]));
    }

    #[test]
    fn protobuf_messages_of_an_import() {
        let schema = with_reference(
            SchemaType::Protobuf,
            "customer.proto",
            "syntax = \"proto3\";\npackage crm;\nmessage Customer {\n  string customer_id = 1;\n  Tier tier = 2;\n  Contact contact = 3;\n  message Contact { string email = 1; }\n  enum Tier { FREE = 0; GOLD = 1; }\n}\n",
            "syntax = \"proto3\";\npackage shop;\nimport \"customer.proto\";\nmessage Order {\n  int64 id = 1;\n  crm.Customer customer = 2;\n}\n",
        );
        assert_eq!(
            listed(&schema),
            pairs(&[
                ("id", "int64"),
                ("customer", "crm.Customer"),
                ("customer.customer_id", "string"),
                ("customer.tier", "crm.Customer.Tier"),
                ("customer.contact", "crm.Customer.Contact"),
                ("customer.contact.email", "string"),
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
