//! `/config` and `/mode` resources, global and per subject.

use super::{ApiResult, Call, json};
use crate::AppState;
use crate::dto::{ConfigDto, ConfigUpdateRequest, ConfigUpdateResponse, ModeDto, ModeUpdateRequest};
use crate::error::ApiError;
use crate::extract::{ConfluentJson, ConfluentQuery, Params, flag};
use axum::extract::State;
use axum::handler::Handler;
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

/// The path of a setting: no `{subject}` on `/config` and `/mode` (the global scope), else the
/// scope the segment names (a subject, a context's own settings `:.ctx:`, the registry-wide
/// `:.__GLOBAL:`, or the global scope of the default context `:.:`), parsed when the handler asks,
/// after the request body.
#[derive(Debug, Deserialize)]
pub struct SettingPath {
    subject: Option<String>,
}

impl SettingPath {
    fn scope(self) -> Result<Scope, ApiError> {
        match self.subject {
            None => Ok(Scope::Global),
            Some(subject) => Ok(Scope::parse(&subject)?),
        }
    }
}

/// `GET /config`: the global config `{"compatibilityLevel",..}` (server default when unset; with
/// `defaultToGlobal=true` the registry-wide `:.__GLOBAL:` config before the server default).
/// `GET /config/{s}`: the subject's own config (40408 when unset), or with `defaultToGlobal=true`
/// the effective one.
pub async fn get_config(
    State(state): State<AppState>,
    Params(path): Params<SettingPath>,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let config = state.registry.config(&path.scope()?, query.default_to_global).await?;
    json(&ConfigDto::from(&config))
}

/// `PUT /config`: `{"compatibility": LEVEL, ..}` (any case; 42203 otherwise) merged into the stored config
/// as Confluent merges it (named fields replace, `null` clears, `{}` changes nothing); echoes the result.
/// `PUT /config/{s}`: the same for one subject (which need not exist yet).
pub async fn update_config(
    call: Call,
    Params(path): Params<SettingPath>,
    ConfluentJson(request): ConfluentJson<ConfigUpdateRequest>,
) -> ApiResult {
    let update = request.into_update()?;
    let stored = call.registry.update_config(&path.scope()?, update).await?;
    json(&ConfigUpdateResponse::new(&stored))
}

/// `DELETE /config`: the previous global config; the server default applies again.
/// `DELETE /config/{s}`: the removed config (40401 when none was set).
pub async fn delete_config(State(state): State<AppState>, Params(path): Params<SettingPath>) -> ApiResult {
    let removed = state.registry.delete_config(&path.scope()?).await?;
    json(&ConfigDto::from(&removed))
}

/// `GET /mode`: `{"mode"}` (READWRITE when unset; with `defaultToGlobal=true` the effective
/// mode, the registry-wide `:.__GLOBAL:` one before READWRITE). `GET /mode/{s}`: the subject's own
/// mode (40409 when unset), or the effective one with `defaultToGlobal=true`.
pub async fn get_mode(
    State(state): State<AppState>,
    Params(path): Params<SettingPath>,
    ConfluentQuery(query): ConfluentQuery<SubjectSettingQuery>,
) -> ApiResult {
    let mode = state.registry.mode(&path.scope()?, query.default_to_global).await?;
    json(&ModeDto { mode })
}

/// `PUT /mode` and `PUT /mode/{s}`: `{"mode"}` (any case; 42204 otherwise); `force` allows IMPORT
/// with live schemas.
pub async fn update_mode(
    State(state): State<AppState>,
    Params(path): Params<SettingPath>,
    ConfluentQuery(query): ConfluentQuery<ModeUpdateQuery>,
    ConfluentJson(request): ConfluentJson<ModeUpdateRequest>,
) -> ApiResult {
    let mode = request.into_mode()?;
    let mode = state.registry.set_mode(&path.scope()?, mode, query.force).await?;
    json(&ModeDto { mode })
}

/// `DELETE /mode`: the previous global mode; READWRITE applies again. `DELETE /mode/{s}`: the
/// removed mode (40401 when none was set).
pub async fn delete_mode(State(state): State<AppState>, Params(path): Params<SettingPath>) -> ApiResult {
    let mode = state.registry.delete_mode(&path.scope()?).await?;
    json(&ModeDto { mode })
}

/// The config endpoints, `(path, [get, update, delete] operation names)`: global, then per subject.
const CONFIG_ROUTES: [(&str, [&str; 3]); 2] = [
    ("/config", ["get_top_level_config", "update_top_level_config", "delete_top_level_config"]),
    ("/config/{subject}", ["get_subject_level_config", "update_subject_level_config", "delete_subject_config"]),
];

/// The mode endpoints, as [`CONFIG_ROUTES`].
const MODE_ROUTES: [(&str, [&str; 3]); 2] = [
    ("/mode", ["get_top_level_mode", "update_top_level_mode", "delete_top_level_mode"]),
    ("/mode/{subject}", ["get_mode", "update_subject_mode", "delete_subject_mode"]),
];

/// The config and mode endpoints, each declared with Confluent's operation name: reading a
/// setting needs `read`, changing or removing it `admin`.
pub fn routes() -> axum::Router<AppState> {
    setting_routes(CONFIG_ROUTES, get_config, update_config, delete_config).merge(setting_routes(
        MODE_ROUTES,
        get_mode,
        update_mode,
        delete_mode,
    ))
}

/// The routes of one setting: its `get`, `put` and `delete` handlers on each of `paths`.
fn setting_routes<G, Tg, P, Tp, D, Td>(
    paths: [(&'static str, [&'static str; 3]); 2],
    get: G,
    put: P,
    delete: D,
) -> axum::Router<AppState>
where
    G: Handler<Tg, AppState, Future: Unpin>,
    P: Handler<Tp, AppState, Future: Unpin>,
    D: Handler<Td, AppState, Future: Unpin>,
    Tg: 'static,
    Tp: 'static,
    Td: 'static,
{
    use crate::endpoint::{CONFIGURE, READ, endpoint as declare};
    let mut router = axum::Router::new();
    for (path, [get_name, put_name, delete_name]) in paths {
        let methods = axum::routing::get(declare(get_name, READ, get.clone()))
            .put(declare(put_name, CONFIGURE, put.clone()))
            .delete(declare(delete_name, CONFIGURE, delete.clone()));
        router = router.route(path, methods);
    }
    router
}
