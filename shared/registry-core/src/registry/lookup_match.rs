//! The second pass of a lookup, after the fingerprint missed: a version whose stored text is not the
//! posted one but which Confluent's `lookUpSchemaUnderSubject` still finds by comparing the posted schema
//! with each version (`ParsedSchema.canLookup`): the same text without data-contract parts, and for
//! Avro the same parsed schema written otherwise (`AvroSchema.equivalent`), e.g. registered without
//! `normalize` and looked up with it.

use super::{NewSchema, Registry};
use crate::error::RegistryError;
use crate::model::{SchemaBody, SchemaRecord, Subject, VersionRow};
use registry_schema::SchemaType;

/// Most versions (newest first) a lookup parses to compare by equivalence before answering not found.
/// Each costs a parse in the schema pool within the schema budgets (cached by text, as every parse),
/// so a miss in a subject of thousands of versions stays bounded; Confluent compares them all.
pub(super) const EQUIVALENCE_VERSIONS: usize = 100;

impl Registry {
    /// The newest of `candidates` (oldest first, visible versions of `subject`) that `schema` (posted
    /// text `text`, stored text `posted`) matches without the same fingerprint: a posted schema without
    /// metadata and rule set matches a version with the same text and references that has them (as
    /// serializers post bare text); an Avro schema matches one of the newest [`EQUIVALENCE_VERSIONS`]
    /// versions whose schema is equal once both are in Confluent's normal form (which two equal
    /// parsed Avro schemas share), with the same references when some are posted and the same
    /// metadata and rule set when either is posted. Each version's body is read once.
    pub(super) async fn match_without_fingerprint(
        &self,
        subject: &Subject,
        candidates: &[&VersionRow],
        schema: &NewSchema,
        text: &str,
        posted: &SchemaBody,
    ) -> Result<Option<SchemaRecord>, RegistryError> {
        let bare = posted.metadata.is_none() && posted.rule_set.is_none();
        let avro = schema.schema_type == SchemaType::Avro;
        if !bare && !avro {
            return Ok(None);
        }
        let mut normal_posted: Option<SchemaBody> = None;
        for (index, row) in candidates.iter().rev().enumerate() {
            let record = self.record(row).await?;
            let stored = &record.body;
            if stored.schema_type != posted.schema_type {
                continue;
            }
            if bare && stored.schema == posted.schema && stored.references == posted.references {
                return Ok(Some(record));
            }
            if !avro || index >= EQUIVALENCE_VERSIONS {
                continue;
            }
            let normal_posted = match &normal_posted {
                Some(body) => body,
                None => normal_posted.insert(self.canonical_body(&subject.context(), schema, text, true).await?),
            };
            if self.equivalent(subject, stored, normal_posted, schema).await? {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// Whether `stored` in its normal form is `normal_posted` (the posted `schema` in normal form), with
    /// the references and data-contract parts the posted schema names. A stored schema that no longer
    /// parses (a budget lowered, a reference gone) matches nothing.
    async fn equivalent(
        &self,
        subject: &Subject,
        stored: &SchemaBody,
        normal_posted: &SchemaBody,
        schema: &NewSchema,
    ) -> Result<bool, RegistryError> {
        let contract = (schema.metadata.is_none() && schema.rule_set.is_none())
            || (stored.metadata == schema.metadata && stored.rule_set == schema.rule_set);
        if !contract {
            return Ok(false);
        }
        let as_posted = NewSchema {
            schema: Some(stored.schema.clone()),
            schema_type: stored.schema_type,
            references: stored.references.clone(),
            ..NewSchema::default()
        };
        let normal_stored = match self.canonical_body(&subject.context(), &as_posted, &stored.schema, true).await {
            Ok(body) => body,
            Err(RegistryError::Store(error)) => return Err(RegistryError::Store(error)),
            Err(_) => return Ok(false),
        };
        Ok(normal_stored.schema == normal_posted.schema
            && (schema.references.is_empty() || normal_stored.references == normal_posted.references))
    }
}
