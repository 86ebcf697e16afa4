//! Contexts as the admin commands see them: the context of a subject as a registry lists it
//! (`:.ctx:name`, or an unqualified name in the default context), the `/config`/`/mode` scope
//! holding a context's own settings, and the `--context`/`--subject-prefix` selection.

use super::AdminError;
use crate::config::SelectionArgs;
use registry_core::model::{Context, QualifiedName};

/// The context of `subject` as a registry lists it.
pub fn context_of(subject: &str) -> Context {
    match QualifiedName::split(subject) {
        QualifiedName::In { context, .. } => Context::parse(context).unwrap_or_default(),
        QualifiedName::Wildcard { .. } => Context::DEFAULT,
    }
}

/// `subject`'s name inside its context.
pub fn name_in_context(subject: &str) -> &str {
    match QualifiedName::split(subject) {
        QualifiedName::In { name, .. } | QualifiedName::Wildcard { name } => name,
    }
}

/// The subject a reference names, as Confluent resolves it (`qualifySubjectWithParent`): a
/// reference without a named context points into its referrer's context.
pub fn referenced_subject(referrer: &str, reference: &str) -> String {
    match context_of(reference) {
        named if !named.is_default() => reference.to_string(),
        _ => context_of(referrer).qualify(name_in_context(reference)),
    }
}

/// The `{subject}` of `/config/{subject}` and `/mode/{subject}` that holds `context`'s own
/// settings: `None` (the top level) for the default context, else `:.ctx:`.
pub fn settings_subject(context: &Context) -> Option<String> {
    (!context.is_default()).then(|| context.subject_prefix())
}

/// Which subjects a command works on: those in the `--context` contexts (every context when none
/// is named) whose name starts with `--subject-prefix`. A prefix starting with `:` is matched
/// against the qualified subject instead (`:.team-a:ord`; the default context as `:.:`).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    contexts: Vec<Context>,
    prefix: String,
}

impl Selection {
    /// The selection the flags name; a context name Confluent would refuse is an error.
    pub fn new(args: &SelectionArgs) -> Result<Selection, AdminError> {
        let contexts = args
            .context
            .iter()
            .map(|text| Context::parse(text).map_err(|_| format!("--context {text}: not a context name")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selection { contexts, prefix: args.subject_prefix.clone().unwrap_or_default() })
    }

    /// Whether subjects of `context` can be selected.
    pub fn context(&self, context: &Context) -> bool {
        self.contexts.is_empty() || self.contexts.contains(context)
    }

    /// Whether `subject` (as listed) is selected.
    pub fn subject(&self, subject: &str) -> bool {
        let context = context_of(subject);
        if !self.context(&context) {
            return false;
        }
        if self.prefix.starts_with(':') {
            format!(":{context}:{}", name_in_context(subject)).starts_with(&self.prefix)
        } else {
            name_in_context(subject).starts_with(&self.prefix)
        }
    }

    /// Whether every subject is selected.
    pub fn is_everything(&self) -> bool {
        self.contexts.is_empty() && self.prefix.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(contexts: &[&str], prefix: Option<&str>) -> Selection {
        let args = SelectionArgs {
            context: contexts.iter().map(|c| c.to_string()).collect(),
            subject_prefix: prefix.map(str::to_string),
        };
        Selection::new(&args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn subjects_are_split_into_context_and_name() {
        assert_eq!(context_of(":.team-a:orders").name(), ".team-a");
        assert_eq!(name_in_context(":.team-a:orders"), "orders");
        assert!(context_of("orders").is_default());
        assert!(context_of(":.:orders").is_default());
        assert_eq!(name_in_context(":.:orders"), "orders");
        assert_eq!(settings_subject(&context_of(":.team-a:x")).as_deref(), Some(":.team-a:"));
        assert_eq!(settings_subject(&Context::DEFAULT), None);
    }

    #[test]
    fn references_without_a_context_point_into_the_referrers() {
        assert_eq!(referenced_subject(":.a:orders", "address"), ":.a:address");
        assert_eq!(referenced_subject(":.a:orders", ":.:address"), ":.a:address");
        assert_eq!(referenced_subject(":.a:orders", ":.b:address"), ":.b:address");
        assert_eq!(referenced_subject("orders", "address"), "address");
    }

    #[test]
    fn selection_filters_by_context_and_by_name_or_qualified_prefix() {
        let all = selection(&[], None);
        assert!(all.is_everything() && all.subject("x") && all.subject(":.a:x"));
        let team = selection(&["team-a"], None);
        assert!(team.subject(":.team-a:orders") && !team.subject("orders") && !team.subject(":.b:orders"));
        let default = selection(&["."], Some("ord"));
        assert!(default.subject("orders") && !default.subject(":.team-a:orders") && !default.subject("pay"));
        let named = selection(&[], Some("ord"));
        assert!(named.subject("orders") && named.subject(":.team-a:orders") && !named.subject(":.ord:pay"));
        let qualified = selection(&[], Some(":.team-a:o"));
        assert!(qualified.subject(":.team-a:orders") && !qualified.subject("orders"));
        assert!(selection(&[], Some(":.:o")).subject("orders"));
        let bad = SelectionArgs { context: vec!["a:b".to_string()], subject_prefix: None };
        assert!(Selection::new(&bad).is_err());
    }
}
