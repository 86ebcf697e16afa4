//! The exporter as Confluent's `/exporters` API describes it (`ExporterReference` /
//! `ExporterDescription`), and its status (`ExporterStatusResponse`).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Where the destination keeps the exported subjects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ContextType {
    /// A context named after the exporter: `:.<exporter name>:<subject>`.
    Auto,
    /// The context the exporter's `context` names.
    Custom,
    /// The destination's default context.
    None,
}

impl ContextType {
    /// The type a `contextType` names (any case), if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "AUTO" => Some(ContextType::Auto),
            "CUSTOM" => Some(ContextType::Custom),
            "NONE" => Some(ContextType::None),
            _ => None,
        }
    }
}

/// An exporter's definition. `config` holds the destination client settings; in a stored
/// record its credentials are sealed ([`crate::secrets`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exporter {
    pub name: String,
    pub context_type: ContextType,
    /// The destination context of a `CUSTOM` exporter (`.team-a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Subject names and `*` patterns (`orders-*`, `*`).
    pub subjects: Vec<String>,
    /// The destination subject, `${subject}` standing for the source subject.
    pub subject_rename_format: String,
    pub config: BTreeMap<String, String>,
}

/// The placeholder of [`Exporter::subject_rename_format`].
pub const SUBJECT_PLACEHOLDER: &str = "${subject}";

/// The destination registry's URL key of `config`.
pub const DESTINATION_URL: &str = "schema.registry.url";

impl Exporter {
    /// Whether `subject` (of the source's default context) is one this exporter copies.
    pub fn matches(&self, subject: &str) -> bool {
        self.subjects.iter().any(|pattern| glob_matches(pattern, subject))
    }

    /// The destination context: `.<name>` (AUTO), the custom one, or `None` (the default).
    pub fn destination_context(&self) -> Option<String> {
        match self.context_type {
            ContextType::Auto => Some(format!(".{}", self.name)),
            ContextType::Custom => self.context.clone().map(|context| normalize_context(&context)),
            ContextType::None => None,
        }
    }

    /// The destination subject of source subject `subject`, context-qualified when the exporter
    /// exports into a named context.
    pub fn destination_subject(&self, subject: &str) -> String {
        let renamed = self.subject_rename_format.replace(SUBJECT_PLACEHOLDER, subject);
        match self.destination_context() {
            Some(context) => format!(":{context}:{renamed}"),
            None => renamed,
        }
    }
}

/// `.team-a` for `team-a` or `.team-a`.
pub fn normalize_context(context: &str) -> String {
    if context.starts_with('.') { context.to_owned() } else { format!(".{context}") }
}

/// `*` matches any run of characters (none included); everything else matches itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, rest) = (parts[0], &parts[1..]);
    let Some(mut remaining) = text.strip_prefix(first) else { return false };
    let last = rest[rest.len() - 1];
    for middle in &rest[..rest.len() - 1] {
        match remaining.find(middle) {
            Some(at) => remaining = &remaining[at + middle.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

/// An exporter's state, as Confluent names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ExporterState {
    /// Created, resumed or reset: the next pass starts it.
    Starting,
    /// Passes succeed.
    Running,
    /// Stopped by `pause`; `resume` continues from `offset`.
    Paused,
    /// The last pass failed (the reason in `trace`); passes go on with backoff.
    Error,
}

/// Where an exporter is: its state, how many changes it has delivered (`offset`, from 0 after
/// a reset), when the status last changed (`ts`, ms) and the reason of an `ERROR`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExporterStatus {
    pub state: ExporterState,
    pub offset: i64,
    pub ts: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// What the store keeps per exporter: its definition (credentials sealed), its status, and the
/// source subjects holding a config that its last successful pass copied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExporterRecord {
    pub exporter: Exporter,
    pub status: ExporterStatus,
    /// The next pass looks at these subjects again, whatever the source lists then: a config
    /// removed from a subject without versions is no longer listed anywhere at the source, and is
    /// removed at the destination only because the subject is remembered here.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub configured: BTreeSet<String>,
}

/// Longest `trace` stored: the reason of an ERROR names a call and a status, so a longer text is
/// a destination's text, cut here.
pub const MAX_TRACE_BYTES: usize = 1024;

/// `text` cut to [`MAX_TRACE_BYTES`] (at a character boundary, `…` marking the cut).
pub fn bounded_trace(mut text: String) -> String {
    if text.len() > MAX_TRACE_BYTES {
        let mut end = MAX_TRACE_BYTES - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::glob_matches;

    #[test]
    fn globs() {
        assert!(glob_matches("*", "anything"));
        assert!(glob_matches("orders-*", "orders-value"));
        assert!(!glob_matches("orders-*", "payments-value"));
        assert!(glob_matches("*-value", "orders-value"));
        assert!(glob_matches("o*s-*e", "orders-value"));
        assert!(!glob_matches("orders", "orders-value"));
        assert!(glob_matches("orders", "orders"));
        assert!(!glob_matches("a*a", "a"));
    }
}
