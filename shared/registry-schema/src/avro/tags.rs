//! Inline tags of an Avro schema (Confluent's `AvroSchema.inlineTaggedEntities`): `confluent:tags` of
//! records (by full name) and of their fields (`full.Name.field`), through unions, arrays and maps, each
//! named type once. Read from the resolved text, where referenced types are written in full.

use super::AvroSchema;
use crate::tags::{EntityKind, TaggedEntities, tag_list};
use serde_json::Value;
use std::collections::HashSet;

const TAGS: &str = "confluent:tags";

impl AvroSchema {
    pub fn inline_tagged_entities(&self) -> TaggedEntities {
        let mut out = TaggedEntities::default();
        if let Ok(value) = serde_json::from_str::<Value>(self.resolved_text()) {
            walk(&value, "", &mut HashSet::new(), &mut out);
        }
        out
    }
}

fn walk(schema: &Value, namespace: &str, visited: &mut HashSet<String>, out: &mut TaggedEntities) {
    match schema {
        Value::Array(branches) => branches.iter().for_each(|branch| walk(branch, namespace, visited, out)),
        Value::Object(object) => match object.get("type") {
            Some(Value::String(kind)) if kind == "record" || kind == "error" => {
                let Some(name) = object.get("name").and_then(Value::as_str) else { return };
                let own = object.get("namespace").and_then(Value::as_str).unwrap_or(namespace);
                let full_name = match (name.contains('.'), own.is_empty()) {
                    (true, _) | (false, true) => name.to_string(),
                    (false, false) => format!("{own}.{name}"),
                };
                if !visited.insert(full_name.clone()) {
                    return;
                }
                out.put(full_name.clone(), EntityKind::Record, tag_list(object.get(TAGS)));
                let inner = full_name.rsplit_once('.').map(|(space, _)| space).unwrap_or("");
                for field in object.get("fields").and_then(Value::as_array).into_iter().flatten() {
                    let Some(field_name) = field.get("name").and_then(Value::as_str) else { continue };
                    out.put(format!("{full_name}.{field_name}"), EntityKind::Field, tag_list(field.get(TAGS)));
                    if let Some(field_type) = field.get("type") {
                        walk(field_type, inner, visited, out);
                    }
                }
            }
            Some(Value::String(kind)) if kind == "array" => {
                if let Some(items) = object.get("items") {
                    walk(items, namespace, visited, out);
                }
            }
            Some(Value::String(kind)) if kind == "map" => {
                if let Some(values) = object.get("values") {
                    walk(values, namespace, visited, out);
                }
            }
            Some(nested @ (Value::Object(_) | Value::Array(_))) => walk(nested, namespace, visited, out),
            _ => {}
        },
        _ => {}
    }
}
