//! Protobuf schemas: parsing, validation and the stored text. (Skeleton: filled in by its issue.)

pub mod compat;

use crate::{Dependency, SchemaError, SchemaType, Validation};

/// A parsed Protobuf schema and its stored text.
#[derive(Debug, Clone)]
pub struct ProtobufSchema {
    canonical: String,
}

impl ProtobufSchema {
    /// Parses and validates `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]).
    pub fn parse(
        text: &str,
        _dependencies: &[Dependency],
        _validation: Validation,
        _normalize: bool,
    ) -> Result<Self, SchemaError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SchemaError::parse(SchemaType::Protobuf, e.to_string()))?;
        Ok(ProtobufSchema { canonical: value.to_string() })
    }

    /// The stored text.
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }
}
