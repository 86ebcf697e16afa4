//! The rest of AxonOps Schema Registry's analysis API: similar schemas, quality score, subject-name
//! strategies and patterns, evolution advice, migration steps and statistics, with AxonOps's paths,
//! request fields and answer fields (as its handlers write them).
//!
//! Authorization and cost are [`super::catalog`]'s: the routes need `read`, a subject named in the
//! path or the body is checked like a path subject, and everything that walks subjects is a
//! bounded scan of the caller's subjects (`cursor`, `max_subjects`, `subject_prefix`) answering
//! `subjects_scanned` and `next_cursor`, where AxonOps walks the whole registry in one request.
//! Under `/contexts/{ctx}/...` the scans and the named subjects are the context's.

use super::catalog::{
    Catalog, ScanQuery, ScanReport, ScanWindow, SchemaInput, bad_query, parse_posted, parsed_version, scan,
};
use super::{ApiResult, Call, json};
use crate::error::ApiError;
use crate::extract::{ConfluentJson, ConfluentQuery, Segment};
use registry_catalog::{SubjectPattern, fields, name_set};
use registry_core::{DeletedFilter, Registry, SchemaType, Scope, Subject, VersionSelector};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Subject names one `POST /subjects/match` lists when it does not say, and the most.
const DEFAULT_NAME_SCAN: usize = 10_000;
const MAX_NAME_SCAN: usize = 50_000;
/// Subject names listed per store page.
const NAME_PAGE: usize = 500;

/// `POST /schemas/similar` body.
#[derive(Debug, Deserialize)]
pub struct SimilarRequest {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    threshold: f64,
    #[serde(flatten)]
    window: ScanWindow,
}

/// `POST /schemas/similar`: subjects whose latest fields (snake_case names) overlap the source
/// subject's by a Jaccard score of at least `threshold` (0.3), at most `limit` (10) of them.
pub async fn similar(catalog: Catalog, ConfluentJson(mut request): ConfluentJson<SimilarRequest>) -> ApiResult {
    if request.subject.is_empty() {
        return Err(ApiError::BadRequest("Subject is required".into()));
    }
    let subject = catalog.context.subject(&request.subject);
    catalog.call.permit.require(registry_auth::Operation::Read, Some(&subject))?;
    let (source, parsed) = parsed_version(&catalog.call.registry, &subject, VersionSelector::Latest).await?;
    let source_names = name_set(&fields(&parsed));
    let threshold = if request.threshold <= 0.0 { 0.3 } else { request.threshold.min(1.0) };
    request.window.default_limit(10);
    #[derive(Serialize)]
    struct Similar {
        subject: String,
        similarity: f64,
        shared_fields: Vec<String>,
    }
    let mut found = Vec::new();
    let report = scan(&catalog, request.window, |record, parsed| {
        if record.subject == source.subject {
            return 0;
        }
        let Some(parsed) = parsed else { return 0 };
        match registry_catalog::similarity(&source_names, &name_set(&fields(parsed))) {
            Some((score, shared)) if score >= threshold => {
                found.push(Similar {
                    subject: record.subject.as_str().into(),
                    similarity: score,
                    shared_fields: shared,
                });
                1
            }
            _ => 0,
        }
    })
    .await?;
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        count: usize,
        similar: Vec<Similar>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { subject: request.subject, count: found.len(), similar: found, report })
}

/// `POST /schemas/quality`: naming, documentation, type safety and evolution readiness of the posted
/// schema, or of `subject`'s latest version (read for the caller).
pub async fn quality(catalog: Catalog, ConfluentJson(input): ConfluentJson<SchemaInput>) -> ApiResult {
    let (parsed, text) = input.resolve(&catalog).await?;
    json(&registry_catalog::quality(&fields(&parsed), &text))
}

/// `POST /subjects/validate` body.
#[derive(Debug, Deserialize)]
pub struct NameRequest {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    strategy: String,
}

/// `POST /subjects/validate`: `subject` under a Kafka subject-name strategy (reads nothing).
pub async fn validate_subject(ConfluentJson(request): ConfluentJson<NameRequest>) -> ApiResult {
    if request.subject.is_empty() {
        return Err(ApiError::BadRequest("Subject is required".into()));
    }
    json(&registry_catalog::check_subject_name(&request.subject, &request.strategy))
}

/// `POST /subjects/match` body.
#[derive(Debug, Deserialize)]
pub struct MatchRequest {
    #[serde(default)]
    pattern: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    threshold: f64,
    #[serde(flatten)]
    window: ScanWindow,
}

