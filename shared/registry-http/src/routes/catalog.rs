//! AxonOps Schema Registry's analysis API: the registry as a machine-readable catalog (field and
//! type search, content search, version diff, dependencies, history, export, validation, normal
//! form, complexity, multi-subject compatibility). Request fields are as AxonOps documents them
//! (`schemaType` in camelCase), answers in its snake_case; the analysis itself is
//! `registry-catalog`'s.
//!
//! Authorization is the rest of the API's: the routes need `read`; a path subject is checked by
//! the endpoint guard, listings scan only the caller's subjects
//! ([`crate::endpoint::Permit::subjects`]) and every schema is read through the registry acting
//! for the caller ([`Call`]), references included.
//!
//! Cost: searches have no index. They scan subjects in name order from `cursor` (exclusive), at
//! most `max_subjects` per request ([`DEFAULT_SCAN`], at most [`MAX_SCAN`]), reading each one's
//! latest version, and answer `next_cursor` when subjects remain, so no request walks the whole
//! registry. On DynamoDB + S3 a request costs one subject-listing Query per 500 subjects plus, per
//! subject scanned, the Query of its versions and the GetObject of its body (bodies shared by
//! several subjects, and references, are read once per schema); registrations cost nothing more.

use super::catalog_advice as advice;
use super::{ApiResult, Call, json};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ConfluentJson, ConfluentQuery, Segment, SubjectVersion, parse_version, text};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use registry_catalog::{Field, FieldMode, Matcher, fields};
use registry_core::{
    DeletedFilter, NewSchema, Registry, RegistryError, SchemaRecord, SchemaType, Subject, VersionSelector,
};
use registry_schema::{Dependency, ParsedSchema, SchemaError, Validation};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Subjects one search request scans when it does not say.
pub const DEFAULT_SCAN: usize = 1000;
/// Most subjects one search request scans.
pub const MAX_SCAN: usize = 5000;
/// Results one search answers when it does not say, and the most it answers.
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 1000;
/// Subjects listed per store page while scanning.
const SCAN_PAGE: usize = 500;
/// Most referenced schemas read to parse one schema.
const MAX_REFERENCES: usize = 100;
/// Most subjects of one `POST /compatibility/check`.
const MAX_CHECKED_SUBJECTS: usize = 100;

/// The scan window shared by the searches.
#[derive(Debug, Default, Deserialize)]
pub struct ScanWindow {
    /// Results wanted (default 50, at most 1000).
    #[serde(default)]
    limit: Option<usize>,
    /// Resume after this subject (a previous answer's `next_cursor`).
    #[serde(default)]
    cursor: Option<String>,
    /// Subjects this request may scan (default 1000, at most 5000).
    #[serde(default)]
    max_subjects: Option<usize>,
    /// Only subjects starting with this.
    #[serde(default)]
    subject_prefix: Option<String>,
}

impl ScanWindow {
    /// `limit` when the request gives none (AxonOps's per-endpoint defaults differ).
    pub(super) fn default_limit(&mut self, limit: usize) {
        self.limit = self.limit.or(Some(limit));
    }

    /// Subjects this request may scan: `max_subjects`, else `default`, at most `most`.
    pub(super) fn budget(&self, default: usize, most: usize) -> usize {
        self.max_subjects.filter(|m| *m > 0).unwrap_or(default).min(most)
    }

    /// The subject to resume after.
    pub(super) fn cursor(&self) -> Result<Option<Subject>, ApiError> {
        Ok(self.cursor.as_deref().filter(|c| !c.is_empty()).map(Subject::new).transpose()?)
    }

    pub(super) fn prefix(&self) -> String {
        self.subject_prefix.clone().unwrap_or_default()
    }
}

/// The scan window of a GET endpoint, from its query string (read as strings, as JAX-RS reads them).
#[derive(Debug, Default, Deserialize)]
pub struct ScanQuery {
    #[serde(default, deserialize_with = "text")]
    cursor: Option<String>,
    #[serde(default, deserialize_with = "text")]
    max_subjects: Option<String>,
    #[serde(default, deserialize_with = "text")]
    subject_prefix: Option<String>,
}

