//! Request extractors with Confluent's rules: accepted body media types, JAX-RS-style path and query
//! parameter parsing, and response media type negotiation. Every rejection is an [`ApiError`].

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use registry_core::{SchemaId, VersionSelector};
use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, MapDeserializer};
use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// Confluent's preferred media type; the default for every response and the only one for errors.
pub const MEDIA_V1: &str = "application/vnd.schemaregistry.v1+json";
/// Confluent's unversioned media type.
pub const MEDIA_GENERIC: &str = "application/vnd.schemaregistry+json";
/// Plain JSON.
pub const MEDIA_JSON: &str = "application/json";
/// What JAX-RS assumes when there is no `Content-Type`; Confluent parses it as JSON.
pub const MEDIA_OCTET_STREAM: &str = "application/octet-stream";

/// Request media types Confluent consumes (`@Consumes` of every resource).
const CONSUMED: [&str; 4] = [MEDIA_V1, MEDIA_GENERIC, MEDIA_JSON, MEDIA_OCTET_STREAM];

/// Response media types with Confluent's server-side quality (`@Produces`: v1 qs=1, generic 0.9, json 0.5).
const PRODUCED: [(&str, f32); 3] = [(MEDIA_V1, 1.0), (MEDIA_GENERIC, 0.9), (MEDIA_JSON, 0.5)];

/// A JSON request body parsed with Confluent's rules.
///
/// Accepts `Content-Type` v1, generic, `application/json`, `application/octet-stream` (parameters such as
/// `charset` ignored) or no `Content-Type` at all; anything else, including an empty header, is 415.
/// Bodies over [`crate::MAX_BODY_BYTES`] are 413; no body, only whitespace or `null` is Confluent's 422
/// `<method>.argN must not be null (was null)`; the body is then read by [`parse_object`] (400 for
/// anything but a JSON object of the right field types). Unknown fields are ignored by the target types.
#[derive(Debug, Clone)]
pub struct ConfluentJson<T>(pub T);

impl<S, T> FromRequest<S> for ConfluentJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let ConfluentBody(bytes) = ConfluentBody::from_request(req, state).await?;
        parse_object(&bytes).map(ConfluentJson)
    }
}

/// A request body [`ConfluentJson`] would parse, not parsed yet: every rule of [`ConfluentJson`]
/// but the parse itself ([`parse_object`]) is checked. For a handler that may answer from what the
/// very same bytes got before.
#[derive(Debug, Clone)]
pub struct ConfluentBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for ConfluentBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        if !is_consumed(req.headers()) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let operation = crate::endpoint::granted_endpoint(req.extensions()).map(|endpoint| endpoint.operation);
        let bytes = read_body(req.into_body()).await?;
        if is_null_body(&bytes) {
            return Err(ApiError::NullBody(operation.map_or("request", not_null_parameter)));
        }
        Ok(ConfluentBody(bytes))
    }
}

/// The whole of a request `body`, up to [`crate::MAX_BODY_BYTES`] (413 past it, whatever the
/// request declared; 400 when it cannot be read).
async fn read_body(body: axum::body::Body) -> Result<Bytes, ApiError> {
    let limited = http_body_util::Limited::new(body, crate::MAX_BODY_BYTES);
    match http_body_util::BodyExt::collect(limited).await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(ApiError::PayloadTooLarge),
        Err(error) => Err(ApiError::BodyUnreadable(format!("Failed to buffer the request body: {error}"))),
    }
}

/// Whether a body is what Jackson reads as a null entity: nothing, only whitespace, or `null`.
fn is_null_body(bytes: &[u8]) -> bool {
    let trimmed = bytes.trim_ascii();
    trimmed.is_empty() || trimmed == b"null"
}

