//! Roles, subject-prefix scopes, principals and the access decision `authorize`.

/// The registry's operations, one type for its own checks and for this crate's decision.
pub use registry_core::Operation;
use std::str::FromStr;

/// What a principal may do. Ordered: each role includes everything the roles below it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Every `GET`, lookups (`POST /subjects/{s}`) and compatibility tests (`POST /compatibility/...`).
    Read,
    /// `read` plus registering schemas and soft deletes.
    Write,
    /// `write` plus config and mode changes, IMPORT registrations (explicit `id`) and hard deletes.
    Admin,
}

// The lower-case names used in the users file, on the command line and in token claims.
registry_core::wire_names!(Role {
    Read = "read",
    Write = "write",
    Admin = "admin",
});

impl Role {
    /// The least role that may perform `operation`.
    pub fn required_for(operation: Operation) -> Role {
        match operation {
            Operation::Read => Role::Read,
            Operation::Register | Operation::SoftDelete => Role::Write,
            Operation::Import | Operation::HardDelete | Operation::Configure => Role::Admin,
        }
    }
}

/// A role name that is not `read`, `write` or `admin` (matched case-insensitively).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}; expected read, write or admin")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Role::from_wire_name(&value.trim().to_ascii_lowercase()).ok_or_else(|| UnknownRole(value.to_string()))
    }
}

/// Which subjects a principal may name. Prefixes match the subject text as sent (a context-qualified
/// subject `:.ctx:name` must be matched by a prefix starting with `:.ctx:`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every subject, and registry-wide operations (global config and mode).
    #[default]
    All,
    /// Only subjects starting with one of these prefixes; registry-wide changes are denied.
    Prefixes(Vec<String>),
}

impl Scope {
    /// `All` for an empty list, else `Prefixes`.
    pub fn from_prefixes(prefixes: Vec<String>) -> Self {
        if prefixes.is_empty() { Scope::All } else { Scope::Prefixes(prefixes) }
    }

    /// Whether `subject` is inside this scope.
    pub fn contains(&self, subject: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Prefixes(prefixes) => prefixes.iter().any(|prefix| subject.starts_with(prefix.as_str())),
        }
    }

    /// The prefixes, empty for `All`.
    pub fn prefixes(&self) -> &[String] {
        match self {
            Scope::All => &[],
            Scope::Prefixes(prefixes) => prefixes,
        }
    }
}

/// Who made a request, once authenticated. Carries no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The user name (Basic) or the token's `sub` claim (Bearer); for logs and 403 messages.
    pub name: String,
    /// `None` for a valid token that grants no registry role: every operation is denied.
    pub role: Option<Role>,
    /// The subjects this principal may name.
    pub scope: Scope,
}

/// The access decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead.
    Allow,
    /// Refuse (403); the caller is authenticated, so this reveals nothing about other users.
    Deny,
}

/// Decides whether `principal` may perform `operation` on `subject` (`None` = registry-wide: global
/// config/mode, ID lookups, lists).
///
/// Allow iff the principal's role is at least [`Role::required_for`] `operation` and either the subject is in the
/// principal's scope, or there is no subject and the principal is unscoped or the operation is a read
/// (scoped principals may read registry-wide data; listing endpoints filter what they see).
pub fn authorize(principal: &Principal, operation: Operation, subject: Option<&str>) -> Decision {
    let Some(role) = principal.role else {
        return Decision::Deny;
    };
    if role < Role::required_for(operation) {
        return Decision::Deny;
    }
    let in_scope = match subject {
        Some(subject) => principal.scope.contains(subject),
        None => principal.scope == Scope::All || operation == Operation::Read,
    };
    if in_scope { Decision::Allow } else { Decision::Deny }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(role: Role, prefixes: &[&str]) -> Principal {
        Principal {
            name: "p".into(),
            role: Some(role),
            scope: Scope::from_prefixes(prefixes.iter().map(|p| p.to_string()).collect()),
        }
    }

    const OPERATIONS: [Operation; 6] = [
        Operation::Read,
        Operation::Register,
        Operation::SoftDelete,
        Operation::Import,
        Operation::HardDelete,
        Operation::Configure,
    ];

    #[test]
    fn roles_include_the_roles_below() {
        let expected = [
            (Role::Read, [true, false, false, false, false, false]),
            (Role::Write, [true, true, true, false, false, false]),
            (Role::Admin, [true, true, true, true, true, true]),
        ];
        for (role, allowed) in expected {
            for (operation, allow) in OPERATIONS.iter().zip(allowed) {
                let decision = authorize(&principal(role, &[]), *operation, Some("any"));
                assert_eq!(decision == Decision::Allow, allow, "{role} {operation:?}");
            }
        }
    }

    #[test]
    fn scoped_principals_only_name_their_subjects() {
        let team_a = principal(Role::Admin, &["team-a."]);
        assert_eq!(authorize(&team_a, Operation::Register, Some("team-a.orders")), Decision::Allow);
        assert_eq!(authorize(&team_a, Operation::Read, Some("team-b.orders")), Decision::Deny);
        assert_eq!(authorize(&team_a, Operation::Read, Some("team-a")), Decision::Deny);
        assert_eq!(authorize(&team_a, Operation::Read, None), Decision::Allow);
        assert_eq!(authorize(&team_a, Operation::Configure, None), Decision::Deny);
        let both = principal(Role::Read, &["team-a.", "shared."]);
        assert_eq!(authorize(&both, Operation::Read, Some("shared.x")), Decision::Allow);
    }

    #[test]
    fn no_role_is_denied_everything() {
        let nobody = Principal { name: "t".into(), role: None, scope: Scope::All };
        for operation in OPERATIONS {
            assert_eq!(authorize(&nobody, operation, None), Decision::Deny);
        }
    }

    #[test]
    fn role_names_parse_case_insensitively() {
        assert_eq!("ADMIN".parse::<Role>(), Ok(Role::Admin));
        assert_eq!(" write ".parse::<Role>(), Ok(Role::Write));
        assert!("root".parse::<Role>().is_err());
        for role in [Role::Read, Role::Write, Role::Admin] {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
    }
}
