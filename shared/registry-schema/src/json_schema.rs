//! JSON Schema documents: parsing, meta-schema validation, `$ref` resolution and the stored text.
//!
//! The stored text is what Confluent's Jackson re-serialisation produces: compact JSON with the
//! submitted key order kept (whitespace variants dedupe, key-order variants do not); with
//! `normalize` every object's keys are sorted (Java `String` order, i.e. UTF-16 code units).
//! Numbers keep every digit ([`crate::json_value`]): a number an `f64` holds exactly is written as
//! serde_json writes it (`1e2` as `100.0`, `0.10` as `0.1`, where Jackson's `BigDecimal` keeps `1E+2`
//! and `0.10`: same value, other text), any other (an integer beyond 64 bits, a decimal with more
//! digits than an `f64` keeps) exactly as submitted.
//!
//! Validation uses the `jsonschema` crate without its network and file features: a `$ref` resolves
//! only inside the document or to one of the given dependencies, never by fetching.

pub mod compat;
mod refs;
mod tags;

use crate::json_value::{Map, Value};
use crate::limits::Budget;
use crate::{Dependency, ParseOptions, SchemaError, SchemaFormat, SchemaType, Validation};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, ValidationError};
use std::cmp::Ordering;

/// The JSON Schema drafts the registry validates against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Draft {
    Draft4,
    Draft6,
    /// Confluent's default for a schema without `$schema` or with one it does not know.
    #[default]
    Draft7,
    Draft201909,
    Draft202012,
}

impl Draft {
    /// The draft a `$schema` value names, as Confluent's `SpecificationVersion.getFromUrl`:
    /// `http` and `https` and a trailing `#` are all accepted; anything else means draft 7.
    pub fn from_schema_keyword(value: Option<&Value>) -> Draft {
        let Some(url) = value.and_then(Value::as_str) else {
            return Draft::default();
        };
        let url = url.trim_end_matches('#');
        let url = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).unwrap_or(url);
        match url {
            "json-schema.org/draft-04/schema" => Draft::Draft4,
            "json-schema.org/draft-06/schema" => Draft::Draft6,
            "json-schema.org/draft-07/schema" => Draft::Draft7,
            "json-schema.org/draft/2019-09/schema" => Draft::Draft201909,
            "json-schema.org/draft/2020-12/schema" => Draft::Draft202012,
            _ => Draft::default(),
        }
    }

    fn to_validator_draft(self) -> jsonschema::Draft {
        match self {
            Draft::Draft4 => jsonschema::Draft::Draft4,
            Draft::Draft6 => jsonschema::Draft::Draft6,
            Draft::Draft7 => jsonschema::Draft::Draft7,
            Draft::Draft201909 => jsonschema::Draft::Draft201909,
            Draft::Draft202012 => jsonschema::Draft::Draft202012,
        }
    }

    /// The keyword holding a schema's base URI (`id` in draft 4, `$id` later).
    fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 { "id" } else { "$id" }
    }
}

/// A parsed, validated JSON Schema and its stored text.
#[derive(Debug, Clone)]
pub struct JsonSchema {
    canonical: String,
    document: Value,
    draft: Draft,
    dependencies: Vec<(String, Value)>,
}

impl SchemaFormat for JsonSchema {
    /// Parses and validates `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]),
    /// within `options.limits`: nesting depth of each text, JSON values of the text and its
    /// dependencies together against the node budget, both checked before the validator is built.
    ///
    /// Fails with [`SchemaError::Parse`] for text that is not JSON, a document that is neither an
    /// object nor a boolean, or one its draft's meta-schema rejects; with
    /// [`SchemaError::UnresolvedReference`] for a `$ref` that is neither local nor a dependency;
    /// with [`SchemaError::TooDeep`] beyond the depth limit. [`Validation::Strict`] also
    /// refuses top-level property names starting with `$$`, as Confluent does for new schemas.
    fn parse_within(text: &str, dependencies: &[Dependency], options: ParseOptions) -> Result<Self, SchemaError> {
        let mut nodes = options.limits.meter(Budget::Nodes);
        let mut parsed_dependencies = Vec::with_capacity(dependencies.len());
        for dependency in dependencies {
            let document = crate::json_text::parse(&dependency.schema, SchemaType::Json, &options.limits, &mut nodes)
                .map_err(|e| match e {
                SchemaError::Parse { reason, .. } => {
                    SchemaError::parse(SchemaType::Json, format!("referenced schema {}: {reason}", dependency.name))
                }
                other => other,
            })?;
            parsed_dependencies.push((dependency.name.clone(), document));
        }
        let document = crate::json_text::parse(text, SchemaType::Json, &options.limits, &mut nodes)?;
        let draft = match &document {
            Value::Object(object) => Draft::from_schema_keyword(object.get("$schema")),
            Value::Bool(_) => Draft::default(),
            other => {
                return Err(SchemaError::parse(
                    SchemaType::Json,
                    format!("a JSON Schema must be an object or a boolean, found {}", kind_of(other)),
                ));
            }
        };
        compile(&document.to_serde(), draft, dependencies)?;
        if options.validation == Validation::Strict {
            reject_reserved_property_names(&document)?;
        }
        let stored = if options.normalize { sorted(&document) } else { document };
        Ok(JsonSchema { canonical: stored.to_string(), document: stored, draft, dependencies: parsed_dependencies })
    }
}

