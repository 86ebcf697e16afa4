//! The `.proto` file as written, which is what Confluent's formatter and diff read (Square Wire's
//! `ProtoFileElement`): the unresolved descriptor `protox-parse` builds, plus the facts only its
//! source info keeps (whether `syntax` was declared, how `reserved` statements were grouped).

use protox::prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use protox::prost_reflect::prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
use std::collections::HashMap;
use std::fmt;

/// Parses `text` without resolving names or imports: type names stay as written.
pub(super) fn parse(name: &str, text: &str) -> Result<FileDescriptorProto, protox_parse::ParseError> {
    protox_parse::parse(name, text)
}

/// Whether the file is proto3 (declared `syntax = "proto3"`).
pub(super) fn is_proto3(file: &FileDescriptorProto) -> bool {
    file.syntax() == "proto3"
}

/// Whether the text has a `syntax` statement (Wire keeps no syntax when there is none).
pub(super) fn declares_syntax(file: &FileDescriptorProto) -> bool {
    locations(file).any(|(path, _)| path == [12])
}

/// A field's type as written: a scalar keyword, a (possibly dotted) type name, or a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ty {
    Scalar(&'static str),
    Named(String),
    Map(Box<Ty>, Box<Ty>),
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(name) => f.write_str(name),
            Ty::Named(name) => f.write_str(name),
            Ty::Map(key, value) => write!(f, "map<{key}, {value}>"),
        }
    }
}

/// The keyword of a scalar field type; `None` for messages, enums and groups.
pub(super) fn scalar_name(ty: Type) -> Option<&'static str> {
    Some(match ty {
        Type::Double => "double",
        Type::Float => "float",
        Type::Int64 => "int64",
        Type::Uint64 => "uint64",
        Type::Int32 => "int32",
        Type::Fixed64 => "fixed64",
        Type::Fixed32 => "fixed32",
        Type::Bool => "bool",
        Type::String => "string",
        Type::Bytes => "bytes",
        Type::Uint32 => "uint32",
        Type::Sfixed32 => "sfixed32",
        Type::Sfixed64 => "sfixed64",
        Type::Sint32 => "sint32",
        Type::Sint64 => "sint64",
        Type::Group | Type::Message | Type::Enum => return None,
    })
}

/// Whether `message` is a map entry (synthesized for `map<K, V>` fields, or declared so).
pub(super) fn is_map_entry(message: &DescriptorProto) -> bool {
    message.options.as_ref().and_then(|o| o.map_entry).unwrap_or(false)
}

/// The map entry a `map<K, V>` field of `parent` points to.
pub(super) fn map_entry<'a>(parent: &'a DescriptorProto, field: &FieldDescriptorProto) -> Option<&'a DescriptorProto> {
    if field.label() != Label::Repeated || field.type_name.is_none() {
        return None;
    }
    let entry_name = field.type_name().rsplit('.').next().unwrap_or_default();
    parent.nested_type.iter().find(|n| n.name() == entry_name && is_map_entry(n))
}

/// The type of `field` (declared in `parent`) as written.
pub(super) fn field_type(parent: &DescriptorProto, field: &FieldDescriptorProto) -> Ty {
    if let Some(entry) = map_entry(parent, field) {
        let part = |number| entry.field.iter().find(|f| f.number() == number).map_or(Ty::Scalar("string"), simple_type);
        return Ty::Map(Box::new(part(1)), Box::new(part(2)));
    }
    simple_type(field)
}

/// The type of a field that is not a map.
pub(super) fn simple_type(field: &FieldDescriptorProto) -> Ty {
    match field.r#type.and_then(|t| Type::try_from(t).ok()).and_then(scalar_name) {
        Some(scalar) => Ty::Scalar(scalar),
        None => Ty::Named(field.type_name().to_string()),
    }
}

/// The index of the real `oneof` holding `field` (not proto3 `optional`'s synthetic one).
pub(super) fn real_oneof(field: &FieldDescriptorProto) -> Option<usize> {
    match field.oneof_index {
        Some(index) if !field.proto3_optional() => usize::try_from(index).ok(),
        _ => None,
    }
}

/// Wire's label: what was written, `None` where no label was (proto3 singular, oneof members,
/// maps).
pub(super) fn written_label(parent: &DescriptorProto, field: &FieldDescriptorProto, proto3: bool) -> Option<Label> {
    if real_oneof(field).is_some() || map_entry(parent, field).is_some() {
        return None;
    }
    match field.label() {
        Label::Optional if proto3 && !field.proto3_optional() => None,
        label => Some(label),
    }
}

/// The label keyword.
pub(super) fn label_name(label: Label) -> &'static str {
    match label {
        Label::Optional => "optional",
        Label::Required => "required",
        Label::Repeated => "repeated",
    }
}

/// Drops every source location the renderer does not read, keeping `syntax` and the `reserved` and
/// `extensions` statements of messages and enums with their values (how values were grouped per
/// statement). Positions are most of a parse's memory (several per field); these are few.
pub(super) fn keep_rendered_locations(file: &mut FileDescriptorProto) {
    if let Some(info) = file.source_code_info.as_mut() {
        info.location.retain(|location| is_rendered(&location.path));
        info.location.shrink_to_fit();
    }
}

