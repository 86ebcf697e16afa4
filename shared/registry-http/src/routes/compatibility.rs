//! `/compatibility` resource: test a schema against one version or against the subject.

use super::{ApiResult, json};
use crate::AppState;
use crate::dto::{CompatibilityDto, RegisterSchemaRequest};
use crate::endpoint::Permit;
use crate::extract::{ConfluentJson, ConfluentQuery, Segment, SubjectVersion, flag, parse_version};
use axum::extract::State;
use serde::Deserialize;

/// Query of both compatibility tests.
#[derive(Debug, Default, Deserialize)]
pub struct CompatibilityQuery {
    /// The incompatibilities in `messages`.
    #[serde(default, deserialize_with = "flag")]
    pub verbose: bool,
    /// Compare Confluent's normal forms.
    #[serde(default, deserialize_with = "flag")]
    pub normalize: bool,
}

/// `POST /compatibility/subjects/{s}/versions/{v}`: against that version only (`latest` = highest
/// live); `{"is_compatible"}`, plus `messages` with `verbose=true`; `normalize`.
pub async fn test_compatibility_by_subject_name(
    State(state): State<AppState>,
    permit: Permit,
    SubjectVersion(subject, version): SubjectVersion,
    ConfluentQuery(query): ConfluentQuery<CompatibilityQuery>,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let selector = parse_version(&version)?;
    let schema = request.into_new_schema()?;
    let report = permit
        .acting(&state.registry)
        .test_compatibility(&subject, Some(selector), schema, query.normalize, query.verbose)
        .await?;
    json(&CompatibilityDto::new(report, query.verbose))
}

/// `POST /compatibility/subjects/{s}/versions`: against every live version the subject's level
/// requires (transitive levels: all); same answer shape and parameters.
pub async fn test_compatibility_for_subject(
    State(state): State<AppState>,
    permit: Permit,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<CompatibilityQuery>,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let schema = request.into_new_schema()?;
    let report = permit
        .acting(&state.registry)
        .test_compatibility(&subject, None, schema, query.normalize, query.verbose)
        .await?;
    json(&CompatibilityDto::new(report, query.verbose))
}
