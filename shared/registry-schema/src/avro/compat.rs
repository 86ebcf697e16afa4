//! Avro compatibility: Avro's reader/writer rules (see [`checker`]) turned into Confluent's verbose messages.
//!
//! Backward means the new schema reads what the old one wrote, forward the reverse, full both (forward
//! findings first, as Confluent's `mutualReadStrategy`). Each finding's message is Confluent's
//! `Difference.error()` with its `%s` slots filled by `SchemaValidatorBuilder` ("new"/"old" for the
//! reader/writer side), e.g. `{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'x'
//! at path '/fields/1' in the new schema has no default value and is missing in the old schema',
//! additionalInfo:'x'}`.

pub mod checker;
mod view;

use super::AvroSchema;
use crate::compat::Direction;
use crate::limits::Meter;
use crate::{Incompatibility, SchemaError};
pub use checker::{Aborted, Finding, IncompatibilityKind, Scope, Stopped};

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible. The walk's work is
/// charged to `work` ([`SchemaError::BudgetExceeded`] when spent).
///
/// `previous_index` of each result is 0; [`crate::compat::check_pair`] sets the real one.
pub fn check(
    direction: Direction,
    new: &AvroSchema,
    old: &AvroSchema,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    Ok(match direction {
        Direction::Backward => one_way(new, old, Side::New, work)?,
        Direction::Forward => one_way(old, new, Side::Old, work)?,
        Direction::Full => {
            let mut found = one_way(old, new, Side::Old, work)?;
            found.extend(one_way(new, old, Side::New, work)?);
            found
        }
    })
}

/// Which schema plays the reader in a one-way check; the writer is the other one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The candidate reads (backward).
    New,
    /// The registered schema reads (forward).
    Old,
}

impl Side {
    fn labels(self) -> (&'static str, &'static str) {
        match self {
            Side::New => ("new", "old"),
            Side::Old => ("old", "new"),
        }
    }
}

fn one_way(
    reader: &AvroSchema,
    writer: &AvroSchema,
    reader_side: Side,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    let reader = Scope { schema: reader.schema(), names: reader.named_types() };
    let writer = Scope { schema: writer.schema(), names: writer.named_types() };
    to_incompatibilities(checker::reader_writer(reader, writer, work), reader_side)
}

/// Turns the checker's answer into Confluent-shaped incompatibilities, `reader_side` naming the reader.
/// A spent budget stays an error.
pub fn to_incompatibilities(
    outcome: Result<Vec<Finding>, Stopped>,
    reader_side: Side,
) -> Result<Vec<Incompatibility>, SchemaError> {
    match outcome {
        Ok(findings) => Ok(findings.iter().map(|finding| incompatibility(finding, reader_side)).collect()),
        Err(Stopped::Aborted(Aborted(reason))) => Ok(vec![Incompatibility {
            previous_index: 0,
            path: "/".to_string(),
            kind: "UNEXPECTED_EXCEPTION".to_string(),
            message: format!("Unexpected exception during compatibility check: {reason}"),
        }]),
        Err(Stopped::OverBudget(error)) => Err(error),
    }
}

/// Confluent's message for one finding (`Difference.error()` formatted with the reader/writer labels).
pub fn incompatibility(finding: &Finding, reader_side: Side) -> Incompatibility {
    let (reader, writer) = reader_side.labels();
    let path = &finding.location;
    let info = &finding.message;
    let description = match finding.kind {
        IncompatibilityKind::FixedSizeMismatch => {
            format!(
                "The size of FIXED type field at path '{path}' in the {reader} schema does not match with the {writer} schema"
            )
        }
        IncompatibilityKind::TypeMismatch => {
            format!(
                "The type (path '{path}') of a field in the {reader} schema does not match with the {writer} schema"
            )
        }
        IncompatibilityKind::NameMismatch => format!("The name of the schema has changed (path '{path}')"),
        IncompatibilityKind::MissingEnumSymbols => {
            format!("The {reader} schema is missing enum symbols '{info}' at path '{path}' in the {writer} schema")
        }
        IncompatibilityKind::MissingUnionBranch => {
            format!(
                "The {reader} schema is missing a type inside a union field at path '{path}' in the {writer} schema"
            )
        }
        IncompatibilityKind::ReaderFieldMissingDefaultValue => format!(
            "The field '{info}' at path '{path}' in the {reader} schema has no default value and is missing in the {writer} schema"
        ),
    };
    let kind = finding.kind.as_str();
    Incompatibility {
        previous_index: 0,
        path: path.to_string(),
        kind: kind.to_string(),
        message: format!("{{errorType:'{kind}', description:'{description}', additionalInfo:'{info}'}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::{Dependency, SchemaFormat, SchemaType, Validation};

    fn check(direction: Direction, new: &AvroSchema, old: &AvroSchema) -> Vec<Incompatibility> {
        super::check(direction, new, old, &mut Meter::unlimited(Budget::Work)).unwrap_or_default()
    }

    fn with_reference(address_fields: &str) -> AvroSchema {
        let address =
            format!(r#"{{"type":"record","name":"Address","namespace":"com.acme","fields":[{address_fields}]}}"#);
        let dependency = Dependency { name: "com.acme.Address".into(), schema_type: SchemaType::Avro, schema: address };
        let text =
            r#"{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"}]}"#;
        match AvroSchema::parse(text, &[dependency], Validation::Strict, false) {
            Ok(schema) => schema,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn referenced_types_are_resolved_and_checked() {
        let old = with_reference(r#"{"name":"city","type":"string"}"#);
        let new = with_reference(r#"{"name":"city","type":"string"},{"name":"zip","type":"string"}"#);
        assert!(check(Direction::Forward, &new, &old).is_empty());
        let found = check(Direction::Backward, &new, &old);
        let kinds: Vec<(&str, &str)> = found.iter().map(|i| (i.kind.as_str(), i.path.as_str())).collect();
        assert_eq!(kinds, [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0/type/fields/1")]);
    }

    #[test]
    fn full_lists_forward_findings_before_backward_ones() {
        let old = with_reference(r#"{"name":"city","type":"int"}"#);
        let new = with_reference(r#"{"name":"city","type":"long"},{"name":"zip","type":"string"}"#);
        let found = check(Direction::Full, &new, &old);
        let messages: Vec<&str> = found.iter().map(|i| i.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("in the old schema does not match with the new schema"), "{}", messages[0]);
        assert!(messages[1].contains("'zip' at path '/fields/0/type/fields/1' in the new schema"), "{}", messages[1]);
    }

    #[test]
    fn an_aborted_check_is_reported_as_confluent_does() {
        let found = to_incompatibilities(Err(Stopped::Aborted(Aborted("boom".into()))), Side::New).unwrap_or_default();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "Unexpected exception during compatibility check: boom");
    }
}
