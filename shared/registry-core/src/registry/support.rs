//! Helpers shared by the registry operations: subject rows, bodies, effective config and mode,
//! reference resolution, parsing, and Confluent's message texts.

use super::{NewSchema, Registry};
use crate::access::Operation;
use crate::error::RegistryError;
use crate::model::{Context, Mode, SchemaBody, SchemaRecord, Subject, Version, VersionRow, VersionSelector};
use crate::store::{LayeredContext, StoreError};
use registry_schema::{
    CompatibilityLevel, Dependency, Fingerprint, Limits, ParsedSchema, SchemaError, SchemaReference, SchemaType,
    Validation,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// How many times a write path re-reads and retries after losing a conditional write. Each
/// loss means another writer made progress, so this bounds work, not correctness.
pub(super) const MAX_ATTEMPTS: usize = 512;

/// The longest pause between two attempts after lost conditional writes.
const MAX_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// Largest reference closure we resolve (guards against hostile or corrupt reference graphs), and
/// most references a posted schema may list (refused before any of them is read).
const MAX_DEPENDENCIES: usize = 10_000;

/// The rows of each subject one reference resolution read: every referenced subject is read once
/// however many references name it (a posted schema may list thousands of `latest` references to
/// one subject).
pub(super) type RowsRead = HashMap<Subject, Arc<Vec<VersionRow>>>;

/// The effective compatibility settings of a subject.
#[derive(Debug, Clone)]
pub(super) struct Effective {
    pub level: CompatibilityLevel,
    pub normalize: bool,
    /// Check `confluent:reserved` fields (`validateFields`; off unless configured).
    pub validate_fields: bool,
    /// Check only against versions with the new schema's value of this metadata property.
    pub group: Option<String>,
}

impl Registry {
    /// Every row of `subject`, ascending.
    pub(super) async fn rows(&self, subject: &Subject) -> Result<Vec<VersionRow>, RegistryError> {
        Ok(self.store.versions(subject).await?)
    }

    /// The subject named `subject` (its alias target when it has no rows) with every row of it,
    /// or 40401 when no row is visible under `include_deleted`.
    pub(super) async fn visible_subject(
        &self,
        subject: &str,
        include_deleted: bool,
    ) -> Result<(Subject, Vec<VersionRow>), RegistryError> {
        let (subject, rows) = self.rows_following_alias(Subject::new(subject)?).await?;
        if visible(&rows, include_deleted).next().is_none() {
            return Err(subject_not_found(&subject));
        }
        Ok((subject, rows))
    }

    /// The body a row points at. A row without its body is corrupt storage (bodies are written first).
    pub(super) async fn body(&self, fingerprint: &Fingerprint) -> Result<SchemaBody, RegistryError> {
        match self.store.get_body(fingerprint).await? {
            Some(body) => Ok(body),
            None => Err(StoreError::Corrupt(format!("schema body {fingerprint} is missing")).into()),
        }
    }

    /// A row with its body.
    pub(super) async fn record(&self, row: &VersionRow) -> Result<SchemaRecord, RegistryError> {
        Ok(SchemaRecord {
            subject: row.subject.clone(),
            version: row.version,
            id: row.id,
            body: self.body(&row.fingerprint).await?,
            deleted: row.deleted,
            registered_at_ms: row.registered_at_ms,
        })
    }

    /// A row with `body` when it is the row's (same fingerprint: what a lookup matched by),
    /// else with the body read from the store.
    pub(super) async fn record_with(&self, row: &VersionRow, body: SchemaBody) -> Result<SchemaRecord, RegistryError> {
        if body.fingerprint() != row.fingerprint {
            return self.record(row).await;
        }
        Ok(SchemaRecord {
            subject: row.subject.clone(),
            version: row.version,
            id: row.id,
            body,
            deleted: row.deleted,
            registered_at_ms: row.registered_at_ms,
        })
    }

    /// Level and normalize flag of a write's context: subject config, then global, then the server default.
    pub(super) fn effective_of(&self, context: &LayeredContext) -> Effective {
        let merged = context.merged_config();
        Effective {
            level: merged.compatibility_level.unwrap_or(self.settings.default_compatibility),
            normalize: merged.normalize.unwrap_or(false),
            validate_fields: merged.validate_fields.unwrap_or(false),
            group: merged.compatibility_group,
        }
    }

    /// Counts a lost conditional write and waits before attempt `attempt + 1`: the first retries
    /// only yield; later ones sleep a random time up to an exponentially growing bound (at most
    /// [`MAX_BACKOFF`]), so writers that keep cancelling each other (DynamoDB's TransactionConflict
    /// between transactions touching one item, such as the global config) spread out instead of
    /// colliding again in lockstep.
    pub(super) async fn after_conflict(&self, attempt: usize) {
        self.metrics.record_store_retry();
        if attempt < 2 {
            tokio::task::yield_now().await;
            return;
        }
        let bound = MAX_BACKOFF.min(std::time::Duration::from_micros(500u64 << (attempt - 2).min(16)));
        tokio::time::sleep(bound.mul_f64(jitter())).await;
    }

    /// The flattened reference closure of `references` of a schema in `context`, dependency
    /// order, one entry per reference name. Each reference names its subject as
    /// [`Context::referenced_subject`] says: an unqualified one is in the referrer's context (a
    /// nested reference's referrer is the subject it was found in). With `require_live` the
    /// direct references must exist and be live (42201 otherwise); nested ones were checked when
    /// their referrer was registered and may since be soft-deleted.
    pub(super) async fn dependencies(
        &self,
        context: &Context,
        references: &[SchemaReference],
        require_live: bool,
    ) -> Result<Vec<Dependency>, RegistryError> {
        self.dependencies_reading(context, references, require_live, &mut RowsRead::new()).await
    }

    /// [`Registry::dependencies`], reading each subject's rows at most once into `read`.
    ///
    /// A name is bound by its first reference in depth-first order, as Confluent's
    /// `AbstractSchemaProvider.resolveReferences` does: a later reference with the same name is
    /// still read (a missing one is 42201) but neither its schema nor its own references are
    /// added. With `reference_versions_strict` set, a posted schema (`require_live`) whose
    /// closure binds one name at two versions is 42201 "Conflicting reference versions" instead
    /// (Confluent's `schema.providers.reference.versions.strict`, 98aa28082a4); stored schemas
    /// were accepted when stored and resolve leniently.
    pub(super) async fn dependencies_reading(
        &self,
        context: &Context,
        references: &[SchemaReference],
        require_live: bool,
        read: &mut RowsRead,
    ) -> Result<Vec<Dependency>, RegistryError> {
        let strict = require_live && self.settings.reference_versions_strict;
        let mut out = Vec::new();
        let mut bound: HashMap<String, i32> = HashMap::new();
        let mut bodies: HashMap<(Subject, i32), SchemaBody> = HashMap::new();
        let mut stack: Vec<(SchemaReference, Context, bool, bool)> =
            references.iter().rev().map(|r| (r.clone(), context.clone(), false, require_live)).collect();
        let mut steps = 0usize;
        while let Some((reference, referrer, expanded, direct)) = stack.pop() {
            steps += 1;
            if steps > MAX_DEPENDENCIES {
                return Err(too_many_references());
            }
            let target = self.referenced_subject(&referrer, &reference)?;
            let key = (target, reference.version);
            if expanded {
                if let Some(body) = bodies.get(&key) {
                    out.push(Dependency {
                        name: reference.name.clone(),
                        schema_type: body.schema_type,
                        schema: body.schema.clone(),
                    });
                }
                continue;
            }
            let body = match bodies.get(&key) {
                Some(body) => body.clone(),
                None => {
                    let body = self.referenced_body(&reference, &key.0, direct, read).await?;
                    bodies.insert(key.clone(), body.clone());
                    body
                }
            };
            if let Some(&first) = bound.get(&reference.name) {
                if strict && first != reference.version {
                    return Err(conflicting_reference_versions(&reference.name, first, reference.version));
                }
                continue;
            }
            bound.insert(reference.name.clone(), reference.version);
            let nested = key.0.context();
            stack.push((reference, referrer, true, direct));
            stack.extend(body.references.iter().rev().map(|r| (r.clone(), nested.clone(), false, false)));
        }
        Ok(out)
    }

    /// The subject `reference`, found in a schema of `referrer`, names, as
    /// [`Context::referenced_subject`] says (42201 as a missing reference when it is no subject),
    /// once the caller may read it (403 otherwise). Every reference a request resolves goes
    /// through here before anything is read at its subject: posted and stored, direct and nested,
    /// so a chain of references reaches no subject the caller may not read, whoever wrote it.
    fn referenced_subject(&self, referrer: &Context, reference: &SchemaReference) -> Result<Subject, RegistryError> {
        let subject = referrer.referenced_subject(&reference.subject).map_err(|_| missing_reference(reference))?;
        self.access.require(Operation::Read, &subject)?;
        Ok(subject)
    }

    /// The body `reference` names, read at `subject` (its target): a numbered version is one
    /// point read (or found in the rows `read` already holds), `latest` needs the subject's rows.
    async fn referenced_body(
        &self,
        reference: &SchemaReference,
        subject: &Subject,
        must_be_live: bool,
        read: &mut RowsRead,
    ) -> Result<SchemaBody, RegistryError> {
        let row = match (reference.version, read.get(subject)) {
            (-1, _) => latest_live(&self.rows_once(subject, read).await?).cloned(),
            (version, Some(rows)) => rows.iter().find(|r| r.version == Version(version)).cloned(),
            (version, None) => self.store.get_version(subject, Version(version)).await?,
        };
        match row.filter(|row| !must_be_live || !row.deleted) {
            Some(row) => self.body(&row.fingerprint).await,
            None => Err(missing_reference(reference)),
        }
    }

    /// Parses a posted schema (non-empty text) with its references resolved into the body to store.
    pub(super) async fn parse_new(
        &self,
        context: &Context,
        schema: &NewSchema,
        text: &str,
        validation: Validation,
        normalize: bool,
    ) -> Result<(ParsedSchema, SchemaBody), RegistryError> {
        let (references, dependencies) = self.resolve_references(context, schema).await?;
        let parsed =
            self.parse_in_pool(schema.schema_type, text.to_string(), dependencies, validation, normalize).await?;
        let body = posted_body(schema, parsed.canonical_text().to_string(), references);
        Ok((parsed, body))
    }

    /// A posted schema's references with `latest` pinned, and the texts of their closure in
    /// dependency order, direct references required live: what parsing it needs. Bounded before
    /// any read: more than [`MAX_DEPENDENCIES`] references are 42201, and a reference naming a
    /// subject the caller may not read is 403 (so nothing is learnt about it). Each referenced
    /// subject's rows are then read once.
    pub(super) async fn resolve_references(
        &self,
        context: &Context,
        schema: &NewSchema,
    ) -> Result<(Vec<SchemaReference>, Vec<Dependency>), RegistryError> {
        if schema.references.len() > MAX_DEPENDENCIES {
            return Err(too_many_references());
        }
        for reference in &schema.references {
            self.referenced_subject(context, reference)?;
        }
        let mut read = RowsRead::new();
        let references = self.pin_latest_references(context, &schema.references, &mut read).await?;
        let dependencies = self.dependencies_reading(context, &references, true, &mut read).await?;
        Ok((references, dependencies))
    }

    /// `subject`'s rows as `read` holds them, read (once) when it does not yet.
    async fn rows_once(&self, subject: &Subject, read: &mut RowsRead) -> Result<Arc<Vec<VersionRow>>, RegistryError> {
        if let Some(rows) = read.get(subject) {
            return Ok(Arc::clone(rows));
        }
        let rows = Arc::new(self.rows(subject).await?);
        read.insert(subject.clone(), Arc::clone(&rows));
        Ok(rows)
    }

    /// `references` with every `"version": -1` (latest) replaced by the subject's latest live
    /// version, as Confluent does when it registers or looks up a schema: a stored reference
    /// always names one version, so the referrer keeps parsing when the referenced subject evolves,
    /// the version it uses cannot be deleted under it (42206), and no reference cycle can form.
    /// 42201 when the subject has no live version.
    async fn pin_latest_references(
        &self,
        context: &Context,
        references: &[SchemaReference],
        read: &mut RowsRead,
    ) -> Result<Vec<SchemaReference>, RegistryError> {
        let mut pinned = Vec::with_capacity(references.len());
        for reference in references {
            if reference.version != -1 {
                pinned.push(reference.clone());
                continue;
            }
            let subject = self.referenced_subject(context, reference)?;
            let rows = self.rows_once(&subject, read).await?;
            let latest = latest_live(&rows).ok_or_else(|| missing_reference(reference))?;
            pinned.push(SchemaReference { version: latest.version.0, ..reference.clone() });
        }
        Ok(pinned)
    }

    /// Re-parses a stored body of `context` leniently with its own dependencies (for
    /// compatibility checks and renderings).
    pub(super) async fn parse_stored(
        &self,
        context: &Context,
        body: &SchemaBody,
    ) -> Result<ParsedSchema, RegistryError> {
        let dependencies = self.dependencies(context, &body.references, false).await?;
        let (schema_type, text, limits) = (body.schema_type, body.schema.clone(), self.settings.limits);
        self.cpu.run(move || parse_stored_now(schema_type, &text, &dependencies, &limits)).await?
    }

    /// Parses in the bounded pool (see `registry::cpu`) within the configured budgets.
    pub(super) async fn parse_in_pool(
        &self,
        schema_type: SchemaType,
        text: String,
        dependencies: Vec<Dependency>,
        validation: Validation,
        normalize: bool,
    ) -> Result<ParsedSchema, RegistryError> {
        let limits = self.settings.limits;
        let parse =
            move || ParsedSchema::parse_within(schema_type, &text, &dependencies, validation, normalize, &limits);
        Ok(self.cpu.run(parse).await??)
    }
}

/// The body to store for a posted schema: its stored text `canonical`, its `references` (pinned).
pub(super) fn posted_body(schema: &NewSchema, canonical: String, references: Vec<SchemaReference>) -> SchemaBody {
    SchemaBody {
        schema_type: schema.schema_type,
        schema: canonical,
        references,
        metadata: schema.metadata.clone(),
        rule_set: schema.rule_set.clone(),
    }
}

/// Parses a stored schema where it is: in a pool job. It was valid when stored, so a failure is corrupt
/// storage, except for a budget: limits lowered since then refuse it as they would a new one (42201).
pub(super) fn parse_stored_now(
    schema_type: SchemaType,
    text: &str,
    dependencies: &[Dependency],
    limits: &Limits,
) -> Result<ParsedSchema, RegistryError> {
    ParsedSchema::parse_within(schema_type, text, dependencies, Validation::Lenient, false, limits).map_err(|e| match e
    {
        SchemaError::TooDeep { .. } | SchemaError::BudgetExceeded { .. } => RegistryError::from(e),
        other => StoreError::Corrupt(format!("stored schema does not parse: {other}")).into(),
    })
}

impl Registry {}

/// The rows visible with or without soft-deleted ones.
pub(super) fn visible(rows: &[VersionRow], include_deleted: bool) -> impl Iterator<Item = &VersionRow> {
    rows.iter().filter(move |r| include_deleted || !r.deleted)
}

/// 42201 for a closure binding `name` at two versions under the strict rule (Confluent's text).
fn conflicting_reference_versions(name: &str, first: i32, other: i32) -> RegistryError {
    RegistryError::InvalidSchema {
        reason: format!("Conflicting reference versions for \"{name}\": version {first} and version {other}"),
    }
}

/// 42201 for a reference list or closure over [`MAX_DEPENDENCIES`].
fn too_many_references() -> RegistryError {
    RegistryError::InvalidSchema { reason: "Too many schema references".to_string() }
}

/// 42201 for a reference whose subject and version name no (live, where required) version.
fn missing_reference(reference: &SchemaReference) -> RegistryError {
    RegistryError::InvalidSchema {
        reason: format!(
            "Invalid schema: reference {} to subject '{}' version {} does not exist",
            reference.name, reference.subject, reference.version
        ),
    }
}

/// The highest live row.
pub(super) fn latest_live(rows: &[VersionRow]) -> Option<&VersionRow> {
    rows.iter().rev().find(|r| !r.deleted)
}

/// The number Confluent prints for a selector in 40402 texts (`latest` is -1).
pub(super) fn selector_text(selector: VersionSelector) -> String {
    match selector {
        VersionSelector::Latest => "-1".to_string(),
        VersionSelector::Number(v) => v.to_string(),
    }
}

/// 40401.
pub(super) fn subject_not_found(subject: &Subject) -> RegistryError {
    RegistryError::SubjectNotFound { subject: subject.to_string() }
}

/// 40402.
pub(super) fn version_not_found(subject: &Subject, selector: VersionSelector) -> RegistryError {
    RegistryError::VersionNotFound { subject: subject.to_string(), version: selector_text(selector) }
}

fn subject_label(subject: Option<&Subject>) -> &str {
    subject.map_or("__GLOBAL", Subject::as_str)
}

/// 42205 when the effective mode read in `context` (for `subject`, or the registry for `None`) is
/// read-only. Writes check it on the context their commit is conditioned on.
pub(super) fn writable(context: &LayeredContext, subject: Option<&Subject>) -> Result<(), RegistryError> {
    match context.effective_mode() {
        Mode::ReadOnly | Mode::ReadOnlyOverride => Err(read_only(subject)),
        Mode::ReadWrite | Mode::Import => Ok(()),
    }
}

pub(super) fn read_only(subject: Option<&Subject>) -> RegistryError {
    let context = subject.map_or(Context::DEFAULT, Subject::context);
    let message = format!("Subject {} in context {context} is in read-only mode", subject_label(subject));
    RegistryError::OperationNotPermitted { message }
}

/// 42205 `Subject X in context C is not in import mode` (C the subject's context, as Confluent's
/// `QualifiedSubject.qualifiedContextFor`).
pub(super) fn not_import(subject: &Subject) -> RegistryError {
    let context = subject.context();
    RegistryError::OperationNotPermitted {
        message: format!("Subject {subject} in context {context} is not in import mode"),
    }
}

/// 42205 `Subject X in context C is not in read-write mode`.
pub(super) fn not_read_write(subject: &Subject) -> RegistryError {
    let context = subject.context();
    RegistryError::OperationNotPermitted {
        message: format!("Subject {subject} in context {context} is not in read-write mode"),
    }
}

/// 42206 for (subject, version), with Confluent's SchemaKey text.
pub(super) fn reference_exists(subject: &Subject, version: Version) -> RegistryError {
    RegistryError::ReferenceExists { key: format!("{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}") }
}

/// Milliseconds since the Unix epoch.
pub(super) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)).unwrap_or(0)
}

/// A number in [0, 1) that differs between concurrent callers (no shared random generator needed).
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}
