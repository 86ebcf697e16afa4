//! Schema formats: parsing, Confluent's stored text, fingerprints and compatibility.
//!
//! Pure functions only: no I/O, no AWS, no HTTP, no tokio, no environment. The registry
//! service hands in schema text plus the already-fetched texts of its references and gets
//! back a [`ParsedSchema`] (stored text, fingerprint) or a [`SchemaError`].

pub mod avro;
pub mod bombs;
pub mod canonical;
pub mod compat;
pub mod error;
pub mod json_schema;
mod json_text;
pub mod json_value;
pub mod limits;
pub mod protobuf;
pub mod tags;
mod wire_names;

use avro::AvroSchema;
pub use canonical::Fingerprint;
pub use compat::{CompatibilityLevel, Incompatibility};
pub use error::SchemaError;
use json_schema::JsonSchema;
pub use json_text::JsonShape;
pub use limits::{Budget, Limits, Meter};
use protobuf::ProtobufSchema;

use serde::{Deserialize, Serialize};
use std::str::FromStr;

crate::wire_names! {
    /// The three schema formats Confluent supports. Wire names are upper-case and case-sensitive
    /// (`"avro"` is not a schema type, as in Confluent).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
    pub enum SchemaType {
        #[default]
        Avro = "AVRO",
        Json = "JSON",
        Protobuf = "PROTOBUF",
    }
}

impl SchemaType {
    /// Every supported type, in the order `GET /schemas/types` lists them.
    pub const ALL: [SchemaType; 3] = [SchemaType::Json, SchemaType::Protobuf, SchemaType::Avro];
}

impl FromStr for SchemaType {
    type Err = SchemaError;

    /// Exact, case-sensitive match, as Confluent's provider map lookup.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchemaType::from_wire_name(s).ok_or_else(|| SchemaError::UnknownSchemaType(s.to_string()))
    }
}

/// A reference from a schema to a registered version: `name` is what the schema text uses
/// (Avro: a full type name; JSON: the `$ref` URL; Protobuf: the import path).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SchemaReference {
    pub name: String,
    pub subject: String,
    pub version: i32,
}

/// The text of a referenced schema, already fetched by the caller. The caller passes the whole
/// reference closure flattened in dependency order (a schema's own references come before it),
/// without duplicates, so each entry can be parsed with the entries before it in scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The name the referring schema uses for it (the reference's `name`).
    pub name: String,
    pub schema_type: SchemaType,
    /// Its stored text.
    pub schema: String,
}

/// How strictly a new schema is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Validation {
    /// New registrations: defaults must match their types (Confluent's `schema.validate.new.schemas`).
    #[default]
    Strict,
    /// IMPORT mode and schemas already stored: only what is needed to produce the stored text.
    Lenient,
}

/// How one text is parsed: the checks, the stored form and the budgets (see [`ParsedSchema::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    pub validation: Validation,
    /// Store Confluent's normal form instead of the format's own rendering.
    pub normalize: bool,
    pub limits: Limits,
}

/// One schema format's parsed form. Each format parses within given limits; parsing within the
/// default limits is the same for all of them.
pub trait SchemaFormat: Sized {
    /// Parses and validates `text` with `dependencies` in scope, within `options.limits`.
    fn parse_within(text: &str, dependencies: &[Dependency], options: ParseOptions) -> Result<Self, SchemaError>;

    /// Parses and validates `text` with `dependencies` in scope (see [`ParsedSchema::parse`]),
    /// within the default limits.
    fn parse(
        text: &str,
        dependencies: &[Dependency],
        validation: Validation,
        normalize: bool,
    ) -> Result<Self, SchemaError> {
        Self::parse_within(text, dependencies, ParseOptions { validation, normalize, limits: Limits::default() })
    }
}

/// A schema parsed and validated, ready to store or to check for compatibility.
#[derive(Debug, Clone)]
pub enum ParsedSchema {
    Avro(AvroSchema),
    Json(JsonSchema),
    Protobuf(ProtobufSchema),
}

