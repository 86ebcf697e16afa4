//! Compatibility: the check a registration must pass, and `POST /compatibility/...`.

use super::support::{Effective, RowsRead, latest_live, parse_stored_now, version_not_found};
use super::{CompatibilityReport, NewSchema, Registry};
use crate::access::Operation;
use crate::error::RegistryError;
use crate::model::{SchemaBody, Scope, Subject, VersionRow, VersionSelector};
use registry_schema::{CompatibilityLevel, Incompatibility, ParsedSchema, Validation, compat};
use std::collections::BTreeSet;

/// The metadata property listing a schema's reserved fields (Confluent's `ParsedSchema.RESERVED`).
const RESERVED: &str = "confluent:reserved";

/// Longest `oldSchema` text quoted in a message, as Confluent (10 KiB).
const MAX_QUOTED_SCHEMA: usize = 10 * 1024;

impl Registry {
    /// Confluent's message list (`isCompatibleWithPrevious`) for `new` (its metadata
    /// `new_metadata`) against `previous` (newest first) under `effective`: with `validateFields`,
    /// the `confluent:reserved` fields the newest previous version has and `new` drops, and those
    /// `new` has as top-level fields; then the incompatibilities found against the first failing
    /// version the level looks at (only versions in `new`'s compatibility group, when one is
    /// configured), `{oldSchemaVersion: N}` and `{oldSchema: '...'}`; then
    /// `{validateFields: 'B', compatibility: 'LEVEL'}`. Empty when compatible. Only the versions
    /// the checks look at are read and parsed.
    pub(super) async fn incompatibilities(
        &self,
        effective: &Effective,
        new: &ParsedSchema,
        new_metadata: Option<&serde_json::Value>,
        previous: &[&VersionRow],
    ) -> Result<Vec<String>, RegistryError> {
        let mut newest = None;
        let mut messages = Vec::new();
        if effective.validate_fields {
            if let Some(row) = previous.first() {
                newest = Some(self.body(&row.fingerprint).await?);
            }
            messages = reserved_field_violations(new, new_metadata, newest.as_ref().map(|b| b.metadata.as_ref()));
        }
        if effective.level != CompatibilityLevel::None && !previous.is_empty() {
            let checked = self.versions_checked(effective, new_metadata, previous, newest).await?;
            messages.extend(self.level_incompatibilities(effective.level, new, checked).await?);
        }
        if !messages.is_empty() {
            let (validate, level) = (effective.validate_fields, effective.level);
            messages.push(format!("{{validateFields: '{validate}', compatibility: '{level}'}}"));
        }
        Ok(messages)
    }

    /// The versions of `previous` (newest first) the level checks, with their bodies: the newest,
    /// or every one when transitive; with a compatibility group, only those whose metadata has
    /// `new`'s value of the group property (both may lack it). `newest` is the first one's body
    /// when already read.
    async fn versions_checked<'r>(
        &self,
        effective: &Effective,
        new_metadata: Option<&serde_json::Value>,
        previous: &[&'r VersionRow],
        mut newest: Option<SchemaBody>,
    ) -> Result<Vec<(&'r VersionRow, SchemaBody)>, RegistryError> {
        let wanted = if effective.level.is_transitive() { previous.len() } else { 1 };
        let group = effective.group.as_deref().map(|name| (name, property(new_metadata, name)));
        let mut checked = Vec::with_capacity(wanted);
        for (index, row) in previous.iter().enumerate() {
            if checked.len() == wanted {
                break;
            }
            let body = match newest.take().filter(|_| index == 0) {
                Some(body) => body,
                None => self.body(&row.fingerprint).await?,
            };
            if group.is_none_or(|(name, value)| property(body.metadata.as_ref(), name) == value) {
                checked.push((*row, body));
            }
        }
        Ok(checked)
    }

    /// The level's incompatibilities of `new` against `checked` (newest first): those found
    /// against the first failing version, then its version and text.
    async fn level_incompatibilities(
        &self,
        level: CompatibilityLevel,
        new: &ParsedSchema,
        checked: Vec<(&VersionRow, SchemaBody)>,
    ) -> Result<Vec<String>, RegistryError> {
        let mut stored = Vec::with_capacity(checked.len());
        let mut rows = Vec::with_capacity(checked.len());
        // Versions referencing the same subjects read them once for the whole check.
        let mut read = RowsRead::new();
        for (row, body) in checked {
            let context = row.subject.context();
            let dependencies = self.dependencies_reading(&context, &body.references, false, &mut read).await?;
            rows.push(row);
            stored.push((body, dependencies));
        }
        let texts: Vec<String> = stored.iter().map(|(body, _)| body.schema.clone()).collect();
        let (new, limits, rules) = (new.clone(), self.settings.limits, self.settings.compat_rules);
        let check = move || -> Result<Vec<Incompatibility>, RegistryError> {
            let mut parsed = Vec::with_capacity(stored.len());
            for (body, dependencies) in &stored {
                parsed.push(parse_stored_now(body.schema_type, &body.schema, dependencies, &limits)?);
            }
            let refs: Vec<&ParsedSchema> = parsed.iter().collect();
            Ok(compat::check_with(level, &new, &refs, &limits, &rules)?.incompatibilities)
        };
        let found = self.cpu.run(check).await??;
        let Some(first) = found.first() else {
            return Ok(Vec::new());
        };
        let index = first.previous_index;
        let mut messages: Vec<String> =
            found.iter().filter(|i| i.previous_index == index).map(|i| i.message.clone()).collect();
        if let (Some(row), Some(text)) = (rows.get(index), texts.get(index)) {
            messages.push(format!("{{oldSchemaVersion: {}}}", row.version));
            messages.push(format!("{{oldSchema: '{}'}}", truncate(text)));
        }
        Ok(messages)
    }

