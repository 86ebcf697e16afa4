//! Inline tags of a JSON Schema (Confluent's `JsonSchema.inlineTaggedEntities`): `confluent:tags` of object
//! schemas (`SR_RECORD`, unless the object is a property's own schema) and of their properties (`SR_FIELD`),
//! named by Confluent's scoped paths: `object`, `object.name`, `object.name.array.object.inner`,
//! `object.definitions.Name.object.field`, `oneOf.1.object.field` (subschemas in Confluent's
//! `JsonSchemaComparator` order: schema kind, then title, description and default), `conditional.if.`,
//! `not.`. As in Confluent, a `$ref` is not followed (its definition is reached through `definitions` or
//! `$defs`), and tags of a `$ref` property are read beside the `$ref`.
//!
//! The schema kinds are told apart as Everit's loader does for the shapes that carry tags (objects, arrays,
//! the three combinations, a type list as an `anyOf`, a type with combinations as an `allOf`); exotic mixes
//! of keywords may be ordered differently from Confluent among equals.

use super::JsonSchema;
use crate::json_value::{Map, Value};
use crate::tags::{EntityKind, TaggedEntities};
use std::collections::HashSet;

const TAGS: &str = "confluent:tags";
const COMBINATIONS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const OBJECT_KEYWORDS: [&str; 8] = [
    "properties",
    "additionalProperties",
    "required",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "dependencies",
    "propertyNames",
];
const ARRAY_KEYWORDS: [&str; 6] = ["items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"];

impl JsonSchema {
    pub fn inline_tagged_entities(&self) -> TaggedEntities {
        let mut out = TaggedEntities::default();
        walk(&self.document, "", false, &mut HashSet::new(), &mut out);
        out
    }
}

/// Everit's schema classes, in `JsonSchemaComparator.SchemaType` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Array,
    Boolean,
    Combined,
    Conditional,
    Const,
    Empty,
    Enum,
    False,
    Not,
    Null,
    Number,
    Object,
    Reference,
    String,
    True,
}

/// How a schema is read: its class, and for a combination its criterion and subschemas.
enum Shape {
    Combined(&'static str, Vec<Value>),
    Plain(Class),
}

fn shape(object: &Map<String, Value>) -> Shape {
    if object.contains_key("$ref") {
        return Shape::Plain(Class::Reference);
    }
    let combinations: Vec<&str> = COMBINATIONS.into_iter().filter(|k| object.contains_key(*k)).collect();
    if let Some(Value::Array(types)) = object.get("type")
        && types.len() > 1
    {
        let each = types.iter().map(|t| with(object, &["type"], [("type", t.clone())])).collect();
        return Shape::Combined("anyOf", each);
    }
    let base = base_class(object);
    match (combinations.as_slice(), base) {
        ([], Some(class)) => Shape::Plain(class),
        ([], None) => Shape::Plain(Class::Empty),
        ([one], None) => Shape::Combined(criterion(one), subschemas(object.get(*one))),
        (many, _) => {
            let mut parts: Vec<Value> = Vec::new();
            if base.is_some() {
                parts.push(with(object, &COMBINATIONS, []));
            }
            parts.extend(many.iter().map(|k| {
                let mut only = Map::new();
                only.insert(k.to_string(), object.get(*k).cloned().unwrap_or(Value::Null));
                Value::Object(only)
            }));
            Shape::Combined("allOf", parts)
        }
    }
}

/// The class of what the schema says besides combinations; `None` when it says nothing.
fn base_class(object: &Map<String, Value>) -> Option<Class> {
    let typed = object.get("type").and_then(|t| match t {
        Value::Array(types) => types.first().and_then(Value::as_str),
        other => other.as_str(),
    });
    let has = |keys: &[&str]| keys.iter().any(|k| object.contains_key(*k));
    if object.contains_key("enum") {
        return Some(if typed.is_some() { Class::Combined } else { Class::Enum });
    }
    Some(match typed {
        Some("object") => Class::Object,
        Some("array") => Class::Array,
        Some("string") => Class::String,
        Some("number" | "integer") => Class::Number,
        Some("boolean") => Class::Boolean,
        Some("null") => Class::Null,
        _ if has(&OBJECT_KEYWORDS) => Class::Object,
        _ if has(&ARRAY_KEYWORDS) => Class::Array,
        _ if object.contains_key("const") => Class::Const,
        _ if object.contains_key("if") => Class::Conditional,
        _ if object.contains_key("not") => Class::Not,
        _ => return None,
    })
}

fn criterion(keyword: &str) -> &'static str {
    COMBINATIONS.into_iter().find(|k| *k == keyword).unwrap_or("allOf")
}

fn subschemas(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

/// `object` without `dropped`, with `added`.
fn with<const N: usize>(object: &Map<String, Value>, dropped: &[&str], added: [(&str, Value); N]) -> Value {
    let mut copy: Map<String, Value> =
        object.iter().filter(|(k, _)| !dropped.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    for (key, value) in added {
        copy.insert(key.to_string(), value);
    }
    Value::Object(copy)
}

/// `JsonSchemaComparator`'s order: class, then title, description and default (absent first).
fn sort_key(schema: &Value) -> (Class, Option<String>, Option<String>, Option<String>) {
    let class = match schema {
        Value::Bool(true) => Class::True,
        Value::Bool(false) => Class::False,
        Value::Object(object) => match shape(object) {
            Shape::Combined(..) => Class::Combined,
            Shape::Plain(class) => class,
        },
        _ => Class::Empty,
    };
    let text = |key: &str| match schema.get(key) {
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => Some(other.to_string()),
        None => None,
    };
    (class, text("title"), text("description"), text("default"))
}

fn tags(schema: &Value) -> Vec<String> {
    match schema.get(TAGS) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn walk(schema: &Value, scope: &str, in_field: bool, visited: &mut HashSet<String>, out: &mut TaggedEntities) {
    let Value::Object(object) = schema else { return };
    match shape(object) {
        Shape::Combined(criterion, mut parts) => {
            parts.sort_by_key(sort_key);
            for (index, part) in parts.iter().enumerate() {
                walk(part, &format!("{scope}{criterion}.{index}."), false, visited, out);
            }
        }
        Shape::Plain(Class::Array) => {
            if let Some(items @ Value::Object(_)) = object.get("items") {
                walk(items, &format!("{scope}array."), false, visited, out);
            }
        }
        Shape::Plain(Class::Object) => {
            let scoped = format!("{scope}object");
            if !visited.insert(scoped.clone()) {
                return;
            }
            if !in_field {
                out.put(scoped.clone(), EntityKind::Record, tags(schema));
            }
            for (name, property) in object.get("properties").and_then(Value::as_object).into_iter().flatten() {
                let path = format!("{scoped}.{name}");
                out.put(path.clone(), EntityKind::Field, tags(property));
                walk(property, &format!("{path}."), true, visited, out);
            }
            for keyword in ["definitions", "$defs"] {
                for (name, definition) in object.get(keyword).and_then(Value::as_object).into_iter().flatten() {
                    walk(definition, &format!("{scoped}.{keyword}.{name}."), false, visited, out);
                }
            }
        }
        Shape::Plain(Class::Conditional) => {
            for branch in ["if", "then", "else"] {
                if let Some(part) = object.get(branch) {
                    walk(part, &format!("{scope}conditional.{branch}."), false, visited, out);
                }
            }
        }
        Shape::Plain(Class::Not) => {
            if let Some(part) = object.get("not") {
                walk(part, &format!("{scope}not."), false, visited, out);
            }
        }
        Shape::Plain(_) => {}
    }
}
