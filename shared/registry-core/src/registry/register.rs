//! The register path: one retry loop around a decision (the normal path here, the IMPORT path in
//! `register_import`) and a commit, sharing the small steps between them.
//!
//! Each attempt reads the subject's write context (revision, config, mode) and then its rows,
//! decides, stages what the new row needs, and commits the row under preconditions that say the
//! decision is still valid: the subject's revision, config and mode as read, the referenced
//! versions still live, the reused ID still bound to the schema. The store checks them in the
//! same atomic write as the row, so a config or mode change, a delete or another registration
//! acknowledged before the commit is never ignored: the commit conflicts and the attempt starts
//! over with fresh reads (re-checking compatibility against the new latest version).
//!
//! Crash safety: the body is put before any ID points at it, the guid index entry (guid →
//! fingerprint) and the ID are bound no later than the version row that carries them (in the same
//! atomic write where the store can: [`crate::Store::create_version_assigning_id`]), and the version
//! row is the commit point. A crash after any step leaves a body, a guid entry or an ID binding that
//! nothing references yet; the retried registration finds and reuses them (each write is idempotent).

use super::contract_merge::Contracted;
use super::register_recorded::sole_live_fingerprint;
use super::support::{MAX_ATTEMPTS, latest_live, not_import, now_ms, read_only};
use super::usage::Activity;
use super::{NewSchema, RegisterOptions, Registry};
use crate::access::Operation;
use crate::churn::ChurnVerdict;
use crate::error::RegistryError;
use crate::metrics::Registration;
use crate::model::{
    Guid, Mode, SchemaBody, SchemaId, SchemaRecord, Scope, Subject, UnassignedRow, Version, VersionRow,
};
use crate::store::{CommitHints, LayeredContext, NewVersion, Preconditions, SettingSeen, StoreError};
use registry_schema::{Fingerprint, ParsedSchema, SchemaReference, Validation};

/// What one attempt read: the request, the subject's write context and then its rows.
pub(super) struct Attempt<'a> {
    pub subject: &'a Subject,
    pub schema: &'a NewSchema,
    pub context: &'a LayeredContext,
    pub rows: &'a [VersionRow],
    /// The aliasing subject's config as read when the request followed an alias to `subject`
    /// (empty otherwise): a condition of the write the attempt makes.
    pub alias: &'a [SettingSeen],
}

impl Attempt<'_> {
    /// Conditions that hold while nothing the attempt decided on changed: the subject's write
    /// context and the alias it was reached through. A row that makes a subject of a named context
    /// live (none of its rows is) also raises the context's revision ([`Preconditions::raises`]),
    /// so a context-level decision that read it and found no live subject there (IMPORT mode at
    /// the context, a context delete) conflicts, and lists the context again if a delete unlisted
    /// it meanwhile.
    pub fn unchanged(&self) -> Preconditions {
        let mut preconditions = self.context.unchanged();
        preconditions.settings.extend(self.alias.iter().cloned());
        if let Scope::Subject(context) = Scope::of_context(&self.subject.context())
            && !self.rows.iter().any(|row| !row.deleted)
        {
            preconditions.raises.push(context);
        }
        preconditions
    }
}

/// What an attempt decided.
pub(super) enum Decision<'a> {
    /// The schema is already this live version: answered without a write. The body is the one
    /// the match was made with (its fingerprint is the row's), so the answer needs no body read.
    Existing(&'a VersionRow, SchemaBody),
    /// A new row to commit.
    New(Box<Candidate>),
}

/// A staged new row (its body stored) and the conditions it commits under.
pub(super) struct Candidate {
    pub row: UnassignedRow,
    /// The row's ID when the request named one (its guid and ID binding already staged); `None`:
    /// the ID its fingerprint is bound to, or a new one, bound with the guid as the row commits.
    pub id: Option<SchemaId>,
    pub body: SchemaBody,
    pub import: bool,
    pub preconditions: Preconditions,
    /// What the commit may use to read less ([`CommitHints`]: a store may ignore it).
    pub hints: CommitHints,
}

/// The posted schema parsed once per (validation, normalize) choice, parsed again after a lost
/// commit when it has references (a referenced version may have been deleted or, for `-1`, moved).
#[derive(Default)]
pub(super) struct Parsed {
    slot: Option<(ParseOptions, Option<(ParsedSchema, SchemaBody)>)>,
}