impl From<ScanQuery> for ScanWindow {
    fn from(query: ScanQuery) -> Self {
        ScanWindow {
            limit: None,
            cursor: query.cursor,
            max_subjects: query.max_subjects.and_then(|m| m.trim().parse().ok()),
            subject_prefix: query.subject_prefix,
        }
    }
}

/// The context of a `/contexts/{ctx}/...` request to an endpoint whose subjects are not in the
/// path: the base-URL rewrite passes its qualifier (`:.team:`) as the `context` query parameter.
/// Scans stay inside it and subjects named in the body are taken in it.
#[derive(Debug, Default, Deserialize)]
pub struct CatalogContext {
    #[serde(default, deserialize_with = "text")]
    context: Option<String>,
}

impl CatalogContext {
    fn qualifier(&self) -> &str {
        self.context.as_deref().unwrap_or("")
    }

    /// `subject` in the context, unless it names a context itself.
    pub(super) fn subject(&self, subject: &str) -> String {
        if subject.starts_with(':') { subject.to_string() } else { format!("{}{subject}", self.qualifier()) }
    }

    /// Narrows `window`'s scan to the context.
    pub(super) fn apply(&self, window: &mut ScanWindow) {
        if !self.qualifier().is_empty() {
            window.subject_prefix = Some(self.subject(window.subject_prefix.as_deref().unwrap_or("")));
        }
    }
}

/// What a catalog handler starts from: the [`Call`], and the context the request names.
pub struct Catalog {
    pub(super) call: Call,
    pub(super) context: CatalogContext,
}

impl FromRequestParts<AppState> for Catalog {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let call = Call::from_request_parts(parts, state).await?;
        let ConfluentQuery(context) = ConfluentQuery::<CatalogContext>::from_request_parts(parts, state).await?;
        Ok(Catalog { call, context })
    }
}

/// How far a scan went, added to every search answer.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    /// Subjects whose latest version was read.
    subjects_scanned: usize,
    /// Present when subjects remain: pass it as `cursor` to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

impl ScanReport {
    pub(super) fn new(subjects_scanned: usize, next_cursor: Option<String>) -> Self {
        ScanReport { subjects_scanned, next_cursor }
    }
}

/// Scans the caller's live subjects in `window` (inside the request's context), handing each
/// latest version (parsed) to `visit`, which answers how many results it added. Stops at the result
/// limit or the scan budget, at a subject boundary (the last subject's results are all kept).
pub(super) async fn scan<F>(catalog: &Catalog, mut window: ScanWindow, mut visit: F) -> Result<ScanReport, ApiError>
where
    F: FnMut(&SchemaRecord, Option<&ParsedSchema>) -> usize,
{
    catalog.context.apply(&mut window);
    let call = &catalog.call;
    let limit = window.limit.filter(|l| *l > 0).unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
    let budget = window.max_subjects.filter(|m| *m > 0).unwrap_or(DEFAULT_SCAN).min(MAX_SCAN);
    let scope = call.permit.subjects();
    let prefix = window.subject_prefix.clone().unwrap_or_default();
    let mut after = window.cursor.as_deref().filter(|c| !c.is_empty()).map(Subject::new).transpose()?;
    let (mut scanned, mut found) = (0usize, 0usize);
    loop {
        let wanted = SCAN_PAGE.min(budget - scanned);
        let page =
            call.state.registry.subjects_page(&scope, &prefix, DeletedFilter::LiveOnly, after.as_ref(), wanted).await?;
        for subject in &page {
            if found >= limit || scanned >= budget {
                return Ok(ScanReport { subjects_scanned: scanned, next_cursor: after.map(|s| s.as_str().into()) });
            }
            scanned += 1;
            after = Some(subject.clone());
            let record = match call.registry.version(subject.as_str(), VersionSelector::Latest, false).await {
                Ok(record) => record,
                // Deleted between the listing and the read.
                Err(RegistryError::SubjectNotFound { .. } | RegistryError::VersionNotFound { .. }) => continue,
                Err(error) => return Err(error.into()),
            };
            let parsed = parse_record(&call.registry, &record).await?;
            found += visit(&record, parsed.as_ref());
        }
        if page.len() < wanted {
            return Ok(ScanReport { subjects_scanned: scanned, next_cursor: None });
        }
        if scanned >= budget || found >= limit {
            return Ok(ScanReport { subjects_scanned: scanned, next_cursor: after.map(|s| s.as_str().into()) });
        }
    }
}

