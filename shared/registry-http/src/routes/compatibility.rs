//! `/compatibility` resource: test a schema against one version or against the subject.

use super::{ApiResult, json};
use crate::AppState;
use crate::dto::{CompatibilityDto, RegisterSchemaRequest};
use crate::extract::{ConfluentJson, Params, Segment, SubjectVersion, parse_version};
use axum::extract::State;

/// `POST /compatibility/subjects/{s}/versions/{v}`: against that version only (`latest` = highest
/// live); `{"is_compatible"}`, plus `messages` with `verbose=true`; `normalize`.
pub async fn test_compatibility_by_subject_name(
    State(state): State<AppState>,
    SubjectVersion(subject, version): SubjectVersion,
    params: Params,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let selector = parse_version(&version)?;
    let verbose = params.flag("verbose");
    let report = state
        .registry
        .test_compatibility(&subject, Some(selector), request.into_new_schema()?, params.flag("normalize"), verbose)
        .await?;
    json(&CompatibilityDto::new(report, verbose))
}

/// `POST /compatibility/subjects/{s}/versions`: against every live version the subject's level
/// requires (transitive levels: all); same answer shape and parameters.
pub async fn test_compatibility_for_subject(
    State(state): State<AppState>,
    Segment(subject): Segment,
    params: Params,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let verbose = params.flag("verbose");
    let report = state
        .registry
        .test_compatibility(&subject, None, request.into_new_schema()?, params.flag("normalize"), verbose)
        .await?;
    json(&CompatibilityDto::new(report, verbose))
}