/// `POST /subjects/match`: the caller's live subjects whose names match `pattern` (`regex`, `glob`
/// or `fuzzy`), listed in name order (default 10,000 names, at most 50,000 per request).
pub async fn match_subjects(
    Catalog { call, context }: Catalog,
    ConfluentJson(mut request): ConfluentJson<MatchRequest>,
) -> ApiResult {
    if request.pattern.is_empty() {
        return Err(ApiError::BadRequest("Pattern is required".into()));
    }
    let threshold = if request.threshold <= 0.0 { 0.6 } else { request.threshold.min(1.0) };
    let pattern = SubjectPattern::new(&request.pattern, &request.mode, threshold).map_err(bad_query)?;
    context.apply(&mut request.window);
    let budget = request.window.budget(DEFAULT_NAME_SCAN, MAX_NAME_SCAN);
    let scope = call.permit.subjects();
    let mut after = request.window.cursor()?;
    let (mut scanned, mut matches) = (0usize, Vec::new());
    let prefix = request.window.prefix();
    let next_cursor = loop {
        let wanted = NAME_PAGE.min(budget - scanned);
        let page =
            call.state.registry.subjects_page(&scope, &prefix, DeletedFilter::LiveOnly, after.as_ref(), wanted).await?;
        scanned += page.len();
        matches.extend(page.iter().filter(|s| pattern.matches(s.as_str())).map(|s| s.as_str().to_string()));
        after = page.last().cloned().or(after);
        if page.len() < wanted {
            break None;
        }
        if scanned >= budget {
            break after.map(|s| s.as_str().to_string());
        }
    };
    #[derive(Serialize)]
    struct Answer {
        pattern: String,
        mode: String,
        count: usize,
        matches: Vec<String>,
        #[serde(flatten)]
        report: ScanReport,
    }
    let mode = if request.mode.is_empty() { "regex".to_string() } else { request.mode };
    let report = ScanReport::new(scanned, next_cursor);
    json(&Answer { pattern: request.pattern, mode, count: matches.len(), matches, report })
}

/// The compatibility level in effect for `subject` (its own, its context's, the global one or the
/// server default).
async fn level_of(registry: &Registry, subject: &Subject) -> Result<String, ApiError> {
    let config = registry.config(&Scope::Subject(subject.clone()), true).await?;
    Ok(config.compatibility_level.unwrap_or_default().as_str().to_string())
}

/// One change of `POST /subjects/{s}/evolve`.
#[derive(Debug, Deserialize)]
pub struct ProposedChange {
    #[serde(default)]
    action: String,
    #[serde(default)]
    field: String,
    #[serde(default, rename = "type")]
    type_name: String,
}

/// `POST /subjects/{s}/evolve` body.
#[derive(Debug, Deserialize)]
pub struct EvolveRequest {
    #[serde(default)]
    changes: Vec<ProposedChange>,
}

/// Whether `change` keeps a subject at `level` compatible, and why, by Confluent's rules: backward
/// lets new readers read old data (fields may be removed, added ones need a default), forward the
/// reverse, full both; a type change needs `NONE`.
fn advise(level: &str, change: &ProposedChange) -> String {
    let backward = level.starts_with("BACKWARD") || level.starts_with("FULL");
    let forward = level.starts_with("FORWARD") || level.starts_with("FULL");
    let field = &change.field;
    match change.action.to_ascii_lowercase().as_str() {
        "add" if backward => format!("add '{field}': safe only with a default value under {level}"),
        "add" => format!("add '{field}': safe under {level}"),
        "remove" if forward => format!("remove '{field}': safe only if it has a default value under {level}"),
        "remove" => format!("remove '{field}': safe under {level}"),
        "modify" if level == "NONE" => format!("modify '{field}': allowed under NONE"),
        "modify" => {
            let to = if change.type_name.is_empty() { String::new() } else { format!(" to {}", change.type_name) };
            format!(
                "modify '{field}'{to}: a type change breaks {level} (only numeric promotions are tolerated by Avro readers); add a new field instead"
            )
        }
        other => format!("'{other}' on '{field}': unknown action (use add, remove or modify)"),
    }
}

/// `POST /subjects/{s}/evolve`: the subject's latest version and level, and a word on each proposed
/// change (AxonOps answers the same fields with a fixed message).
pub async fn evolve(
    call: Call,
    Segment(subject): Segment,
    ConfluentJson(request): ConfluentJson<EvolveRequest>,
) -> ApiResult {
    let latest = call.registry.version(&subject, VersionSelector::Latest, false).await?;
    let level = level_of(&call.state.registry, &latest.subject).await?;
    let message = if request.changes.is_empty() {
        format!("No changes proposed; version {} stays under {level}", latest.version.0)
    } else {
        request.changes.iter().map(|change| advise(&level, change)).collect::<Vec<_>>().join("; ")
    };
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        current_version: i32,
        compatibility_level: String,
        changes_requested: usize,
        message: String,
    }
    json(&Answer {
        subject,
        current_version: latest.version.0,
        compatibility_level: level,
        changes_requested: request.changes.len(),
        message,
    })
}

/// `POST /subjects/{s}/migrate` body (snake_case, as AxonOps takes it).
#[derive(Debug, Deserialize)]
pub struct MigrateRequest {
    #[serde(default)]
    target_schema: String,
    #[serde(default)]
    schema_type: Option<SchemaType>,
}

