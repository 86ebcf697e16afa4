//! `/config` and `/mode` resources, global and per subject.

use super::{ApiResult, json};
use crate::AppState;
use crate::dto::{ConfigDto, ConfigUpdateRequest, ConfigUpdateResponse, ModeDto, ModeUpdateRequest};
use crate::endpoint::Permit;
use crate::extract::{ConfluentJson, ConfluentQuery, Segment, flag};
use axum::extract::State;
use registry_core::Scope;
use serde::Deserialize;

/// Query of the subject-level config and mode reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectSettingQuery {
    /// The effective setting (subject, else global, else default) instead of the subject's own.
    #[serde(default, deserialize_with = "flag")]
    pub default_to_global: bool,
}

/// Query of the mode updates.
#[derive(Debug, Default, Deserialize)]
pub struct ModeUpdateQuery {
    /// IMPORT even while the scope has schemas.
    #[serde(default, deserialize_with = "flag")]
    pub force: bool,
}

/// The scope a `{subject}` segment names: a subject, a context's own settings (`:.ctx:`), the
/// registry-wide `:.__GLOBAL:`, or the global scope for the default context (`:.:`).
fn subject_scope(subject: String) -> Result<Scope, crate::error::ApiError> {
    Ok(Scope::parse(&subject)?)
}

/// `GET /config`: the global config `{"compatibilityLevel",..}` (server default when unset; with
/// `defaultToGlobal=true` the registry-wide `:.__GLOBAL:` config before the server default).
pub async fn get_top_level_config(
    State(state): State<AppState>,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let config = state.registry.config(&Scope::Global, query.default_to_global).await?;
    json(&ConfigDto::from(&config))
}

/// `PUT /config`: `{"compatibility": LEVEL, ..}` (any case; 42203 otherwise) merged into the stored config
/// as Confluent merges it (named fields replace, `null` clears, `{}` changes nothing); echoes the result.
pub async fn update_top_level_config(
    State(state): State<AppState>,
    permit: Permit,
    ConfluentJson(request): ConfluentJson<ConfigUpdateRequest>,
) -> ApiResult {
    let stored = permit.acting(&state.registry).update_config(&Scope::Global, request.into_update()?).await?;
    json(&ConfigUpdateResponse::new(&stored))
}

/// `DELETE /config`: the previous global config; the server default applies again.
pub async fn delete_top_level_config(State(state): State<AppState>) -> ApiResult {
    let removed = state.registry.delete_config(&Scope::Global).await?;
    json(&ConfigDto::from(&removed))
}

/// `GET /config/{s}`: the subject's own config (40408 when unset), or with `defaultToGlobal=true`
/// the effective one.
pub async fn get_subject_level_config(
    State(state): State<AppState>,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let config = state.registry.config(&subject_scope(subject)?, query.default_to_global).await?;
    json(&ConfigDto::from(&config))
}

/// `PUT /config/{s}`: as `PUT /config`, for one subject (which need not exist yet).
pub async fn update_subject_level_config(
    State(state): State<AppState>,
    permit: Permit,
    Segment(subject): Segment,
    ConfluentJson(request): ConfluentJson<ConfigUpdateRequest>,
) -> ApiResult {
    let update = request.into_update()?;
    let stored = permit.acting(&state.registry).update_config(&subject_scope(subject)?, update).await?;
    json(&ConfigUpdateResponse::new(&stored))
}

/// `DELETE /config/{s}`: the removed config (40401 when none was set).
pub async fn delete_subject_config(State(state): State<AppState>, Segment(subject): Segment) -> ApiResult {
    let removed = state.registry.delete_config(&subject_scope(subject)?).await?;
    json(&ConfigDto::from(&removed))
}

/// `GET /mode`: `{"mode"}` (READWRITE when unset; with `defaultToGlobal=true` the effective
/// mode, the registry-wide `:.__GLOBAL:` one before READWRITE).
pub async fn get_top_level_mode(
    State(state): State<AppState>,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let mode = state.registry.mode(&Scope::Global, query.default_to_global).await?;
    json(&ModeDto { mode })
}

/// `PUT /mode`: `{"mode"}` (any case; 42204 otherwise); `force` allows IMPORT with live schemas.
pub async fn update_top_level_mode(
    State(state): State<AppState>,
    ConfluentQuery(query): ConfluentQuery<ModeUpdateQuery>,
    ConfluentJson(request): ConfluentJson<ModeUpdateRequest>,
) -> ApiResult {
    let mode = state.registry.set_mode(&Scope::Global, request.into_mode()?, query.force).await?;
    json(&ModeDto { mode })
}

/// `DELETE /mode`: the previous global mode; READWRITE applies again.
pub async fn delete_top_level_mode(State(state): State<AppState>) -> ApiResult {
    let mode = state.registry.delete_mode(&Scope::Global).await?;
    json(&ModeDto { mode })
}

/// `GET /mode/{s}`: the subject's own mode (40409 when unset), or the effective one with
/// `defaultToGlobal=true`.
pub async fn get_mode(
    State(state): State<AppState>,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let mode = state.registry.mode(&subject_scope(subject)?, query.default_to_global).await?;
    json(&ModeDto { mode })
}

/// `PUT /mode/{s}`: as `PUT /mode`, for one subject.
pub async fn update_subject_mode(
    State(state): State<AppState>,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<ModeUpdateQuery>,
    ConfluentJson(request): ConfluentJson<ModeUpdateRequest>,
) -> ApiResult {
    let mode = request.into_mode()?;
    let mode = state.registry.set_mode(&subject_scope(subject)?, mode, query.force).await?;
    json(&ModeDto { mode })
}

/// `DELETE /mode/{s}`: the removed mode (40401 when none was set).
pub async fn delete_subject_mode(State(state): State<AppState>, Segment(subject): Segment) -> ApiResult {
    let mode = state.registry.delete_mode(&subject_scope(subject)?).await?;
    json(&ModeDto { mode })
}
