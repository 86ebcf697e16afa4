//! `/dek-registry/v1/keks` resource: Confluent's DEK registry (`DekRegistryResource`), over
//! [`registry_dek::DekRegistry`].
//!
//! Access: KEK reads need `read` (registry-wide, like ID lookups); KEK writes (create, update,
//! delete, undelete, test) are registry-wide changes and need `admin`. DEKs are judged on their
//! subject, so subject scopes apply: reading needs `read` on it, creating, deleting and
//! undeleting need `write` (a permanent delete `admin`, as for schemas). The DEK subject listing
//! of a KEK shows only the subjects in the caller's scope.

use super::{ApiResult, DeleteQuery, json};
use crate::AppState;
use crate::endpoint::Permit;
use crate::error::ApiError;
use crate::extract::{ConfluentJson, ConfluentQuery, Paging, Params, QueryLists, flag};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use registry_auth::Operation;
use registry_dek::{
    Dek, DekAlgorithm, DekAnswer, DekError, DekRegistry, DekVersion, Kek, KekUpdate, NewDek, NewKek, Page,
};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// The DEK registry of the app (its routes exist only when it is configured).
fn deks(state: &AppState) -> Result<&DekRegistry, ApiError> {
    state.deks.as_deref().ok_or(ApiError::NotFound)
}

// --- wire types ------------------------------------------------------------------------------

/// Confluent's `Kek` entity.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KekDto {
    name: String,
    kms_type: String,
    kms_key_id: String,
    kms_props: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    doc: Option<String>,
    shared: bool,
    ts: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    deleted: bool,
}

impl From<Kek> for KekDto {
    fn from(kek: Kek) -> Self {
        KekDto {
            name: kek.name,
            kms_type: kek.kms_type,
            kms_key_id: kek.kms_key_id,
            kms_props: kek.kms_props,
            doc: kek.doc,
            shared: kek.shared,
            ts: kek.ts,
            deleted: kek.deleted,
        }
    }
}

/// Confluent's `Dek` entity; `keyMaterial` only for DEKs of shared KEKs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DekDto {
    kek_name: String,
    subject: String,
    version: i32,
    algorithm: DekAlgorithm,
    encrypted_key_material: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_material: Option<String>,
    ts: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    deleted: bool,
}

impl From<DekAnswer> for DekDto {
    fn from(answer: DekAnswer) -> Self {
        let Dek { kek_name, subject, version, algorithm, encrypted_key_material, ts, deleted, .. } = answer.dek;
        DekDto {
            kek_name,
            subject,
            version,
            algorithm,
            encrypted_key_material,
            key_material: answer.key_material,
            ts,
            deleted,
        }
    }
}

/// Confluent's `CreateKekRequest`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CreateKekRequest {
    name: Option<String>,
    kms_type: Option<String>,
    kms_key_id: Option<String>,
    kms_props: Option<BTreeMap<String, String>>,
    doc: Option<String>,
    shared: bool,
    deleted: bool,
}

/// Confluent's `UpdateKekRequest`: an absent field keeps the KEK's value, `null` clears it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UpdateKekRequest {
    #[serde(deserialize_with = "present")]
    kms_props: Option<Option<BTreeMap<String, String>>>,
    #[serde(deserialize_with = "present")]
    doc: Option<Option<String>>,
    shared: Option<bool>,
}

/// Confluent's `CreateDekRequest`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CreateDekRequest {
    subject: Option<String>,
    version: Option<i32>,
    algorithm: Option<DekAlgorithm>,
    encrypted_key_material: Option<String>,
    deleted: bool,
}

/// A field that is present (`Some`, holding `None` for `null`) or absent (`None`, by `default`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// An `algorithm` query parameter: one of Confluent's names, else the query fails (404, as a
/// JAX-RS enum parameter that does not convert).
fn algorithm<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<DekAlgorithm>, D::Error> {
    let name = String::deserialize(deserializer)?;
    name.parse::<DekAlgorithm>().map(Some).map_err(serde::de::Error::custom)
}