/// `record`'s schema parsed with its references, read through `registry` (so the caller must be
/// allowed to read them); `None` when a reference is not readable by the caller or the text no
/// longer parses (a search skips such a schema rather than failing). Store failures propagate.
async fn parse_record(registry: &Registry, record: &SchemaRecord) -> Result<Option<ParsedSchema>, ApiError> {
    let dependencies = match dependencies(registry, record).await {
        Ok(dependencies) => dependencies,
        Err(RegistryError::Store(error)) => return Err(RegistryError::Store(error).into()),
        Err(_) => return Ok(None),
    };
    let (schema_type, text) = (record.body.schema_type, record.body.schema.clone());
    Ok(parse_blocking(schema_type, text, dependencies, Validation::Lenient).await?.ok())
}

/// The reference closure of `record`, flattened in dependency order, resolved in its context.
async fn dependencies(registry: &Registry, record: &SchemaRecord) -> Result<Vec<Dependency>, RegistryError> {
    let context = record.subject.context();
    let mut out = Vec::new();
    let mut done = HashSet::new();
    // (reference name, subject, version, expanded): a reference is emitted after its own ones.
    let mut stack: Vec<(String, Subject, i32, bool)> = Vec::new();
    for reference in record.body.references.iter().rev() {
        stack.push((reference.name.clone(), context.referenced_subject(&reference.subject)?, reference.version, false));
    }
    let mut steps = 0usize;
    while let Some((name, subject, version, expanded)) = stack.pop() {
        steps += 1;
        if steps > MAX_REFERENCES * 2 {
            return Err(RegistryError::InvalidSchema { reason: "too many references".into() });
        }
        if done.contains(&(subject.clone(), version)) {
            continue;
        }
        let selector = VersionSelector::Number(registry_core::Version(version));
        let found = registry.version(subject.as_str(), selector, true).await?;
        if expanded {
            done.insert((subject, version));
            out.push(Dependency { name, schema_type: found.body.schema_type, schema: found.body.schema });
            continue;
        }
        stack.push((name, subject.clone(), version, true));
        let inner = found.subject.context();
        for reference in found.body.references.iter().rev() {
            stack.push((
                reference.name.clone(),
                inner.referenced_subject(&reference.subject)?,
                reference.version,
                false,
            ));
        }
    }
    Ok(out)
}

/// Parses off the async threads (schemas can take milliseconds).
async fn parse_blocking(
    schema_type: SchemaType,
    text: String,
    dependencies: Vec<Dependency>,
    validation: Validation,
) -> Result<Result<ParsedSchema, SchemaError>, ApiError> {
    tokio::task::spawn_blocking(move || ParsedSchema::parse(schema_type, &text, &dependencies, validation, false))
        .await
        .map_err(|error| ApiError::Internal(format!("parse task: {error}")))
}

pub(super) fn bad_query(error: registry_catalog::MatchError) -> ApiError {
    ApiError::BadRequest(error.0)
}

/// `POST /schemas/search/field` body.
#[derive(Debug, Deserialize)]
pub struct FieldSearch {
    field: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    threshold: Option<f64>,
    #[serde(flatten)]
    window: ScanWindow,
}

/// A field found by a field or type search (`score` only in the former).
#[derive(Debug, Serialize)]
struct FieldMatch {
    subject: String,
    version: i32,
    field_name: String,
    field_type: String,
    field_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    schema_type: SchemaType,
}

impl FieldMatch {
    fn new(record: &SchemaRecord, field: Field, score: Option<f64>) -> Self {
        FieldMatch {
            subject: record.subject.as_str().to_string(),
            version: record.version.0,
            field_name: field.name,
            field_type: field.type_name,
            field_path: field.path,
            score,
            schema_type: record.body.schema_type,
        }
    }
}