/// The request parameter a body-taking endpoint (by its operation name) declares `@NotNull`, as bean
/// validation names it: the JAX-RS method of Confluent 8.3.1 and the parameter's index (the
/// `AsyncResponse`, headers, path and query parameters before it count).
fn not_null_parameter(operation: &str) -> &'static str {
    match operation {
        "register_schema" => "register.arg5",
        "look_up_schema_under_subject" => "lookUpSchemaUnderSubject.arg5",
        "test_compatibility_by_subject_name" => "testCompatibilityBySubjectName.arg4",
        "test_compatibility_for_subject" => "testCompatibilityForSubject.arg3",
        "update_top_level_config" => "updateTopLevelConfig.arg1",
        "update_subject_level_config" => "updateSubjectLevelConfig.arg2",
        "update_top_level_mode" => "updateTopLevelMode.arg1",
        "update_subject_mode" => "updateMode.arg2",
        "create_kek" => "createKek.arg3",
        "put_kek" => "putKek.arg4",
        "create_dek" => "createDek.arg3",
        "create_dek_with_subject" => "createDekWithSubject.arg5",
        "create_exporter" => "registerExporter.arg3",
        "update_exporter" => "updateExporterInfo.arg4",
        "update_exporter_config" => "updateExporterConfig.arg4",
        _ => "request",
    }
}

/// Parses a request body that must be a JSON object, as Jackson reads Confluent's request entities.
///
/// Any other JSON value (array, string, number, boolean, `null`) is 400 / `error_code` 400 before
/// anything is deserialised, with Jackson's message (`Cannot deserialize value of type
/// `RegisterSchemaRequest` from Array value (token `JsonToken.START_ARRAY`)`): serde would otherwise
/// read a struct from an array of its fields in order, so a body of another shape could mean something
/// a reader of the object form does not see. Malformed JSON, invalid UTF-8 and wrong field types are
/// 400 with the parser's message.
pub fn parse_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if let Some((shape, token)) = non_object_shape(bytes) {
        return Err(ApiError::BadRequest(format!(
            "Cannot deserialize value of type `{}` from {shape} value (token `JsonToken.{token}`)",
            entity_name::<T>()
        )));
    }
    serde_json::from_slice(bytes).map_err(|error| ApiError::BadRequest(error.to_string()))
}

/// The Jackson shape and token of a body whose first JSON token is not `{`; `None` for an object, and
/// for an empty or unparseable body (the parser's message describes those better).
fn non_object_shape(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    let start = bytes.iter().position(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))?;
    let token = bytes.get(start..)?;
    Some(match token.first()? {
        b'{' => return None,
        b'[' => ("Array", "START_ARRAY"),
        b'"' => ("String", "VALUE_STRING"),
        b'-' | b'0'..=b'9' => {
            let number = token.iter().take_while(|byte| matches!(byte, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'));
            if number.clone().any(|byte| matches!(byte, b'.' | b'e' | b'E')) {
                ("Floating-point", "VALUE_NUMBER_FLOAT")
            } else {
                ("Integer", "VALUE_NUMBER_INT")
            }
        }
        b't' => ("Boolean", "VALUE_TRUE"),
        b'f' => ("Boolean", "VALUE_FALSE"),
        b'n' => ("Null", "VALUE_NULL"),
        _ => return None,
    })
}

/// The unqualified name of a request type (`RegisterSchemaRequest`), as Confluent's entity is named.
fn entity_name<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name)
}

/// A nested request value that must be a JSON object (a reference, `metadata`, `ruleSet`): serde's
/// derived structs also accept an array of their fields, which Jackson (and so Confluent) refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor(PhantomData)).map(Object)
    }
}

/// Hands the entries of a JSON object, and nothing else, to `T`'s own deserialiser.
struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// `#[serde(deserialize_with)]` for an optional field that must be an object when present.
pub fn optional_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    Option::<Object<T>>::deserialize(deserializer).map(|value| value.map(|Object(inner)| inner))
}

