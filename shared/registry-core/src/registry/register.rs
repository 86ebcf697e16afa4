//! The register path: parse → lookup-first → mode → compatibility → ID → version append.
//!
//! Crash safety: the body is put before any ID points at it, the guid index entry (guid →
//! fingerprint) and the ID are bound before a version row carries them, and the version row is the
//! commit point. A crash after any step leaves a body, a guid entry or an ID binding that nothing
//! references yet; the retried registration finds and reuses them (each write is idempotent).
//! Concurrency: the version row is created with create-if-absent; a writer that loses re-reads
//! the subject and starts over from the lookup, so it either finds the winner's identical schema
//! or appends after it, re-checking compatibility against the new latest version.

use super::contract_merge::Contracted;
use super::contracts;
use super::support::{MAX_ATTEMPTS, latest_live, not_import, not_read_write, now_ms, read_only};
use super::{NewSchema, RegisterOptions, Registry};
use crate::churn::ChurnVerdict;
use crate::error::RegistryError;
use crate::metrics::Registration;
use crate::model::{Guid, Mode, SchemaBody, SchemaId, SchemaRecord, Subject, Version, VersionRow};
use crate::store::StoreError;
use registry_schema::{Fingerprint, ParsedSchema, Validation};

impl Registry {
    /// `POST /subjects/{s}/versions`. Returns the stored version: the existing one when the
    /// schema is already a live version of the subject (answered before the mode check, so it
    /// works in READONLY), else a new version appended after every existing row. Errors follow
    /// Confluent: 42208 subject, 42209 size, 42201 schema/references/version, 42205 mode,
    /// 409 incompatible, 429 (42901) when the churn guard enforces and the subject is over its
    /// hourly new-version threshold (an existing version is always answered; see `crate::churn`).
    /// Safe under concurrent callers and crashes (see the module doc).
    /// Marks the subject used on success (see `usage`) and counts the outcome in [`Registry::metrics`].
    pub async fn register(
        &self,
        subject: &str,
        schema: NewSchema,
        options: RegisterOptions,
    ) -> Result<SchemaRecord, RegistryError> {
        let (record, outcome) = self.register_once(subject, schema, options).await?;
        self.metrics.record_registration(outcome, record.id.0);
        self.note_use(&record.subject).await;
        Ok(record)
    }

    async fn register_once(
        &self,
        subject: &str,
        schema: NewSchema,
        options: RegisterOptions,
    ) -> Result<(SchemaRecord, Registration), RegistryError> {
        let subject = Subject::new(subject)?;
        if schema.schema.as_ref().is_some_and(|s| s.len() > self.settings.max_schema_bytes) {
            return Err(RegistryError::SchemaTooLarge);
        }
        let mode = self.effective_mode(Some(&subject)).await?;
        let import = mode == Mode::Import;
        let effective = self.effective_config(Some(&subject)).await?;
        let explicit_id = schema.id.filter(|id| *id > 0).map(SchemaId);
        let explicit_version = schema.version.filter(|v| *v > 0).map(Version);
        if let Some(rule_set) = &schema.rule_set {
            contracts::rule_set_of(rule_set)?.validate()?;
        }
        let mut schema = schema;
        if !import && let Some(version) = explicit_version {
            stamp_version(&mut schema.metadata, version);
        }
        // IMPORT stores what it is given: no normalization, no strict validation (Confluent §9).
        let normalize = !import && (options.normalize || effective.normalize);
        let validation = if import { Validation::Lenient } else { Validation::Strict };
        let posted = match schema.schema.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(text) => Some(self.parse_new(&schema, text, validation, normalize).await?),
            None => None,
        };

