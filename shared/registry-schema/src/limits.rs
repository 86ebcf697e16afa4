//! Work budgets for hostile input: every parse and every compatibility check runs within [`Limits`],
//! and answers [`SchemaError::BudgetExceeded`] (42201, naming the budget and its variable) instead of
//! working on. The budgets are structural (sizes and counted work units), never timeouts, so the same
//! input gets the same answer on every machine and the counts can be asserted by tests.
//!
//! The algorithms themselves are near-linear (memoised pairs, union branches and enum symbols matched by
//! name, hashed lookups); the budgets bound what remains: the size of one schema and the work one
//! comparison may do on legitimately large inputs.

use crate::SchemaError;
use std::fmt;

/// The budgets one parse or check runs within. The defaults fit any schema seen in practice with a wide
/// margin, and keep each operation well under a second on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays and objects (Avro, JSON Schema) or of brackets (Protobuf, which is
    /// further capped at [`crate::protobuf::MAX_DEPTH`]). `REGISTRY_SCHEMA_MAX_DEPTH`, default 100,
    /// at most [`Limits::DEPTH_CEILING`] (the parsers' stacks are sized for that).
    pub max_depth: usize,
    /// Most nodes in one schema together with its references: JSON values (Avro, JSON Schema) or
    /// declarations and statements (Protobuf: messages, fields, enum values, options...), each
    /// statement weighing [`PROTOBUF_STATEMENT_NODES`]. `REGISTRY_SCHEMA_MAX_NODES`, default 100,000
    /// (100,000 JSON values or 12,500 Protobuf statements).
    pub max_nodes: u64,
    /// Most work units one compatibility check may spend: each (reader, writer) pair compared, each
    /// field matched and each finding copied from the memo counts one (hashed lookups inside one node,
    /// such as enum symbols and union branches, are bounded by `max_nodes` instead).
    /// `REGISTRY_SCHEMA_MAX_WORK`, default 200,000 (a check of two 10,000-field records costs about
    /// 40,000; the bound also caps the findings a check can collect, and so its memory).
    pub max_work: u64,
}

/// Nodes one Protobuf statement or block is charged against [`Limits::max_nodes`]: what parsing and
/// linking it costs next to one JSON value. The parser builds a syntax tree and every source position
/// (a field has five) before the registry can drop them, and a check holds two such parses: a release
/// `registry serve` peaked at about 5.6 KB of resident memory per statement (111 MB for a message of
/// 20,000 fields), against 0.5-0.7 KB per JSON value of the Avro and JSON Schema classes.
pub const PROTOBUF_STATEMENT_NODES: u64 = 8;

impl Limits {
    /// The highest `max_depth` accepted (serde_json's own recursion limit is 128).
    pub const DEPTH_CEILING: usize = 120;

    /// These limits with `max_depth` clamped to [`Limits::DEPTH_CEILING`].
    pub fn clamped(self) -> Limits {
        Limits { max_depth: self.max_depth.min(Self::DEPTH_CEILING), ..self }
    }

    /// A meter of `budget`'s units against its limit here.
    pub fn meter(&self, budget: Budget) -> Meter {
        let limit = match budget {
            Budget::Depth => self.max_depth as u64,
            Budget::Nodes => self.max_nodes,
            Budget::Work => self.max_work,
        };
        Meter { budget, limit, used: 0 }
    }

    /// [`SchemaError::TooDeep`] when `depth` is beyond `max_depth` (after clamping).
    pub fn check_depth(&self, depth: usize) -> Result<(), SchemaError> {
        let limit = self.clamped().max_depth;
        if depth > limit { Err(SchemaError::TooDeep { limit }) } else { Ok(()) }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 100, max_nodes: 100_000, max_work: 200_000 }
    }
}

/// One kind of budget, with the environment variable that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Budget {
    /// Nesting depth.
    Depth,
    /// Nodes of one schema and its references.
    Nodes,
    /// Work units of one compatibility check.
    Work,
}

impl Budget {
    /// What is counted, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Budget::Depth => "nesting depth",
            Budget::Nodes => "schema node",
            Budget::Work => "compatibility work",
        }
    }

    /// What one unit of this budget is, when that needs saying.
    pub fn unit(self) -> String {
        match self {
            Budget::Nodes => {
                format!("; a JSON value counts 1 node, a Protobuf statement or block {PROTOBUF_STATEMENT_NODES}")
            }
            Budget::Depth | Budget::Work => String::new(),
        }
    }

    /// The environment variable the registry reads this budget from.
    pub fn variable(self) -> &'static str {
        match self {
            Budget::Depth => "REGISTRY_SCHEMA_MAX_DEPTH",
            Budget::Nodes => "REGISTRY_SCHEMA_MAX_NODES",
            Budget::Work => "REGISTRY_SCHEMA_MAX_WORK",
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Units spent against one budget. Charging past the limit fails once and keeps failing.
#[derive(Debug, Clone)]
pub struct Meter {
    budget: Budget,
    limit: u64,
    used: u64,
}

impl Meter {
    /// A meter with no practical limit (for callers that only want the count).
    pub fn unlimited(budget: Budget) -> Meter {
        Meter { budget, limit: u64::MAX, used: 0 }
    }

    /// Spends `units`; [`SchemaError::BudgetExceeded`] when the total passes the limit.
    pub fn charge(&mut self, units: u64) -> Result<(), SchemaError> {
        self.used = self.used.saturating_add(units);
        if self.used > self.limit { Err(self.exceeded()) } else { Ok(()) }
    }

    /// Units spent so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Units left before the limit.
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// The error this meter reports when its budget is spent.
    pub fn exceeded(&self) -> SchemaError {
        SchemaError::BudgetExceeded { budget: self.budget, limit: self.limit }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meter_fails_past_its_limit_and_names_the_variable() {
        let limits = Limits { max_work: 3, ..Limits::default() };
        let mut meter = limits.meter(Budget::Work);
        assert!(meter.charge(3).is_ok());
        let error = meter.charge(1).err();
        assert_eq!(error, Some(SchemaError::BudgetExceeded { budget: Budget::Work, limit: 3 }));
        let message = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("REGISTRY_SCHEMA_MAX_WORK"), "{message}");
        assert_eq!(meter.used(), 4);
    }

    #[test]
    fn depth_is_clamped_to_what_the_parsers_can_hold() {
        let limits = Limits { max_depth: 10_000, ..Limits::default() };
        assert_eq!(limits.check_depth(Limits::DEPTH_CEILING + 1), Err(SchemaError::TooDeep { limit: 120 }));
        assert_eq!(limits.check_depth(Limits::DEPTH_CEILING), Ok(()));
    }
}