/// `#[serde(deserialize_with)]` for an optional list whose items must be objects.
pub fn optional_objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    Option::<Vec<Object<T>>>::deserialize(deserializer)
        .map(|value| value.map(|items| items.into_iter().map(|Object(item)| item).collect()))
}

/// Whether the request's `Content-Type` (if any) is one Confluent consumes.
fn is_consumed(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return true;
    };
    let Ok(text) = value.to_str() else {
        return false;
    };
    let essence = text.split(';').next().unwrap_or_default().trim();
    CONSUMED.iter().any(|media| media.eq_ignore_ascii_case(essence))
}

/// The response media type for a request's `Accept` header, as Jersey negotiates it: the client's
/// quality times the server's, highest wins. No header, `*/*`, or nothing acceptable: [`MEDIA_V1`].
pub fn negotiate(headers: &HeaderMap) -> &'static str {
    let mut values = headers.get_all(header::ACCEPT).iter();
    match (values.next(), values.next()) {
        (None, _) => MEDIA_V1,
        (Some(only), None) => common_accept(only.as_bytes()).unwrap_or_else(|| negotiate_ranges(headers)),
        _ => negotiate_ranges(headers),
    }
}

/// The answer for an `Accept` value sent on every request by most clients (one of the produced
/// media types alone, or `*/*`), negotiated once by [`negotiate_ranges`] itself: the edge
/// negotiates every request.
fn common_accept(value: &[u8]) -> Option<&'static str> {
    static COMMON: std::sync::OnceLock<Vec<(&'static str, &'static str)>> = std::sync::OnceLock::new();
    let common = COMMON.get_or_init(|| {
        [MEDIA_V1, MEDIA_GENERIC, MEDIA_JSON, "*/*"]
            .into_iter()
            .map(|accept| {
                let mut headers = HeaderMap::new();
                headers.insert(header::ACCEPT, axum::http::HeaderValue::from_static(accept));
                (accept, negotiate_ranges(&headers))
            })
            .collect()
    });
    common.iter().find(|(accept, _)| accept.as_bytes() == value).map(|(_, media)| *media)
}

/// [`negotiate`] range by range.
fn negotiate_ranges(headers: &HeaderMap) -> &'static str {
    let accept = headers.get_all(header::ACCEPT).iter().filter_map(|value| value.to_str().ok()).collect::<Vec<_>>();
    if accept.is_empty() {
        return MEDIA_V1;
    }
    let ranges: Vec<(String, f32)> =
        accept.iter().flat_map(|value| value.split(',')).filter_map(parse_media_range).collect();
    let mut best = (MEDIA_V1, 0.0_f32);
    for (media, server_quality) in PRODUCED {
        let client_quality = client_quality(&ranges, media);
        let score = client_quality * server_quality;
        if score > best.1 {
            best = (media, score);
        }
    }
    best.0
}

/// `type/subtype;q=x` → (lower-case `type/subtype`, q). Malformed q counts as 1.
fn parse_media_range(range: &str) -> Option<(String, f32)> {
    let mut pieces = range.split(';');
    let media = pieces.next()?.trim().to_ascii_lowercase();
    if media.is_empty() {
        return None;
    }
    let quality = pieces
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
        .and_then(|(_, value)| value.trim().parse::<f32>().ok())
        .unwrap_or(1.0);
    Some((media, quality.clamp(0.0, 1.0)))
}

/// The quality the client gives `media`: the most specific matching range wins.
fn client_quality(ranges: &[(String, f32)], media: &str) -> f32 {
    let main_type = media.split('/').next().unwrap_or_default();
    let mut found: Option<(u8, f32)> = None;
    for (range, quality) in ranges {
        let specificity = if range == media {
            2
        } else if range.strip_suffix("/*").is_some_and(|t| t == main_type) {
            1
        } else if range == "*/*" {
            0
        } else {
            continue;
        };
        if found.is_none_or(|(best, _)| specificity > best) {
            found = Some((specificity, *quality));
        }
    }
    found.map_or(0.0, |(_, quality)| quality)
}

