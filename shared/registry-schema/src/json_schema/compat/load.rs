//! Everit's `SchemaLoader`, as far as the diff needs it: a JSON value becomes graph nodes (see [`super::model`]).
//!
//! `$ref` targets are queued and loaded iteratively, so reference chains cannot exhaust the stack; a reference
//! to neither this document nor a dependency loads as an empty schema.

use super::super::Draft;
use super::model::{ArrayRules, Common, Criterion, Kind, Node, NodeId, NumberRules, ObjectRules, StringRules};
use crate::json_value::{Map, Value};
use jsonschema::Uri;
use std::collections::HashMap;

/// Loads `documents[0]` (with `documents[1..]` the dependencies named `names`) into nodes; returns them and the root.
pub fn load(documents: &[Value], names: &[&str], draft: Draft) -> (Vec<Node>, NodeId) {
    let id_keyword = if draft == Draft::Draft4 { "id" } else { "$id" };
    let base = documents
        .first()
        .and_then(|d| d.get(id_keyword))
        .and_then(Value::as_str)
        .unwrap_or(super::super::refs::DEFAULT_BASE)
        .to_string();
    let names = names.iter().map(|name| absolute(&base, name)).collect();
    let mut loader =
        Loader { draft, documents, base, names, nodes: Vec::new(), targets: HashMap::new(), queue: Vec::new() };
    let root = loader.target(0, String::new());
    loader.drain();
    (loader.nodes, root)
}

/// `reference` made absolute against `base`, fragment removed.
fn absolute(base: &str, reference: &str) -> Option<String> {
    let base = Uri::parse(base).ok()?;
    let uri = jsonschema::uri::resolve_against(&base, reference).ok()?;
    let text = uri.as_str();
    Some(text.split_once('#').map_or(text, |(before, _)| before).to_string())
}

struct Loader<'a> {
    draft: Draft,
    documents: &'a [Value],
    base: String,
    names: Vec<Option<String>>,
    nodes: Vec<Node>,
    targets: HashMap<(usize, String), NodeId>,
    queue: Vec<(NodeId, usize, String)>,
}

