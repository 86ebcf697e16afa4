//! Protobuf compatibility: a port of Confluent's `protobuf-provider` diff (`diff/SchemaDiff.java`,
//! `MessageSchemaDiff` (as of DGS-24604, 3f5ff24387e), `FieldSchemaDiff`, `EnumSchemaDiff`, `Context`).
//!
//! `diff(original, update)` lists every [`Change`] between two schemas, each at a path such as
//! `#/Order/3` (message names, then a field number or oneof name). A check passes when every
//! change is in [`COMPATIBLE_CHANGES`]. BACKWARD diffs old → new, FORWARD new → old, FULL both
//! (backward findings first), as `ProtobufSchema.isBackwardCompatible` is called both ways.
//!
//! The compatible set is Confluent's current one (8.x, and 7.x releases since early 2024): a package
//! change is incompatible, a string/bytes label change is compatible. [`Rules::protobuf_package_change`]
//! restores the older rule that accepts a package change.

mod diff;

use super::ProtobufSchema;
use crate::compat::{Direction, Rules};
use crate::limits::Meter;
use crate::{Incompatibility, SchemaError};

pub use diff::{diff, diff_within};

/// Confluent's `Difference.Type`: every kind of change the diff reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum ChangeType {
    PackageChanged,
    MessageAdded,
    MessageRemoved,
    MessageMoved,
    EnumAdded,
    EnumRemoved,
    EnumConstAdded,
    EnumConstChanged,
    EnumConstRemoved,
    FieldAdded,
    FieldRemoved,
    FieldNameChanged,
    FieldKindChanged,
    FieldScalarKindChanged,
    FieldNamedTypeChanged,
    FieldNumericLabelChanged,
    FieldStringOrBytesLabelChanged,
    RequiredFieldAdded,
    RequiredFieldRemoved,
    OneofAdded,
    OneofRemoved,
    OneofFieldAdded,
    OneofFieldRemoved,
    OneofFieldMovedToTopLevel,
    MultipleFieldsMovedToOneof,
    FieldMovedToExistingOneof,
}

/// The changes a compatibility check accepts (Confluent's `SchemaDiff.COMPATIBLE_CHANGES`).
pub const COMPATIBLE_CHANGES: [ChangeType; 15] = [
    ChangeType::MessageAdded,
    ChangeType::MessageMoved,
    ChangeType::EnumAdded,
    ChangeType::EnumRemoved,
    ChangeType::EnumConstAdded,
    ChangeType::EnumConstChanged,
    ChangeType::EnumConstRemoved,
    ChangeType::FieldAdded,
    ChangeType::FieldRemoved,
    ChangeType::FieldNameChanged,
    ChangeType::FieldStringOrBytesLabelChanged,
    ChangeType::OneofAdded,
    ChangeType::OneofRemoved,
    ChangeType::OneofFieldAdded,
    ChangeType::OneofFieldMovedToTopLevel,
];