/// Query of the KEK reads and listings.
#[derive(Debug, Default, Deserialize)]
pub struct DeletedPaged {
    #[serde(default, deserialize_with = "flag")]
    deleted: bool,
    #[serde(flatten)]
    paging: Paging,
}

/// Query of the DEK reads.
#[derive(Debug, Default, Deserialize)]
pub struct DekQuery {
    #[serde(default, deserialize_with = "algorithm")]
    algorithm: Option<DekAlgorithm>,
    #[serde(default, deserialize_with = "flag")]
    deleted: bool,
    #[serde(flatten)]
    paging: Paging,
}

/// Query of the DEK deletes and undeletes.
#[derive(Debug, Default, Deserialize)]
pub struct DekWriteQuery {
    #[serde(default, deserialize_with = "algorithm")]
    algorithm: Option<DekAlgorithm>,
    #[serde(default, deserialize_with = "flag")]
    permanent: bool,
}

/// Query of the KEK writes that may test the KMS first.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestSharingQuery {
    #[serde(default, deserialize_with = "flag")]
    test_sharing: bool,
}

/// Query of DEK creation.
#[derive(Debug, Default, Deserialize)]
pub struct RewrapQuery {
    #[serde(default, deserialize_with = "flag")]
    rewrap: bool,
}

/// Confluent's `normalizeLimit` with unbounded defaults: a positive limit, else everything; a
/// negative offset counts as 0.
fn page(paging: Paging) -> Page {
    let offset = paging.offset.map_or(0, |offset| usize::try_from(offset).unwrap_or(0));
    let limit = paging.limit.and_then(|limit| usize::try_from(limit).ok()).filter(|limit| *limit > 0);
    Page { offset, limit }
}

fn no_content() -> ApiResult {
    Ok(StatusCode::NO_CONTENT.into_response())
}

// --- KEKs --------------------------------------------------------------------------------------

/// Most `subjectPrefix` values of one KEK listing, counted before and after narrowing them to the
/// caller's scope: each costs reads under every KEK. More is 422 / 42271 naming `subjectPrefix`
/// (Confluent sets no bound).
pub const MAX_SUBJECT_PREFIXES: usize = 16;

/// `GET /dek-registry/v1/keks`: KEK names, `subjectPrefix` (repeatable) keeping those with DEKs of
/// such subjects. A prefix counts only inside the caller's scope (narrowed to the scope's own
/// prefixes it covers, dropped when outside): a scoped reader learns nothing of other subjects.
pub async fn get_kek_names(
    State(state): State<AppState>,
    permit: Permit,
    ConfluentQuery(query): ConfluentQuery<DeletedPaged>,
    lists: QueryLists,
) -> ApiResult {
    let requested = lists.all("subjectPrefix");
    let too_many = || ApiError::from(DekError::InvalidKey("subjectPrefix".into()));
    if requested.len() > MAX_SUBJECT_PREFIXES {
        return Err(too_many());
    }
    let scope = permit.subjects();
    let mut prefixes: Vec<String> = requested.iter().flat_map(|prefix| scope.ranges(prefix)).collect();
    prefixes.sort();
    prefixes.dedup();
    if prefixes.len() > MAX_SUBJECT_PREFIXES {
        return Err(too_many());
    }
    if !requested.is_empty() && prefixes.is_empty() {
        return json(&Vec::<String>::new());
    }
    json(&deks(&state)?.kek_names(&prefixes, query.deleted, page(query.paging)).await?)
}

/// `POST /dek-registry/v1/keks`.
pub async fn create_kek(
    State(state): State<AppState>,
    ConfluentQuery(query): ConfluentQuery<TestSharingQuery>,
    ConfluentJson(request): ConfluentJson<CreateKekRequest>,
) -> ApiResult {
    let request = NewKek {
        name: request.name.unwrap_or_default(),
        kms_type: request.kms_type,
        kms_key_id: request.kms_key_id,
        kms_props: request.kms_props.unwrap_or_default(),
        doc: request.doc,
        shared: request.shared,
        deleted: request.deleted,
    };
    json(&KekDto::from(deks(&state)?.create_kek(request, query.test_sharing).await?))
}

