//! Where `import` statements resolve: the submitted file, the caller's dependencies, then the
//! imports Confluent knows without references (`google/protobuf/*.proto`, see also `known`).
//! Nothing is read from disk or the network.

use protox::Error;
use protox::file::{File, FileResolver, GoogleFileResolver};
use protox::prost_reflect::prost_types::FileDescriptorProto;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Serves in-memory `.proto` sources by import path and remembers every path it could not serve.
///
/// Each text is parsed once. With [`SourceInfo::Keep`] the compiler gets the parse whole, as
/// `protox` would read it; with [`SourceInfo::Strip`] it gets the parse without its source code info
/// (the positions of every declaration, most of a parse's memory and of the linker's work), and
/// the whole parse is kept in [`Served::written`] for the caller, so no text is parsed twice.
pub(super) struct SourceResolver {
    sources: Arc<HashMap<String, String>>,
    google: GoogleFileResolver,
    source_info: SourceInfo,
    /// Give the linker each file without its dotted custom options (see `lenient`).
    drop_dotted_options: bool,
    served: Arc<Mutex<Served>>,
}

/// Whether the compiler's descriptors carry source code info (link errors then point at a line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SourceInfo {
    Keep,
    Strip,
}

/// What a [`SourceResolver`] served and missed.
#[derive(Debug, Default)]
pub(super) struct Served {
    /// Import paths it could not serve, in the order asked.
    pub(super) missing: Vec<String>,
    /// With [`SourceInfo::Strip`]: each text it served, parsed as written with its source code info.
    pub(super) written: HashMap<String, FileDescriptorProto>,
}

impl SourceResolver {
    /// A resolver over `sources` (import path → text). The returned handle collects what it served.
    pub(super) fn new(sources: Arc<HashMap<String, String>>, source_info: SourceInfo) -> (Self, Arc<Mutex<Served>>) {
        let served = Arc::new(Mutex::new(Served::default()));
        let google = GoogleFileResolver::new();
        let served_handle = Arc::clone(&served);
        let resolver =
            SourceResolver { sources, google, source_info, drop_dotted_options: false, served: served_handle };
        (resolver, served)
    }

    /// This resolver giving the linker the files without their dotted custom options (see `lenient`).
    pub(super) fn dropping_dotted_options(mut self) -> Self {
        self.drop_dotted_options = true;
        self
    }

    fn serve_text(&self, name: &str, source: &str) -> Result<File, Error> {
        if self.source_info == SourceInfo::Keep {
            return File::from_source(name, source);
        }
        let mut written = super::source::parse(name, source)?;
        super::source::keep_rendered_locations(&mut written);
        let source_info = written.source_code_info.take();
        let mut stripped = written.clone();
        if self.drop_dotted_options {
            super::lenient::drop_dotted_custom_options(&mut stripped);
        }
        written.source_code_info = source_info;
        if let Ok(mut served) = self.served.lock() {
            served.written.insert(name.to_string(), written);
        }
        Ok(File::from_file_descriptor_proto(stripped))
    }
}

impl FileResolver for SourceResolver {
    fn open_file(&self, name: &str) -> Result<File, Error> {
        if let Some(source) = self.sources.get(name) {
            return self.serve_text(name, source);
        }
        if let Some(source) = super::known::source(name) {
            return self.serve_text(name, source);
        }
        self.google.open_file(name).inspect_err(|error| {
            if error.is_file_not_found()
                && let Ok(mut served) = self.served.lock()
            {
                served.missing.push(name.to_string());
            }
        })
    }
}

/// Deepest nesting of `{ ( [ <` outside comments and string literals. Linear, no recursion.
pub(super) fn nesting_depth(text: &str) -> usize {
    shape(text).0
}

/// Statements and blocks (`;` and `{` outside comments and string literals): each declaration, field,
/// enum value, option and import is at least one. What the node budget counts for Protobuf.
pub(super) fn statement_count(text: &str) -> u64 {
    shape(text).1
}

/// (deepest nesting, statements) of `text` in one linear pass.
fn shape(text: &str) -> (usize, u64) {
    let bytes = text.as_bytes();
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    let mut statements = 0u64;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            open @ (b'{' | b'(' | b'[' | b'<') => {
                depth += 1;
                deepest = deepest.max(depth);
                statements += u64::from(open == b'{');
            }
            b'}' | b')' | b']' | b'>' => depth = depth.saturating_sub(1),
            b';' => statements += 1,
            _ => {}
        }
        i += 1;
    }
    (deepest, statements)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_skips_comments_and_strings() {
        let text = "message A { // {{{{\n /* (((( */ string s = 1 [default = \"{{{\\\"{{\"]; map<string, B> m = 2; }";
        assert_eq!(nesting_depth(text), 2);
    }

    #[test]
    fn statements_are_counted_outside_comments_and_strings() {
        let text = "syntax = \"proto3\"; // ;;;\nmessage A { string s = 1 [default = \";{\"]; /* ; */ int32 n = 2; }";
        assert_eq!(statement_count(text), 4);
    }

    #[test]
    fn unterminated_comment_or_string_ends_the_scan() {
        assert_eq!(nesting_depth("message A { /* {{{{"), 1);
        assert_eq!(nesting_depth("message A { string s = 1 [default = \"{{{"), 2);
    }
}
