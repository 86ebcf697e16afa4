//! Protobuf compatibility rules. (Skeleton: filled in by its issue.)

use super::ProtobufSchema;
use crate::Incompatibility;
use crate::compat::Direction;

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible.
pub fn check(_direction: Direction, _new: &ProtobufSchema, _old: &ProtobufSchema) -> Vec<Incompatibility> {
    Vec::new()
}
