//! `Context`: a schema context, Confluent's namespace with its own ID sequence. A subject names
//! its context in its qualified form `:.ctx:name` (Confluent's `QualifiedSubject`); a subject
//! without that prefix lives in the default context `.`.

use crate::error::RegistryError;
use std::borrow::Cow;
use std::fmt;

/// What separates the context from the subject name (and opens a qualified subject).
const DELIMITER: char = ':';

/// The wildcard form `:*:` (every context), meaningful only as a listing prefix.
pub const CONTEXT_WILDCARD: &str = ":*:";

/// A context name as Confluent writes it: `.` for the default context, `.name` otherwise.
/// Never contains `:` or ISO control characters; at most [`Context::MAX_BYTES`] long.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Context(Cow<'static, str>);

impl Context {
    /// The default context: unqualified subjects, and every ID registered before contexts.
    pub const DEFAULT: Context = Context(Cow::Borrowed("."));

    /// Confluent's context for registry-wide config and mode (`:.__GLOBAL:`); never holds subjects.
    pub const GLOBAL_NAME: &'static str = ".__GLOBAL";

    /// Longest context name: a context is part of every qualified subject, so it shares the
    /// subject's key budget ([`crate::Subject::MAX_BYTES`]).
    pub const MAX_BYTES: usize = crate::Subject::MAX_BYTES;

    /// Reads a context as Confluent's `QualifiedSubject.normalizeContext` does (a `/contexts/{c}`
    /// path segment, a `--context` flag): one leading and one trailing `:` are dropped, a missing
    /// leading `.` is added; `""` and `.` are the default context. A `:` left inside, a control
    /// character or an over-long name is refused.
    pub fn parse(text: &str) -> Result<Context, RegistryError> {
        let trimmed = text.strip_prefix(DELIMITER).unwrap_or(text);
        let trimmed = trimmed.strip_suffix(DELIMITER).unwrap_or(trimmed);
        let invalid = || RegistryError::InvalidContext { context: text.to_string() };
        if trimmed.contains(DELIMITER) || trimmed.chars().any(char::is_control) || trimmed.len() > Self::MAX_BYTES {
            return Err(invalid());
        }
        if trimmed.is_empty() || trimmed == "." {
            return Ok(Context::DEFAULT);
        }
        let name = if trimmed.starts_with('.') { trimmed.to_string() } else { format!(".{trimmed}") };
        Ok(Context(Cow::Owned(name)))
    }

    /// The name as Confluent lists it (`.` or `.name`).
    pub fn name(&self) -> &str {
        &self.0
    }

    /// Whether this is the default context `.`.
    pub fn is_default(&self) -> bool {
        self.0 == "."
    }

    /// The prefix of every subject in this context (`:.name:`); empty for the default context,
    /// whose subjects carry no prefix.
    pub fn subject_prefix(&self) -> String {
        if self.is_default() { String::new() } else { format!("{DELIMITER}{}{DELIMITER}", self.0) }
    }

    /// `name` qualified with this context: `:.ctx:name`, or `name` itself in the default context.
    pub fn qualify(&self, name: &str) -> String {
        format!("{}{name}", self.subject_prefix())
    }

    /// The subject a schema reference naming `referenced` points at when the referring schema is
    /// in this context, as Confluent's `QualifiedSubject.qualifySubjectWithParent`: a name in the
    /// default context (unqualified, or `:.:name`) is this context's subject of that name; a
    /// qualified name keeps its own context. 42208 when it is no valid subject.
    pub fn referenced_subject(&self, referenced: &str) -> Result<crate::Subject, RegistryError> {
        let target = crate::Subject::new(referenced)?;
        if self.is_default() || !target.context().is_default() {
            return Ok(target);
        }
        crate::Subject::new(self.qualify(target.as_str()))
    }
}

