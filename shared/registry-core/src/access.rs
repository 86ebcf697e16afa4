//! Who a request acts for, as the registry consults it: [`Access`] asks a [`SubjectGuard`] (the
//! port the HTTP layer implements over its principal) whether an operation is allowed on a
//! subject. The route guard authorizes the subject a path names; the registry asks again for every
//! subject it reaches indirectly while serving the request:
//! - an alias target, when an alias is set (`Configure` on the target: an alias forwards every
//!   operation, hard deletes included) and whenever it is followed (the request's own operation);
//! - each context-fallback candidate of an unqualified read (`Read`; a candidate the caller may not
//!   read is skipped, as if absent);
//! - each subject a posted schema references (`Read`), before any of them is read.
//!
//! Admin tooling and a registry without authentication act with [`Access::all`].

use crate::error::RegistryError;
use crate::model::Subject;
use std::fmt;
use std::sync::Arc;

/// What a request does to a subject, as access control cares (the registry's view of the
/// authorization layer's operations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubjectOperation {
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

/// Decides whether the caller of a request may perform an operation on a subject.
pub trait SubjectGuard: Send + Sync + fmt::Debug {
    /// Whether `operation` on `subject` (as stored: `:.ctx:name` for a named context) is allowed.
    fn allows(&self, operation: SubjectOperation, subject: &str) -> bool;
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

    /// Whether `operation` on `subject` is allowed.
    pub fn allows(&self, operation: SubjectOperation, subject: &Subject) -> bool {
        self.guard.as_ref().is_none_or(|guard| guard.allows(operation, subject.as_str()))
    }

    /// `Ok` when `operation` on `subject` is allowed, else [`RegistryError::Forbidden`] (403).
    pub fn require(&self, operation: SubjectOperation, subject: &Subject) -> Result<(), RegistryError> {
        if self.allows(operation, subject) {
            return Ok(());
        }
        Err(RegistryError::Forbidden { operation, subject: subject.to_string() })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Prefix(&'static str);

    impl SubjectGuard for Prefix {
        fn allows(&self, operation: SubjectOperation, subject: &str) -> bool {
            operation == SubjectOperation::Read && subject.starts_with(self.0)
        }
    }

    #[test]
    fn a_guard_decides_and_no_guard_allows_everything() {
        let (inside, outside) = (Subject::new("a.x").unwrap(), Subject::new("b.x").unwrap());
        let guarded = Access::guarded(Arc::new(Prefix("a.")));
        assert!(guarded.require(SubjectOperation::Read, &inside).is_ok());
        assert!(matches!(
            guarded.require(SubjectOperation::Read, &outside),
            Err(RegistryError::Forbidden { operation: SubjectOperation::Read, subject }) if subject == "b.x"
        ));
        assert!(!guarded.allows(SubjectOperation::Register, &inside));
        assert!(Access::all().allows(SubjectOperation::HardDelete, &outside));
    }
}