/// `POST /schemas/search/field`: fields of the latest versions named like `field` (`exact`
/// naming variants, `fuzzy` at `threshold` (0.6), or `regex`).
pub async fn search_field(catalog: Catalog, ConfluentJson(request): ConfluentJson<FieldSearch>) -> ApiResult {
    let mode = FieldMode::parse(request.mode.as_deref().unwrap_or("")).map_err(bad_query)?;
    let matcher = Matcher::field(&request.field, mode, request.threshold.unwrap_or(0.6)).map_err(bad_query)?;
    let mut matches = Vec::new();
    let report = scan(&catalog, request.window, |record, parsed| {
        let before = matches.len();
        for field in parsed.map(fields).unwrap_or_default() {
            if let Some(score) = matcher.score(&field.name) {
                matches.push(FieldMatch::new(record, field, Some(score)));
            }
        }
        matches.len() - before
    })
    .await?;
    #[derive(Serialize)]
    struct Answer<'a> {
        field: &'a str,
        mode: &'static str,
        count: usize,
        matches: Vec<FieldMatch>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { field: &request.field, mode: mode.as_str(), count: matches.len(), matches, report })
}

/// `POST /schemas/search/type` body.
#[derive(Debug, Deserialize)]
pub struct TypeSearch {
    type_pattern: String,
    #[serde(default)]
    regex: bool,
    #[serde(flatten)]
    window: ScanWindow,
}

/// `POST /schemas/search/type`: fields of the latest versions whose type name is `type_pattern`
/// (case-insensitive) or matches it as a regex.
pub async fn search_type(catalog: Catalog, ConfluentJson(request): ConfluentJson<TypeSearch>) -> ApiResult {
    let matcher = Matcher::type_name(&request.type_pattern, request.regex).map_err(bad_query)?;
    let mut matches = Vec::new();
    let report = scan(&catalog, request.window, |record, parsed| {
        let before = matches.len();
        for field in parsed.map(fields).unwrap_or_default() {
            if matcher.score(&field.type_name).is_some() {
                matches.push(FieldMatch::new(record, field, None));
            }
        }
        matches.len() - before
    })
    .await?;
    #[derive(Serialize)]
    struct Answer<'a> {
        type_pattern: &'a str,
        count: usize,
        matches: Vec<FieldMatch>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { type_pattern: &request.type_pattern, count: matches.len(), matches, report })
}

/// `POST /schemas/search` body.
#[derive(Debug, Deserialize)]
pub struct TextSearch {
    query: String,
    #[serde(default)]
    regex: bool,
    #[serde(flatten)]
    window: ScanWindow,
}

#[derive(Debug, Serialize)]
struct TextMatch {
    subject: String,
    version: i32,
    schema_type: SchemaType,
}

/// `POST /schemas/search`: latest versions whose text contains `query` (case-insensitive) or
/// matches it as a regex.
pub async fn search_text(catalog: Catalog, ConfluentJson(request): ConfluentJson<TextSearch>) -> ApiResult {
    let matcher = Matcher::text(&request.query, request.regex).map_err(bad_query)?;
    let mut matches = Vec::new();
    let report = scan(&catalog, request.window, |record, _| {
        if matcher.score(&record.body.schema).is_none() {
            return 0;
        }
        matches.push(TextMatch {
            subject: record.subject.as_str().to_string(),
            version: record.version.0,
            schema_type: record.body.schema_type,
        });
        1
    })
    .await?;
    #[derive(Serialize)]
    struct Answer<'a> {
        query: &'a str,
        count: usize,
        matches: Vec<TextMatch>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { query: &request.query, count: matches.len(), matches, report })
}

/// A version read and parsed for the caller; 42201 when a stored schema no longer parses.
pub(super) async fn parsed_version(
    registry: &Registry,
    subject: &str,
    selector: VersionSelector,
) -> Result<(SchemaRecord, ParsedSchema), ApiError> {
    let record = registry.version(subject, selector, false).await?;
    let dependencies = dependencies(registry, &record).await?;
    let (schema_type, text) = (record.body.schema_type, record.body.schema.clone());
    let parsed = parse_blocking(schema_type, text, dependencies, Validation::Lenient)
        .await?
        .map_err(|error| ApiError::Registry(error.into()))?;
    Ok((record, parsed))
}

/// `POST /subjects/{s}/diff` body: versions to compare (`version1` default 1, `version2` latest).
#[derive(Debug, Default, Deserialize)]
pub struct DiffRequest {
    #[serde(default)]
    version1: Option<i32>,
    #[serde(default)]
    version2: Option<i32>,
}

fn selector(version: Option<i32>, default: VersionSelector) -> Result<VersionSelector, ApiError> {
    match version {
        None | Some(0) => Ok(default),
        Some(number) => parse_version(&number.to_string()),
    }
}

