//! Confluent's stored text for a Protobuf schema: `ProtobufSchemaUtils.toString` over Wire's
//! parse of the text (canonical form) and `toNormalizedString` (`?normalize=true`).
//!
//! Layout: `syntax` (only when declared; normalized: only proto3), `package`, then blank-line
//! separated sections (imports, public imports; options; messages then enums; extends;
//! services). Inside a message: reserved, options, fields, oneofs, groups, extension ranges,
//! extends, nested messages then nested enums, each section after a blank line, two-space indent
//! (blank lines inside nested blocks carry the indent, as Java's formatter writes them). Types
//! and option values print as written; normalizing resolves type names to `.full.Name`, sorts
//! imports, options, fields, oneofs, enum constants, reserved and extension ranges.

mod custom_options;
pub(super) mod options;
mod ranges;

use super::source::{self, Ty};
use options::{Opt, from_uninterpreted, number, option_list, quote};
use protox::prost_reflect::DescriptorPool;
use protox::prost_reflect::prost_types::field_descriptor_proto::Type;
use protox::prost_reflect::prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto, ServiceDescriptorProto,
    UninterpretedOption,
};

/// Renders `written` (the unresolved parse of the text) as Confluent stores it. `linked` is the
/// same file after linking (same order of declarations); normalizing reads resolved names from it.
/// `ignore_extensions` is Confluent's `?format=ignore_extensions`: no `extend` blocks, no
/// extension ranges, and no custom (parenthesized) options but Confluent's own `(confluent.*)`.
/// `pool` (the linked files) names the extensions normalized custom options resolve to.
pub(super) fn render(
    written: &FileDescriptorProto,
    linked: &FileDescriptorProto,
    pool: &DescriptorPool,
    normalize: bool,
    ignore_extensions: bool,
) -> String {
    let locations = source::SourceIndex::new(written);
    let proto3 = source::is_proto3(written);
    let r = Renderer { file: written, locations: &locations, pool, normalize, ignore_extensions, proto3 };
    r.file(linked)
}

/// The package of the custom options `ignore_extensions` keeps (Confluent's `CONFLUENT_PREFIX`).
const CONFLUENT_OPTIONS: &str = "confluent.";

/// Appends `text` with every line indented by two spaces (Java `appendIndented`).
pub(super) fn indent(out: &mut String, text: &str) {
    let mut lines: Vec<&str> = text.split('\n').collect();
    while lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    for line in lines {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}

/// An extension field as written, and linked (its type name resolved) when known.
type WrittenAndLinked<'f> = (&'f FieldDescriptorProto, Option<&'f FieldDescriptorProto>);

struct Renderer<'a> {
    file: &'a FileDescriptorProto,
    locations: &'a source::SourceIndex<'a>,
    pool: &'a DescriptorPool,
    normalize: bool,
    ignore_extensions: bool,
    proto3: bool,
}