/// `GET /dek-registry/v1/keks/{name}`.
pub async fn get_kek(
    State(state): State<AppState>,
    Params(name): Params<String>,
    ConfluentQuery(query): ConfluentQuery<DeletedPaged>,
) -> ApiResult {
    json(&KekDto::from(deks(&state)?.kek(&name, query.deleted).await?))
}

/// `PUT /dek-registry/v1/keks/{name}`.
pub async fn put_kek(
    State(state): State<AppState>,
    Params(name): Params<String>,
    ConfluentQuery(query): ConfluentQuery<TestSharingQuery>,
    ConfluentJson(request): ConfluentJson<UpdateKekRequest>,
) -> ApiResult {
    let update = KekUpdate {
        kms_props: request.kms_props.map(Option::unwrap_or_default),
        doc: request.doc,
        shared: request.shared,
    };
    json(&KekDto::from(deks(&state)?.update_kek(&name, update, query.test_sharing).await?))
}

/// `DELETE /dek-registry/v1/keks/{name}`: 204.
pub async fn delete_kek(
    State(state): State<AppState>,
    Params(name): Params<String>,
    ConfluentQuery(query): ConfluentQuery<DeleteQuery>,
) -> ApiResult {
    deks(&state)?.delete_kek(&name, query.permanent).await?;
    no_content()
}

/// `POST /dek-registry/v1/keks/{name}/undelete`: 204.
pub async fn undelete_kek(State(state): State<AppState>, Params(name): Params<String>) -> ApiResult {
    deks(&state)?.undelete_kek(&name).await?;
    no_content()
}

/// `POST /dek-registry/v1/keks/{name}/test`: wraps a test key with a shared KEK's KMS; answers
/// the KEK.
pub async fn test_kek(State(state): State<AppState>, Params(name): Params<String>) -> ApiResult {
    json(&KekDto::from(deks(&state)?.test_kek(&name).await?))
}

// --- DEKs --------------------------------------------------------------------------------------

/// `GET /dek-registry/v1/keks/{name}/deks`: the KEK's DEK subjects inside the caller's scope.
pub async fn get_dek_subjects(
    State(state): State<AppState>,
    permit: Permit,
    Params(name): Params<String>,
    ConfluentQuery(query): ConfluentQuery<DeletedPaged>,
) -> ApiResult {
    let scope = permit.subjects();
    let subjects = deks(&state)?.dek_subjects(&name, query.deleted, Page::default()).await?;
    let visible: Vec<String> = subjects.into_iter().filter(|subject| scope.contains(subject)).collect();
    let Page { offset, limit } = page(query.paging);
    json(&visible.into_iter().skip(offset).take(limit.unwrap_or(usize::MAX)).collect::<Vec<_>>())
}

/// `POST /dek-registry/v1/keks/{name}/deks` (deprecated form, subject in the body): needs
/// `write` on the body's subject.
pub async fn create_dek(
    State(state): State<AppState>,
    permit: Permit,
    Params(name): Params<String>,
    ConfluentQuery(query): ConfluentQuery<RewrapQuery>,
    ConfluentJson(request): ConfluentJson<CreateDekRequest>,
) -> ApiResult {
    let subject = request.subject.clone().unwrap_or_default();
    permit.require(Operation::Register, Some(&subject))?;
    create(&state, &permit, &name, subject, query.rewrap, request).await
}

/// `POST /dek-registry/v1/keks/{name}/deks/{subject}`: the path's subject wins over the body's.
pub async fn create_dek_with_subject(
    State(state): State<AppState>,
    permit: Permit,
    Params((name, subject)): Params<(String, String)>,
    ConfluentQuery(query): ConfluentQuery<RewrapQuery>,
    ConfluentJson(request): ConfluentJson<CreateDekRequest>,
) -> ApiResult {
    create(&state, &permit, &name, subject, query.rewrap, request).await
}