/// `POST /subjects/{s}/diff`: fields added, removed and changed in type from `version1` to
/// `version2`.
pub async fn diff(
    call: Call,
    Segment(subject): Segment,
    ConfluentJson(request): ConfluentJson<DiffRequest>,
) -> ApiResult {
    let first = selector(request.version1, VersionSelector::Number(registry_core::Version(1)))?;
    let second = selector(request.version2, VersionSelector::Latest)?;
    let (old, old_parsed) = parsed_version(&call.registry, &subject, first).await?;
    let (new, new_parsed) = parsed_version(&call.registry, &subject, second).await?;
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        version1: i32,
        version2: i32,
        #[serde(flatten)]
        diff: registry_catalog::FieldDiff,
    }
    json(&Answer {
        subject: new.subject.as_str().to_string(),
        version1: old.version.0,
        version2: new.version.0,
        diff: registry_catalog::diff(&old_parsed, &new_parsed),
    })
}

#[derive(Debug, Serialize)]
struct SubjectVersionPair {
    subject: String,
    version: i32,
}

/// `GET /subjects/{s}/versions/{v}/dependencies`: the versions that reference this one (those the
/// caller may read), and the ones it references.
pub async fn dependencies_of(call: Call, SubjectVersion(subject, version): SubjectVersion) -> ApiResult {
    let selector = parse_version(&version)?;
    let record = call.registry.version(&subject, selector, true).await?;
    let mut referenced_by = Vec::new();
    for id in call.registry.referenced_by(&subject, selector, false).await? {
        for (referrer, number) in call.registry.versions_for_id(id.0, false).await? {
            if call.permit.require(registry_auth::Operation::Read, Some(referrer.as_str())).is_ok() {
                referenced_by.push(SubjectVersionPair { subject: referrer.as_str().into(), version: number.0 });
            }
        }
    }
    let references = record
        .body
        .references
        .iter()
        .map(|r| SubjectVersionPair { subject: r.subject.clone(), version: r.version })
        .collect::<Vec<_>>();
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        version: i32,
        schema_id: i32,
        referenced_by: Vec<SubjectVersionPair>,
        references: Vec<SubjectVersionPair>,
    }
    json(&Answer {
        subject: record.subject.as_str().into(),
        version: record.version.0,
        schema_id: record.id.0,
        referenced_by,
        references,
    })
}

/// The live versions of `subject`, read for the caller.
async fn all_versions(registry: &Registry, subject: &str) -> Result<Vec<SchemaRecord>, ApiError> {
    let mut out = Vec::new();
    for number in registry.version_numbers(subject, DeletedFilter::LiveOnly).await? {
        out.push(registry.version(subject, VersionSelector::Number(number), false).await?);
    }
    Ok(out)
}

/// `GET /subjects/{s}/history`: each live version with its ID, type and registration time.
pub async fn history(call: Call, Segment(subject): Segment) -> ApiResult {
    #[derive(Serialize)]
    struct Entry {
        version: i32,
        schema_id: i32,
        schema_type: SchemaType,
        registered_at_ms: i64,
    }
    let history: Vec<Entry> = all_versions(&call.registry, &subject)
        .await?
        .into_iter()
        .map(|r| Entry {
            version: r.version.0,
            schema_id: r.id.0,
            schema_type: r.body.schema_type,
            registered_at_ms: r.registered_at_ms,
        })
        .collect();
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        count: usize,
        history: Vec<Entry>,
    }
    json(&Answer { subject, count: history.len(), history })
}

#[derive(Debug, Serialize)]
struct Exported {
    subject: String,
    version: i32,
    id: i32,
    schema: String,
    schema_type: SchemaType,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<registry_core::SchemaReference>,
}

impl Exported {
    fn of(record: SchemaRecord) -> Self {
        Exported {
            subject: record.subject.as_str().into(),
            version: record.version.0,
            id: record.id.0,
            schema: record.body.schema,
            schema_type: record.body.schema_type,
            references: record.body.references,
        }
    }
}