impl ParsedSchema {
    /// Parses `text` of type `schema_type`, with `dependencies` (the flattened reference closure,
    /// dependency order) in scope. `normalize` applies Confluent's normal form (§6.4).
    pub fn parse(
        schema_type: SchemaType,
        text: &str,
        dependencies: &[Dependency],
        validation: Validation,
        normalize: bool,
    ) -> Result<ParsedSchema, SchemaError> {
        Self::parse_within(schema_type, text, dependencies, validation, normalize, &Limits::default())
    }

    /// [`ParsedSchema::parse`] within `limits` (depth and node budgets; see [`limits`]).
    pub fn parse_within(
        schema_type: SchemaType,
        text: &str,
        dependencies: &[Dependency],
        validation: Validation,
        normalize: bool,
        limits: &Limits,
    ) -> Result<ParsedSchema, SchemaError> {
        let options = ParseOptions { validation, normalize, limits: *limits };
        Ok(match schema_type {
            SchemaType::Avro => Self::Avro(AvroSchema::parse_within(text, dependencies, options)?),
            SchemaType::Json => Self::Json(JsonSchema::parse_within(text, dependencies, options)?),
            SchemaType::Protobuf => Self::Protobuf(ProtobufSchema::parse_within(text, dependencies, options)?),
        })
    }

    /// The format of this schema.
    pub fn schema_type(&self) -> SchemaType {
        match self {
            ParsedSchema::Avro(_) => SchemaType::Avro,
            ParsedSchema::Json(_) => SchemaType::Json,
            ParsedSchema::Protobuf(_) => SchemaType::Protobuf,
        }
    }

    /// The text Confluent stores and returns in `schema` fields and `/schema` bodies.
    pub fn canonical_text(&self) -> &str {
        match self {
            ParsedSchema::Avro(s) => s.canonical_text(),
            ParsedSchema::Json(s) => s.canonical_text(),
            ParsedSchema::Protobuf(s) => s.canonical_text(),
        }
    }

    /// Whether the schema's top level has a field `name`: an Avro record's field, a JSON Schema
    /// root property, a field of a Protobuf top-level message (Confluent's `hasTopLevelField`,
    /// what `confluent:reserved` fields are checked against).
    pub fn has_top_level_field(&self, name: &str) -> bool {
        match self {
            ParsedSchema::Avro(s) => s.has_top_level_field(name),
            ParsedSchema::Json(s) => s.has_top_level_field(name),
            ParsedSchema::Protobuf(s) => s.has_top_level_field(name),
        }
    }

    /// What Confluent's strict validation (`validate(true)`, with `validateFields`) refuses beyond
    /// the normal parse: a JSON Schema root property named with the `$$` prefix.
    pub fn check_field_names(&self) -> Result<(), SchemaError> {
        match self {
            ParsedSchema::Json(s) => match s.restricted_property() {
                Some(name) => Err(SchemaError::parse(
                    SchemaType::Json,
                    format!("#/properties/{name}: Field names cannot start with $$ prefix"),
                )),
                None => Ok(()),
            },
            ParsedSchema::Avro(_) | ParsedSchema::Protobuf(_) => Ok(()),
        }
    }

    /// The rendering `?format=` names, when this format has it: `resolved` for Avro (the
    /// referenced types inlined, Java's `Schema.toString()`); for Protobuf `serialized` (base64 of
    /// the `FileDescriptorProto`, what confluent-kafka's deserializers ask for) and
    /// `ignore_extensions` (no extensions, no custom options but Confluent's own). `None` for every
    /// other pair (`default` included): Confluent then answers the stored text, and does so for
    /// formats it does not know too, "for forward compatibility of formats".
    pub fn formatted(&self, format: &str) -> Option<String> {
        match (self, format) {
            (ParsedSchema::Avro(s), "resolved") => Some(s.resolved_text().to_string()),
            (ParsedSchema::Protobuf(s), "ignore_extensions") => Some(s.without_extensions().to_string()),
            (ParsedSchema::Protobuf(s), "serialized") => Some(s.serialized()),
            _ => None,
        }
    }
}
