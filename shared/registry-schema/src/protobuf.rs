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
mod lenient;
mod render;
mod resolver;
pub mod serialized;
mod source;
mod tags;

use crate::limits::{Budget, PROTOBUF_STATEMENT_NODES};
use crate::{Dependency, ParseOptions, SchemaError, SchemaFormat, SchemaType};
use protox::prost_reflect::DescriptorPool;
use protox::prost_reflect::prost_types::FileDescriptorProto;
use resolver::{Served, SourceInfo, SourceResolver};
use std::collections::HashMap;
use std::sync::Arc;

/// Deepest nesting of braces, brackets, parentheses and angle brackets ever accepted (whatever
/// [`crate::Limits::max_depth`] says); deeper input fails before it is parsed.
pub const MAX_DEPTH: usize = 64;

/// Base file name given to the submitted schema (prefixed with `_` until no dependency uses it).
const INPUT_FILE: &str = "schema.proto";

/// A parsed, linked Protobuf schema and its stored text.
#[derive(Debug, Clone)]
pub struct ProtobufSchema {
    canonical: String,
    /// The file after linking (type names resolved to full names), what `?format=serialized` encodes.
    /// The linker's pool is not kept: its indexes cost more than the file itself.
    linked: Arc<FileDescriptorProto>,
    /// The text as written (unresolved names, labels as written, no source positions), what the
    /// diff compares. Shared: a check hands its parsed schema to a worker by clone.
    written: Arc<FileDescriptorProto>,
    /// Every other file in scope (dependencies as written, well-known files as linked).
    dependency_files: Arc<[FileDescriptorProto]>,
    /// `?format=ignore_extensions` when it differs from the stored text.
    without_extensions: Option<String>,
}

impl SchemaFormat for ProtobufSchema {
    /// Parses and links `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]),
    /// within `options.limits`: nesting depth of each file (at most [`MAX_DEPTH`]), and the
    /// statements of the text and its dependencies together against the node budget (each weighing
    /// [`PROTOBUF_STATEMENT_NODES`]), both counted in one linear scan before the compiler runs.
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
    ///
    /// Each text is parsed once; the linker gets it without source positions (only a failure is
    /// linked again with them, to say where), and the schema keeps the linked file, not the pool.
    fn parse_within(text: &str, dependencies: &[Dependency], options: ParseOptions) -> Result<Self, SchemaError> {
        let trimmed = text.trim();
        if let Some(descriptor) =
            Some(trimmed).filter(|t| !t.contains(char::is_whitespace)).and_then(serialized::decode)
        {
            let rendered = serialized::to_proto_text(&descriptor);
            return Self::parse_within(&rendered, dependencies, options);
        }
        let depth_limit = options.limits.clamped().max_depth.min(MAX_DEPTH);
        let mut nodes = options.limits.meter(Budget::Nodes);
        for file in std::iter::once(trimmed).chain(dependencies.iter().map(|d| d.schema.as_str())) {
            if resolver::nesting_depth(file) > depth_limit {
                return Err(SchemaError::TooDeep { limit: depth_limit });
            }
            nodes.charge(resolver::statement_count(file).saturating_mul(PROTOBUF_STATEMENT_NODES))?;
        }
        let mut sources: HashMap<String, String> =
            dependencies.iter().map(|d| (d.name.clone(), d.schema.clone())).collect();
        let mut input_name = INPUT_FILE.to_string();
        while sources.contains_key(&input_name) {
            input_name.insert(0, '_');
        }
        sources.insert(input_name.clone(), trimmed.to_string());
        let texts = Arc::new(sources);

        let (mut compiled, mut served) = compile(&texts, &input_name, SourceInfo::Strip, false);
        if compiled.as_ref().is_err_and(lenient::is_dotted_path_through_repeated) {
            let (again, served_again) = compile(&texts, &input_name, SourceInfo::Strip, true);
            if again.is_ok() {
                (compiled, served) = (again, served_again);
            }
        }
        let pool = compiled.map_err(|error| compile_error(error, &served, &texts, &input_name))?;
        let no_descriptor =
            || SchemaError::parse(SchemaType::Protobuf, "the schema produced no file descriptor".to_string());
        let linked = pool.get_file_by_name(&input_name).ok_or_else(no_descriptor)?.file_descriptor_proto().clone();
        let mut written = served.written.remove(&input_name).ok_or_else(no_descriptor)?;
        let canonical = render::render(&written, &linked, &pool, options.normalize, false);
        // Rendered a second time only when the text may hold an extension (an `extend`, an
        // `extensions` range or a parenthesized option); otherwise it is the stored text.
        let without_extensions = (canonical.contains("extend") || canonical.contains('('))
            .then(|| render::render(&written, &linked, &pool, false, true));
        // Rendering was the last reader of the positions; the diff reads declarations only.
        written.source_code_info = None;
        let mut dependency_files = Vec::new();
        for other in pool.files().filter(|f| f.name() != input_name) {
            match served.written.remove(other.name()) {
                Some(mut written) => {
                    written.source_code_info = None;
                    dependency_files.push(written);
                }
                None => dependency_files.push(other.file_descriptor_proto().clone()),
            }
        }
        Ok(ProtobufSchema {
            canonical,
            linked: Arc::new(linked),
            written: Arc::new(written),
            dependency_files: dependency_files.into(),
            without_extensions,
        })
    }
}