/// (IMPORT, normalize): what a parse of the posted schema depends on besides the schema.
type ParseOptions = (bool, bool);

impl Parsed {
    fn forget_if_referencing(&mut self, schema: &NewSchema) {
        if !schema.references.is_empty() {
            self.slot = None;
        }
    }
}

impl Registry {
    /// `POST /subjects/{s}/versions`. Returns the stored version: the existing one when the
    /// schema is already a live version of the subject (answered before the mode check, so it
    /// works in READONLY), else a new version appended after every existing row. Errors follow
    /// Confluent: 42208 subject, 42209 size, 42201 schema/references/version, 42205 mode,
    /// 409 incompatible, 429 (42901) when the churn guard enforces and the subject is over its
    /// hourly new-version threshold (an existing version is always answered; see `crate::churn`).
    /// Linearizable per subject and safe under crashes (see the module doc).
    /// Marks the subject used when the version existed (see `usage`: a new version's registration
    /// time is its activity) and counts the outcome in [`Registry::metrics`].
    pub async fn register(
        &self,
        subject: &str,
        schema: NewSchema,
        options: RegisterOptions,
    ) -> Result<SchemaRecord, RegistryError> {
        let (record, outcome) = self.register_once(subject, schema, options).await?;
        self.metrics.record_registration(outcome, record.id.0);
        Ok(record)
    }

    async fn register_once(
        &self,
        subject: &str,
        schema: NewSchema,
        options: RegisterOptions,
    ) -> Result<(SchemaRecord, Registration), RegistryError> {
        let requested = Subject::new(subject)?;
        let mut subject = requested.clone();
        let mut aliased = false;
        let mut alias = Vec::new();
        if schema.schema.as_ref().is_some_and(|s| s.len() > self.settings.max_schema_bytes) {
            return Err(RegistryError::SchemaTooLarge);
        }
        if let Some(rule_set) = &schema.rule_set {
            super::contracts::rule_set_of(rule_set)?.validate()?;
        }
        // An explicit ID >= 0 is an IMPORT registration, as the authorization layer judges it.
        let operation = match schema.id {
            Some(id) if id >= 0 => Operation::Import,
            _ => Operation::Register,
        };
        let mut parsed = Parsed::default();
        for round in 0..MAX_ATTEMPTS {
            let expected = self.expected_bindings(&subject, &schema, options, &mut parsed).await?;
            let context = self.decision_context_for(&Scope::Subject(subject.clone()), &expected).await?;
            if let Some(target) = self.follow_alias(&subject, &context, &mut aliased, operation)? {
                // References resolve in the target's context: parse again there.
                alias = super::alias::alias_seen(&subject, &context);
                subject = target;
                parsed = Parsed::default();
                continue;
            }
            if let Some(found) = self.registered_already(&subject, &schema, options, &context, &mut parsed).await? {
                return Ok(found);
            }
            let rows = self.rows(&subject).await?;
            let attempt = Attempt { subject: &subject, schema: &schema, context: &context, rows: &rows, alias: &alias };
            let decision = if context.effective_mode() == Mode::Import {
                self.decide_import(&attempt, &mut parsed).await?
            } else {
                self.decide(&attempt, options, &mut parsed).await?
            };
            let candidate = match decision {
                Decision::Existing(row, body) => {
                    // Finishes the purge of a registration that crashed right after its commit.
                    self.purge_superseded(&rows, row).await?;
                    let found = self.existing(row, body, &context).await?;
                    self.record_live_version(&rows, row, &context).await;
                    let newest_ms = rows.last().map(|newest| newest.registered_at_ms);
                    self.note_use(&subject, Activity { newest_ms, marked: context.last_used }).await;
                    return Ok(found);
                }
                Decision::New(candidate) => *candidate,
            };
            if let Some(done) = self.commit(&rows, candidate).await? {
                return Ok(done);
            }
            if aliased {
                // The alias may have changed: the next attempt follows it anew from the start.
                (subject, aliased, parsed) = (requested.clone(), false, Parsed::default());
                alias.clear();
            }
            parsed.forget_if_referencing(&schema);
            self.after_conflict(round).await;
        }
        Err(StoreError::Unavailable(format!("register into {subject}: too many concurrent writers")).into())
    }

