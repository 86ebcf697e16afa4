//! Protobuf schemas: `.proto` parsing and checking (proto2 and proto3) and the stored text.
//!
//! Parsing and linking use `protox` (pure Rust): imports resolve to the given dependencies by
//! import path; as in Confluent, `google/protobuf/*.proto`, `google/type/*.proto`,
//! `confluent/meta.proto` and `confluent/type/decimal.proto` are available without references.
//!
//! Stored text: Confluent's rendering of the text as written ([`render`]): text already in that
//! shape round-trips byte for byte, whitespace and comment variants store the same text, and
//! `normalize` gives Confluent's normal form. Compatibility is Confluent's diff ([`compat`]).

pub mod compat;
mod known;
mod render;
mod resolver;
pub mod serialized;
mod source;

use crate::limits::{Budget, Limits};
use crate::{Dependency, SchemaError, SchemaType, Validation};
use protox::prost_reflect::FileDescriptor;
use protox::prost_reflect::prost_types::FileDescriptorProto;
use std::collections::HashMap;

/// Deepest nesting of braces, brackets, parentheses and angle brackets ever accepted (whatever
/// [`Limits::max_depth`] says); deeper input fails before it is parsed.
pub const MAX_DEPTH: usize = 64;

/// Base file name given to the submitted schema (prefixed with `_` until no dependency uses it).
const INPUT_FILE: &str = "schema.proto";

/// A parsed, linked Protobuf schema and its stored text.
#[derive(Debug, Clone)]
pub struct ProtobufSchema {
    canonical: String,
    file: FileDescriptor,
    /// The text as written (unresolved names, labels as written), what the diff compares.
    written: Box<FileDescriptorProto>,
    /// Every other file in scope (dependencies as written, well-known files as linked).
    dependency_files: Vec<FileDescriptorProto>,
}

impl ProtobufSchema {
    /// Parses and links `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]).
    ///
    /// Fails with [`SchemaError::Parse`] carrying the parser's message and its line and column
    /// (prefixed by the file's import path when the error is inside a dependency), with
    /// [`SchemaError::UnresolvedReference`] for an import that is neither a dependency nor a
    /// well-known type, and with [`SchemaError::TooDeep`] beyond [`MAX_DEPTH`] in any file.
    /// With `normalize` the stored text is Confluent's normal form; `validation` changes nothing.
    ///
    /// Text without whitespace that is base64 of a `FileDescriptorProto` (what confluent-kafka's
    /// Python serializer registers) is accepted as Confluent does: it is rendered to `.proto`
    /// text ([`serialized::to_proto_text`]), and that text is parsed and stored.
    pub fn parse(
        text: &str,
        dependencies: &[Dependency],
        validation: Validation,
        normalize: bool,
    ) -> Result<Self, SchemaError> {
        Self::parse_within(text, dependencies, validation, normalize, &Limits::default())
    }

    /// [`ProtobufSchema::parse`] within `limits`: nesting depth of each file (at most [`MAX_DEPTH`]),
    /// and the statements of the text and its dependencies together against the node budget, both
    /// counted in one linear scan before the compiler runs (linking is super-linear in declarations).
    pub fn parse_within(
        text: &str,
        dependencies: &[Dependency],
        _validation: Validation,
        normalize: bool,
        limits: &Limits,
    ) -> Result<Self, SchemaError> {
        let trimmed = text.trim();
        if let Some(descriptor) =
            Some(trimmed).filter(|t| !t.contains(char::is_whitespace)).and_then(serialized::decode)
        {
            let rendered = serialized::to_proto_text(&descriptor);
            return Self::parse_within(&rendered, dependencies, _validation, normalize, limits);
        }
        let depth_limit = limits.clamped().max_depth.min(MAX_DEPTH);
        let mut nodes = limits.meter(Budget::Nodes);
        for file in std::iter::once(trimmed).chain(dependencies.iter().map(|d| d.schema.as_str())) {
            if resolver::nesting_depth(file) > depth_limit {
                return Err(SchemaError::TooDeep { limit: depth_limit });
            }
            nodes.charge(resolver::statement_count(file))?;
        }
        let mut sources: HashMap<String, String> =
            dependencies.iter().map(|d| (d.name.clone(), d.schema.clone())).collect();
        let mut input_name = INPUT_FILE.to_string();
        while sources.contains_key(&input_name) {
            input_name.insert(0, '_');
        }
        sources.insert(input_name.clone(), trimmed.to_string());
        let texts = sources.clone();

        let (resolver, missing) = resolver::SourceResolver::new(sources);
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        if let Err(error) = compiler.open_file(&input_name) {
            if let Some(name) = missing.lock().ok().and_then(|names| names.first().cloned()) {
                return Err(SchemaError::UnresolvedReference { name });
            }
            return Err(SchemaError::parse(SchemaType::Protobuf, describe(&error, &input_name, &texts)));
        }
        let file = compiler.descriptor_pool().get_file_by_name(&input_name).ok_or_else(|| {
            SchemaError::parse(SchemaType::Protobuf, "the schema produced no file descriptor".to_string())
        })?;
        let as_written = |name: &str, text: &str| {
            source::parse(name, text).map_err(|reason| SchemaError::parse(SchemaType::Protobuf, reason))
        };
        let written = as_written(&input_name, trimmed)?;
        let canonical = render::render(&written, file.file_descriptor_proto(), normalize);
        let mut dependency_files = Vec::new();
        for other in compiler.descriptor_pool().files().filter(|f| f.name() != input_name) {
            let text = texts.get(other.name()).map(String::as_str).or_else(|| known::source(other.name()));
            match text {
                Some(text) => dependency_files.push(as_written(other.name(), text)?),
                None => dependency_files.push(other.file_descriptor_proto().clone()),
            }
        }
        Ok(ProtobufSchema { canonical, file, written: Box::new(written), dependency_files })
    }

    /// The stored text (see the module notes).
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// `?format=serialized`: base64 of this file's `FileDescriptorProto` (see [`serialized`]).
    pub fn serialized(&self) -> String {
        serialized::to_base64(self.file.file_descriptor_proto())
    }

    /// The linked file: messages, enums, services, with imports resolved.
    pub fn file(&self) -> &FileDescriptor {
        &self.file
    }

    /// `proto2` or `proto3` (a file without a `syntax` line is proto2).
    pub fn syntax(&self) -> &'static str {
        match self.file.syntax() {
            protox::prost_reflect::Syntax::Proto3 => "proto3",
            _ => "proto2",
        }
    }

    /// The `package` declared, empty when none.
    pub fn package(&self) -> &str {
        self.file.package_name()
    }
}

/// The parser's message plus where it points: `line L column C`, prefixed with the file's
/// import path when the error is in a dependency rather than the submitted text.
fn describe(error: &protox::Error, input_name: &str, texts: &HashMap<String, String>) -> String {
    use miette::Diagnostic;
    let mut message = error.to_string();
    let file = error.file();
    let offset = error.labels().and_then(|mut labels| labels.next()).map(|label| label.offset());
    if let (Some(text), Some(offset)) = (file.and_then(|name| texts.get(name)), offset) {
        let (line, column) = line_and_column(text, offset);
        message = format!("{message} at line {line} column {column}");
    }
    match file {
        Some(name) if name != input_name => format!("{name}: {message}"),
        _ => message,
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_from_one_in_characters() {
        assert_eq!(line_and_column("abc", 0), (1, 1));
        assert_eq!(line_and_column("ab\ncé d", 6), (2, 3));
        assert_eq!(line_and_column("x", 99), (1, 2));
    }
}