/// Whether the renderer reads the location at `path` (see [`keep_rendered_locations`]).
fn is_rendered(path: &[i32]) -> bool {
    /// A declaration's tags: [`DescriptorProto`] (nested messages 3, enums 4, extension ranges 5,
    /// reserved ranges 9, names 10) or `EnumDescriptorProto` (reserved ranges 4, names 5).
    enum Scope {
        Message,
        Enum,
    }
    let (mut scope, mut rest) = match path {
        [12] => return true,
        [4, _, rest @ ..] => (Scope::Message, rest),
        [5, _, rest @ ..] => (Scope::Enum, rest),
        _ => return false,
    };
    loop {
        (scope, rest) = match (scope, rest) {
            (Scope::Message, [3, _, inner @ ..]) => (Scope::Message, inner),
            (Scope::Message, [4, _, inner @ ..]) => (Scope::Enum, inner),
            (Scope::Message, [5 | 9 | 10, ..]) | (Scope::Enum, [4 | 5, ..]) => return true,
            _ => return false,
        };
    }
}

/// Every source location as (path, span).
pub(super) fn locations(file: &FileDescriptorProto) -> impl Iterator<Item = (&[i32], &[i32])> {
    file.source_code_info.iter().flat_map(|info| info.location.iter()).map(|l| (l.path.as_slice(), l.span.as_slice()))
}

/// The source locations of a file indexed by path, so that looking one up (or a path's children) does not
/// scan every location: a file with many declarations would otherwise render in quadratic time.
pub(super) struct SourceIndex<'f> {
    spans: HashMap<&'f [i32], &'f [i32]>,
    children: HashMap<&'f [i32], Vec<Location<'f>>>,
}

/// A location's (path, span).
pub(super) type Location<'f> = (&'f [i32], &'f [i32]);

impl<'f> SourceIndex<'f> {
    /// Indexes every location of `file` (the first location wins for a repeated path, as a scan would).
    pub(super) fn new(file: &'f FileDescriptorProto) -> Self {
        let mut spans = HashMap::new();
        let mut children: HashMap<&[i32], Vec<Location<'_>>> = HashMap::new();
        for (path, span) in locations(file) {
            spans.entry(path).or_insert(span);
            if let Some((_, parent)) = path.split_last() {
                children.entry(parent).or_default().push((path, span));
            }
        }
        SourceIndex { spans, children }
    }

    /// The span of the first location at `path`.
    pub(super) fn span(&self, path: &[i32]) -> Option<&'f [i32]> {
        self.spans.get(path).copied()
    }

    /// The locations one level below `parent`, in file order.
    pub(super) fn children(&self, parent: &[i32]) -> &[Location<'f>] {
        self.children.get(parent).map_or(&[], Vec::as_slice)
    }
}

/// (line, column) where a span starts.
pub(super) fn span_start(span: &[i32]) -> (i32, i32) {
    (span.first().copied().unwrap_or(0), span.get(1).copied().unwrap_or(0))
}

/// Whether span `inner` lies within span `outer` (both `[line, col, (end_line,) end_col]`).
pub(super) fn span_contains(outer: &[i32], inner: &[i32]) -> bool {
    let end = |s: &[i32]| match s {
        [line, _, end_col] => (*line, *end_col),
        [_, _, end_line, end_col] => (*end_line, *end_col),
        _ => (0, 0),
    };
    span_start(outer) <= span_start(inner) && end(inner) <= end(outer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_labels_and_types_follow_the_text() {
        let file = parse(
            "a.proto",
            "syntax = \"proto3\";\nmessage M { int32 a = 1; optional string b = 2; repeated M c = 3; map<string, M> d = 4; oneof o { bytes e = 5; } }",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let m = &file.message_type[0];
        let labels: Vec<_> = m.field.iter().map(|f| written_label(m, f, true)).collect();
        assert_eq!(labels, [None, Some(Label::Optional), Some(Label::Repeated), None, None]);
        let types: Vec<String> = m.field.iter().map(|f| field_type(m, f).to_string()).collect();
        assert_eq!(types, ["int32", "string", "M", "map<string, M>", "bytes"]);
        assert!(declares_syntax(&file));
        let bare = parse("b.proto", "message M { optional int32 a = 1; }").unwrap_or_else(|e| panic!("{e}"));
        assert!(!declares_syntax(&bare));
    }

    #[test]
    fn only_the_positions_the_renderer_reads_are_kept() {
        let text = "syntax = \"proto2\";\nmessage M {\n  reserved 1, 2 to 3;\n  reserved \"x\";\n  extensions 100 to 200;\n  \
                    optional int32 a = 4;\n  message N { reserved 5; }\n  enum E { A = 0; reserved 9; }\n}\nenum F { B = 0; reserved \"y\"; }";
        let mut file = parse("a.proto", text).unwrap_or_else(|e| panic!("{e}"));
        let every: Vec<Vec<i32>> = locations(&file).map(|(path, _)| path.to_vec()).collect();
        keep_rendered_locations(&mut file);
        let kept: Vec<Vec<i32>> = locations(&file).map(|(path, _)| path.to_vec()).collect();
        assert!(kept.len() < every.len(), "{} of {} kept", kept.len(), every.len());
        let has = |path: &[i32]| kept.iter().any(|p| p == path);
        assert!(has(&[12]), "syntax");
        assert!(has(&[4, 0, 9]) && has(&[4, 0, 9, 1]) && has(&[4, 0, 9, 1, 1]) && has(&[4, 0, 10, 0]), "reserved");
        assert!(has(&[4, 0, 5, 0]), "extension range");
        assert!(has(&[4, 0, 3, 0, 9, 0]) && has(&[4, 0, 4, 0, 4, 0]) && has(&[5, 0, 5, 0]), "nested and enums");
        assert!(!kept.iter().any(|p| p.starts_with(&[4, 0, 2])), "field positions are dropped");
        assert!(!kept.iter().any(|p| p.starts_with(&[5, 0, 2])), "enum value positions are dropped");
    }
}
