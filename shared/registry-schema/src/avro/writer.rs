//! The stored text: Java Avro's `Schema.toString(referencedSchemas, false)` over our tree.
//!
//! Key order follows Java's `toJson` methods: named types `type, name, namespace, doc,
//! fields|symbols|size, default (enum), <custom props in input order>, aliases`; fields
//! `name, type, doc, default, order (non-ascending), aliases, <custom props>`; arrays and maps
//! `type, items|values, <props>`; a primitive without props is its bare name. A named type is
//! written in full the first time the walk meets it and by name afterwards; names are shortened
//! against the enclosing record's namespace (Java's `Name.getQualified`).

use super::ast::{Body, Field, NamedDef, Node};
use super::json::{write_str, write_str_array, write_value};

/// Writes `root` as Java does. `known[i]` marks arena entries already known by name (the
/// top-level types of the dependencies, as Confluent passes them to `toString`). With
/// `with_defaults == false` field defaults are left out and `error` is written `record`
/// (the input we feed apache-avro, which knows neither Java's defaults rules nor `error`).
pub(crate) fn write(arena: &[NamedDef], known: &[bool], root: &Node, with_defaults: bool) -> String {
    let mut writer = Writer { arena, known: known.to_vec(), space: None, out: String::new(), with_defaults };
    writer.node(root);
    writer.out
}

struct Writer<'a> {
    arena: &'a [NamedDef],
    known: Vec<bool>,
    space: Option<String>,
    out: String,
    with_defaults: bool,
}

/// The walk both renderings share (stored text here, the normal form in `normalize`): they
/// differ only in how a named type and a type's custom properties are written.
pub(super) trait NodeWriter {
    /// The text written so far.
    fn out(&mut self) -> &mut String;
    /// Writes `props` (with their leading commas) inside the current object.
    fn write_props(&mut self, props: &[(String, crate::json_value::Value)]);
    /// Writes the named type at `index`: in full at its first occurrence, by name afterwards.
    fn write_named(&mut self, index: usize);
    /// Writes what follows a field's `name` and `type` (doc, default, order, aliases, custom props).
    fn write_field_attributes(&mut self, field: &Field);

    /// Writes a record's `fields` key and array, each field `name` and `type` first.
    fn fields(&mut self, fields: &[Field]) {
        self.out().push_str(",\"fields\":[");
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.out().push(',');
            }
            self.out().push_str("{\"name\":");
            write_str(self.out(), &field.name);
            self.out().push_str(",\"type\":");
            self.node(&field.node);
            self.write_field_attributes(field);
            self.out().push('}');
        }
        self.out().push(']');
    }

    /// Writes `node`.
    fn node(&mut self, node: &Node) {
        match node {
            Node::Primitive { kind, props } if props.is_empty() => write_str(self.out(), kind),
            Node::Primitive { kind, props } => {
                self.out().push_str("{\"type\":");
                write_str(self.out(), kind);
                self.write_props(props);
                self.out().push('}');
            }
            Node::Array { items, props } => {
                self.out().push_str("{\"type\":\"array\",\"items\":");
                self.node(items);
                self.write_props(props);
                self.out().push('}');
            }
            Node::Map { values, props } => {
                self.out().push_str("{\"type\":\"map\",\"values\":");
                self.node(values);
                self.write_props(props);
                self.out().push('}');
            }
            Node::Union(branches) => {
                self.out().push('[');
                for (i, branch) in branches.iter().enumerate() {
                    if i > 0 {
                        self.out().push(',');
                    }
                    self.node(branch);
                }
                self.out().push(']');
            }
            Node::Named(index) => self.write_named(*index),
        }
    }
}

impl NodeWriter for Writer<'_> {
    fn out(&mut self) -> &mut String {
        &mut self.out
    }
    fn write_props(&mut self, props: &[(String, crate::json_value::Value)]) {
        self.props(props);
    }
    fn write_named(&mut self, index: usize) {
        self.named(index);
    }
    fn write_field_attributes(&mut self, field: &Field) {
        if let Some(doc) = &field.doc {
            self.out.push_str(",\"doc\":");
            write_str(&mut self.out, doc);
        }
        if let (Some(default), true) = (&field.default, self.with_defaults) {
            self.out.push_str(",\"default\":");
            write_value(&mut self.out, default);
        }
        if let Some(order) = &field.order {
            self.out.push_str(",\"order\":");
            write_str(&mut self.out, order);
        }
        if !field.aliases.is_empty() {
            self.out.push_str(",\"aliases\":");
            write_str_array(&mut self.out, &field.aliases);
        }
        self.props(&field.props);
    }
}

impl Writer<'_> {
    fn props(&mut self, props: &[(String, crate::json_value::Value)]) {
        for (key, value) in props {
            self.out.push(',');
            write_str(&mut self.out, key);
            self.out.push(':');
            write_value(&mut self.out, value);
        }
    }

    /// Java `Name.getQualified(space)`.
    fn qualified(&self, name: &str, space: Option<&str>) -> String {
        match space {
            Some(space) if self.space.as_deref() != Some(space) => format!("{space}.{name}"),
            _ => name.to_string(),
        }
    }

    fn named(&mut self, index: usize) {
        let arena = self.arena;
        let Some(def) = arena.get(index) else { return };
        if self.known.get(index).copied().unwrap_or(false) {
            let qualified = self.qualified(&def.name, def.space.as_deref());
            write_str(&mut self.out, &qualified);
            return;
        }
        if let Some(slot) = self.known.get_mut(index) {
            *slot = true;
        }
        let kind = match &def.body {
            Body::Record { is_error: true, .. } if self.with_defaults => "error",
            Body::Record { .. } => "record",
            Body::Enum { .. } => "enum",
            Body::Fixed { .. } => "fixed",
        };
        self.out.push_str("{\"type\":");
        write_str(&mut self.out, kind);
        self.out.push_str(",\"name\":");
        write_str(&mut self.out, &def.name);
        match (&def.space, &self.space) {
            (Some(space), current) if current.as_ref() != Some(space) => {
                self.out.push_str(",\"namespace\":");
                write_str(&mut self.out, space);
            }
            (None, Some(_)) => self.out.push_str(",\"namespace\":\"\""),
            _ => {}
        }
        let saved = self.space.clone();
        if matches!(def.body, Body::Record { .. }) {
            self.space = def.space.clone();
        }
        if let Some(doc) = &def.doc {
            self.out.push_str(",\"doc\":");
            write_str(&mut self.out, doc);
        }
        match &def.body {
            Body::Record { fields, .. } => self.fields(fields),
            Body::Enum { symbols, default } => {
                self.out.push_str(",\"symbols\":");
                write_str_array(&mut self.out, symbols);
                if let Some(default) = default {
                    self.out.push_str(",\"default\":");
                    write_str(&mut self.out, default);
                }
            }
            Body::Fixed { size } => {
                self.out.push_str(",\"size\":");
                self.out.push_str(&size.to_string());
            }
        }
        self.props(&def.props);
        if !def.aliases.is_empty() {
            self.out.push_str(",\"aliases\":");
            let aliases = def.aliases.iter().map(|(name, space)| match space {
                Some(space) if def.space.as_deref() != Some(space) => format!("{space}.{name}"),
                _ => name.clone(),
            });
            write_str_array(&mut self.out, aliases);
        }
        self.out.push('}');
        self.space = saved;
    }
}