/// `POST /subjects/{s}/migrate`: the steps from the subject's latest fields to the target's.
pub async fn migrate(
    call: Call,
    Segment(subject): Segment,
    ConfluentJson(request): ConfluentJson<MigrateRequest>,
) -> ApiResult {
    if request.target_schema.is_empty() {
        return Err(ApiError::BadRequest("target_schema is required".into()));
    }
    let (latest, current) = parsed_version(&call.registry, &subject, VersionSelector::Latest).await?;
    let level = level_of(&call.state.registry, &latest.subject).await?;
    let schema_type = request.schema_type.unwrap_or(latest.body.schema_type);
    let target = parse_posted(schema_type, request.target_schema).await?;
    let steps = registry_catalog::migration_steps(&fields(&current), &fields(&target));
    #[derive(Serialize)]
    struct Answer {
        subject: String,
        current_version: i32,
        compatibility_level: String,
        step_count: usize,
        steps: Vec<String>,
    }
    json(&Answer {
        subject,
        current_version: latest.version.0,
        compatibility_level: level,
        step_count: steps.len(),
        steps,
    })
}

/// `GET /statistics`: live subjects, their live versions and the types of their latest versions,
/// over the scan window given in the query.
pub async fn statistics(catalog: Catalog, ConfluentQuery(window): ConfluentQuery<ScanQuery>) -> ApiResult {
    let (mut subject_count, mut version_count) = (0usize, 0usize);
    let mut type_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut subjects = Vec::new();
    let report = scan(&catalog, ScanWindow::from(window), |record, _| {
        subject_count += 1;
        *type_counts.entry(record.body.schema_type.as_str().to_string()).or_default() += 1;
        subjects.push(record.subject.clone());
        0
    })
    .await?;
    for subject in &subjects {
        version_count += match catalog.call.registry.version_numbers(subject.as_str(), DeletedFilter::LiveOnly).await {
            Ok(numbers) => numbers.len(),
            Err(registry_core::RegistryError::Store(error)) => {
                return Err(registry_core::RegistryError::Store(error).into());
            }
            Err(_) => 0,
        };
    }
    #[derive(Serialize)]
    struct Answer {
        subject_count: usize,
        version_count: usize,
        type_counts: BTreeMap<String, usize>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { subject_count, version_count, type_counts, report })
}

/// `GET /statistics/fields/{field}`: every use of `field` (any naming convention) in the latest
/// versions scanned, with its type, and whether the types agree.
pub async fn field_consistency(
    axum::extract::Path(field): axum::extract::Path<String>,
    catalog: Catalog,
    ConfluentQuery(window): ConfluentQuery<ScanQuery>,
) -> ApiResult {
    let matcher =
        registry_catalog::Matcher::field(&field, registry_catalog::FieldMode::Exact, 0.0).map_err(bad_query)?;
    #[derive(Serialize)]
    struct Usage {
        subject: String,
        field_name: String,
        field_type: String,
    }
    let mut usages = Vec::new();
    let mut type_counts: BTreeMap<String, usize> = BTreeMap::new();
    let report = scan(&catalog, ScanWindow::from(window), |record, parsed| {
        for found in parsed.map(fields).unwrap_or_default() {
            if matcher.score(&found.name).is_some() {
                *type_counts.entry(found.type_name.clone()).or_default() += 1;
                usages.push(Usage {
                    subject: record.subject.as_str().into(),
                    field_name: found.name,
                    field_type: found.type_name,
                });
            }
        }
        0
    })
    .await?;
    #[derive(Serialize)]
    struct Answer {
        field: String,
        consistent: bool,
        type_counts: BTreeMap<String, usize>,
        usages: Vec<Usage>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { field, consistent: type_counts.len() <= 1, type_counts, usages, report })
}

/// `GET /statistics/patterns`: field names (snake_case) found in two or more of the latest versions
/// scanned.
pub async fn patterns(catalog: Catalog, ConfluentQuery(window): ConfluentQuery<ScanQuery>) -> ApiResult {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut subject_count = 0usize;
    let report = scan(&catalog, ScanWindow::from(window), |_, parsed| {
        subject_count += 1;
        for name in name_set(&parsed.map(fields).unwrap_or_default()) {
            *counts.entry(name).or_default() += 1;
        }
        0
    })
    .await?;
    #[derive(Serialize)]
    struct Common {
        field: String,
        count: usize,
    }
    let common: Vec<Common> =
        counts.into_iter().filter(|(_, count)| *count >= 2).map(|(field, count)| Common { field, count }).collect();
    #[derive(Serialize)]
    struct Answer {
        subject_count: usize,
        pattern_count: usize,
        common_fields: Vec<Common>,
        #[serde(flatten)]
        report: ScanReport,
    }
    json(&Answer { subject_count, pattern_count: common.len(), common_fields: common, report })
}
