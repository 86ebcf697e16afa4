//! Compatibility: the check a registration must pass, and `POST /compatibility/...`.

use super::support::{latest_live, parse_stored_now, version_not_found};
use super::{CompatibilityReport, NewSchema, Registry};
use crate::error::RegistryError;
use crate::model::{Subject, VersionRow, VersionSelector};
use registry_schema::{CompatibilityLevel, Incompatibility, ParsedSchema, Validation, compat};

/// Longest `oldSchema` text quoted in a message, as Confluent (10 KiB).
const MAX_QUOTED_SCHEMA: usize = 10 * 1024;

impl Registry {
    /// Confluent's message list for `new` against `previous` (newest first) at `level`: the
    /// incompatibilities found against the first failing version, then `{oldSchemaVersion: N}`,
    /// `{oldSchema: '...'}` and `{validateFields: 'false', compatibility: 'LEVEL'}`. Empty when
    /// compatible. Only the versions the level looks at are parsed.
    pub(super) async fn incompatibilities(
        &self,
        level: CompatibilityLevel,
        new: &ParsedSchema,
        previous: &[&VersionRow],
    ) -> Result<Vec<String>, RegistryError> {
        if level == CompatibilityLevel::None || previous.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = if level.is_transitive() { previous.len() } else { 1 };
        let mut stored = Vec::with_capacity(wanted);
        let mut texts = Vec::with_capacity(wanted);
        for row in previous.iter().take(wanted) {
            let body = self.body(&row.fingerprint).await?;
            let dependencies = self.dependencies(&row.subject.context(), &body.references, false).await?;
            texts.push(body.schema.clone());
            stored.push((body, dependencies));
        }
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
        if let (Some(row), Some(text)) = (previous.get(index), texts.get(index)) {
            messages.push(format!("{{oldSchemaVersion: {}}}", row.version));
            messages.push(format!("{{oldSchema: '{}'}}", truncate(text)));
        }
        messages.push(format!("{{validateFields: 'false', compatibility: '{level}'}}"));
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
        let subject = Subject::new(subject)?;
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
        let effective = self.effective_config(Some(&subject)).await?;
        let parsed = match self.parse_for_check(&subject, &schema, normalize || effective.normalize).await {
            Ok(parsed) => parsed,
            Err(RegistryError::InvalidSchema { reason }) if verbose => {
                return Ok(CompatibilityReport { is_compatible: false, messages: vec![reason] });
            }
            Err(e) => return Err(e),
        };
        let messages = self.incompatibilities(effective.level, &parsed, &previous).await?;
        Ok(CompatibilityReport { is_compatible: messages.is_empty(), messages })
    }

    async fn parse_for_check(
        &self,
        subject: &Subject,
        schema: &NewSchema,
        normalize: bool,
    ) -> Result<ParsedSchema, RegistryError> {
        if schema.schema.as_ref().is_some_and(|s| s.len() > self.settings.max_schema_bytes) {
            return Err(RegistryError::SchemaTooLarge);
        }
        let text = schema.schema.as_deref().filter(|s| !s.trim().is_empty());
        let Some(text) = text else {
            return Err(RegistryError::InvalidSchema { reason: "Empty schema".to_string() });
        };
        Ok(self.parse_new(&subject.context(), schema, text, Validation::Strict, normalize).await?.0)
    }
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
