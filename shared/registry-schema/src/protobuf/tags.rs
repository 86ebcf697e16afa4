//! Inline tags of a Protobuf schema (Confluent's `ProtobufSchema.inlineTaggedEntities`): the `tags` of
//! `(confluent.message_meta)` on messages and of `(confluent.field_meta)` on fields, read from the options
//! as written, whether as one message literal or as dotted `(confluent.field_meta).tags` options.

use super::ProtobufSchema;
use super::render::options::{Value, leaf_value};
use crate::tags::{EntityKind, TaggedEntities};
use protox::prost_reflect::prost_types::{DescriptorProto, UninterpretedOption};
use std::collections::HashSet;

const MESSAGE_META: &str = "confluent.message_meta";
const FIELD_META: &str = "confluent.field_meta";

impl ProtobufSchema {
    /// Every message and field carrying inline tags: messages by their name under their enclosing
    /// messages (`Outer.Inner`, no package), fields as `Message.field`; in each message its oneofs'
    /// fields first, then the others, as Confluent lists them.
    pub fn inline_tagged_entities(&self) -> TaggedEntities {
        let mut out = TaggedEntities::default();
        let mut visited = HashSet::new();
        for message in &self.written.message_type {
            message_tags(message, "", &mut visited, &mut out);
        }
        out
    }
}

fn message_tags(message: &DescriptorProto, scope: &str, visited: &mut HashSet<String>, out: &mut TaggedEntities) {
    let scoped = format!("{scope}{}", message.name());
    if !visited.insert(scoped.clone()) {
        return;
    }
    let options = message.options.as_ref().map(|o| o.uninterpreted_option.as_slice()).unwrap_or_default();
    out.put(scoped.clone(), EntityKind::Record, meta_tags(MESSAGE_META, options));
    let in_oneof = message.field.iter().filter(|f| f.oneof_index.is_some() && !f.proto3_optional());
    let plain = message.field.iter().filter(|f| f.oneof_index.is_none() || f.proto3_optional());
    for field in in_oneof.chain(plain) {
        let options = field.options.as_ref().map(|o| o.uninterpreted_option.as_slice()).unwrap_or_default();
        out.put(format!("{scoped}.{}", field.name()), EntityKind::Field, meta_tags(FIELD_META, options));
    }
    for nested in &message.nested_type {
        message_tags(nested, &format!("{scoped}."), visited, out);
    }
}

/// The tags `meta` (an extension option) carries among `options`, in order, once each.
fn meta_tags(meta: &str, options: &[UninterpretedOption]) -> Vec<String> {
    let mut tags = Vec::new();
    for option in options {
        let Some((first, rest)) = option.name.split_first() else { continue };
        if !first.is_extension || first.name_part.trim_start_matches('.') != meta {
            continue;
        }
        match rest {
            [] => {
                if let Value::Map(entries) = leaf_value(option) {
                    entries.iter().filter(|(key, _)| key == "tags").for_each(|(_, value)| strings(value, &mut tags));
                }
            }
            [field] if !field.is_extension && field.name_part == "tags" => strings(&leaf_value(option), &mut tags),
            _ => {}
        }
    }
    let mut seen = HashSet::new();
    tags.retain(|tag| seen.insert(tag.clone()));
    tags
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Str(text) | Value::Raw(text) => out.push(text.clone()),
        Value::List(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Map(_) => {}
    }
}
