//! The data-contract step of a registration: config defaults and overrides merged around the
//! request's (or the latest version's) metadata and rule set, Confluent's `maybeSetMetadataRuleSet`,
//! and the ownership policy.

use super::contracts::{
    CONFLUENT_VERSION, merge_metadata, merge_rule_sets, metadata_of, property, rule_set_of, stamp_confluent_version,
    to_json,
};
use crate::error::RegistryError;

/// The metadata and rule set a registration stores (Confluent's `maybeSetMetadataRuleSet`):
/// `specific` (the request's parts, or the latest live version's when the request has none)
/// merged as config default ← specific ← config override; then `confluent:version` is set to
/// `version` when the request named a version or the merged metadata already carries one.
pub fn merged_parts(
    config: &crate::model::ConfigRecord,
    specific_metadata: Option<&serde_json::Value>,
    specific_rule_set: Option<&serde_json::Value>,
    explicit_version: bool,
    version: i32,
) -> Result<(Option<serde_json::Value>, Option<serde_json::Value>), RegistryError> {
    let read_metadata = |v: Option<&serde_json::Value>| v.map(metadata_of).transpose();
    let read_rules = |v: Option<&serde_json::Value>| v.map(rule_set_of).transpose();
    let metadata = merge_metadata(
        merge_metadata(read_metadata(config.default_metadata.as_ref())?, read_metadata(specific_metadata)?),
        read_metadata(config.override_metadata.as_ref())?,
    );
    let rule_set = merge_rule_sets(
        merge_rule_sets(read_rules(config.default_rule_set.as_ref())?, read_rules(specific_rule_set)?),
        read_rules(config.override_rule_set.as_ref())?,
    );
    let stamped = metadata.as_ref().is_some_and(|m| m.properties.contains_key(CONFLUENT_VERSION));
    let metadata =
        if explicit_version || stamped { Some(stamp_confluent_version(metadata, version)) } else { metadata };
    if let Some(rule_set) = &rule_set {
        rule_set.validate()?;
    }
    Ok((metadata.as_ref().map(to_json), rule_set.as_ref().map(to_json)))
}

/// What [`super::Registry::apply_contracts`] decided for one registration attempt.
pub(super) enum Contracted<'a> {
    /// The registration resolves to this live version (already registered), with its body.
    Existing(&'a crate::model::VersionRow, crate::model::SchemaBody),
    /// Store this body (metadata and rule set merged).
    New(crate::model::SchemaBody),
}

impl super::Registry {
    /// The data-contract step of a registration outside IMPORT (IMPORT stores what it is given),
    /// with `config` the subject's config over the global one as the registration read it:
    /// a bare schema (no metadata, rule set or version, no config defaults/overrides) whose text and
    /// references equal the latest live version's is that version (Confluent's lookup-first through
    /// `canLookup`); otherwise the parts are merged ([`merged_parts`], inheriting the latest live
    /// version's parts when the request has none) and a live version with the merged identity is
    /// returned. A subject without live versions must carry the ownership property when
    /// `require_owner` is set (42201).
    pub(super) async fn apply_contracts<'a>(
        &self,
        subject: &crate::model::Subject,
        rows: &'a [crate::model::VersionRow],
        schema: &super::NewSchema,
        explicit_id: Option<crate::model::SchemaId>,
        mut body: crate::model::SchemaBody,
        config: &crate::model::ConfigRecord,
    ) -> Result<Contracted<'a>, RegistryError> {
        let latest = super::support::latest_live(rows);
        let latest_body = match latest {
            Some(row) => Some(self.body(&row.fingerprint).await?),
            None => None,
        };
        let explicit_version = schema.version.is_some_and(|v| v > 0);
        let bare = schema.metadata.is_none() && schema.rule_set.is_none() && !explicit_version;
        if bare
            && !config.has_contract_settings()
            && let (Some(row), Some(previous)) = (latest, &latest_body)
            && explicit_id.is_none_or(|id| id == row.id)
            && previous.schema_type == body.schema_type
            && previous.schema == body.schema
            && previous.references == body.references
        {
            return Ok(Contracted::Existing(row, previous.clone()));
        }
        let specific_metadata = schema.metadata.as_ref().or(latest_body.as_ref().and_then(|b| b.metadata.as_ref()));
        let specific_rule_set = schema.rule_set.as_ref().or(latest_body.as_ref().and_then(|b| b.rule_set.as_ref()));
        let next = rows.last().map_or(1, |r| r.version.0.saturating_add(1));
        let (metadata, rule_set) = merged_parts(config, specific_metadata, specific_rule_set, explicit_version, next)?;
        body.metadata = metadata;
        body.rule_set = rule_set;
        let fingerprint = body.fingerprint();
        let existing = rows
            .iter()
            .rev()
            .find(|r| !r.deleted && r.fingerprint == fingerprint && explicit_id.is_none_or(|id| r.id == id));
        if let Some(row) = existing {
            return Ok(Contracted::Existing(row, body));
        }
        if latest.is_none()
            && let Some(owner) = &self.settings.require_owner
            && property(body.metadata.as_ref(), owner).is_none_or(str::is_empty)
        {
            return Err(RegistryError::OwnerRequired { subject: subject.to_string(), property: owner.clone() });
        }
        Ok(Contracted::New(body))
    }
}
