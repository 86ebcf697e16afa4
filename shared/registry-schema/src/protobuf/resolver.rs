//! Where `import` statements resolve: the submitted file, the caller's dependencies, then the
//! imports Confluent knows without references (`google/protobuf/*.proto`, see also `known`).
//! Nothing is read from disk or the network.

use protox::Error;
use protox::file::{File, FileResolver, GoogleFileResolver};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Serves in-memory `.proto` sources by import path and remembers every path it could not serve.
pub(super) struct SourceResolver {
    sources: HashMap<String, String>,
    google: GoogleFileResolver,
    missing: Arc<Mutex<Vec<String>>>,
}

impl SourceResolver {
    /// A resolver over `sources` (import path → text). The returned list collects unresolved paths.
    pub(super) fn new(sources: HashMap<String, String>) -> (Self, Arc<Mutex<Vec<String>>>) {
        let missing = Arc::new(Mutex::new(Vec::new()));
        let resolver = SourceResolver { sources, google: GoogleFileResolver::new(), missing: Arc::clone(&missing) };
        (resolver, missing)
    }
}

impl FileResolver for SourceResolver {
    fn open_file(&self, name: &str) -> Result<File, Error> {
        if let Some(source) = self.sources.get(name) {
            return File::from_source(name, source);
        }
        if let Some(source) = super::known::source(name) {
            return File::from_source(name, source);
        }
        self.google.open_file(name).inspect_err(|error| {
            if error.is_file_not_found()
                && let Ok(mut missing) = self.missing.lock()
            {
                missing.push(name.to_string());
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
