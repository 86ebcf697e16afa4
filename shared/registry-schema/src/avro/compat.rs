//! Avro compatibility rules. (Skeleton: filled in by its issue.)

use super::AvroSchema;
use crate::Incompatibility;
use crate::compat::Direction;

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible.
pub fn check(_direction: Direction, _new: &AvroSchema, _old: &AvroSchema) -> Vec<Incompatibility> {
    Vec::new()
}
