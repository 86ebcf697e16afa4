//! Compatibility levels and the check a registration must pass against earlier versions.
//!
//! As in Confluent's `CompatibilityChecker`: non-transitive levels compare with the latest
//! version only, transitive ones with every version newest first and report the first failing
//! one; BACKWARD means the new schema reads data written with the old one, FORWARD the reverse.

use crate::limits::{Budget, Limits, Meter};
use crate::{ParsedSchema, SchemaError};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

crate::wire_names! {
    /// The seven compatibility levels. Parsed case-insensitively, displayed upper-case.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
    pub enum CompatibilityLevel {
        None = "NONE",
        #[default]
        Backward = "BACKWARD",
        BackwardTransitive = "BACKWARD_TRANSITIVE",
        Forward = "FORWARD",
        ForwardTransitive = "FORWARD_TRANSITIVE",
        Full = "FULL",
        FullTransitive = "FULL_TRANSITIVE",
    }
}

/// Which way data must flow between two schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// New schema (reader) reads data written with the old one (writer).
    Backward,
    /// Old schema (reader) reads data written with the new one (writer).
    Forward,
    /// Both.
    Full,
}

impl CompatibilityLevel {
    /// Every level, in Confluent's documented order.
    pub const ALL: [CompatibilityLevel; 7] = [
        CompatibilityLevel::None,
        CompatibilityLevel::Backward,
        CompatibilityLevel::BackwardTransitive,
        CompatibilityLevel::Forward,
        CompatibilityLevel::ForwardTransitive,
        CompatibilityLevel::Full,
        CompatibilityLevel::FullTransitive,
    ];

    /// The direction checked, or `None` for level NONE.
    pub fn direction(self) -> Option<Direction> {
        match self {
            CompatibilityLevel::None => None,
            CompatibilityLevel::Backward | CompatibilityLevel::BackwardTransitive => Some(Direction::Backward),
            CompatibilityLevel::Forward | CompatibilityLevel::ForwardTransitive => Some(Direction::Forward),
            CompatibilityLevel::Full | CompatibilityLevel::FullTransitive => Some(Direction::Full),
        }
    }

    /// Whether every earlier version is checked, not only the latest.
    pub fn is_transitive(self) -> bool {
        matches!(
            self,
            CompatibilityLevel::BackwardTransitive
                | CompatibilityLevel::ForwardTransitive
                | CompatibilityLevel::FullTransitive
        )
    }
}

/// An unknown level name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown compatibility level {0:?}")]
pub struct UnknownLevel(pub String);

impl FromStr for CompatibilityLevel {
    type Err = UnknownLevel;

    /// Case-insensitive, as Confluent's `CompatibilityLevel.forName`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CompatibilityLevel::from_wire_name(&s.to_ascii_uppercase()).ok_or_else(|| UnknownLevel(s.to_string()))
    }
}

/// One reason a schema cannot follow another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incompatibility {
    /// Index into the `previous` slice given to [`check`] of the schema this was found against.
    pub previous_index: usize,
    /// Where in the schema, as a JSON-pointer-like path (`/fields/0/type`).
    pub path: String,
    /// Confluent's error type name (`TYPE_MISMATCH`, `READER_FIELD_MISSING_DEFAULT_VALUE`, ...).
    pub kind: String,
    /// The whole message as Confluent's verbose answer prints it, e.g.
    /// `{errorType:'TYPE_MISMATCH', description:'...', additionalInfo:'...'}`.
    pub message: String,
}

/// Rule choices where Confluent releases disagree. The default follows the newest release; each field
/// restores an older release's rule (set by the hosts from their settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Protobuf: a package change is compatible, as in Confluent Platform before 7.6 (and 7.x patch
    /// releases before February 2024). Newer releases report `PACKAGE_CHANGED` as incompatible.
    pub protobuf_package_change: bool,
}

/// A finished check: what was found and the work it took (units of [`Budget::Work`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Empty when compatible.
    pub incompatibilities: Vec<Incompatibility>,
    /// Work units spent (pairs compared, findings copied, branches and symbols looked at).
    pub work: u64,
}

/// Checks `new` against `previous` (newest first) at `level` within the default [`Limits`]. Empty when
/// compatible; see [`check_within`].
pub fn check(
    level: CompatibilityLevel,
    new: &ParsedSchema,
    previous: &[&ParsedSchema],
) -> Result<Vec<Incompatibility>, SchemaError> {
    Ok(check_within(level, new, previous, &Limits::default())?.incompatibilities)
}

/// [`check_with`] under the default [`Rules`].
pub fn check_within(
    level: CompatibilityLevel,
    new: &ParsedSchema,
    previous: &[&ParsedSchema],
    limits: &Limits,
) -> Result<Checked, SchemaError> {
    check_with(level, new, previous, limits, &Rules::default())
}

/// Checks `new` against `previous` (newest first) at `level` under `rules`, all comparisons together
/// within `limits.max_work` ([`SchemaError::BudgetExceeded`] once spent).
///
/// Non-transitive levels look at `previous[0]` only; transitive ones walk newest to oldest
/// and stop at the first schema that fails. Different schema types are incompatible unless
/// the level is NONE.
pub fn check_with(
    level: CompatibilityLevel,
    new: &ParsedSchema,
    previous: &[&ParsedSchema],
    limits: &Limits,
    rules: &Rules,
) -> Result<Checked, SchemaError> {
    let mut work = limits.meter(Budget::Work);
    let Some(direction) = level.direction() else {
        return Ok(Checked { incompatibilities: Vec::new(), work: 0 });
    };
    let candidates = if level.is_transitive() { previous.len() } else { previous.len().min(1) };
    for (index, old) in previous.iter().take(candidates).enumerate() {
        let found = check_pair(direction, new, old, index, rules, &mut work)?;
        if !found.is_empty() {
            return Ok(Checked { incompatibilities: found, work: work.used() });
        }
    }
    Ok(Checked { incompatibilities: Vec::new(), work: work.used() })
}

/// Checks one pair in one direction under `rules`, charging `work`; each finding carries `previous_index`.
pub fn check_pair(
    direction: Direction,
    new: &ParsedSchema,
    old: &ParsedSchema,
    previous_index: usize,
    rules: &Rules,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    let mut found = match (new, old) {
        (ParsedSchema::Avro(new), ParsedSchema::Avro(old)) => crate::avro::compat::check(direction, new, old, work)?,
        (ParsedSchema::Json(new), ParsedSchema::Json(old)) => {
            crate::json_schema::compat::check(direction, new, old, work)?
        }
        (ParsedSchema::Protobuf(new), ParsedSchema::Protobuf(old)) => {
            crate::protobuf::compat::check(direction, new, old, rules, work)?
        }
        _ => vec![Incompatibility {
            previous_index,
            path: String::new(),
            kind: "SCHEMA_TYPE_MISMATCH".to_string(),
            message: "Incompatible because of different schema type".to_string(),
        }],
    };
    for incompatibility in &mut found {
        incompatibility.previous_index = previous_index;
    }
    Ok(found)
}