const OBJECT_KEYWORDS: [&str; 10] = [
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependencies",
    "patternProperties",
    "additionalProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
];
const ARRAY_KEYWORDS: [&str; 8] =
    ["items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "prefixItems", "unevaluatedItems"];
const NUMBER_KEYWORDS: [&str; 5] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
const STRING_KEYWORDS: [&str; 4] = ["minLength", "maxLength", "pattern", "format"];

impl Loader<'_> {
    fn alloc(&mut self, origin: (usize, String, usize)) -> NodeId {
        self.nodes.push(Node { common: Common::default(), kind: Kind::Empty, origin });
        self.nodes.len() - 1
    }

    /// The node for the schema at `pointer` in document `doc`, loaded later by [`Loader::drain`].
    fn target(&mut self, doc: usize, pointer: String) -> NodeId {
        if let Some(id) = self.targets.get(&(doc, pointer.clone())) {
            return *id;
        }
        let id = self.alloc((doc, pointer.clone(), 0));
        self.targets.insert((doc, pointer.clone()), id);
        self.queue.push((id, doc, pointer));
        id
    }

    /// Loads every pending `$ref` target; iterative, so reference chains cannot exhaust the stack.
    fn drain(&mut self) {
        while let Some((id, doc, pointer)) = self.queue.pop() {
            let documents = self.documents;
            if let Some(value) = documents.get(doc).and_then(|d| d.pointer(&pointer)) {
                self.fill(id, doc, &pointer, value);
            }
        }
    }

    fn load(&mut self, doc: usize, pointer: String, value: &Value) -> NodeId {
        let id = self.alloc((doc, pointer.clone(), 0));
        self.fill(id, doc, &pointer, value);
        id
    }

    fn fill(&mut self, id: NodeId, doc: usize, pointer: &str, value: &Value) {
        let object = match value {
            Value::Bool(true) => return self.nodes[id].kind = Kind::True,
            Value::Object(object) => object,
            _ => return self.nodes[id].kind = if value == &Value::Bool(false) { Kind::False } else { Kind::Empty },
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            self.nodes[id].kind = self.reference(doc, reference).map_or(Kind::Empty, Kind::Ref);
            return;
        }
        let mut parts = self.parts(doc, pointer, object);
        self.nodes[id].kind = match parts.len() {
            0 => Kind::Empty,
            1 => parts.pop().map_or(Kind::Empty, |(kind, _)| kind),
            _ => {
                let subschemas = parts
                    .into_iter()
                    .map(|(kind, part)| {
                        let child = self.alloc((doc, pointer.to_string(), part));
                        self.nodes[child].kind = kind;
                        child
                    })
                    .collect();
                Kind::Combined { criterion: Criterion::AllOf, subschemas }
            }
        };
        // Confluent's tables report `id` changes for drafts 4 to 7 (its loader defaults to draft 4); the
        // 2019-09/2020-12 loader does not report `$id` changes at all.
        let schema_id = match self.draft {
            Draft::Draft201909 | Draft::Draft202012 => None,
            Draft::Draft4 => object.get("id"),
            Draft::Draft6 | Draft::Draft7 => object.get("$id").or_else(|| object.get("id")),
        };
        self.nodes[id].common = Common {
            id: schema_id.cloned(),
            title: object.get("title").cloned(),
            description: object.get("description").cloned(),
            default: object.get("default").cloned(),
            connect_type: object.get("connect.type").cloned(),
        };
    }

    /// The node a `$ref` points at, or `None` when it names neither this document nor a reference.
    fn reference(&mut self, doc: usize, reference: &str) -> Option<NodeId> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let target_doc = if base.is_empty() {
            doc
        } else {
            let wanted = absolute(&self.base, base);
            if wanted.is_some() && wanted == absolute(&self.base, "") {
                0
            } else {
                self.names.iter().position(|name| name.is_some() && *name == wanted).map(|i| i + 1)?
            }
        };
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            percent_decode(fragment)
        } else {
            find_anchor(self.documents.get(target_doc)?, fragment)?
        };
        Some(self.target(target_doc, pointer))
    }

    /// The schema parts Everit extracts from one object (several become a synthetic `allOf`).
    fn parts(&mut self, doc: usize, pointer: &str, object: &Map<String, Value>) -> Vec<(Kind, usize)> {
        let mut parts = Vec::new();
        if let Some(Value::Array(values)) = object.get("enum") {
            parts.push((Kind::Enum(values.clone()), 1));
        }
        for (keyword, criterion) in
            [("allOf", Criterion::AllOf), ("anyOf", Criterion::AnyOf), ("oneOf", Criterion::OneOf)]
        {
            if let Some(Value::Array(items)) = object.get(keyword) {
                let subschemas = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.load(doc, format!("{pointer}/{keyword}/{i}"), item))
                    .collect();
                parts.push((Kind::Combined { criterion, subschemas }, 2));
            }
        }
        if let Some(not) = object.get("not") {
            parts.push((Kind::Not(self.load(doc, format!("{pointer}/not"), not)), 3));
        }
        if let Some(value) = object.get("const") {
            parts.push((Kind::Const(value.clone()), 4));
        }
        match object.get("type") {
            Some(Value::String(name)) => {
                if let Some(kind) = self.typed(doc, pointer, object, name, true) {
                    parts.push((kind, 5));
                }
            }
            Some(Value::Array(names)) => {
                let mut subschemas = Vec::new();
                for (i, name) in names.iter().filter_map(Value::as_str).enumerate() {
                    if let Some(kind) = self.typed(doc, pointer, object, name, true) {
                        let child = self.alloc((doc, pointer.to_string(), 10 + i));
                        self.nodes[child].kind = kind;
                        subschemas.push(child);
                    }
                }
                parts.push((Kind::Combined { criterion: Criterion::AnyOf, subschemas }, 5));
            }
            _ => {
                // json-sKema (2019-09, 2020-12) builds no schema from an empty `properties`, so alone it
                // leaves the object untyped (an empty schema), where Everit makes it an object schema.
                let modern = self.modern();
                let builds = |k: &&str| match object.get(*k) {
                    Some(Value::Object(map)) if modern && *k == "properties" => !map.is_empty(),
                    found => found.is_some(),
                };
                let has = |keywords: &[&str]| keywords.iter().any(builds);
                for (keywords, name) in [
                    (&OBJECT_KEYWORDS[..], "object"),
                    (&ARRAY_KEYWORDS[..], "array"),
                    (&NUMBER_KEYWORDS[..], "number"),
                    (&STRING_KEYWORDS[..], "string"),
                ] {
                    if has(keywords)
                        && let Some(kind) = self.typed(doc, pointer, object, name, false)
                    {
                        parts.push((kind, 6));
                    }
                }
            }
        }
        parts
    }

    fn typed(
        &mut self,
        doc: usize,
        pointer: &str,
        object: &Map<String, Value>,
        name: &str,
        declared: bool,
    ) -> Option<Kind> {
        let number = |key: &str| object.get(key).and_then(Value::as_f64);
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "string" => Kind::String(StringRules {
                min_length: number("minLength"),
                max_length: number("maxLength"),
                pattern: object.get("pattern").and_then(Value::as_str).map(str::to_string),
            }),
            "number" | "integer" => Kind::Number(NumberRules {
                requires_integer: declared && name == "integer",
                minimum: number("minimum"),
                maximum: number("maximum"),
                exclusive_minimum: number("exclusiveMinimum"),
                exclusive_maximum: number("exclusiveMaximum"),
                multiple_of: object.get("multipleOf").and_then(Value::as_number).cloned(),
            }),
            "object" => Kind::Object(Box::new(self.object(doc, pointer, object))),
            "array" => Kind::Array(Box::new(self.array(doc, pointer, object))),
            _ => return None,
        })
    }

    fn child(&mut self, doc: usize, pointer: &str, object: &Map<String, Value>, key: &str) -> Option<NodeId> {
        object.get(key).map(|value| self.load(doc, format!("{pointer}/{}", escape(key)), value))
    }

    fn children(&mut self, doc: usize, pointer: &str, value: Option<&Value>, key: &str) -> Vec<(String, NodeId)> {
        let Some(Value::Object(map)) = value else { return Vec::new() };
        map.iter()
            .map(|(name, schema)| (name.clone(), self.load(doc, format!("{pointer}/{key}/{}", escape(name)), schema)))
            .collect()
    }

    fn object(&mut self, doc: usize, pointer: &str, object: &Map<String, Value>) -> ObjectRules {
        let mut rules = ObjectRules {
            properties: self.children(doc, pointer, object.get("properties"), "properties"),
            pattern_properties: self.children(doc, pointer, object.get("patternProperties"), "patternProperties"),
            required: strings(object.get("required")),
            permits_additional: object.get("additionalProperties") != Some(&Value::Bool(false)),
            min_properties: object.get("minProperties").and_then(Value::as_f64),
            max_properties: object.get("maxProperties").and_then(Value::as_f64),
            ..ObjectRules::default()
        };
        if let Some(additional @ Value::Object(_)) = object.get("additionalProperties") {
            rules.additional = Some(self.load(doc, format!("{pointer}/additionalProperties"), additional));
        }
        for key in ["dependencies", "dependentRequired", "dependentSchemas"] {
            let Some(Value::Object(map)) = object.get(key) else { continue };
            for (name, value) in map {
                match value {
                    Value::Array(_) => rules.property_dependencies.push((name.clone(), strings(Some(value)))),
                    _ => {
                        let node = self.load(doc, format!("{pointer}/{key}/{}", escape(name)), value);
                        rules.schema_dependencies.push((name.clone(), node));
                    }
                }
            }
        }
        if self.modern() {
            rules.unevaluated = self.child(doc, pointer, object, "unevaluatedProperties");
        }
        rules
    }

    fn array(&mut self, doc: usize, pointer: &str, object: &Map<String, Value>) -> ArrayRules {
        let number = |key: &str| object.get(key).and_then(Value::as_f64);
        let mut rules = ArrayRules {
            permits_additional: true,
            min_items: number("minItems"),
            max_items: number("maxItems"),
            unique_items: object.get("uniqueItems") == Some(&Value::Bool(true)),
            // json-sKema (2019-09, 2020-12) gives every `contains` a `minContains`, 1 unless written.
            min_contains: number("minContains")
                .or_else(|| (self.modern() && object.contains_key("contains")).then_some(1.0)),
            max_contains: number("maxContains"),
            ..ArrayRules::default()
        };
        let modern_items = self.draft == Draft::Draft202012;
        let tuple_key = if modern_items { "prefixItems" } else { "items" };
        let tuple = object.get(tuple_key).and_then(Value::as_array);
        if let Some(items) = tuple {
            rules.item_schemas = items
                .iter()
                .enumerate()
                .map(|(i, item)| self.load(doc, format!("{pointer}/{tuple_key}/{i}"), item))
                .collect();
        }
        let rest_key = if modern_items { "items" } else { "additionalItems" };
        match object.get(rest_key) {
            Some(Value::Bool(permits)) => rules.permits_additional = *permits,
            Some(schema) if !modern_items || tuple.is_some() => {
                rules.additional = Some(self.load(doc, format!("{pointer}/{rest_key}"), schema));
            }
            _ => {}
        }
        if tuple.is_none() && (!modern_items || object.get("items").is_some_and(Value::is_object)) {
            rules.all_items = self.child(doc, pointer, object, "items");
        }
        if self.modern() {
            rules.unevaluated = self.child(doc, pointer, object, "unevaluatedItems");
        }
        rules
    }

    fn modern(&self) -> bool {
        matches!(self.draft, Draft::Draft201909 | Draft::Draft202012)
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(items)) = value else { return Vec::new() };
    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

/// A JSON pointer token for `key` (`~` and `/` escaped).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The pointer of the subschema declaring `$anchor: name` (or a draft-7 `$id: "#name"`), searched iteratively.
fn find_anchor(document: &Value, name: &str) -> Option<String> {
    let mut stack = vec![(document, String::new())];
    while let Some((value, pointer)) = stack.pop() {
        match value {
            Value::Object(map) => {
                let anchor = map.get("$anchor").and_then(Value::as_str) == Some(name);
                let id = map.get("$id").and_then(Value::as_str).and_then(|id| id.strip_prefix('#')) == Some(name);
                if anchor || id {
                    return Some(pointer);
                }
                stack.extend(map.iter().map(|(k, v)| (v, format!("{pointer}/{}", escape(k)))));
            }
            Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, v)| (v, format!("{pointer}/{i}")))),
            _ => {}
        }
    }
    None
}