impl ProtobufSchema {
    /// Whether a top-level message declares a field `name` outside any oneof (Confluent's
    /// `hasTopLevelField`, over Wire's `MessageElement.getFields()`: a proto3 `optional` field is
    /// one of them, a member of a written oneof is not).
    pub fn has_top_level_field(&self, name: &str) -> bool {
        self.written
            .message_type
            .iter()
            .flat_map(|message| &message.field)
            .any(|field| field.name() == name && (field.oneof_index.is_none() || field.proto3_optional()))
    }

    /// The stored text (see the module notes).
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// `?format=ignore_extensions`: the text without `extend` blocks, extension ranges and custom
    /// options other than Confluent's `(confluent.*)` ones.
    pub fn without_extensions(&self) -> &str {
        self.without_extensions.as_deref().unwrap_or(&self.canonical)
    }

    /// `?format=serialized`: base64 of this file's `FileDescriptorProto` (see [`serialized`]).
    pub fn serialized(&self) -> String {
        serialized::to_base64(&self.linked)
    }

    /// The linked file: messages, enums, services, with type names resolved to full names.
    pub fn linked(&self) -> &FileDescriptorProto {
        &self.linked
    }

    /// Every other file in scope: the dependencies as written (type names as in their text, not
    /// resolved), the well-known files as linked.
    pub fn dependency_files(&self) -> &[FileDescriptorProto] {
        &self.dependency_files
    }

    /// `proto2` or `proto3` (a file without a `syntax` line is proto2).
    pub fn syntax(&self) -> &'static str {
        if source::is_proto3(&self.linked) { "proto3" } else { "proto2" }
    }

    /// The `package` declared, empty when none.
    pub fn package(&self) -> &str {
        self.linked.package()
    }
}

/// Compiles `input_name` with `texts` in scope (import path → text): the linked pool, and what the
/// resolver served (with [`SourceInfo::Strip`], each file as written, parsed once).
/// With `drop_dotted_options`, the linker gets the files without their dotted custom options.
fn compile(
    texts: &Arc<HashMap<String, String>>,
    input_name: &str,
    source_info: SourceInfo,
    drop_dotted_options: bool,
) -> (Result<DescriptorPool, protox::Error>, Served) {
    let (resolver, served) = SourceResolver::new(Arc::clone(texts), source_info);
    let resolver = if drop_dotted_options { resolver.dropping_dotted_options() } else { resolver };
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    let compiled = compiler.open_file(input_name).map(|compiler| compiler.descriptor_pool());
    drop(compiler);
    let served = Arc::try_unwrap(served).ok().and_then(|served| served.into_inner().ok()).unwrap_or_default();
    (compiled, served)
}

/// The error a failed compile answers: the first import nothing could serve, else the compiler's
/// message with its position. Linking without source positions (the fast path) reports no line, so
/// a link error is described by compiling again with them: only failures pay for the positions.
fn compile_error(
    error: protox::Error,
    served: &Served,
    texts: &Arc<HashMap<String, String>>,
    input_name: &str,
) -> SchemaError {
    use miette::Diagnostic;
    if let Some(name) = served.missing.first() {
        return SchemaError::UnresolvedReference { name: name.clone() };
    }
    let located = error.labels().is_some_and(|mut labels| labels.next().is_some());
    let error = match located {
        true => error,
        false => compile(texts, input_name, SourceInfo::Keep, false).0.err().unwrap_or(error),
    };
    SchemaError::parse(SchemaType::Protobuf, describe(&error, input_name, texts))
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