impl Renderer<'_> {
    fn file(&self, linked: &FileDescriptorProto) -> String {
        let f = self.file;
        let mut out = String::new();
        if source::declares_syntax(f) && (!self.normalize || self.proto3) {
            out.push_str(&format!("syntax = \"{}\";\n", if self.proto3 { "proto3" } else { "proto2" }));
        }
        if let Some(package) = &f.package {
            out.push_str(&format!("package {package};\n"));
        }
        let is = |list: &[i32], i: usize| list.iter().any(|&x| usize::try_from(x).ok() == Some(i));
        let mut imports: Vec<&String> = Vec::new();
        let mut public: Vec<&String> = Vec::new();
        for (i, name) in f.dependency.iter().enumerate() {
            if is(&f.public_dependency, i) {
                public.push(name);
            } else if !is(&f.weak_dependency, i) {
                imports.push(name);
            }
        }
        if !imports.is_empty() || !public.is_empty() {
            if self.normalize {
                for list in [&mut imports, &mut public] {
                    list.sort();
                    list.dedup();
                }
            }
            out.push('\n');
            imports.iter().for_each(|name| out.push_str(&format!("import \"{name}\";\n")));
            public.iter().for_each(|name| out.push_str(&format!("import public \"{name}\";\n")));
        }
        let options = self.options(f.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
        if !options.is_empty() {
            out.push('\n');
            options.iter().for_each(|o| out.push_str(&format!("option {};\n", o.text)));
        }
        if !f.message_type.is_empty() || !f.enum_type.is_empty() {
            out.push('\n');
            for (i, message) in f.message_type.iter().enumerate() {
                out.push_str(&self.message(message, linked.message_type.get(i), &[4, index(i)]));
            }
            for (i, enumeration) in f.enum_type.iter().enumerate() {
                out.push_str(&self.enumeration(enumeration, &[5, index(i)]));
            }
        }
        if !f.extension.is_empty() && !self.ignore_extensions {
            out.push('\n');
            out.push_str(&self.extends(&f.extension, &linked.extension, None));
        }
        if !f.service.is_empty() {
            out.push('\n');
            for (i, service) in f.service.iter().enumerate() {
                out.push_str(&self.service(service, linked.service.get(i)));
            }
        }
        out
    }

    fn options(&self, options: Option<&[UninterpretedOption]>) -> Vec<Opt> {
        let custom = |o: &&UninterpretedOption| {
            o.name.first().is_some_and(|part| {
                part.is_extension && !part.name_part.trim_start_matches('.').starts_with(CONFLUENT_OPTIONS)
            })
        };
        let kept: Vec<&UninterpretedOption> =
            options.unwrap_or_default().iter().filter(|o| !(self.ignore_extensions && custom(o))).collect();
        if self.normalize {
            let written = |o: &UninterpretedOption| from_uninterpreted(o, true);
            return custom_options::normalize(&kept, self.file.package(), self.pool, written);
        }
        kept.into_iter().map(|o| from_uninterpreted(o, false)).collect()
    }

    fn message(&self, m: &DescriptorProto, linked: Option<&DescriptorProto>, path: &[i32]) -> String {
        let mut out = format!("message {} {{", m.name());
        let reserved = ranges::statements(
            self.locations,
            self.normalize,
            path,
            (9, 10),
            &ranges_of(&m.reserved_range),
            &m.reserved_name,
            true,
        );
        if !reserved.is_empty() {
            out.push('\n');
            reserved.iter().for_each(|r| indent(&mut out, &format!("reserved {r};")));
        }
        let options = self.options(m.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
        if !options.is_empty() {
            out.push('\n');
            options.iter().for_each(|o| indent(&mut out, &format!("option {};", o.text)));
        }
        let positions: std::collections::HashMap<*const FieldDescriptorProto, usize> =
            m.field.iter().enumerate().map(|(i, x)| (std::ptr::from_ref(x), i)).collect();
        let linked_field = |f: &FieldDescriptorProto| {
            let i = positions.get(&std::ptr::from_ref(f)).copied();
            linked.and_then(|l| i.and_then(|i| l.field.get(i)))
        };
        let is_group = |f: &FieldDescriptorProto| f.r#type() == Type::Group;
        let mut fields: Vec<&FieldDescriptorProto> =
            m.field.iter().filter(|f| source::real_oneof(f).is_none() && !is_group(f)).collect();
        if self.normalize {
            fields.sort_by_key(|f| f.number());
        }
        if !fields.is_empty() {
            out.push('\n');
            fields.iter().for_each(|f| indent(&mut out, &self.field(m, f, linked, linked_field(f))));
        }
        let mut oneofs: Vec<(usize, Vec<&FieldDescriptorProto>)> = (0..m.oneof_decl.len())
            .map(|i| (i, m.field.iter().filter(|f| source::real_oneof(f) == Some(i)).collect::<Vec<_>>()))
            .filter(|(i, members)| !members.is_empty() || m.field.iter().all(|f| f.oneof_index != Some(index(*i))))
            .collect();
        if self.normalize {
            oneofs.retain(|(_, members)| !members.is_empty());
            oneofs.iter_mut().for_each(|(_, members)| members.sort_by_key(|f| f.number()));
            oneofs.sort_by_key(|(_, members)| members.first().map(|f| f.number()));
        }
        if !oneofs.is_empty() {
            out.push('\n');
            for (i, members) in &oneofs {
                let decl = &m.oneof_decl[*i];
                let mut text = format!("oneof {} {{", decl.name());
                let options = self.options(decl.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
                if !options.is_empty() {
                    text.push('\n');
                    options.iter().for_each(|o| indent(&mut text, &format!("option {};", o.text)));
                }
                if !members.is_empty() {
                    text.push('\n');
                    members.iter().for_each(|f| indent(&mut text, &self.field(m, f, linked, linked_field(f))));
                }
                text.push_str("}\n");
                indent(&mut out, &text);
            }
        }
        let mut groups: Vec<&FieldDescriptorProto> = m.field.iter().filter(|f| is_group(f)).collect();
        if self.normalize {
            groups.sort_by_key(|f| f.number());
        }
        if !groups.is_empty() {
            out.push('\n');
            for group in groups {
                indent(&mut out, &self.group(m, group));
            }
        }
        let extensions =
            ranges::statements(self.locations, self.normalize, path, (5, -1), &ranges_of_ext(m), &[], true);
        if !extensions.is_empty() && !self.ignore_extensions {
            out.push('\n');
            extensions.iter().for_each(|r| indent(&mut out, &format!("extensions {r};")));
        }
        if !m.extension.is_empty() && !self.ignore_extensions {
            out.push('\n');
            let linked_ext = linked.map(|l| l.extension.as_slice()).unwrap_or_default();
            indent(&mut out, &self.extends(&m.extension, linked_ext, Some(m)));
        }
        let group_names: Vec<&str> = m.field.iter().filter(|f| is_group(f)).map(|f| f.type_name()).collect();
        let nested: Vec<(usize, &DescriptorProto)> = m
            .nested_type
            .iter()
            .enumerate()
            .filter(|(_, n)| !source::is_map_entry(n) && !group_names.contains(&n.name()))
            .collect();
        if !nested.is_empty() || !m.enum_type.is_empty() {
            out.push('\n');
            for (i, n) in nested {
                let child_path = [path, &[3, index(i)]].concat();
                indent(&mut out, &self.message(n, linked.and_then(|l| l.nested_type.get(i)), &child_path));
            }
            for (i, e) in m.enum_type.iter().enumerate() {
                indent(&mut out, &self.enumeration(e, &[path, &[4, index(i)]].concat()));
            }
        }
        out.push_str("}\n");
        out
    }

    fn field(
        &self,
        parent: &DescriptorProto,
        f: &FieldDescriptorProto,
        linked_parent: Option<&DescriptorProto>,
        linked: Option<&FieldDescriptorProto>,
    ) -> String {
        let written = source::field_type(parent, f);
        let ty = match (&written, self.normalize, linked) {
            (Ty::Scalar(_), _, _) | (_, false, _) | (_, true, None) => written.to_string(),
            (Ty::Map(key, value), true, Some(l)) => {
                let entry = linked_parent.and_then(|p| source::map_entry(p, l));
                let value_name = entry.and_then(|e| e.field.iter().find(|x| x.number() == 2)).map(|v| match **value {
                    Ty::Scalar(s) => s.to_string(),
                    _ => v.type_name().to_string(),
                });
                format!("map<{key}, {}>", value_name.unwrap_or_else(|| value.to_string()))
            }
            (Ty::Named(_), true, Some(l)) => l.type_name().to_string(),
        };
        let mut text = String::new();
        if let Some(label) = source::written_label(parent, f, self.proto3) {
            text.push_str(source::label_name(label));
            text.push(' ');
        }
        text.push_str(&format!("{ty} {} = {}", f.name(), f.number()));
        let mut options = self.options(f.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
        if let Some(default) = &f.default_value {
            let value = match &written {
                Ty::Scalar("string" | "bytes") => quote(default),
                Ty::Scalar("bool") => default.clone(),
                Ty::Scalar(_) => match default.parse::<f64>() {
                    Ok(n) if self.normalize => number(n, true),
                    _ => default.clone(),
                },
                _ => default.clone(),
            };
            options.push(Opt::plain("default", value));
        }
        if let Some(json_name) = &f.json_name {
            options.push(Opt::plain("json_name", quote(json_name)));
        }
        if self.normalize {
            options.sort_by(|a, b| a.sort_name.cmp(&b.sort_name));
        }
        if !options.is_empty() {
            text.push(' ');
            text.push_str(&option_list(&options));
        }
        text.push_str(";\n");
        text
    }

    fn group(&self, parent: &DescriptorProto, group: &FieldDescriptorProto) -> String {
        let mut text = String::new();
        if let Some(label) = source::written_label(parent, group, self.proto3) {
            text.push_str(source::label_name(label));
            text.push(' ');
        }
        text.push_str(&format!("group {} = {} {{", group.type_name(), group.number()));
        if let Some(body) = parent.nested_type.iter().find(|n| n.name() == group.type_name()) {
            let mut fields: Vec<&FieldDescriptorProto> = body.field.iter().collect();
            if self.normalize {
                fields.sort_by_key(|f| f.number());
            }
            if !fields.is_empty() {
                text.push('\n');
                fields.iter().for_each(|f| indent(&mut text, &self.field(body, f, None, None)));
            }
        }
        text.push_str("}\n");
        text
    }

    fn extends(
        &self,
        fields: &[FieldDescriptorProto],
        linked: &[FieldDescriptorProto],
        parent: Option<&DescriptorProto>,
    ) -> String {
        let mut blocks: Vec<(String, Vec<WrittenAndLinked>)> = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let name = match (self.normalize, linked.get(i)) {
                (true, Some(l)) => l.extendee().to_string(),
                _ => f.extendee().to_string(),
            };
            let target = if self.normalize {
                blocks.iter().position(|(n, _)| *n == name)
            } else {
                blocks.len().checked_sub(1).filter(|&last| blocks[last].0 == name)
            };
            match target.and_then(|i| blocks.get_mut(i)) {
                Some((_, members)) => members.push((f, linked.get(i))),
                None => blocks.push((name, vec![(f, linked.get(i))])),
            }
        }
        let holder = DescriptorProto::default();
        let parent = parent.unwrap_or(&holder);
        let mut out = String::new();
        for (name, mut members) in blocks {
            if self.normalize {
                members.sort_by_key(|(f, _)| f.number());
            }
            out.push_str(&format!("extend {name} {{\n"));
            members.iter().for_each(|(f, l)| indent(&mut out, &self.field(parent, f, None, *l)));
            out.push_str("}\n");
        }
        out
    }

    fn enumeration(&self, e: &EnumDescriptorProto, path: &[i32]) -> String {
        let mut out = format!("enum {} {{", e.name());
        let ranges: Vec<(i32, i32)> = e.reserved_range.iter().map(|r| (r.start(), r.end())).collect();
        let reserved =
            ranges::statements(self.locations, self.normalize, path, (4, 5), &ranges, &e.reserved_name, false);
        if !reserved.is_empty() {
            out.push('\n');
            reserved.iter().for_each(|r| indent(&mut out, &format!("reserved {r};")));
        }
        let options = self.options(e.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
        if reserved.is_empty() && (!options.is_empty() || !e.value.is_empty()) {
            out.push('\n');
        }
        options.iter().for_each(|o| indent(&mut out, &format!("option {};", o.text)));
        let mut values: Vec<_> = e.value.iter().collect();
        if self.normalize {
            values.sort_by(|a, b| a.number().cmp(&b.number()).then_with(|| a.name().cmp(b.name())));
        }
        for value in values {
            let mut line = format!("{} = {}", value.name(), value.number());
            let options = self.options(value.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
            if !options.is_empty() {
                line.push(' ');
                line.push_str(&option_list(&options));
            }
            line.push(';');
            indent(&mut out, &line);
        }
        out.push_str("}\n");
        out
    }

    fn service(&self, s: &ServiceDescriptorProto, linked: Option<&ServiceDescriptorProto>) -> String {
        let mut out = format!("service {} {{", s.name());
        let options = self.options(s.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
        if !options.is_empty() {
            out.push('\n');
            options.iter().for_each(|o| indent(&mut out, &format!("option {};", o.text)));
        }
        if !s.method.is_empty() {
            out.push('\n');
        }
        for (i, method) in s.method.iter().enumerate() {
            let resolved = linked.and_then(|l| l.method.get(i)).filter(|_| self.normalize);
            let input = resolved.map_or(method.input_type(), |l| l.input_type());
            let output = resolved.map_or(method.output_type(), |l| l.output_type());
            let stream = |on: bool| if on { "stream " } else { "" };
            let mut text = format!(
                "rpc {} ({}{input}) returns ({}{output})",
                method.name(),
                stream(method.client_streaming()),
                stream(method.server_streaming())
            );
            let options = self.options(method.options.as_ref().map(|o| o.uninterpreted_option.as_slice()));
            if !options.is_empty() {
                text.push_str(" {\n");
                options.iter().for_each(|o| indent(&mut text, &format!("option {};", o.text)));
                text.push('}');
            }
            text.push_str(";\n");
            indent(&mut out, &text);
        }
        out.push_str("}\n");
        out
    }
}

pub(super) fn index(i: usize) -> i32 {
    i32::try_from(i).unwrap_or(i32::MAX)
}

fn ranges_of(ranges: &[protox::prost_reflect::prost_types::descriptor_proto::ReservedRange]) -> Vec<(i32, i32)> {
    ranges.iter().map(|r| (r.start(), r.end())).collect()
}

fn ranges_of_ext(m: &DescriptorProto) -> Vec<(i32, i32)> {
    m.extension_range.iter().map(|r| (r.start(), r.end())).collect()
}