impl Default for Context {
    fn default() -> Self {
        Context::DEFAULT
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A subject text split as Confluent's `QualifiedSubject` splits it: `:.ctx:name` is context
/// `.ctx` and name `name`; `:.ctx` (no second `:`) is context `.ctx` with an empty name; `:*:name`
/// is the wildcard; anything else is `name` in the default context (so `:.:name` is `name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QualifiedName<'a> {
    /// A context (maybe the default one) and the name inside it (maybe empty).
    In { context: &'a str, name: &'a str },
    /// `:*:name`: a listing prefix over every context.
    Wildcard { name: &'a str },
}

impl<'a> QualifiedName<'a> {
    /// Whether this names a context without a subject in it (`:.ctx:`, `:.ctx`).
    pub fn is_context_only(&self) -> bool {
        matches!(self, QualifiedName::In { context, name: "" } if *context != ".")
    }

    /// Splits `text`; never fails (validation is the caller's: see [`crate::Subject::new`]).
    pub fn split(text: &'a str) -> QualifiedName<'a> {
        if let Some(rest) = text.strip_prefix(CONTEXT_WILDCARD) {
            return QualifiedName::Wildcard { name: rest };
        }
        let Some(after_colon) = text.strip_prefix(DELIMITER).filter(|rest| rest.starts_with('.')) else {
            return QualifiedName::In { context: ".", name: text };
        };
        match after_colon.find(DELIMITER) {
            Some(end) => QualifiedName::In { context: &after_colon[..end], name: &after_colon[end + 1..] },
            None => QualifiedName::In { context: after_colon, name: "" },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_normalises_as_confluent_does() {
        assert_eq!(Context::parse("").unwrap(), Context::DEFAULT);
        assert_eq!(Context::parse(".").unwrap(), Context::DEFAULT);
        assert_eq!(Context::parse(":.:").unwrap(), Context::DEFAULT);
        assert_eq!(Context::parse("team-a").unwrap().name(), ".team-a");
        assert_eq!(Context::parse(".team-a").unwrap().name(), ".team-a");
        assert_eq!(Context::parse(":.team-a:").unwrap().name(), ".team-a");
        assert_eq!(Context::parse("a.b").unwrap().name(), ".a.b");
    }

    #[test]
    fn parse_refuses_colons_control_characters_and_overlong_names() {
        for bad in [".a:b", "::.a", "a\u{7}", "a\nb"] {
            assert!(matches!(Context::parse(bad), Err(RegistryError::InvalidContext { .. })), "{bad:?}");
        }
        assert!(Context::parse(&"x".repeat(Context::MAX_BYTES + 1)).is_err());
        assert!(Context::parse(&"x".repeat(Context::MAX_BYTES - 1)).is_ok());
    }

    #[test]
    fn qualify_and_prefix() {
        let ctx = Context::parse(".ctx").unwrap();
        assert_eq!(ctx.subject_prefix(), ":.ctx:");
        assert_eq!(ctx.qualify("orders"), ":.ctx:orders");
        assert_eq!(Context::DEFAULT.subject_prefix(), "");
        assert_eq!(Context::DEFAULT.qualify("orders"), "orders");
    }

    #[test]
    fn references_resolve_in_the_referrers_context_as_confluent_does() {
        let ctx = Context::parse(".ctx").unwrap();
        let target = |context: &Context, name: &str| context.referenced_subject(name).unwrap().as_str().to_string();
        assert_eq!(target(&ctx, "customer"), ":.ctx:customer");
        assert_eq!(target(&ctx, ":.:customer"), ":.ctx:customer", "the default qualifier counts as none");
        assert_eq!(target(&ctx, ":.other:customer"), ":.other:customer");
        assert_eq!(target(&Context::DEFAULT, "customer"), "customer");
        assert_eq!(target(&Context::DEFAULT, ":.:customer"), "customer");
        assert_eq!(target(&Context::DEFAULT, ":.other:customer"), ":.other:customer");
        assert!(ctx.referenced_subject(":*:customer").is_err());
        assert!(ctx.referenced_subject("").is_err());
    }

    #[test]
    fn split_follows_qualified_subject() {
        assert_eq!(QualifiedName::split(":.ctx:orders"), QualifiedName::In { context: ".ctx", name: "orders" });
        assert_eq!(QualifiedName::split(":.ctx:a:b"), QualifiedName::In { context: ".ctx", name: "a:b" });
        assert_eq!(QualifiedName::split(":.:orders"), QualifiedName::In { context: ".", name: "orders" });
        assert_eq!(QualifiedName::split(":.ctx"), QualifiedName::In { context: ".ctx", name: "" });
        assert_eq!(QualifiedName::split("orders"), QualifiedName::In { context: ".", name: "orders" });
        assert_eq!(QualifiedName::split(":x:orders"), QualifiedName::In { context: ".", name: ":x:orders" });
        assert_eq!(QualifiedName::split(":*:orders"), QualifiedName::Wildcard { name: "orders" });
    }
}