/// A single percent-decoded path parameter (a subject, a version or an ID segment).
///
/// Subjects are one path segment: `%2F` decodes to `/` after routing. A segment that does not
/// decode to UTF-8 is answered like an unknown path (404).
#[derive(Debug, Clone)]
pub struct Segment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(value) = Path::<String>::from_request_parts(parts, state).await.map_err(|_| ApiError::NotFound)?;
        Ok(Segment(value))
    }
}

/// The path parameters of a route, percent-decoded into `T`: a tuple in path order, or a struct by
/// parameter name (an `Option` field is `None` on the routes without that parameter). A segment
/// that does not decode is 404.
#[derive(Debug)]
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(value) = Path::<T>::from_request_parts(parts, state).await.map_err(|_| ApiError::NotFound)?;
        Ok(Params(value))
    }
}

/// Two path parameters: `{subject}` and `{version}`.
#[derive(Debug, Clone)]
pub struct SubjectVersion(pub String, pub String);

impl<S: Send + Sync> FromRequestParts<S> for SubjectVersion {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path((subject, version)) =
            Path::<(String, String)>::from_request_parts(parts, state).await.map_err(|_| ApiError::NotFound)?;
        Ok(SubjectVersion(subject, version))
    }
}

/// A `{version}` segment per Confluent's `VersionId` (42202 when invalid).
pub fn parse_version(raw: &str) -> Result<VersionSelector, ApiError> {
    raw.parse::<VersionSelector>().map_err(ApiError::from)
}

/// An `{id}` segment: any Java `int` (so `0` and `-1` reach the service and answer 40403); anything
/// else (`abc`, `1.5`, `2147483648`) is the framework's 404, as in JAX-RS.
pub fn parse_schema_id(raw: &str) -> Result<SchemaId, ApiError> {
    raw.parse::<i32>().map(SchemaId).map_err(|_| ApiError::NotFound)
}

/// A query string read into `T`, one struct per endpoint, the way JAX-RS reads `@QueryParam`s:
/// the first value of each name wins, unknown names are ignored, booleans are read by [`flag`] and
/// ints by [`int`] (an int that does not parse is a 404, as in JAX-RS). A malformed query string
/// (bad percent-encoding) is 400.
#[derive(Debug, Clone, Default)]
pub struct ConfluentQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ConfluentQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let QueryLists(pairs) = QueryLists::from_request_parts(parts, state).await?;
        let mut named = std::collections::HashSet::new();
        let first_values = pairs.into_iter().filter(|(name, _)| named.insert(name.clone()));
        let query = MapDeserializer::<_, serde::de::value::Error>::new(first_values);
        T::deserialize(query).map(ConfluentQuery).map_err(|_| ApiError::NotFound)
    }
}

/// Every `findTags` value of the query string, in order (a `@QueryParam List<String>`: JAX-RS keeps
/// every value of a repeated name, where [`ConfluentQuery`] keeps the first). Empty when absent.
#[derive(Debug, Clone, Default)]
pub struct FindTags(pub Vec<String>);

impl<S: Send + Sync> FromRequestParts<S> for FindTags {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let lists = QueryLists::from_request_parts(parts, state).await?;
        Ok(FindTags(lists.all("findTags").into_iter().map(str::to_string).collect()))
    }
}

/// A `@QueryParam boolean` as Jersey reads it (`Boolean.valueOf` of the value): `true` in any
/// letter case is true, anything else (` true`, `1`, `yes`, blank) false; absent is false
/// (`#[serde(default)]`).
pub fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(String::deserialize(deserializer)?.eq_ignore_ascii_case("true"))
}

/// A `@QueryParam int` as Jersey reads it: blank or absent is absent (`#[serde(default)]`);
/// otherwise `Integer.valueOf` of the value, and anything else fails the query (404).
pub fn int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i32>, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    text.parse::<i32>().map(Some).map_err(serde::de::Error::custom)
}

