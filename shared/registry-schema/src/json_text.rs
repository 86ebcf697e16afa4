//! JSON schema text (Avro and JSON Schema) read within [`Limits`]: nesting checked on the text before
//! anything recursive runs, then every value counted against the node budget.

use crate::json_value::{self, Value};
use crate::limits::{Limits, Meter};
use crate::{SchemaError, SchemaType};

/// Parses `text` as JSON after checking its nesting against `limits`, and charges its values to `nodes`.
/// serde_json checks the syntax (its messages, and its refusal of numbers beyond `f64`'s range); the
/// tree returned keeps every number as written ([`json_value`]).
pub(crate) fn parse(
    text: &str,
    schema_type: SchemaType,
    limits: &Limits,
    nodes: &mut Meter,
) -> Result<Value, SchemaError> {
    limits.check_depth(nesting_depth(text))?;
    let invalid = |reason: String| SchemaError::parse(schema_type, format!("not valid JSON: {reason}"));
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| invalid(e.to_string()))?;
    let value = json_value::parse(text).map_err(invalid)?;
    nodes.charge(count_values(&value))?;
    Ok(value)
}

/// How many JSON values `value` holds, itself included. Iterative.
pub(crate) fn count_values(value: &Value) -> u64 {
    let (mut stack, mut count) = (vec![value], 0u64);
    while let Some(value) = stack.pop() {
        count += 1;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(object) => stack.extend(object.values()),
            _ => {}
        }
    }
    count
}

/// Deepest `[`/`{` nesting in `text`, ignoring brackets inside strings. Linear, no recursion.
pub(crate) fn nesting_depth(text: &str) -> usize {
    JsonShape::of(text.as_bytes()).depth
}

/// The size of a JSON text's tree, read from its bytes in one linear pass before anything is parsed
/// or allocated, so a caller can refuse a text whose tree would be too large to build. Brackets and
/// separators inside strings do not count; the bytes need not be valid JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JsonShape {
    /// Deepest `[`/`{` nesting.
    pub depth: usize,
    /// Arrays and objects opened, plus one per `,` and `:` (each starts another value, or an
    /// object's key and its value): an upper bound of the values a parse builds, less the first.
    pub values: usize,
}

impl JsonShape {
    pub fn of(bytes: &[u8]) -> Self {
        let (mut shape, mut depth) = (JsonShape::default(), 0usize);
        let (mut in_string, mut escaped) = (false, false);
        for &byte in bytes {
            if in_string {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    shape.depth = shape.depth.max(depth);
                    shape.values += 1;
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                b',' | b':' => shape.values += 1,
                _ => {}
            }
        }
        shape
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;

    #[test]
    fn depth_ignores_brackets_inside_strings() {
        assert_eq!(nesting_depth(r#"{"a":[1,{"b":"[[[{{{\"[["}]}"#), 3);
        assert_eq!(nesting_depth("[[[]]]"), 3);
        assert_eq!(JsonShape::of(br#"{"a":[1,2],"b":"x,:[{"}"#), JsonShape { depth: 2, values: 6 });
    }

    #[test]
    fn every_value_is_counted_against_the_node_budget() {
        let text = r#"{"a":[1,2,{"b":null}],"c":"x"}"#;
        let limits = Limits { max_nodes: 7, ..Limits::default() };
        let mut nodes = limits.meter(Budget::Nodes);
        assert!(parse(text, SchemaType::Json, &limits, &mut nodes).is_ok());
        assert_eq!(nodes.used(), 7);
        let tight = Limits { max_nodes: 6, ..Limits::default() };
        let outcome = parse(text, SchemaType::Json, &tight, &mut tight.meter(Budget::Nodes));
        assert_eq!(outcome.err(), Some(SchemaError::BudgetExceeded { budget: Budget::Nodes, limit: 6 }));
    }
}