    /// `POST /compatibility/subjects/{s}/versions[/{v}]`. With a version: against that one live
    /// version (`latest` = highest live; compatible when there is none; a missing numbered
    /// version is 40402), in the effective level's direction. Without: against every live
    /// version, honouring transitivity. A schema that does not parse is 42201, or with
    /// `verbose` an incompatible report carrying the parse message. Never writes.
    pub async fn test_compatibility(
        &self,
        subject: &str,
        version: Option<VersionSelector>,
        schema: NewSchema,
        normalize: bool,
        verbose: bool,
    ) -> Result<CompatibilityReport, RegistryError> {
        let mut subject = Subject::new(subject)?;
        let mut context = self.decision_context(&Scope::Subject(subject.clone())).await?;
        if let Some(target) = self.follow_alias(&subject, &context, &mut false, Operation::Read)? {
            context = self.decision_context(&Scope::Subject(target.clone())).await?;
            subject = target;
        }
        let rows = self.rows(&subject).await?;
        let previous: Vec<&VersionRow> = match version {
            None => rows.iter().rev().filter(|r| !r.deleted).collect(),
            Some(VersionSelector::Latest) => latest_live(&rows).into_iter().collect(),
            Some(selector @ VersionSelector::Number(number)) => {
                match rows.iter().find(|r| r.version == number && !r.deleted) {
                    Some(row) => vec![row],
                    None => return Err(version_not_found(&subject, selector)),
                }
            }
        };
        let effective = self.effective_of(&context);
        let parsed = match self
            .parse_for_check(&subject, &schema, normalize || effective.normalize, effective.validate_fields)
            .await
        {
            Ok(parsed) => parsed,
            Err(RegistryError::InvalidSchema { reason }) if verbose => {
                return Ok(CompatibilityReport { is_compatible: false, messages: vec![reason] });
            }
            Err(e) => return Err(e),
        };
        let messages = self.incompatibilities(&effective, &parsed, schema.metadata.as_ref(), &previous).await?;
        Ok(CompatibilityReport { is_compatible: messages.is_empty(), messages })
    }

    /// The posted schema parsed strictly; with `validate_fields` also Confluent's field-name rules.
    async fn parse_for_check(
        &self,
        subject: &Subject,
        schema: &NewSchema,
        normalize: bool,
        validate_fields: bool,
    ) -> Result<ParsedSchema, RegistryError> {
        if schema.schema.as_ref().is_some_and(|s| s.len() > self.settings.max_schema_bytes) {
            return Err(RegistryError::SchemaTooLarge);
        }
        let text = schema.schema.as_deref().filter(|s| !s.trim().is_empty());
        let Some(text) = text else {
            return Err(RegistryError::InvalidSchema { reason: "Empty schema".to_string() });
        };
        let parsed = self.parse_new(&subject.context(), schema, text, Validation::Strict, normalize).await?.0;
        if validate_fields {
            parsed.check_field_names()?;
        }
        Ok(parsed)
    }
}

/// Confluent's `RESERVED_FIELD_REMOVED` for each reserved field of the previous version's metadata
/// (`previous`: `None` without a previous version) that `new_metadata` no longer reserves, then
/// `FIELD_CONFLICTS_WITH_RESERVED_FIELD` for each field `new_metadata` reserves that `new` has at
/// its top level; each in field-name order.
fn reserved_field_violations(
    new: &ParsedSchema,
    new_metadata: Option<&serde_json::Value>,
    previous: Option<Option<&serde_json::Value>>,
) -> Vec<String> {
    let reserved = reserved_fields(new_metadata);
    let removed = previous.map(reserved_fields).unwrap_or_default();
    let removed = removed.difference(&reserved).map(|field| {
        format!("The new schema has reserved field {field} removed from its metadata which is present in the old schema's metadata.")
    });
    let conflicting = reserved
        .iter()
        .filter(|field| new.has_top_level_field(field))
        .map(|field| format!("The new schema has field that conflicts with the reserved field {field}."));
    removed.chain(conflicting).collect()
}

/// The fields metadata property `confluent:reserved` lists (comma-separated, trimmed).
fn reserved_fields(metadata: Option<&serde_json::Value>) -> BTreeSet<String> {
    let listed = property(metadata, RESERVED).and_then(serde_json::Value::as_str).unwrap_or_default();
    listed.split(',').map(str::trim).filter(|field| !field.is_empty()).map(str::to_string).collect()
}

/// The metadata property `name` (`metadata.properties[name]`).
fn property<'m>(metadata: Option<&'m serde_json::Value>, name: &str) -> Option<&'m serde_json::Value> {
    metadata?.get("properties")?.get(name)
}

fn truncate(text: &str) -> &str {
    if text.len() <= MAX_QUOTED_SCHEMA {
        return text;
    }
    let mut end = MAX_QUOTED_SCHEMA;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