        for _ in 0..MAX_ATTEMPTS {
            let rows = self.rows(&subject).await?;
            if let Some((_, body)) = &posted
                && let Some(row) = live_match(&rows, &body.fingerprint(), explicit_id)
            {
                // Finishes the purge of a registration that crashed right after its commit.
                self.purge_superseded(&rows, row).await?;
                return self.existing(row).await;
            }
            match mode {
                Mode::ReadOnly | Mode::ReadOnlyOverride => return Err(read_only(Some(&subject))),
                Mode::Import if explicit_id.is_none() => return Err(not_read_write(&subject)),
                Mode::Import | Mode::ReadWrite => {}
            }
            let (parsed, body) = match &posted {
                Some(posted) => posted.clone(),
                None => {
                    let reused = self.reuse_latest(&rows, &schema).await?;
                    if let Some(row) = live_match(&rows, &reused.1.fingerprint(), explicit_id) {
                        return self.existing(row).await;
                    }
                    reused
                }
            };
            let body = match self.apply_contracts(&subject, &rows, &schema, explicit_id, body, import).await? {
                Contracted::Existing(row) => return self.existing(row).await,
                Contracted::New(body) => body,
            };
            let fingerprint = body.fingerprint();
            if !import
                && let Some(id) = explicit_id
                && self.store.id_for_fingerprint(&fingerprint).await? != Some(id)
            {
                return Err(not_import(&subject));
            }
            if !import {
                let previous: Vec<&VersionRow> = rows.iter().rev().filter(|r| !r.deleted).collect();
                let messages = self.incompatibilities(effective.level, &parsed, &previous).await?;
                if !messages.is_empty() {
                    self.metrics.record_compatibility_rejection();
                    return Err(RegistryError::IncompatibleSchema { subject: subject.to_string(), messages });
                }
            }
            let next = Version(rows.last().map_or(1, |r| r.version.0.saturating_add(1)));
            let version = match explicit_version {
                Some(version) if import => version,
                Some(version) if version != next => {
                    let reason = "Version is not one more than previous version".to_string();
                    return Err(RegistryError::InvalidSchema { reason });
                }
                _ => next,
            };
            if !import {
                self.check_churn(&subject)?;
            }
            self.store.put_body(&fingerprint, &body).await?;
            self.index_guid(&body, &fingerprint).await?;
            let (id, new_id) = match explicit_id {
                Some(id) if import => (self.bind_import_id(id, &fingerprint).await?, false),
                _ => self.assign_id(&fingerprint).await?,
            };
            if import && rows.iter().any(|r| r.version == version) {
                // IMPORT replaces a taken version number, as Confluent's log keyed by (subject, version).
                self.hard_delete(&subject, &[version], false).await?;
            }
            let row = VersionRow {
                subject: subject.clone(),
                version,
                id,
                fingerprint,
                deleted: false,
                references: body.references.clone(),
                registered_at_ms: now_ms(),
            };
            let created = self.store.create_version(&row).await;
            self.forget_lookups();
            match created {
                Ok(()) => {
                    if !import {
                        self.churn.record(subject.as_str());
                    }
                    self.purge_superseded(&rows, &row).await?;
                    let outcome = if new_id { Registration::NewId } else { Registration::NewVersion };
                    let record = SchemaRecord {
                        subject,
                        version,
                        id,
                        body,
                        deleted: false,
                        registered_at_ms: row.registered_at_ms,
                    };
                    return Ok((record, outcome));
                }
                Err(StoreError::Conflict(_)) => {
                    self.metrics.record_store_retry();
                    tokio::task::yield_now().await
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Unavailable(format!("register into {subject}: too many concurrent writers")).into())
    }

    /// The empty-schema rule: reuse the latest live version's schema (type, text, references),
    /// with the posted metadata and rule set when given; 42201 `Empty schema` without one.
    async fn reuse_latest(
        &self,
        rows: &[VersionRow],
        schema: &NewSchema,
    ) -> Result<(ParsedSchema, SchemaBody), RegistryError> {
        let Some(latest) = latest_live(rows) else {
            return Err(RegistryError::InvalidSchema { reason: "Empty schema".to_string() });
        };
        let mut body = self.body(&latest.fingerprint).await?;
        if schema.metadata.is_some() {
            body.metadata = schema.metadata.clone();
        }
        if schema.rule_set.is_some() {
            body.rule_set = schema.rule_set.clone();
        }
        let parsed = self.parse_stored(&body).await?;
        Ok((parsed, body))
    }

    /// The churn guard's verdict on one more new version of `subject`: over the threshold it logs
    /// a warning and counts the trip; when enforced it refuses with 42901.
    fn check_churn(&self, subject: &Subject) -> Result<(), RegistryError> {
        let limit = self.churn.settings().max_per_hour;
        let refused = match self.churn.check(subject.as_str()) {
            ChurnVerdict::Allow => return Ok(()),
            ChurnVerdict::Exceeded { .. } => false,
            ChurnVerdict::Refuse { .. } => true,
        };
        self.metrics.record_churn(refused);
        tracing::warn!(%subject, limit, refused, "churn guard: subject registers new schemas faster than its hourly limit");
        if refused {
            return Err(RegistryError::TooManyRegistrations { subject: subject.to_string(), limit });
        }
        Ok(())
    }

    /// A lookup-first hit: the stored record, after repairing its guid index entry when missing
    /// (data registered before the index existed): one point read (cached once present) and, only
    /// when absent, one create-if-absent write.
    async fn existing(&self, row: &VersionRow) -> Result<(SchemaRecord, Registration), RegistryError> {
        let record = self.record(row).await?;
        if self.store.fingerprint_for_guid(&Guid::of(&record.body)).await?.is_none() {
            self.index_guid(&record.body, &row.fingerprint).await?;
        }
        Ok((record, Registration::Existing))
    }

    /// Binds the body's guid to `fingerprint` (after the body put, before any version row carries
    /// it). A guid already bound to another fingerprint keeps its first binding: done, not an error.
    async fn index_guid(&self, body: &SchemaBody, fingerprint: &Fingerprint) -> Result<(), RegistryError> {
        match self.store.bind_guid(&Guid::of(body), fingerprint).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The ID of `fingerprint` and whether it was newly allocated. A lost allocation either means
    /// a concurrent writer bound this fingerprint (re-read finds it) or took the counter (retry).
    async fn assign_id(&self, fingerprint: &Fingerprint) -> Result<(SchemaId, bool), RegistryError> {
        for _ in 0..MAX_ATTEMPTS {
            if let Some(id) = self.store.id_for_fingerprint(fingerprint).await? {
                return Ok((id, false));
            }
            match self.store.allocate_id(fingerprint).await {
                Ok(id) => return Ok((id, true)),
                Err(StoreError::Conflict(_)) => {
                    self.metrics.record_store_retry();
                    tokio::task::yield_now().await
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Unavailable("id allocation: too many concurrent writers".to_string()).into())
    }

    /// IMPORT: binds the explicit ID; 42205 when it already names another schema.
    async fn bind_import_id(&self, id: SchemaId, fingerprint: &Fingerprint) -> Result<SchemaId, RegistryError> {
        match self.store.bind_id(id, fingerprint).await {
            Ok(()) => Ok(id),
            Err(StoreError::Conflict(_)) => Err(RegistryError::OperationNotPermitted {
                message: format!("Overwrite new schema with id {id} in context . is not permitted."),
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Hard-deletes soft-deleted rows of the subject that carry `new`'s ID at a lower version
    /// (Confluent's tombstone on re-registration), unless something references them. Runs after
    /// the commit and again on every lookup-first hit, so a crash between the two is completed
    /// by the retried request (which then finds the committed version).
    async fn purge_superseded(&self, rows: &[VersionRow], new: &VersionRow) -> Result<(), RegistryError> {
        for old in rows.iter().filter(|r| r.deleted && r.id == new.id && r.version < new.version) {
            if self.store.referrers(&old.subject, old.version).await?.is_empty() {
                self.hard_delete(&old.subject, &[old.version], false).await?;
            }
        }
        Ok(())
    }
}

/// The highest live row of `rows` with `fingerprint` (and the explicit ID, when one was given).
fn live_match<'a>(rows: &'a [VersionRow], fingerprint: &Fingerprint, id: Option<SchemaId>) -> Option<&'a VersionRow> {
    rows.iter().rev().find(|r| !r.deleted && r.fingerprint == *fingerprint && id.is_none_or(|id| r.id == id))
}

/// Confluent stamps an explicit version outside IMPORT into metadata `confluent:version`.
fn stamp_version(metadata: &mut Option<serde_json::Value>, version: Version) {
    let mut value = metadata.take().unwrap_or_else(|| serde_json::json!({}));
    if let Some(object) = value.as_object_mut() {
        let properties = object.entry("properties").or_insert_with(|| serde_json::json!({}));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert("confluent:version".to_string(), serde_json::Value::String(version.to_string()));
        }
    }
    *metadata = Some(value);
}
