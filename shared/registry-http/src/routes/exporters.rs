//! `/exporters` resource: Confluent's schema linking API (`SchemaExportersResource`), over
//! [`registry_exporter::ExporterService`]. Every endpoint needs `admin`: an exporter reads every
//! subject it exports and writes to another registry.
//!
//! Answers as Confluent's: `GET /exporters` the names; `GET /exporters/{name}` the
//! `ExporterReference` (`name`, `contextType`, `context` when set, `subjects`,
//! `subjectRenameFormat`, `config`); writes, pause, resume and reset `{"name"}`; `/status`
//! `{"name","state","offset","ts"}` with `trace` when set; `/config` the config map. Credentials in
//! `config` are answered as `[hidden]`.

use super::{ApiResult, json};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ConfluentJson, Segment};
use axum::extract::State;
use registry_exporter::{Exporter, ExporterService, ExporterStatus, ExporterUpdate};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The exporter service of the app (its routes exist only when it is configured).
fn exporters(state: &AppState) -> Result<&ExporterService, ApiError> {
    state.exporters.as_deref().ok_or(ApiError::NotFound)
}

/// Body of create and update (`ExporterReference` / `ExporterUpdateRequest`); unknown fields are
/// ignored. Config values may be strings, numbers or booleans (kept as their text).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExporterRequest {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    context_type: Option<String>,
    #[serde(default)]
    context: Option<String>,
    #[serde(default)]
    subjects: Option<Vec<String>>,
    #[serde(default)]
    subject_rename_format: Option<String>,
    #[serde(default)]
    config: Option<Map<String, Value>>,
}

impl ExporterRequest {
    fn into_update(self) -> Result<ExporterUpdate, ApiError> {
        Ok(ExporterUpdate {
            name: self.name,
            context_type: self.context_type,
            context: self.context,
            subjects: self.subjects,
            subject_rename_format: self.subject_rename_format,
            config: self.config.map(config_map).transpose()?,
        })
    }
}

/// A JSON object of scalar values as the config map.
fn config_map(object: Map<String, Value>) -> Result<BTreeMap<String, String>, ApiError> {
    object
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text)),
            Value::Number(number) => Ok((key, number.to_string())),
            Value::Bool(flag) => Ok((key, flag.to_string())),
            other => Err(ApiError::BadRequest(format!("config value of '{key}' is not a string: {other}"))),
        })
        .collect()
}

/// `{"name"}`: Confluent's `ExporterResponse`.
#[derive(Debug, Serialize)]
struct NameDto {
    name: String,
}

/// Confluent's `ExporterStatusResponse`.
#[derive(Debug, Serialize)]
struct StatusDto {
    name: String,
    #[serde(flatten)]
    status: ExporterStatus,
}

fn named(name: String) -> ApiResult {
    json(&NameDto { name })
}

/// `GET /exporters`.
pub async fn list_exporters(State(state): State<AppState>) -> ApiResult {
    json(&exporters(&state)?.list().await?)
}

/// `POST /exporters`.
pub async fn create_exporter(
    State(state): State<AppState>,
    ConfluentJson(request): ConfluentJson<ExporterRequest>,
) -> ApiResult {
    named(exporters(&state)?.create(request.into_update()?).await?)
}

/// `GET /exporters/{name}`.
pub async fn get_exporter(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    let exporter: Exporter = exporters(&state)?.get(&name).await?;
    json(&exporter)
}

/// `PUT /exporters/{name}`.
pub async fn update_exporter(
    State(state): State<AppState>,
    Segment(name): Segment,
    ConfluentJson(request): ConfluentJson<ExporterRequest>,
) -> ApiResult {
    named(exporters(&state)?.update(&name, request.into_update()?).await?)
}

/// `DELETE /exporters/{name}`: 200 with no body.
pub async fn delete_exporter(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    exporters(&state)?.delete(&name).await?;
    Ok(axum::response::IntoResponse::into_response(axum::http::StatusCode::OK))
}

/// `GET /exporters/{name}/status`.
pub async fn get_exporter_status(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    let status = exporters(&state)?.status(&name).await?;
    json(&StatusDto { name, status })
}

/// `GET /exporters/{name}/config`.
pub async fn get_exporter_config(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    json(&exporters(&state)?.config(&name).await?)
}

/// `PUT /exporters/{name}/config`: the body is the config map (or `{"config": {...}}`).
pub async fn update_exporter_config(
    State(state): State<AppState>,
    Segment(name): Segment,
    ConfluentJson(body): ConfluentJson<Map<String, Value>>,
) -> ApiResult {
    let object = match body.get("config") {
        Some(Value::Object(inner)) if body.len() == 1 => inner.clone(),
        _ => body,
    };
    named(exporters(&state)?.put_config(&name, config_map(object)?).await?)
}

/// `PUT /exporters/{name}/pause`.
pub async fn pause_exporter(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    named(exporters(&state)?.pause(&name).await?)
}

/// `PUT /exporters/{name}/resume`.
pub async fn resume_exporter(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    named(exporters(&state)?.resume(&name).await?)
}

/// `PUT /exporters/{name}/reset`.
pub async fn reset_exporter(State(state): State<AppState>, Segment(name): Segment) -> ApiResult {
    named(exporters(&state)?.reset(&name).await?)
}
