//! The fields of one message pair: Confluent's `MessageSchemaDiff` since DGS-24604 (3f5ff24387e, master
//! 8.5.0-0 and the 8.0.8/8.1.6/8.2.4/8.3.2 patch builds). Fields are compared by tag across the whole
//! message, top-level fields and oneof members alike, so a oneof renamed, added, removed or merged cannot
//! hide a field's own change; moving between oneofs reports nothing of itself, a member moved to the top
//! level is ONEOF_FIELD_MOVED_TO_TOP_LEVEL (compatible), and fields made mutually exclusive that were not
//! are reported by the "origin groups" rule.

use super::Ctx;
use crate::protobuf::compat::ChangeType;
use crate::protobuf::source;
use protox::prost_reflect::prost_types::field_descriptor_proto::Label;
use protox::prost_reflect::prost_types::{DescriptorProto, FieldDescriptorProto};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Wire's view of one message's fields: every field by tag (groups excluded), the oneof of each oneof
/// member, and the oneofs (proto3 `optional`'s synthetic ones excluded) in declaration order.
struct Fields<'a> {
    by_tag: BTreeMap<i32, &'a FieldDescriptorProto>,
    oneof_of: HashMap<i32, &'a str>,
    oneofs: Vec<(&'a str, Vec<&'a FieldDescriptorProto>)>,
}

/// `FieldDescriptorProto.Type.TYPE_GROUP`: Wire keeps groups apart from fields.
const TYPE_GROUP: i32 = 10;

impl<'a> Fields<'a> {
    fn of(message: &'a DescriptorProto) -> Fields<'a> {
        let fields = || message.field.iter().filter(|f| f.r#type.is_none_or(|t| t != TYPE_GROUP));
        let mut oneofs: Vec<(&'a str, Vec<&'a FieldDescriptorProto>)> = Vec::new();
        for (index, declaration) in message.oneof_decl.iter().enumerate() {
            let members: Vec<_> = fields().filter(|f| source::real_oneof(f) == Some(index)).collect();
            let synthetic = message.field.iter().any(|f| f.oneof_index == Some(index as i32) && f.proto3_optional());
            if !synthetic {
                oneofs.push((declaration.name(), members));
            }
        }
        let oneof_of = oneofs.iter().flat_map(|(name, members)| members.iter().map(|f| (f.number(), *name))).collect();
        Fields { by_tag: fields().map(|f| (f.number(), f)).collect(), oneof_of, oneofs }
    }

    fn has_oneof(&self, name: &str) -> bool {
        self.oneofs.iter().any(|(n, _)| *n == name)
    }
}

impl<'a> Ctx<'_, 'a> {
    pub(super) fn compare_message_fields(&mut self, m: [&'a DescriptorProto; 2], proto3: [bool; 2]) {
        self.spend.charge(m[0].field.len() + m[1].field.len());
        if self.spend.spent() {
            return;
        }
        let [original, update] = [Fields::of(m[0]), Fields::of(m[1])];
        self.new_exclusivity(&original, &update);
        let oneof_names: BTreeSet<&str> = original.oneofs.iter().chain(&update.oneofs).map(|(name, _)| *name).collect();
        for name in oneof_names {
            let change = match (original.has_oneof(name), update.has_oneof(name)) {
                (true, false) => ChangeType::OneofRemoved,
                (false, true) => ChangeType::OneofAdded,
                _ => continue,
            };
            self.in_path(name.to_string(), false, |ctx| ctx.add(change));
        }
        // A oneof gone by name with none of its members left anywhere was deleted whole (compatible).
        let deleted_whole = |name: &str| {
            !update.has_oneof(name)
                && original
                    .oneofs
                    .iter()
                    .filter(|(n, _)| *n == name)
                    .flat_map(|(_, members)| members)
                    .all(|f| !update.by_tag.contains_key(&f.number()))
        };
        let tags: BTreeSet<i32> = original.by_tag.keys().chain(update.by_tag.keys()).copied().collect();
        for tag in tags {
            let (was, now) = (original.oneof_of.get(&tag).copied(), update.oneof_of.get(&tag).copied());
            match (original.by_tag.get(&tag).copied(), update.by_tag.get(&tag).copied()) {
                (Some(_), None) if was.is_some_and(deleted_whole) => {}
                (Some(_), None) if was.is_some() => self.at_field(was, tag, ChangeType::OneofFieldRemoved),
                (Some(o), None) if o.label() == Label::Required => {
                    self.at_field(None, tag, ChangeType::RequiredFieldRemoved)
                }
                (Some(_), None) => self.at_field(None, tag, ChangeType::FieldRemoved),
                (None, Some(_)) if now.is_some() => self.at_field(now, tag, ChangeType::OneofFieldAdded),
                (None, Some(u)) if u.label() == Label::Required => {
                    self.at_field(None, tag, ChangeType::RequiredFieldAdded)
                }
                (None, Some(_)) => self.at_field(None, tag, ChangeType::FieldAdded),
                (Some(o), Some(u)) => {
                    // Leaving a oneof for the top level only relaxes exclusivity; a move between oneofs is
                    // judged by `new_exclusivity` alone.
                    if was.is_some() && now.is_none() {
                        self.at_field(None, tag, ChangeType::OneofFieldMovedToTopLevel);
                    }
                    self.in_field(now, tag, |ctx| ctx.compare_fields(m, [o, u], proto3));
                }
                (None, None) => {}
            }
        }
    }

    /// For each oneof of the update: its members that existed before came from more than one group (an
    /// original oneof, or a top-level field each), so fields that were independent are now exclusive.
    fn new_exclusivity(&mut self, original: &Fields<'a>, update: &Fields<'a>) {
        for (name, members) in &update.oneofs {
            let mut groups: BTreeSet<(bool, &str, i32)> = BTreeSet::new();
            let mut moved_in = 0;
            for field in members {
                let tag = field.number();
                if let Some(oneof) = original.oneof_of.get(&tag) {
                    groups.insert((true, oneof, 0));
                } else if original.by_tag.contains_key(&tag) {
                    groups.insert((false, "", tag));
                    moved_in += 1;
                }
            }
            if groups.len() > 1 {
                let change = match moved_in > 1 {
                    true => ChangeType::MultipleFieldsMovedToOneof,
                    false => ChangeType::FieldMovedToExistingOneof,
                };
                self.in_path(name.to_string(), false, |ctx| ctx.add(change));
            }
        }
    }

    /// Runs `body` at the field's path: `oneof/tag` for a oneof member, `tag` otherwise.
    fn in_field(&mut self, oneof: Option<&str>, tag: i32, body: impl FnOnce(&mut Self)) {
        match oneof {
            Some(name) => self.in_path(name.to_string(), false, |ctx| ctx.in_path(tag.to_string(), false, body)),
            None => self.in_path(tag.to_string(), false, body),
        }
    }

    fn at_field(&mut self, oneof: Option<&str>, tag: i32, change: ChangeType) {
        self.in_field(oneof, tag, |ctx| ctx.add(change));
    }
}
