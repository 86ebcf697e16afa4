//! Field default validation: Java Avro 1.11's `Schema.isValidDefault`, applied to new schemas.
//!
//! Union defaults must match the **first** branch. This is Avro 1.11's rule and the Avro
//! specification's; Avro 1.12 (Confluent 8.x) accepts any branch. We keep the 1.11 rule for new
//! registrations because readers in other languages (and Confluent 7.x) decode a union default
//! with the first branch, so a schema whose default only matches a later branch can break them;
//! already-stored or imported schemas are parsed leniently and are never rejected for it.

use super::ast::{Body, NamedDef, Node};
use crate::json_value::Value;
use crate::{SchemaError, SchemaType};

/// Deepest default value walked (a recursive record's default could otherwise loop).
const MAX_DEFAULT_DEPTH: usize = 64;

/// Checks the defaults of every field of the records `arena[from..]`; the first invalid one is
/// reported as Java does: `Invalid default for field f: <value> not a <schema>`.
pub(crate) fn validate(arena: &[NamedDef], from: usize) -> Result<(), SchemaError> {
    for def in arena.iter().skip(from) {
        let Body::Record { fields, .. } = &def.body else { continue };
        for field in fields {
            let Some(default) = &field.default else { continue };
            if !valid(arena, &field.node, Some(default), 0) {
                let schema = super::writer::write(arena, &vec![false; arena.len()], &field.node, true);
                return Err(SchemaError::parse(
                    SchemaType::Avro,
                    format!("Invalid default for field {}: {} not a {}", field.name, default, schema),
                ));
            }
        }
    }
    Ok(())
}

fn valid(arena: &[NamedDef], node: &Node, value: Option<&Value>, depth: usize) -> bool {
    let Some(value) = value else { return false };
    if depth > MAX_DEFAULT_DEPTH {
        return false;
    }
    match node {
        Node::Primitive { kind, .. } => match *kind {
            "string" | "bytes" => value.is_string(),
            "int" => value.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            "long" => value.is_i64(),
            // Non-finite string defaults of float/double were converted at parse time.
            "float" | "double" => value.is_number() || matches!(value.as_str(), Some("NaN" | "Infinity" | "-Infinity")),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        },
        Node::Array { items, .. } => {
            value.as_array().is_some_and(|a| a.iter().all(|v| valid(arena, items, Some(v), depth + 1)))
        }
        Node::Map { values, .. } => {
            value.as_object().is_some_and(|m| m.values().all(|v| valid(arena, values, Some(v), depth + 1)))
        }
        Node::Union(branches) => branches.first().is_some_and(|first| valid(arena, first, Some(value), depth + 1)),
        Node::Named(index) => match arena.get(*index).map(|d| &d.body) {
            Some(Body::Enum { .. } | Body::Fixed { .. }) => value.is_string(),
            Some(Body::Record { fields, .. }) => value.as_object().is_some_and(|obj| {
                fields.iter().all(|f| valid(arena, &f.node, obj.get(&f.name).or(f.default.as_ref()), depth + 1))
            }),
            None => false,
        },
    }
}