    /// The (fingerprint, guid) the posted schema most likely registers as, for the store to read
    /// its bindings with the write context: the strict parse the normal decision makes when the
    /// config does not turn normalization on (cached for it). Empty when that guess cannot be
    /// made (an explicit version stamps the metadata; an empty or invalid schema, whose error the
    /// decision then answers in its turn): the bindings are then read at the commit, as they are
    /// when the guess proves wrong (normalization or data-contract settings changed the body). A
    /// storage error (reading referenced versions) ends the registration as it would later.
    async fn expected_bindings(
        &self,
        subject: &Subject,
        schema: &NewSchema,
        options: RegisterOptions,
        parsed: &mut Parsed,
    ) -> Result<Vec<(Fingerprint, Guid)>, RegistryError> {
        if schema.version.is_some_and(|version| version > 0) {
            return Ok(Vec::new());
        }
        match self.posted(subject, schema, false, options.normalize, parsed).await {
            Ok(Some((_, body))) => Ok(vec![(body.fingerprint(), Guid::of(&body))]),
            Err(RegistryError::Store(e)) => Err(RegistryError::Store(e)),
            Ok(None) | Err(_) => Ok(Vec::new()),
        }
    }

    /// The normal (not IMPORT) decision: lookup-first, mode, data contracts, explicit ID and
    /// version rules, compatibility against the live versions, churn guard; then stages the row.
    async fn decide<'a>(
        &self,
        attempt: &Attempt<'a>,
        options: RegisterOptions,
        parsed: &mut Parsed,
    ) -> Result<Decision<'a>, RegistryError> {
        let Attempt { subject, context, rows, .. } = *attempt;
        let effective = self.effective_of(context);
        let explicit_id = attempt.schema.id.filter(|id| *id > 0).map(SchemaId);
        let explicit_version = attempt.schema.version.filter(|v| *v > 0).map(Version);
        let mut schema = attempt.schema.clone();
        if let Some(version) = explicit_version {
            stamp_version(&mut schema.metadata, version);
        }
        let normalize = options.normalize || effective.normalize;
        let posted = self.posted(subject, &schema, false, normalize, parsed).await?;
        if let Some((parsed_schema, _)) = &posted
            && effective.validate_fields
        {
            parsed_schema.check_field_names()?;
        }
        if let Some((_, body)) = &posted
            && let Some(row) = live_match(rows, &body.fingerprint(), explicit_id)
        {
            return Ok(Decision::Existing(row, body.clone()));
        }
        if matches!(context.effective_mode(), Mode::ReadOnly | Mode::ReadOnlyOverride) {
            return Err(read_only(Some(subject)));
        }
        let (parsed_schema, body, references_checked) = match posted {
            Some((parsed_schema, body)) => (parsed_schema, body, true),
            None => {
                let (parsed_schema, body) = self.reuse_latest(rows, &schema).await?;
                if let Some(row) = live_match(rows, &body.fingerprint(), explicit_id) {
                    return Ok(Decision::Existing(row, body));
                }
                (parsed_schema, body, false)
            }
        };
        let config = context.merged_config();
        let body = match self.apply_contracts(subject, rows, &schema, explicit_id, body, &config).await? {
            Contracted::Existing(row, body) => return Ok(Decision::Existing(row, body)),
            Contracted::New(body) => body,
        };
        let fingerprint = body.fingerprint();
        if let Some(id) = explicit_id
            && self.store.id_for_fingerprint_in(&subject.context(), &fingerprint).await? != Some(id)
        {
            return Err(not_import(subject));
        }
        let previous: Vec<&VersionRow> = rows.iter().rev().filter(|r| !r.deleted).collect();
        let messages = match options.force {
            true => Vec::new(),
            false => self.incompatibilities(&effective, &parsed_schema, body.metadata.as_ref(), &previous).await?,
        };
        if !messages.is_empty() {
            self.metrics.record_compatibility_rejection();
            return Err(RegistryError::IncompatibleSchema { subject: subject.to_string(), messages });
        }
        let next = next_version(rows);
        if explicit_version.is_some_and(|version| version != next) {
            let reason = "Version is not one more than previous version".to_string();
            return Err(RegistryError::InvalidSchema { reason });
        }
        self.check_churn(subject)?;
        let mut preconditions = attempt.unchanged();
        if references_checked {
            preconditions.live_rows = referenced_rows(subject, &body)?;
        }
        let bindings_seen = context.bindings.iter().find(|seen| seen.fingerprint == fingerprint).cloned();
        let id = explicit_id.map(Some).or_else(|| bindings_seen.as_ref().map(|seen| seen.id));
        let hints = CommitHints { sole_live_fingerprint: sole_live_fingerprint(rows, &fingerprint, id), bindings_seen };
        if let Some(id) = explicit_id {
            // Checked above to be the fingerprint's ID: it must still be when the row commits.
            self.stage(&body, &fingerprint).await?;
            preconditions.binding = Some((fingerprint, id));
        } else {
            self.store.put_body(&fingerprint, &body).await?;
        }
        let row = new_row(subject, next, fingerprint, &body)?;
        Ok(Decision::New(Box::new(Candidate { row, id: explicit_id, body, import: false, preconditions, hints })))
    }

    /// The posted schema parsed (IMPORT: leniently and as given; otherwise strictly, normalized
    /// when asked), `None` for an empty text (reuse the latest version's schema).
    pub(super) async fn posted(
        &self,
        subject: &Subject,
        schema: &NewSchema,
        import: bool,
        normalize: bool,
        parsed: &mut Parsed,
    ) -> Result<Option<(ParsedSchema, SchemaBody)>, RegistryError> {
        let key = (import, normalize && !import);
        if let Some((seen, result)) = &parsed.slot
            && *seen == key
        {
            return Ok(result.clone());
        }
        let validation = if import { Validation::Lenient } else { Validation::Strict };
        let result = match schema.schema.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(text) => Some(self.parse_new(&subject.context(), schema, text, validation, key.1).await?),
            None => None,
        };
        parsed.slot = Some((key, result.clone()));
        Ok(result)
    }

    /// Commits a staged row. `Some` answer when it was written; `None` when a concurrent write
    /// won (a precondition or the version number), so the caller reads again.
    async fn commit(
        &self,
        rows: &[VersionRow],
        candidate: Candidate,
    ) -> Result<Option<(SchemaRecord, Registration)>, RegistryError> {
        let Candidate { row, id, body, import, preconditions, hints } = candidate;
        let replaces = preconditions.replaces.is_some();
        let created = match id {
            Some(id) => self.store.create_version(&row.with_id(id), &preconditions, &hints).await.map(|()| (id, false)),
            None => {
                let guid = Guid::of(&body);
                let version = NewVersion { row: &row, guid: &guid, preconditions: &preconditions, hints: &hints };
                self.store.create_version_assigning_id(version).await
            }
        };
        self.forget_lookups();
        if replaces {
            // The replaced row may have been its ID's last carrier, as after a hard delete.
            self.forget_live_ids();
        }
        let (id, new_id) = match created {
            Ok(assigned) => assigned,
            Err(StoreError::Conflict(_)) => return Ok(None),
            // Too many references for one atomic write on this backend: the client must split.
            Err(StoreError::Limit(reason)) => return Err(RegistryError::InvalidSchema { reason }),
            Err(e) => return Err(e.into()),
        };
        let row = row.with_id(id);
        if !import {
            self.churn.record(row.subject.as_str());
        }
        self.purge_superseded(rows, &row).await?;
        let outcome = if new_id { Registration::NewId } else { Registration::NewVersion };
        let record = SchemaRecord {
            subject: row.subject,
            version: row.version,
            id: row.id,
            body,
            deleted: false,
            registered_at_ms: row.registered_at_ms,
        };
        Ok(Some((record, outcome)))
    }

    /// Puts the body and binds its guid: both idempotent, both before any row carries them.
    pub(super) async fn stage(&self, body: &SchemaBody, fingerprint: &Fingerprint) -> Result<(), RegistryError> {
        self.store.put_body(fingerprint, body).await?;
        self.index_guid(body, fingerprint).await
    }

    /// The empty-schema rule: reuse the latest live version's schema (type, text, references),
    /// with the posted metadata and rule set when given; 42201 `Empty schema` without one.
    pub(super) async fn reuse_latest(
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
        let parsed = self.parse_stored(&latest.subject.context(), &body).await?;
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

    /// A lookup-first hit: the stored record (its body the one matched, no read), after repairing
    /// its guid index entry when missing (data registered before the index existed): known from
    /// the write context's bindings when the store read them, else one point read (cached once
    /// present), and only when absent one create-if-absent write.
    pub(super) async fn existing(
        &self,
        row: &VersionRow,
        body: SchemaBody,
        context: &LayeredContext,
    ) -> Result<(SchemaRecord, Registration), RegistryError> {
        let record = self.record_with(row, body).await?;
        let guid = Guid::of(&record.body);
        // A guid once bound stays bound: one read with the write context answers it.
        let bound = match context.bindings.iter().find(|seen| seen.guid == guid) {
            Some(seen) => seen.guid_bound_to.is_some(),
            None => self.store.fingerprint_for_guid(&guid).await?.is_some(),
        };
        if !bound {
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

    /// Hard-deletes soft-deleted rows of the subject that carry `new`'s ID at a lower version
    /// (Confluent's tombstone on re-registration), unless something references them. Runs after
    /// the commit and again on every lookup-first hit, so a crash between the two is completed
    /// by the retried request (which then finds the committed version). A repair, not a decision:
    /// it commits under no preconditions (the rows it removes stay superseded whatever happens).
    async fn purge_superseded(&self, rows: &[VersionRow], new: &VersionRow) -> Result<(), RegistryError> {
        for old in rows.iter().filter(|r| r.deleted && r.id == new.id && r.version < new.version) {
            if self.store.referrers(&old.subject, old.version).await?.is_empty() {
                self.hard_delete(&old.subject, &[old.version], false, &Preconditions::default()).await?;
            }
        }
        Ok(())
    }
}

/// The highest live row of `rows` with `fingerprint` (and the explicit ID, when one was given).
pub(super) fn live_match<'a>(
    rows: &'a [VersionRow],
    fingerprint: &Fingerprint,
    id: Option<SchemaId>,
) -> Option<&'a VersionRow> {
    rows.iter().rev().find(|r| !r.deleted && r.fingerprint == *fingerprint && id.is_none_or(|id| r.id == id))
}