/// A `@QueryParam String`: the value as given; absent is `None` (`#[serde(default)]`).
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    String::deserialize(deserializer).map(Some)
}

/// `offset` and `limit`, flattened into the queries of paged listings.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Paging {
    #[serde(default, deserialize_with = "int")]
    pub offset: Option<i32>,
    #[serde(default, deserialize_with = "int")]
    pub limit: Option<i32>,
}

impl Paging {
    /// The window: a negative offset counts as 0; a limit of 0 or less, or above `max`, means
    /// `default_limit`.
    pub fn window(self, default_limit: usize, max: usize) -> Page {
        let offset = self.offset.map_or(0, |offset| usize::try_from(offset).unwrap_or(0));
        let limit = match self.limit {
            Some(limit) if limit > 0 => usize::try_from(limit).unwrap_or(default_limit),
            _ => default_limit,
        };
        Page { offset, limit: if limit > max { default_limit } else { limit } }
    }
}

/// Every name and value of the query string, in request order: what [`ConfluentQuery`] and
/// [`FindTags`] read, and the repeated parameters (JAX-RS `List<String>`, such as the metadata
/// filter's `key` and `value`). A malformed query string (bad percent-encoding) is 400.
#[derive(Debug, Clone, Default)]
pub struct QueryLists(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryLists {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
        Ok(QueryLists(pairs))
    }
}

impl QueryLists {
    /// Every value of `name`, in request order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(key, _)| key == name).map(|(_, value)| value.as_str()).collect()
    }
}

