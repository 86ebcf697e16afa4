//! Confluent wire types (CP 8.x shapes): camelCase names, and null/empty fields omitted like
//! Jackson's `NON_EMPTY`. Conversions to and from the core types live here and nowhere else.

use crate::error::ApiError;
use crate::extract::{optional_object, optional_objects};
use registry_auth::Operation;
use registry_core::registry::body_guid;
use registry_core::registry::contracts::{Metadata, RuleSet, to_json};
use registry_core::{
    CompatibilityLevel, CompatibilityReport, ConfigRecord, ConfigUpdate, Mode, NewSchema, SchemaBody, SchemaById,
    SchemaRecord, SchemaReference, SchemaType, Subject, Version,
};
use registry_schema::tags::SchemaTags;
use serde::{Deserialize, Serialize};

/// Body of register, lookup and compatibility requests (`RegisterSchemaRequest`). Unknown fields are
/// ignored; `schemaType` is case-sensitive and defaults to AVRO.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterSchemaRequest {
    #[serde(default)]
    pub schema: Option<String>,
    #[serde(default)]
    pub schema_type: Option<String>,
    #[serde(default, deserialize_with = "optional_objects")]
    pub references: Option<Vec<SchemaReferenceDto>>,
    /// Read as Confluent's `Metadata` (another shape is a malformed body, 400, as with Jackson).
    #[serde(default, deserialize_with = "optional_object")]
    pub metadata: Option<Metadata>,
    /// Read as Confluent's `RuleSet`; its rules are validated by the registry (42210).
    #[serde(default, deserialize_with = "optional_object")]
    pub rule_set: Option<RuleSet>,
    #[serde(default)]
    pub id: Option<i32>,
    #[serde(default)]
    pub version: Option<i32>,
}

impl RegisterSchemaRequest {
    /// What registering this request does, as access control sees it: an explicit `"id" >= 0` is
    /// Confluent's IMPORT registration (admin only; Java clients send `-1` for "none").
    pub fn operation(&self) -> Operation {
        if self.id.is_some_and(|id| id >= 0) { Operation::Import } else { Operation::Register }
    }

    /// The core request; an unknown `schemaType` is 42201 `Invalid schema type X`.
    pub fn into_new_schema(self) -> Result<NewSchema, ApiError> {
        let schema_type = match self.schema_type.as_deref() {
            None => SchemaType::Avro,
            Some(name) => name.parse::<SchemaType>().map_err(registry_core::RegistryError::from)?,
        };
        Ok(NewSchema {
            schema: self.schema,
            schema_type,
            references: self.references.unwrap_or_default().into_iter().map(SchemaReference::from).collect(),
            metadata: self.metadata.as_ref().map(to_json),
            rule_set: self.rule_set.as_ref().map(to_json),
            id: self.id,
            version: self.version,
        })
    }
}

/// `{"name","subject","version"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaReferenceDto {
    pub name: String,
    pub subject: String,
    pub version: i32,
}

impl From<SchemaReferenceDto> for SchemaReference {
    fn from(dto: SchemaReferenceDto) -> Self {
        SchemaReference { name: dto.name, subject: dto.subject, version: dto.version }
    }
}

impl From<&SchemaReference> for SchemaReferenceDto {
    fn from(reference: &SchemaReference) -> Self {
        SchemaReferenceDto {
            name: reference.name.clone(),
            subject: reference.subject.clone(),
            version: reference.version,
        }
    }
}

/// What both schema answers carry of a stored body besides its text, each left out when empty.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BodyExtrasDto {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<SchemaReferenceDto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_set: Option<serde_json::Value>,
}

impl From<&SchemaBody> for BodyExtrasDto {
    fn from(body: &SchemaBody) -> Self {
        BodyExtrasDto {
            references: body.references.iter().map(SchemaReferenceDto::from).collect(),
            metadata: body.metadata.clone(),
            rule_set: body.rule_set.clone(),
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// A stored version (`Schema` entity): GET version, lookup, `/schemas` items and the register answer.
///
/// CP 8.x always writes `schemaType`, AVRO included. The register answer leaves `subject` out, as
/// Confluent's `RegisterSchemaResponse` has no such field; every other use carries it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaDto {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub version: i32,
    pub id: i32,
    /// CP 8 `guid`: Confluent's MD5 identity of text, references, metadata and rule set.
    pub guid: String,
    pub schema_type: SchemaType,
    #[serde(flatten)]
    pub extras: BodyExtrasDto,
    pub schema: String,
    /// With `?findTags=`: the records and fields carrying those inline tags.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema_tags: Vec<SchemaTags>,
    #[serde(skip_serializing_if = "is_zero")]
    pub ts: i64,
    #[serde(skip_serializing_if = "is_false")]
    pub deleted: bool,
}

impl SchemaDto {
    /// The `Schema` object for `record`, with `subject`.
    pub fn from_record(record: &SchemaRecord) -> Self {
        SchemaDto {
            subject: Some(record.subject.to_string()),
            version: record.version.0,
            id: record.id.0,
            guid: body_guid(&record.body),
            schema_type: record.body.schema_type,
            extras: BodyExtrasDto::from(&record.body),
            schema: record.body.schema.clone(),
            schema_tags: Vec::new(),
            ts: record.registered_at_ms,
            deleted: record.deleted,
        }
    }

    /// The register answer: the stored schema without `subject`.
    pub fn registered(record: &SchemaRecord) -> Self {
        SchemaDto { subject: None, ..SchemaDto::from_record(record) }
    }
}

/// `GET /schemas/ids/{id}` (`SchemaString`): `maxId` only with `fetchMaxId=true`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaStringDto {
    /// CP 8 `guid` (see [`SchemaDto::guid`]).
    pub guid: String,
    pub schema_type: SchemaType,
    pub schema: String,
    #[serde(flatten)]
    pub extras: BodyExtrasDto,
    /// With `?findTags=`: the records and fields carrying those inline tags.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema_tags: Vec<SchemaTags>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_id: Option<i32>,
}

impl SchemaStringDto {
    /// The answer for `found`, with `max_id` when asked.
    pub fn new(found: &SchemaById, max_id: Option<i32>) -> Self {
        SchemaStringDto::of_body(&found.body, max_id)
    }