/// `GET /subjects/{s}/export`: every live version with its text.
pub async fn export_subject(call: Call, Segment(subject): Segment) -> ApiResult {
    let versions: Vec<Exported> = all_versions(&call.registry, &subject).await?.into_iter().map(Exported::of).collect();
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        count: usize,
        versions: Vec<Exported>,
    }
    json(&Answer { subject, count: versions.len(), versions })
}

/// `GET /subjects/{s}/versions/{v}/export`: one version with its text.
pub async fn export_version(call: Call, SubjectVersion(subject, version): SubjectVersion) -> ApiResult {
    let record = call.registry.version(&subject, parse_version(&version)?, false).await?;
    json(&Exported::of(record))
}

/// Body of the analyses of one posted schema (or a subject's latest version).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaInput {
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    schema_type: Option<SchemaType>,
    #[serde(default)]
    subject: Option<String>,
}

impl SchemaInput {
    fn text(&self) -> Result<&str, ApiError> {
        self.schema.as_deref().ok_or_else(|| ApiError::BadRequest("the schema field is required".into()))
    }

    /// The posted schema parsed (without references; 42201 when it does not parse) or else
    /// `subject`'s latest version read for the caller (in the request's context), with its text.
    /// An empty `schema` or `subject` counts as absent, as in AxonOps (Go's zero value).
    pub(super) async fn resolve(&self, catalog: &Catalog) -> Result<(ParsedSchema, String), ApiError> {
        match (given(&self.schema), given(&self.subject)) {
            (Some(text), _) => {
                let parsed = parse_posted(self.schema_type.unwrap_or_default(), text.to_string()).await?;
                Ok((parsed, text.to_string()))
            }
            (None, Some(subject)) => {
                let subject = catalog.context.subject(subject);
                catalog.call.permit.require(registry_auth::Operation::Read, Some(&subject))?;
                let (record, parsed) =
                    parsed_version(&catalog.call.registry, &subject, VersionSelector::Latest).await?;
                Ok((parsed, record.body.schema))
            }
            (None, None) => Err(ApiError::BadRequest("either schema or subject is required".into())),
        }
    }
}

/// `field` unless absent or empty.
fn given(field: &Option<String>) -> Option<&str> {
    field.as_deref().filter(|value| !value.is_empty())
}

/// A posted schema parsed off the async threads, without references; 42201 when it does not parse.
pub(super) async fn parse_posted(schema_type: SchemaType, text: String) -> Result<ParsedSchema, ApiError> {
    parse_blocking(schema_type, text, Vec::new(), Validation::Lenient)
        .await?
        .map_err(|error| ApiError::Registry(error.into()))
}

/// `POST /schemas/validate`: whether the schema parses as a new registration would (no references).
pub async fn validate(ConfluentJson(input): ConfluentJson<SchemaInput>) -> ApiResult {
    let (schema_type, text) = (input.schema_type.unwrap_or_default(), input.text()?.to_string());
    let answer = tokio::task::spawn_blocking(move || registry_catalog::validate(schema_type, &text))
        .await
        .map_err(|error| ApiError::Internal(format!("parse task: {error}")))?;
    json(&answer)
}

/// `POST /schemas/normalize`: Confluent's normal form and its SHA-256; 42201 when it does not parse.
pub async fn normalize(ConfluentJson(input): ConfluentJson<SchemaInput>) -> ApiResult {
    let (schema_type, text) = (input.schema_type.unwrap_or_default(), input.text()?.to_string());
    let answer = tokio::task::spawn_blocking(move || registry_catalog::normalize(schema_type, &text))
        .await
        .map_err(|error| ApiError::Internal(format!("parse task: {error}")))?
        .map_err(|error| ApiError::Registry(error.into()))?;
    json(&answer)
}

/// `POST /schemas/complexity`: field count, depth and grade of the posted schema or of `subject`'s
/// latest version (read for the caller).
pub async fn complexity(catalog: Catalog, ConfluentJson(input): ConfluentJson<SchemaInput>) -> ApiResult {
    let (parsed, _) = input.resolve(&catalog).await?;
    json(&registry_catalog::complexity(&parsed))
}

/// `POST /compatibility/check` body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckRequest {
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    schema_type: Option<SchemaType>,
    #[serde(default)]
    references: Vec<registry_core::SchemaReference>,
    #[serde(default)]
    subjects: Vec<String>,
}