/// An `offset`/`limit` window over a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Page {
    /// No paging: everything.
    pub const ALL: Page = Page { offset: 0, limit: usize::MAX };

    /// Applies the window to a full listing.
    pub fn apply<T>(self, items: Vec<T>) -> Vec<T> {
        items.into_iter().skip(self.offset).take(self.limit).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(header::ACCEPT, value);
        }
        headers
    }

    #[test]
    fn negotiation_follows_server_quality() {
        assert_eq!(negotiate(&HeaderMap::new()), MEDIA_V1);
        assert_eq!(negotiate(&accept("*/*")), MEDIA_V1);
        assert_eq!(negotiate(&accept("application/json")), MEDIA_JSON);
        assert_eq!(negotiate(&accept("application/vnd.schemaregistry+json")), MEDIA_GENERIC);
        assert_eq!(negotiate(&accept("application/json, application/vnd.schemaregistry+json")), MEDIA_GENERIC);
        assert_eq!(negotiate(&accept("application/vnd.schemaregistry.v1+json;q=0.1, application/json")), MEDIA_JSON);
        assert_eq!(negotiate(&accept("text/html")), MEDIA_V1);
        assert_eq!(negotiate(&accept("application/*")), MEDIA_V1);
        assert_eq!(negotiate(&accept(MEDIA_V1)), MEDIA_V1);
        // The remembered answers are the ranges' own.
        for value in [MEDIA_V1, MEDIA_GENERIC, MEDIA_JSON, "*/*", "application/JSON", "application/json;q=0"] {
            assert_eq!(negotiate(&accept(value)), negotiate_ranges(&accept(value)), "{value}");
        }
        assert_eq!(common_accept(b"application/json;q=0"), None);
    }

    #[derive(Debug, Deserialize)]
    struct Pair {
        #[allow(dead_code)]
        name: String,
        #[serde(default, deserialize_with = "optional_objects")]
        #[allow(dead_code)]
        items: Option<Vec<Pair>>,
    }

    fn refusal(body: &str) -> String {
        match parse_object::<Pair>(body.as_bytes()) {
            Err(ApiError::BadRequest(message)) => message,
            other => panic!("{body}: expected a 400, got {other:?}"),
        }
    }

    #[test]
    fn only_objects_are_request_bodies() {
        for (body, shape) in [
            (r#"["a", null]"#, "Array value (token `JsonToken.START_ARRAY`)"),
            (r#" "a""#, "String value (token `JsonToken.VALUE_STRING`)"),
            ("123456789012345678901234567890", "Integer value (token `JsonToken.VALUE_NUMBER_INT`)"),
            ("-1.5e3", "Floating-point value (token `JsonToken.VALUE_NUMBER_FLOAT`)"),
            ("true", "Boolean value (token `JsonToken.VALUE_TRUE`)"),
            ("\nfalse", "Boolean value (token `JsonToken.VALUE_FALSE`)"),
            ("null", "Null value (token `JsonToken.VALUE_NULL`)"),
        ] {
            assert_eq!(refusal(body), format!("Cannot deserialize value of type `Pair` from {shape}"), "{body}");
        }
        assert!(parse_object::<Pair>(br#"{"name":"a","items":[{"name":"b"}]}"#).is_ok());
    }

    #[test]
    fn nested_objects_are_not_read_from_arrays() {
        assert!(refusal(r#"{"name":"a","items":[["b"]]}"#).contains("expected a JSON object"));
        for body in ["", "  ", r#"{"name":"#, "{\"name\":\"\u{0}\"", "x"] {
            assert!(!refusal(body).is_empty(), "{body}");
        }
        assert!(matches!(parse_object::<Pair>(b"{\"name\":\"\xff\"}"), Err(ApiError::BadRequest(_))));
    }

    #[test]
    fn schema_ids_are_java_ints() {
        assert_eq!(parse_schema_id("7").ok(), Some(SchemaId(7)));
        assert_eq!(parse_schema_id("-1").ok(), Some(SchemaId(-1)));
        for bad in ["abc", "1.5", "2147483648", ""] {
            assert!(matches!(parse_schema_id(bad), Err(ApiError::NotFound)), "{bad}");
        }
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Example {
        #[serde(default, deserialize_with = "flag")]
        deleted: bool,
        #[serde(default, deserialize_with = "flag")]
        deleted_only: bool,
        #[serde(default, deserialize_with = "text")]
        format: Option<String>,
        #[serde(flatten)]
        paging: Paging,
    }

    async fn query<T: DeserializeOwned>(uri: &str) -> Result<T, ApiError> {
        let request =
            axum::http::Request::builder().uri(uri).body(()).map_err(|e| ApiError::Internal(e.to_string()))?;
        let (mut parts, ()) = request.into_parts();
        ConfluentQuery::<T>::from_request_parts(&mut parts, &()).await.map(|query| query.0)
    }

    #[tokio::test]
    async fn queries_read_like_jax_rs() {
        let read = query::<Example>("/x?deleted=TRUE&deletedOnly=yes&format=serialized&limit=5&limit=9&other=1").await;
        let read = read.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(read.deleted && !read.deleted_only, "`true` in any case, nothing else");
        assert_eq!(
            (read.format.as_deref(), read.paging.limit, read.paging.offset),
            (Some("serialized"), Some(5), None)
        );
        for not_true in ["%20true", "1", "", "t"] {
            let read = query::<Example>(&format!("/x?deleted={not_true}")).await.unwrap_or_else(|e| panic!("{e:?}"));
            assert!(!read.deleted, "{not_true:?}");
        }
        assert!(matches!(query::<Example>("/x?offset=x").await, Err(ApiError::NotFound)));
        assert!(matches!(query::<Example>("/x?offset=%205").await, Err(ApiError::NotFound)), "no trimming");
        let blank = query::<Example>("/x?limit=%20&offset=").await.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((blank.paging.limit, blank.paging.offset), (None, None), "blank is absent");
        let paging = Paging { offset: Some(-3), limit: Some(0) };
        assert_eq!(paging.window(1000, 1000), Page { offset: 0, limit: 1000 });
        assert_eq!(Paging { offset: None, limit: Some(5000) }.window(1000, 1000), Page { offset: 0, limit: 1000 });
    }
}