/// One more than the highest row, live or soft-deleted.
pub(super) fn next_version(rows: &[VersionRow]) -> Version {
    Version(rows.last().map_or(1, |r| r.version.0.saturating_add(1)))
}

/// A live row of `subject` at `version` for the staged `body`, before its ID is known. Its
/// references name the subjects they resolve to ([`Context::referenced_subject`]), which the
/// stores index the referrers by.
pub(super) fn new_row(
    subject: &Subject,
    version: Version,
    fingerprint: Fingerprint,
    body: &SchemaBody,
) -> Result<UnassignedRow, RegistryError> {
    Ok(UnassignedRow {
        subject: subject.clone(),
        version,
        fingerprint,
        references: resolved_references(subject, body)?,
        registered_at_ms: now_ms(),
    })
}

/// `body`'s references of a row of `subject`, each naming the subject it resolves to: an
/// unqualified one in `subject`'s context, as Confluent's `qualifySubjectWithParent`.
fn resolved_references(subject: &Subject, body: &SchemaBody) -> Result<Vec<SchemaReference>, RegistryError> {
    let context = subject.context();
    let mut resolved = Vec::with_capacity(body.references.len());
    for reference in &body.references {
        let target = context.referenced_subject(&reference.subject)?;
        resolved.push(SchemaReference { subject: target.as_str().to_string(), ..reference.clone() });
    }
    Ok(resolved)
}

/// The versions a new row of `subject` references, which must still be live when it commits.
/// The references were pinned (`-1` resolved) when the schema was parsed, so each names one version.
pub(super) fn referenced_rows(subject: &Subject, body: &SchemaBody) -> Result<Vec<(Subject, Version)>, RegistryError> {
    let mut rows: Vec<(Subject, Version)> = Vec::with_capacity(body.references.len());
    for reference in resolved_references(subject, body)? {
        let key = (Subject::new(reference.subject)?, Version(reference.version));
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    Ok(rows)
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
