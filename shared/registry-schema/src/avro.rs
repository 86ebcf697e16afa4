//! Avro schemas: parsing, validation, the stored text and the parsed `apache_avro::Schema`.

pub mod compat;

use crate::{Dependency, SchemaError, SchemaType, Validation};
use apache_avro::Schema;
use std::collections::HashMap;

/// A parsed Avro schema and its stored text.
#[derive(Debug, Clone)]
pub struct AvroSchema {
    canonical: String,
    schema: Schema,
    named: HashMap<String, Schema>,
}

impl AvroSchema {
    /// Parses and validates `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]).
    pub fn parse(
        text: &str,
        dependencies: &[Dependency],
        _validation: Validation,
        _normalize: bool,
    ) -> Result<Self, SchemaError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SchemaError::parse(SchemaType::Avro, e.to_string()))?;
        let deps: Vec<&str> = dependencies.iter().map(|d| d.schema.as_str()).collect();
        let (schema, dep_schemas) =
            Schema::parse_str_with_list(text, deps).map_err(|e| SchemaError::parse(SchemaType::Avro, e.to_string()))?;
        let mut named = HashMap::new();
        for s in dep_schemas.iter().chain(std::iter::once(&schema)) {
            collect_named(s, &mut named);
        }
        Ok(AvroSchema { canonical: value.to_string(), schema, named })
    }

    /// The stored text.
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// The parsed schema. Named types used a second time (or defined in a dependency) appear as
    /// `Schema::Ref`; resolve them with [`AvroSchema::named_types`].
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Every named type in scope, by full name (`a.b.R`): those defined in this schema and in its
    /// dependencies, so that every `Schema::Ref` reachable from [`AvroSchema::schema`] resolves.
    pub fn named_types(&self) -> &HashMap<String, Schema> {
        &self.named
    }
}

/// Adds every record, enum and fixed definition reachable from `schema` to `out`.
fn collect_named(schema: &Schema, out: &mut HashMap<String, Schema>) {
    match schema {
        Schema::Record(r) => {
            out.insert(r.name.fullname(None), schema.clone());
            for field in &r.fields {
                collect_named(&field.schema, out);
            }
        }
        Schema::Enum(e) => {
            out.insert(e.name.fullname(None), schema.clone());
        }
        Schema::Fixed(f) | Schema::Duration(f) => {
            out.insert(f.name.fullname(None), schema.clone());
        }
        Schema::Decimal(d) => {
            if let apache_avro::schema::InnerDecimalSchema::Fixed(f) = &d.inner {
                out.insert(f.name.fullname(None), schema.clone());
            }
        }
        Schema::Uuid(apache_avro::schema::UuidSchema::Fixed(f)) => {
            out.insert(f.name.fullname(None), schema.clone());
        }
        Schema::Array(a) => collect_named(&a.items, out),
        Schema::Map(m) => collect_named(&m.types, out),
        Schema::Union(u) => {
            for branch in u.variants() {
                collect_named(branch, out);
            }
        }
        _ => {}
    }
}