    /// The answer showing `body`, with `max_id` when asked: a function of the body alone.
    pub fn of_body(body: &SchemaBody, max_id: Option<i32>) -> Self {
        SchemaStringDto {
            guid: body_guid(body),
            schema_type: body.schema_type,
            schema: body.schema.clone(),
            extras: BodyExtrasDto::from(body),
            schema_tags: Vec::new(),
            max_id,
        }
    }
}

/// `{"subject","version"}` items of `GET /schemas/ids/{id}/versions`.
#[derive(Debug, Clone, Serialize)]
pub struct SubjectVersionDto {
    pub subject: String,
    pub version: i32,
}

impl From<&(Subject, Version)> for SubjectVersionDto {
    fn from((subject, version): &(Subject, Version)) -> Self {
        SubjectVersionDto { subject: subject.to_string(), version: version.0 }
    }
}

/// `GET /config[/{s}]` and DELETE answers (`Config`): note `compatibilityLevel`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigDto {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalize: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validate_fields: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility_level: Option<CompatibilityLevel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility_group: Option<String>,
    #[serde(flatten)]
    pub contracts: ContractConfigDto,
}

impl From<&ConfigRecord> for ConfigDto {
    fn from(record: &ConfigRecord) -> Self {
        ConfigDto {
            alias: record.alias.clone(),
            normalize: record.normalize,
            validate_fields: record.validate_fields,
            compatibility_level: record.compatibility_level,
            compatibility_group: record.compatibility_group.clone(),
            contracts: ContractConfigDto::from(record),
        }
    }
}

/// The data-contract part of `Config` answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractConfigDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_metadata: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_metadata: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_rule_set: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_rule_set: Option<serde_json::Value>,
}

impl From<&ConfigRecord> for ContractConfigDto {
    fn from(record: &ConfigRecord) -> Self {
        ContractConfigDto {
            default_metadata: record.default_metadata.clone(),
            override_metadata: record.override_metadata.clone(),
            default_rule_set: record.default_rule_set.clone(),
            override_rule_set: record.override_rule_set.clone(),
        }
    }
}

/// `PUT /config[/{s}]` body (`ConfigUpdateRequest`): note `compatibility`, matched case-insensitively.
/// Each field is absent (keep the stored value), `null` (clear it) or a value, as Confluent reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigUpdateRequest {
    #[serde(default, deserialize_with = "named")]
    pub compatibility: Option<Option<String>>,
    #[serde(default, deserialize_with = "named")]
    pub normalize: Option<Option<bool>>,
    /// Validated and normalised by the registry (42210 for an invalid rule set).
    #[serde(default, deserialize_with = "named")]
    pub default_metadata: Option<Option<serde_json::Value>>,
    #[serde(default, deserialize_with = "named")]
    pub override_metadata: Option<Option<serde_json::Value>>,
    #[serde(default, deserialize_with = "named")]
    pub default_rule_set: Option<Option<serde_json::Value>>,
    #[serde(default, deserialize_with = "named")]
    pub override_rule_set: Option<Option<serde_json::Value>>,
    #[serde(default, deserialize_with = "named")]
    pub alias: Option<Option<String>>,
    #[serde(default, deserialize_with = "named")]
    pub compatibility_group: Option<Option<String>>,
    #[serde(default, deserialize_with = "named")]
    pub validate_fields: Option<Option<bool>>,
    /// Confluent 8 fields this registry does not implement: refused rather than dropped.
    #[serde(flatten)]
    pub unsupported: UnsupportedConfigFields,
}

