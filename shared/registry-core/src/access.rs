//! Who a request acts for, as the registry consults it: [`Access`] asks a [`SubjectGuard`] (the
//! port the HTTP layer implements over its principal) whether an operation is allowed on a
//! subject. The route guard authorizes the subject a path names; the registry asks again for every
//! subject it reaches indirectly while serving the request:
//! - an alias target, when an alias is set (`Configure` on the target: an alias forwards every
//!   operation, hard deletes included) and whenever it is followed (the request's own operation);
//! - each context-fallback candidate of an unqualified read (`Read`; a candidate the caller may not
//!   read is skipped, as if absent);
//! - each subject a reference names, directly or nested, posted or stored (`Read`), before it is
//!   read;
//! - a by-ID request's `?subject=` (`Read`).
//!
//! An IMPORT (explicit ID) is decided on the subject's whole context
//! ([`Operation::decided_on`]), for the path's subject and an alias target alike.
//!
//! Admin tooling and a registry without authentication act with [`Access::all`].

use crate::error::RegistryError;
use crate::model::Subject;
use std::fmt;
use std::sync::Arc;

/// What a request does to a subject, as access control cares: the one operation type of the
/// registry's own checks and of the authorization layer (`registry-auth` decides which role each
/// needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Reads, lookups and compatibility tests.
    Read,
    /// Registering a schema without an explicit ID.
    Register,
    /// A soft delete.
    SoftDelete,
    /// Registering with an explicit ID (IMPORT).
    Import,
    /// A hard delete (`permanent=true`).
    HardDelete,
    /// Changing a config (an alias among others) or a mode.
    Configure,
}

impl Operation {
    /// The name 403 messages give it, in the style of Confluent's `User is denied operation Write on ...`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Read => "Read",
            Operation::Register => "Write",
            Operation::SoftDelete => "Delete",
            Operation::Import => "Import",
            Operation::HardDelete => "PermanentDelete",
            Operation::Configure => "AlterConfigs",
        }
    }

    /// What `self` on `subject` is decided on: the subject itself (as stored: `:.ctx:name` for a
    /// named context), except for an [`Operation::Import`]: an explicit ID raises the ID
    /// counter every subject of the context shares, so an import is decided on the whole context,
    /// `:.ctx:` for a named one and the registry (`None`) for the default one, whose subjects share
    /// no prefix. The route guard and the registry both ask this, for the path's subject and for
    /// every subject reached indirectly (an alias target).
    pub fn decided_on(self, subject: &Subject) -> Option<String> {
        match self {
            Operation::Import => {
                let context = subject.context();
                (!context.is_default()).then(|| context.subject_prefix())
            }
            _ => Some(subject.to_string()),
        }
    }
}

/// Decides whether the caller of a request may perform an operation on a subject.
pub trait SubjectGuard: Send + Sync + fmt::Debug {
    /// Whether `operation` on `subject` (as [`Operation::decided_on`] names it: a subject,
    /// a context's `:.ctx:`, or `None` for the whole registry) is allowed.
    fn allows(&self, operation: Operation, subject: Option<&str>) -> bool;

    /// Whether the caller may read every subject (an unscoped reader): answers remembered for
    /// another caller need no check of the subjects their resolution reached.
    fn reads_every_subject(&self) -> bool {
        false
    }
}

/// The caller a [`crate::Registry`] acts for: every subject allowed, or what a guard allows.
/// Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Access {
    guard: Option<Arc<dyn SubjectGuard>>,
}

impl Access {
    /// Every operation on every subject (no authentication, admin tooling).
    pub fn all() -> Self {
        Access { guard: None }
    }

    /// What `guard` allows.
    pub fn guarded(guard: Arc<dyn SubjectGuard>) -> Self {
        Access { guard: Some(guard) }
    }

    /// Whether `operation` on `subject` is allowed (decided on what
    /// [`Operation::decided_on`] names).
    pub fn allows(&self, operation: Operation, subject: &Subject) -> bool {
        self.guard.as_ref().is_none_or(|guard| guard.allows(operation, operation.decided_on(subject).as_deref()))
    }

    /// Whether every subject may be read (see [`SubjectGuard::reads_every_subject`]).
    pub fn reads_every_subject(&self) -> bool {
        self.guard.as_ref().is_none_or(|guard| guard.reads_every_subject())
    }

    /// `Ok` when `operation` on `subject` is allowed, else [`RegistryError::Forbidden`] (403)
    /// naming what it was decided on.
    pub fn require(&self, operation: Operation, subject: &Subject) -> Result<(), RegistryError> {
        if self.allows(operation, subject) {
            return Ok(());
        }
        Err(RegistryError::Forbidden { operation, subject: operation.decided_on(subject) })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Prefix(&'static str);

    impl SubjectGuard for Prefix {
        fn allows(&self, operation: Operation, subject: Option<&str>) -> bool {
            operation != Operation::Configure && subject.is_some_and(|subject| subject.starts_with(self.0))
        }
    }

    #[test]
    fn a_guard_decides_and_no_guard_allows_everything() {
        let (inside, outside) = (Subject::new("a.x").unwrap(), Subject::new("b.x").unwrap());
        let guarded = Access::guarded(Arc::new(Prefix("a.")));
        assert!(guarded.require(Operation::Read, &inside).is_ok());
        assert!(matches!(
            guarded.require(Operation::Read, &outside),
            Err(RegistryError::Forbidden { operation: Operation::Read, subject: Some(subject) }) if subject == "b.x"
        ));
        assert!(!guarded.allows(Operation::Configure, &inside));
        assert!(Access::all().allows(Operation::HardDelete, &outside));
    }

    #[test]
    fn an_import_is_decided_on_the_whole_context() {
        let (named, default) = (Subject::new(":.ctx:a.x").unwrap(), Subject::new("a.x").unwrap());
        assert_eq!(Operation::Import.decided_on(&named).as_deref(), Some(":.ctx:"));
        assert_eq!(Operation::Import.decided_on(&default), None);
        assert_eq!(Operation::Register.decided_on(&named).as_deref(), Some(":.ctx:a.x"));
        // A scope holding the subject but not its whole context may register there, not import.
        let subject_scoped = Access::guarded(Arc::new(Prefix(":.ctx:a.")));
        assert!(subject_scoped.allows(Operation::Register, &named));
        assert!(matches!(
            subject_scoped.require(Operation::Import, &named),
            Err(RegistryError::Forbidden { operation: Operation::Import, subject: Some(context) }) if context == ":.ctx:"
        ));
        assert!(Access::guarded(Arc::new(Prefix(":.ctx:"))).allows(Operation::Import, &named));
        let default_scoped = Access::guarded(Arc::new(Prefix("a.")));
        assert!(matches!(
            default_scoped.require(Operation::Import, &default),
            Err(RegistryError::Forbidden { subject: None, .. })
        ));
    }
}
