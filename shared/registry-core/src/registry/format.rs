//! `?format=` renderings of stored schemas (Avro `resolved`; Protobuf `ignore_extensions` and
//! `serialized`, which confluent-kafka's Protobuf deserializer and `use.latest.version` serializer
//! ask for), and `?findTags=`'s inline tags. Never writes.

use super::Registry;
use crate::error::RegistryError;
use crate::model::{Context, SchemaBody};

impl Registry {
    /// `body`'s schema, as read in `context`, rendered as `format` names it, or `None` when its
    /// type has no such rendering (callers then answer the stored text, as Confluent does for
    /// unknown formats). Parses the stored text with its references, resolved in `context`
    /// ([`Context::referenced_subject`]); a stored schema that no longer parses is
    /// [`crate::StoreError::Corrupt`].
    pub async fn formatted(
        &self,
        context: &Context,
        body: &SchemaBody,
        format: &str,
    ) -> Result<Option<String>, RegistryError> {
        let parsed = self.parse_stored(context, body).await?;
        Ok(parsed.formatted(format))
    }

    /// The records and fields of `body`'s schema (read in `context`, as [`Registry::formatted`])
    /// whose inline tags include one of `wanted`, every tagged one for `*` (Confluent's
    /// `extractSchemaTags`).
    pub async fn schema_tags(
        &self,
        context: &Context,
        body: &SchemaBody,
        wanted: &[String],
    ) -> Result<Vec<registry_schema::tags::SchemaTags>, RegistryError> {
        let parsed = self.parse_stored(context, body).await?;
        Ok(parsed.inline_tagged_entities().matching(wanted))
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::{NewSchema, Registry, RegistrySettings};
    use crate::{Context, MemoryStore, SchemaType};
    use std::sync::Arc;

    fn new_schema(schema_type: SchemaType, text: &str) -> NewSchema {
        NewSchema { schema_type, schema: Some(text.to_string()), ..NewSchema::default() }
    }

    #[tokio::test]
    async fn protobuf_serialized_round_trips_and_other_formats_fall_back() {
        let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
        let proto = "syntax = \"proto3\";\npackage ops;\n\nmessage Beat {\n  int64 at = 1;\n}";
        let registered = registry
            .register("beats-value", new_schema(SchemaType::Protobuf, proto), Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let found = registry.schema_by_id(registered.id.0).await.unwrap_or_else(|e| panic!("{e}"));

        let serialized =
            registry.formatted(&Context::DEFAULT, &found.body, "serialized").await.unwrap_or_else(|e| panic!("{e}"));
        let serialized = serialized.unwrap_or_else(|| panic!("Protobuf has a serialized form"));
        assert!(!serialized.contains(char::is_whitespace) && serialized != found.body.schema);

        let posted_back = registry
            .register("beats-value", new_schema(SchemaType::Protobuf, &serialized), Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(posted_back.id, registered.id, "the serialized form is the same schema");

        let unknown =
            registry.formatted(&Context::DEFAULT, &found.body, "nope").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(unknown, None);
        let avro = registry
            .register("names-value", new_schema(SchemaType::Avro, "\"string\""), Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let avro = registry.schema_by_id(avro.id.0).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            registry.formatted(&Context::DEFAULT, &avro.body, "serialized").await.unwrap_or_else(|e| panic!("{e}")),
            None
        );
    }
}
