//! Confluent's normal form (`?normalize=true`, `AvroSchemaUtils.toNormalizedString`): like the
//! Parsing Canonical Form (full names, `name` first, no `namespace` key) but keeping doc,
//! defaults, order, aliases and custom properties; aliases and custom properties are sorted, so
//! schemas that differ only in property order normalise to the same text.

use super::ast::{Body, Field, NamedDef, Node, full_name};
use super::json::{write_str, write_str_array, write_value};
use super::writer::NodeWriter;
use crate::json_value::Value;

/// Writes `root` in normal form. `known[i]` marks types written by full name only.
pub(crate) fn write(arena: &[NamedDef], known: &[bool], root: &Node) -> String {
    let mut n = Normalizer { arena, known: known.to_vec(), out: String::new() };
    n.node(root);
    n.out
}

struct Normalizer<'a> {
    arena: &'a [NamedDef],
    known: Vec<bool>,
    out: String,
}

fn sorted(props: &[(String, Value)]) -> Vec<&(String, Value)> {
    let mut props: Vec<_> = props.iter().collect();
    props.sort_by(|a, b| a.0.cmp(&b.0));
    props
}

impl NodeWriter for Normalizer<'_> {
    fn out(&mut self) -> &mut String {
        &mut self.out
    }
    fn write_props(&mut self, props: &[(String, Value)]) {
        self.props(props);
    }
    fn write_named(&mut self, index: usize) {
        self.named(index);
    }
    fn write_field_attributes(&mut self, field: &Field) {
        if let Some(doc) = &field.doc {
            self.key_str("doc", doc);
        }
        if let Some(default) = &field.default {
            self.out.push_str(",\"default\":");
            write_value(&mut self.out, default);
        }
        if let Some(order) = &field.order {
            self.key_str("order", order);
        }
        let mut aliases = field.aliases.clone();
        aliases.sort();
        self.list("aliases", &aliases);
        self.props(&field.props);
    }
}

impl Normalizer<'_> {
    fn props(&mut self, props: &[(String, Value)]) {
        for (key, value) in sorted(props) {
            self.out.push(',');
            write_str(&mut self.out, key);
            self.out.push(':');
            write_value(&mut self.out, value);
        }
    }

    fn key_str(&mut self, key: &str, value: &str) {
        self.out.push_str(",\"");
        self.out.push_str(key);
        self.out.push_str("\":");
        write_str(&mut self.out, value);
    }

    fn list(&mut self, key: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.out.push_str(",\"");
        self.out.push_str(key);
        self.out.push_str("\":");
        write_str_array(&mut self.out, items);
    }

    fn named(&mut self, index: usize) {
        let arena = self.arena;
        let Some(def) = arena.get(index) else { return };
        let full = def.full_name();
        if self.known.get(index).copied().unwrap_or(false) {
            write_str(&mut self.out, &full);
            return;
        }
        if let Some(slot) = self.known.get_mut(index) {
            *slot = true;
        }
        self.out.push_str("{\"name\":");
        write_str(&mut self.out, &full);
        let kind = match &def.body {
            Body::Record { is_error: true, .. } => "error",
            Body::Record { .. } => "record",
            Body::Enum { .. } => "enum",
            Body::Fixed { .. } => "fixed",
        };
        self.key_str("type", kind);
        match &def.body {
            Body::Record { fields, .. } => self.fields(fields),
            Body::Enum { symbols, default } => {
                if symbols.is_empty() {
                    self.out.push_str(",\"symbols\":[]");
                }
                self.list("symbols", symbols);
                if let Some(default) = default {
                    self.key_str("default", default);
                }
            }
            Body::Fixed { size } => {
                self.out.push_str(",\"size\":");
                self.out.push_str(&size.to_string());
            }
        }
        if let Some(doc) = &def.doc {
            self.key_str("doc", doc);
        }
        let mut aliases: Vec<String> = def.aliases.iter().map(|(n, s)| full_name(n, s.as_deref())).collect();
        aliases.sort();
        self.list("aliases", &aliases);
        self.props(&def.props);
        self.out.push('}');
    }
}