/// A field that is present: `Some(None)` when it is `null` (serde calls this only when the key is
/// there; an absent key takes the `default`, `None`).
fn named<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The fields of Confluent's `ConfigUpdateRequest` this registry does not implement. A request
/// that sets one is 422 (42205), never a 200 that silently applies nothing; a value that asks for
/// what the registry does anyway (an empty `aliasForDeks`) is accepted.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedConfigFields {
    #[serde(default)]
    alias_for_deks: Option<serde_json::Value>,
    #[serde(default)]
    compatibility_policy: Option<serde_json::Value>,
    #[serde(default)]
    validate_new_schemas: Option<serde_json::Value>,
    #[serde(default)]
    validate_rules: Option<serde_json::Value>,
}

impl UnsupportedConfigFields {
    /// The name of the first field set to something this registry cannot apply.
    fn first_set(&self) -> Option<&'static str> {
        use serde_json::Value;
        let asks = |value: &Option<Value>| match value {
            None | Some(Value::Null) => false,
            Some(Value::String(text)) => !text.is_empty(),
            Some(_) => true,
        };
        [
            ("aliasForDeks", asks(&self.alias_for_deks)),
            ("compatibilityPolicy", asks(&self.compatibility_policy)),
            ("validateNewSchemas", asks(&self.validate_new_schemas)),
            ("validateRules", asks(&self.validate_rules)),
        ]
        .into_iter()
        .find_map(|(name, set)| set.then_some(name))
    }
}

impl ConfigUpdateRequest {
    /// The update to apply; an unknown level is 42203, a field this registry does not implement
    /// 42205.
    pub fn into_update(self) -> Result<ConfigUpdate, ApiError> {
        if let Some(field) = self.unsupported.first_set() {
            let message = format!("Config field '{field}' is not supported by this registry");
            return Err(registry_core::RegistryError::OperationNotPermitted { message }.into());
        }
        let level = |level: String| {
            level
                .parse::<CompatibilityLevel>()
                .map_err(|_| registry_core::RegistryError::InvalidCompatibilityLevel { level })
        };
        let compatibility_level = match self.compatibility {
            Some(Some(name)) => Some(Some(level(name)?)),
            other => other.map(|_| None),
        };
        Ok(ConfigUpdate {
            compatibility_level,
            normalize: self.normalize,
            default_metadata: self.default_metadata,
            override_metadata: self.override_metadata,
            default_rule_set: self.default_rule_set,
            override_rule_set: self.override_rule_set,
            alias: self.alias,
            compatibility_group: self.compatibility_group,
            validate_fields: self.validate_fields,
        })
    }
}

/// `PUT /config[/{s}]` answer: the stored config re-rendered (CP 8.x) as [`ConfigDto`], but with
/// the level under the key `compatibility`.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigUpdateResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<CompatibilityLevel>,
    /// Everything else (its `compatibility_level` stays `None`).
    #[serde(flatten)]
    pub config: ConfigDto,
}

impl ConfigUpdateResponse {
    /// The answer for the stored `record`.
    pub fn new(record: &ConfigRecord) -> Self {
        let config = ConfigDto { compatibility_level: None, ..ConfigDto::from(record) };
        ConfigUpdateResponse { compatibility: record.compatibility_level, config }
    }
}

/// `PUT /mode[/{s}]` body; the mode is parsed case-insensitively (42204 otherwise, also when missing).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModeUpdateRequest {
    #[serde(default)]
    pub mode: Option<String>,
}

impl ModeUpdateRequest {
    /// The requested mode.
    pub fn into_mode(self) -> Result<Mode, ApiError> {
        Ok(self.mode.unwrap_or_default().parse::<Mode>()?)
    }
}

/// `{"mode": "READWRITE"}` (GET, PUT echo, DELETE).
#[derive(Debug, Clone, Serialize)]
pub struct ModeDto {
    pub mode: Mode,
}

/// `{"is_compatible": bool}`, plus `messages` (possibly `[]`) when `verbose=true`.
#[derive(Debug, Clone, Serialize)]
pub struct CompatibilityDto {
    pub is_compatible: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<String>>,
}

impl CompatibilityDto {
    /// The answer for `report`; `messages` only when `verbose`.
    pub fn new(report: CompatibilityReport, verbose: bool) -> Self {
        CompatibilityDto { is_compatible: report.is_compatible, messages: verbose.then_some(report.messages) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_schema_type_is_42201_text() {
        let request = RegisterSchemaRequest { schema_type: Some("avro".into()), ..Default::default() };
        match request.into_new_schema() {
            Err(ApiError::Registry(error)) => assert_eq!(error.to_string(), "Invalid schema type avro"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn empty_fields_are_omitted() {
        let dto = CompatibilityDto { is_compatible: true, messages: None };
        assert_eq!(serde_json::to_value(&dto).ok(), Some(json!({"is_compatible": true})));
        let config = ConfigDto::from(&ConfigRecord::default());
        assert_eq!(serde_json::to_value(&config).ok(), Some(json!({})));
    }
}