/// Creates the DEK. A `rewrap` that brings its own `encryptedKeyMaterial` replaces an existing
/// version's wrapped key under a non-shared KEK, which the registry cannot check wraps the same key
/// (Confluent allows it to whoever may create DEKs): here it needs the admin role on the subject, the
/// permission of a permanent delete, and the replaced key stays in the record
/// ([`registry_dek::Dek::superseded_key_materials`]).
async fn create(
    state: &AppState,
    permit: &Permit,
    name: &str,
    subject: String,
    rewrap: bool,
    request: CreateDekRequest,
) -> ApiResult {
    if rewrap && request.encrypted_key_material.is_some() {
        permit.require(Operation::HardDelete, Some(&subject))?;
    }
    let request = NewDek {
        subject,
        version: request.version,
        algorithm: request.algorithm,
        encrypted_key_material: request.encrypted_key_material,
        deleted: request.deleted,
    };
    json(&DekDto::from(deks(state)?.create_dek(name, rewrap, request).await?))
}

/// `GET /dek-registry/v1/keks/{name}/deks/{subject}`: version 1, as Confluent answers it.
pub async fn get_dek(
    State(state): State<AppState>,
    Params((name, subject)): Params<(String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekQuery>,
) -> ApiResult {
    let version = DekVersion::Number(registry_dek::model::MIN_VERSION);
    json(&DekDto::from(deks(&state)?.dek(&name, &subject, version, query.algorithm, query.deleted).await?))
}

/// `GET /dek-registry/v1/keks/{name}/deks/{subject}/versions`.
pub async fn get_dek_versions(
    State(state): State<AppState>,
    Params((name, subject)): Params<(String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekQuery>,
) -> ApiResult {
    let versions = deks(&state)?.dek_versions(&name, &subject, query.algorithm, query.deleted, page(query.paging));
    json(&versions.await?)
}

/// `GET /dek-registry/v1/keks/{name}/deks/{subject}/versions/{version}` (`latest` or -1: the
/// highest).
pub async fn get_dek_by_version(
    State(state): State<AppState>,
    Params((name, subject, version)): Params<(String, String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekQuery>,
) -> ApiResult {
    let version = DekVersion::parse(&version)?;
    json(&DekDto::from(deks(&state)?.dek(&name, &subject, version, query.algorithm, query.deleted).await?))
}

/// `DELETE /dek-registry/v1/keks/{name}/deks/{subject}`: every version of one algorithm; 204.
pub async fn delete_dek_versions(
    State(state): State<AppState>,
    permit: Permit,
    Params((name, subject)): Params<(String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekWriteQuery>,
) -> ApiResult {
    permit.require(delete_operation(query.permanent), Some(&subject))?;
    deks(&state)?.delete_deks(&name, &subject, query.algorithm, query.permanent).await?;
    no_content()
}

/// `DELETE /dek-registry/v1/keks/{name}/deks/{subject}/versions/{version}`: 204.
pub async fn delete_dek_version(
    State(state): State<AppState>,
    permit: Permit,
    Params((name, subject, version)): Params<(String, String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekWriteQuery>,
) -> ApiResult {
    let version = DekVersion::parse(&version)?;
    permit.require(delete_operation(query.permanent), Some(&subject))?;
    deks(&state)?.delete_dek_version(&name, &subject, version, query.algorithm, query.permanent).await?;
    no_content()
}

fn delete_operation(permanent: bool) -> Operation {
    DeleteQuery { permanent }.operation()
}

/// `POST /dek-registry/v1/keks/{name}/deks/{subject}/undelete`: 204.
pub async fn undelete_dek_versions(
    State(state): State<AppState>,
    Params((name, subject)): Params<(String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekWriteQuery>,
) -> ApiResult {
    deks(&state)?.undelete_deks(&name, &subject, query.algorithm).await?;
    no_content()
}

/// `POST /dek-registry/v1/keks/{name}/deks/{subject}/versions/{version}/undelete`: 204.
pub async fn undelete_dek_version(
    State(state): State<AppState>,
    Params((name, subject, version)): Params<(String, String, String)>,
    ConfluentQuery(query): ConfluentQuery<DekWriteQuery>,
) -> ApiResult {
    let version = DekVersion::parse(&version)?;
    deks(&state)?.undelete_dek_version(&name, &subject, version, query.algorithm).await?;
    no_content()
}
