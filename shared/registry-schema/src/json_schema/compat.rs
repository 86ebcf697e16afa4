//! Json compatibility rules. (Skeleton: filled in by its issue.)

use super::JsonSchema;
use crate::Incompatibility;
use crate::compat::Direction;

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible.
pub fn check(_direction: Direction, _new: &JsonSchema, _old: &JsonSchema) -> Vec<Incompatibility> {
    Vec::new()
}
