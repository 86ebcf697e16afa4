//! Why a schema could not be accepted. Incompatibility is data, not an error (see `compat`).

use crate::SchemaType;
use crate::limits::Budget;

/// A schema that cannot be parsed, resolved or stored. Each becomes a 42201 answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// `schemaType` is not one of AVRO, JSON, PROTOBUF (case-sensitive).
    #[error("Invalid schema type {0}")]
    UnknownSchemaType(String),
    /// The text is not a valid schema of its type; `reason` says precisely why.
    #[error("Invalid schema: {reason}")]
    Parse { schema_type: SchemaType, reason: String },
    /// The schema uses a name that neither it nor its references define.
    #[error("Invalid schema: unresolved reference {name}")]
    UnresolvedReference { name: String },
    /// The schema nests deeper than the parser allows (guards the stack on hostile input).
    #[error("Invalid schema: nested deeper than {limit} levels (the nesting depth budget, REGISTRY_SCHEMA_MAX_DEPTH)")]
    TooDeep { limit: usize },
    /// Parsing or checking the schema needs more than one of its budgets allows (see [`crate::limits`]).
    #[error("Invalid schema: exceeds the {budget} budget of {limit} ({}{})", budget.variable(), budget.unit())]
    BudgetExceeded { budget: Budget, limit: u64 },
}

impl SchemaError {
    /// A parse error of `schema_type` with `reason`.
    pub fn parse(schema_type: SchemaType, reason: impl Into<String>) -> Self {
        SchemaError::Parse { schema_type, reason: reason.into() }
    }
}