impl ChangeType {
    /// Confluent's name (`FIELD_KIND_CHANGED`, ...).
    pub fn as_str(self) -> &'static str {
        use ChangeType::*;
        match self {
            PackageChanged => "PACKAGE_CHANGED",
            MessageAdded => "MESSAGE_ADDED",
            MessageRemoved => "MESSAGE_REMOVED",
            MessageMoved => "MESSAGE_MOVED",
            EnumAdded => "ENUM_ADDED",
            EnumRemoved => "ENUM_REMOVED",
            EnumConstAdded => "ENUM_CONST_ADDED",
            EnumConstChanged => "ENUM_CONST_CHANGED",
            EnumConstRemoved => "ENUM_CONST_REMOVED",
            FieldAdded => "FIELD_ADDED",
            FieldRemoved => "FIELD_REMOVED",
            FieldNameChanged => "FIELD_NAME_CHANGED",
            FieldKindChanged => "FIELD_KIND_CHANGED",
            FieldScalarKindChanged => "FIELD_SCALAR_KIND_CHANGED",
            FieldNamedTypeChanged => "FIELD_NAMED_TYPE_CHANGED",
            FieldNumericLabelChanged => "FIELD_NUMERIC_LABEL_CHANGED",
            FieldStringOrBytesLabelChanged => "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
            RequiredFieldAdded => "REQUIRED_FIELD_ADDED",
            RequiredFieldRemoved => "REQUIRED_FIELD_REMOVED",
            OneofAdded => "ONEOF_ADDED",
            OneofRemoved => "ONEOF_REMOVED",
            OneofFieldAdded => "ONEOF_FIELD_ADDED",
            OneofFieldRemoved => "ONEOF_FIELD_REMOVED",
            OneofFieldMovedToTopLevel => "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
            MultipleFieldsMovedToOneof => "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
            FieldMovedToExistingOneof => "FIELD_MOVED_TO_EXISTING_ONEOF",
        }
    }

    /// Whether a check accepts this change under Confluent's current rules.
    pub fn is_compatible(self) -> bool {
        COMPATIBLE_CHANGES.contains(&self)
    }

    /// Whether a check under `rules` accepts this change.
    pub fn is_compatible_under(self, rules: &Rules) -> bool {
        self.is_compatible() || (self == ChangeType::PackageChanged && rules.protobuf_package_change)
    }

    /// Confluent's description (`Difference.error()`); `update` and `original` name the roles
    /// ("new"/"old") of the two schemas. Empty for the compatible kinds, as in Confluent.
    fn description(self, path: &str, update: &str, original: &str) -> String {
        use ChangeType::*;
        match self {
            PackageChanged => format!(
                "The package at '{path}' in the {update} schema does not match the package in the {original} schema"
            ),
            MessageRemoved => {
                format!("The {update} schema is missing a MESSAGE type at path '{path}' in the {original} schema")
            }
            FieldKindChanged => {
                format!(
                    "The type of a field at path '{path}' in the {update} schema does not match the {original} schema"
                )
            }
            FieldScalarKindChanged => format!(
                "The kind of a SCALAR field at path '{path}' in the {update} schema does not match its kind in the {original} schema"
            ),
            FieldNamedTypeChanged => format!(
                "The type of a MESSAGE field at path '{path}' in the {update} schema does not match its type in the {original} schema"
            ),
            FieldNumericLabelChanged => format!(
                "The label for a NUMERIC field at path '{path}' in the {update} schema does not match its label in the {original} schema"
            ),
            RequiredFieldAdded => {
                format!("A required field  at path '{path}' in the {update} schema is missing in the {original} schema")
            }
            RequiredFieldRemoved => {
                format!("The {update} schema is missing a required field at path: '{path}' in the {original} schema")
            }
            OneofFieldRemoved => {
                format!("The {update} schema is missing a oneof field at path '{path}' in the {original} schema")
            }
            OneofFieldMovedToTopLevel => format!(
                "The oneof field at path '{path}' in the {update} schema was moved out of its oneof to a top-level field in the {original} schema"
            ),
            MultipleFieldsMovedToOneof => format!(
                "Multiple fields in the oneof at path '{path}' in the {update} schema are outside a oneof in the {original} schema"
            ),
            FieldMovedToExistingOneof => format!(
                "A field in the oneof at path '{path}' in the {update} schema is outside an existing oneof in the {original} schema"
            ),
            _ => String::new(),
        }
    }
}

/// One difference between two schemas, at Confluent's path (`#/Message/field-number`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Change {
    /// What changed.
    pub kind: ChangeType,
    /// Where: `#/` then message names, then a field number or oneof name.
    pub path: String,
}

impl std::fmt::Display for Change {
    /// `FIELD_ADDED #/Msg/2`, the form Confluent's diff tests compare.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind.as_str(), self.path)
    }
}

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible. Messages are
/// Confluent's `{errorType:"TYPE", description:"..."}`.
/// The diffs' work is charged to `work`; `rules` chooses between Confluent releases.
pub fn check(
    direction: Direction,
    new: &ProtobufSchema,
    old: &ProtobufSchema,
    rules: &Rules,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    let mut found = Vec::new();
    if matches!(direction, Direction::Backward | Direction::Full) {
        found.extend(incompatible(old, new, ("new", "old"), rules, work)?);
    }
    if matches!(direction, Direction::Forward | Direction::Full) {
        found.extend(incompatible(new, old, ("old", "new"), rules, work)?);
    }
    Ok(found)
}

fn incompatible(
    original: &ProtobufSchema,
    update: &ProtobufSchema,
    (u, o): (&str, &str),
    rules: &Rules,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    Ok(diff_within(original, update, work)?
        .into_iter()
        .filter(|change| !change.kind.is_compatible_under(rules))
        .map(|change| Incompatibility {
            previous_index: 0,
            message: format!(
                "{{errorType:\"{}\", description:\"{}\"}}",
                change.kind.as_str(),
                change.kind.description(&change.path, u, o)
            ),
            kind: change.kind.as_str().to_string(),
            path: change.path,
        })
        .collect())
}