/// `POST /compatibility/check`: the posted schema against the latest version of each subject,
/// under each subject's compatibility level. A subject the caller may not read, or that does not
/// exist, answers `is_compatible: false` with the reason in `error`.
pub async fn check(
    Catalog { call, context }: Catalog,
    ConfluentJson(request): ConfluentJson<CheckRequest>,
) -> ApiResult {
    let text = request.schema.ok_or_else(|| ApiError::BadRequest("the schema field is required".into()))?;
    if request.subjects.len() > MAX_CHECKED_SUBJECTS {
        return Err(ApiError::BadRequest(format!("at most {MAX_CHECKED_SUBJECTS} subjects per check")));
    }
    #[derive(Serialize)]
    struct Outcome {
        subject: String,
        is_compatible: bool,
        #[serde(skip_serializing_if = "String::is_empty")]
        error: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        messages: Vec<String>,
    }
    let mut results = Vec::new();
    for subject in request.subjects.iter().map(|subject| context.subject(subject)) {
        let schema = NewSchema {
            schema: Some(text.clone()),
            schema_type: request.schema_type.unwrap_or_default(),
            references: request.references.clone(),
            ..NewSchema::default()
        };
        let outcome = if call.permit.require(registry_auth::Operation::Read, Some(&subject)).is_err() {
            Err(format!("not authorized to read subject '{subject}'"))
        } else {
            match call.registry.test_compatibility(&subject, Some(VersionSelector::Latest), schema, false, true).await {
                Ok(report) => Ok(report),
                Err(RegistryError::Store(error)) => return Err(RegistryError::Store(error).into()),
                Err(error) => Err(error.to_string()),
            }
        };
        results.push(match outcome {
            Ok(report) => Outcome {
                subject,
                is_compatible: report.is_compatible,
                error: String::new(),
                messages: report.messages,
            },
            Err(error) => Outcome { subject, is_compatible: false, error, messages: Vec::new() },
        });
    }
    #[derive(Serialize)]
    struct Answer<T> {
        results: Vec<T>,
    }
    json(&Answer { results })
}

/// The analysis endpoints (this module's and [`advice`]'s), each declared with its operation name
/// (AxonOps's MCP tool name, where it has one) and `read` access.
pub fn routes() -> axum::Router<AppState> {
    use crate::endpoint::{READ, endpoint as declare};
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/schemas/search", post(declare("search_schemas", READ, search_text)))
        .route("/schemas/search/field", post(declare("search_schemas_by_field", READ, search_field)))
        .route("/schemas/search/type", post(declare("search_schemas_by_type", READ, search_type)))
        .route("/schemas/validate", post(declare("validate_schema", READ, validate)))
        .route("/schemas/normalize", post(declare("normalize_schema", READ, normalize)))
        .route("/schemas/complexity", post(declare("schema_complexity", READ, complexity)))
        .route("/compatibility/check", post(declare("check_compatibility_multi", READ, check)))
        .route("/subjects/{subject}/diff", post(declare("diff_versions", READ, diff)))
        .route("/subjects/{subject}/history", get(declare("get_schema_history", READ, history)))
        .route("/subjects/{subject}/export", get(declare("export_subject", READ, export_subject)))
        .route(
            "/subjects/{subject}/versions/{version}/dependencies",
            get(declare("get_dependency_graph", READ, dependencies_of)),
        )
        .route("/subjects/{subject}/versions/{version}/export", get(declare("export_version", READ, export_version)))
        .route("/schemas/similar", post(declare("find_similar_schemas", READ, advice::similar)))
        .route("/schemas/quality", post(declare("score_schema_quality", READ, advice::quality)))
        .route("/subjects/validate", post(declare("validate_subject_name", READ, advice::validate_subject)))
        .route("/subjects/match", post(declare("match_subjects", READ, advice::match_subjects)))
        .route("/subjects/{subject}/evolve", post(declare("suggest_schema_evolution", READ, advice::evolve)))
        .route("/subjects/{subject}/migrate", post(declare("plan_migration_path", READ, advice::migrate)))
        .route("/statistics", get(declare("get_registry_statistics", READ, advice::statistics)))
        .route("/statistics/fields/{field}", get(declare("check_field_consistency", READ, advice::field_consistency)))
        .route("/statistics/patterns", get(declare("detect_schema_patterns", READ, advice::patterns)))
}
