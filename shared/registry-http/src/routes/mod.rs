//! Handlers, one module per Confluent resource, and the response helpers they share.

pub mod catalog;
pub mod catalog_advice;
pub mod compatibility;
pub mod config;
pub mod contracts;
pub mod deks;
pub mod exporters;
pub mod json_stream;
pub mod metadata;
pub mod schemas;
pub mod subjects;
pub mod versions;

use crate::AppState;
use crate::endpoint::Permit;
use crate::error::ApiError;
use crate::extract::{MEDIA_V1, Paging, flag, text};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use registry_auth::Operation;
use registry_core::{Context, Registry, SchemaBody};
use serde::{Deserialize, Serialize};

/// Handler result: a finished response or an [`ApiError`].
pub type ApiResult = Result<Response, ApiError>;

/// What a handler serving a caller starts from: the app state, the caller's [`Permit`] (for what
/// only the typed request shows, and the scope of listings) and the registry acting for the caller.
pub struct Call {
    pub state: AppState,
    pub permit: Permit,
    /// [`Permit::acting`]: every subject a request reaches indirectly is authorized too.
    pub registry: Registry,
}

impl Call {
    /// The call of `permit`'s caller on `state`.
    pub fn new(state: AppState, permit: Permit) -> Call {
        let registry = permit.acting(&state.registry);
        Call { state, permit, registry }
    }
}

impl FromRequestParts<AppState> for Call {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let permit = Permit::from_request_parts(parts, state).await?;
        Ok(Call::new(state.clone(), permit))
    }
}

/// A 200 JSON answer with Confluent's default media type (the negotiation layer may swap it).
pub fn json<T: Serialize + ?Sized>(value: &T) -> ApiResult {
    let body = serde_json::to_vec(value).map_err(|error| ApiError::Internal(error.to_string()))?;
    Ok(with_media(body.into()))
}

/// A 200 answer whose body is a schema's text itself, not a JSON string literal (Confluent's
/// `String`-returning `/schema` endpoints), still labelled with the JSON media type as Confluent does.
pub fn raw_schema(text: String) -> ApiResult {
    Ok(with_media(text.into_bytes().into()))
}

/// A 200 answer of `body` with Confluent's default media type.
pub(crate) fn with_media(body: axum::body::Bytes) -> Response {
    // Built directly: `Bytes`' own answer labels it `application/octet-stream` first.
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_V1));
    response
}

/// Query of the reads that may include soft-deleted versions (`GET .../versions/{v}`,
/// `GET .../versions/{v}/schema`, `GET /subjects/{s}/metadata`).
#[derive(Debug, Default, Deserialize)]
pub struct DeletedQuery {
    /// Soft-deleted versions count too.
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    /// See [`apply_format`].
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
}

/// Query of the reads whose only parameter is `format` (`GET /schemas/guids/{guid}`).
#[derive(Debug, Default, Deserialize)]
pub struct FormatQuery {
    /// See [`apply_format`].
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
}

/// `?format=`, on every read of a schema that Confluent gives it (and on register and lookup
/// answers): replaces `body.schema` with the rendering the format names when the schema's type
/// has one (Avro `resolved`: the referenced types inlined; Protobuf `serialized`: base64
/// `FileDescriptorProto`, which confluent-kafka's Protobuf deserializer requires). Any other
/// format leaves the stored text, as Confluent does "for forward compatibility of formats".
/// References resolve in `context`, the one the schema was read in, read by `registry`: for a
/// schema reached through a subject the registry acting for the caller (each reference, nested
/// ones too, needs read on its subject, as when it is registered); for a body reached by ID or guid
/// (readable by every reader) the app's own. True when the text was replaced.
pub(crate) async fn apply_format(
    registry: &Registry,
    context: &Context,
    body: &mut SchemaBody,
    format: Option<&str>,
) -> Result<bool, ApiError> {
    if let Some(format) = format.filter(|format| !format.is_empty())
        && let Some(text) = registry.formatted(context, body, format).await?
    {
        body.schema = text;
        return Ok(true);
    }
    Ok(false)
}

/// Query of the paged listings that may include soft-deleted versions (`.../referencedby`,
/// `/schemas/ids/{id}/subjects` and `/versions`).
#[derive(Debug, Default, Deserialize)]
pub struct DeletedPagedQuery {
    /// Soft-deleted versions count too.
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    #[serde(flatten)]
    pub paging: Paging,
}

/// Query of both deletes (`DELETE /subjects/{s}` and `/subjects/{s}/versions/{v}`).
#[derive(Debug, Default, Deserialize)]
pub struct DeleteQuery {
    /// A hard delete (admin only), of soft-deleted versions.
    #[serde(default, deserialize_with = "flag")]
    pub permanent: bool,
}

impl DeleteQuery {
    /// What the delete does, as access control sees it.
    pub fn operation(&self) -> Operation {
        if self.permanent { Operation::HardDelete } else { Operation::SoftDelete }
    }
}

/// `GET /` and `POST /` (`RootResource`): `{}`.
pub async fn root() -> ApiResult {
    json(&serde_json::Map::new())
}
