//! Json schemas: parsing, validation and the stored text. (Skeleton: filled in by its issue.)

pub mod compat;

use crate::{Dependency, SchemaError, SchemaType, Validation};

/// A parsed Json schema and its stored text.
#[derive(Debug, Clone)]
pub struct JsonSchema {
    canonical: String,
}

impl JsonSchema {
    /// Parses and validates `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]).
    pub fn parse(
        text: &str,
        _dependencies: &[Dependency],
        _validation: Validation,
        _normalize: bool,
    ) -> Result<Self, SchemaError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SchemaError::parse(SchemaType::Json, e.to_string()))?;
        Ok(JsonSchema { canonical: value.to_string() })
    }

    /// The stored text.
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }
}
