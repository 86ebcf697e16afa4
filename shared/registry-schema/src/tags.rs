//! Inline tags (`confluent:tags` in Avro and JSON Schema, the `tags` of Confluent's `meta` options in
//! Protobuf) and the entities that carry them, as Confluent's `ParsedSchema.inlineTaggedEntities` lists
//! them: what `?findTags=` answers as `schemaTags`.

use crate::ParsedSchema;
use serde::Serialize;

/// What a tagged entity is (Confluent's `SchemaEntity.EntityType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EntityKind {
    #[serde(rename = "SR_RECORD")]
    Record,
    #[serde(rename = "SR_FIELD")]
    Field,
}

/// One entity with its tags (Confluent's `SchemaTags`: `{"schemaEntity":{..},"tags":[..]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaTags {
    pub schema_entity: SchemaEntity,
    pub tags: Vec<String>,
}

/// A record or field by its path in the schema (Confluent's `SchemaEntity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaEntity {
    pub entity_path: String,
    pub entity_type: EntityKind,
}

/// Tagged entities in the order they were met; an entity met again keeps its place and takes the
/// later tags (Java's `LinkedHashMap.put`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaggedEntities(Vec<SchemaTags>);

impl TaggedEntities {
    /// Records `tags` of the entity at `path` when there are any.
    pub(crate) fn put(&mut self, path: String, kind: EntityKind, tags: Vec<String>) {
        if tags.is_empty() {
            return;
        }
        let entity = SchemaEntity { entity_path: path, entity_type: kind };
        match self.0.iter_mut().find(|found| found.schema_entity == entity) {
            Some(found) => found.tags = tags,
            None => self.0.push(SchemaTags { schema_entity: entity, tags }),
        }
    }

    /// The entities carrying at least one of `wanted`, or every one when `wanted` has `*`
    /// (Confluent's `extractSchemaTags`); each with all its tags.
    pub fn matching(self, wanted: &[String]) -> Vec<SchemaTags> {
        let every = wanted.iter().any(|tag| tag == "*");
        self.0.into_iter().filter(|found| every || found.tags.iter().any(|tag| wanted.contains(tag))).collect()
    }

    pub fn all(self) -> Vec<SchemaTags> {
        self.0
    }
}

impl ParsedSchema {
    /// Every record and field carrying inline tags (see [`TaggedEntities`]).
    pub fn inline_tagged_entities(&self) -> TaggedEntities {
        match self {
            ParsedSchema::Avro(s) => s.inline_tagged_entities(),
            ParsedSchema::Json(s) => s.inline_tagged_entities(),
            ParsedSchema::Protobuf(s) => s.inline_tagged_entities(),
        }
    }
}

/// The strings of a `confluent:tags` value (a list; anything else has none), as Java's `toString`.
pub(crate) fn tag_list(value: Option<&serde_json::Value>) -> Vec<String> {
    match value {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}