impl JsonSchema {
    /// Whether the root's `properties` names `name` (Confluent's `hasTopLevelField`).
    pub fn has_top_level_field(&self, name: &str) -> bool {
        self.top_level_properties().any(|property| property == name)
    }

    /// A root property whose name starts with `$$`, which Confluent's strict validation (with
    /// `validateFields`) refuses.
    pub fn restricted_property(&self) -> Option<&str> {
        self.top_level_properties().find(|property| property.starts_with("$$"))
    }

    fn top_level_properties(&self) -> impl Iterator<Item = &str> {
        self.document
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|map| map.keys())
            .map(String::as_str)
    }

    /// The stored text: compact JSON, keys in submitted order (sorted when normalized).
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// The parsed document, as stored (numbers exact).
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The draft the document was validated against.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// The referenced documents in scope, as (reference name, parsed document); `$ref`s resolve into them.
    pub fn dependencies(&self) -> &[(String, Value)] {
        &self.dependencies
    }
}

/// Builds a validator for `document`: meta-schema check against `draft`, then every `$ref`
/// resolved against the document itself and `dependencies` only.
fn compile(document: &serde_json::Value, draft: Draft, dependencies: &[Dependency]) -> Result<(), SchemaError> {
    let root_id = document.get(draft.id_keyword()).and_then(serde_json::Value::as_str);
    let retriever = refs::DependencyRetriever::new(dependencies, root_id)?;
    let options = jsonschema::options().with_draft(draft.to_validator_draft()).with_retriever(retriever);
    let options = match refs::meta_schemas() {
        Some(registry) => options.with_registry(registry),
        None => options,
    };
    options.build(document).map(drop).map_err(|e| validation_error(&e))
}

fn validation_error(error: &ValidationError<'_>) -> SchemaError {
    if let ValidationErrorKind::Referencing(ReferencingError::Unretrievable { uri, .. }) = error.kind() {
        return SchemaError::UnresolvedReference { name: refs::display_name(uri) };
    }
    let path = error.instance_path().to_string();
    let reason = if path.is_empty() { error.to_string() } else { format!("{error} at {path}") };
    SchemaError::parse(SchemaType::Json, reason)
}

/// Confluent's strict check (`JsonSchema.validate(true)`): no top-level property named `$$...`.
fn reject_reserved_property_names(document: &Value) -> Result<(), SchemaError> {
    let reserved = document
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|properties| properties.keys().find(|name| name.starts_with("$$")));
    match reserved {
        Some(name) => Err(SchemaError::parse(
            SchemaType::Json,
            format!("Field names cannot start with $$ prefix: #/properties/{name}"),
        )),
        None => Ok(()),
    }
}

/// `value` with every object's keys sorted as Java sorts strings (by UTF-16 code unit).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(&String, &Value)> = object.iter().collect();
            entries.sort_by(|(a, _), (b, _)| java_string_order(a, b));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn java_string_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        crate::json_value::parse(text).unwrap_or_default()
    }

    #[test]
    fn schema_keyword_selects_draft_with_confluent_fallback() {
        let draft = |v: &str| Draft::from_schema_keyword(Some(&Value::String(v.to_string())));
        assert_eq!(draft("http://json-schema.org/draft-04/schema#"), Draft::Draft4);
        assert_eq!(draft("https://json-schema.org/draft-06/schema"), Draft::Draft6);
        assert_eq!(draft("https://json-schema.org/draft/2019-09/schema"), Draft::Draft201909);
        assert_eq!(draft("https://json-schema.org/draft/2020-12/schema"), Draft::Draft202012);
        assert_eq!(draft("https://example.com/my-meta"), Draft::Draft7);
        assert_eq!(Draft::from_schema_keyword(None), Draft::Draft7);
    }

    #[test]
    fn sorting_follows_java_utf16_order() {
        // U+FF21 (BMP, above the surrogates) sorts after U+1F600 in UTF-16 but before it in UTF-8.
        let value = json("{\"\u{FF21}\": 1, \"\u{1F600}\": 2, \"a\": {\"z\": 1, \"b\": 2}}");
        assert_eq!(sorted(&value).to_string(), "{\"a\":{\"b\":2,\"z\":1},\"\u{1F600}\":2,\"\u{FF21}\":1}");
    }
}
