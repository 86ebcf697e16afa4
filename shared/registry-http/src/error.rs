//! `ApiError` and the single mapping of every failure to Confluent's `(status, error_code, message)`.

use crate::extract::MEDIA_V1;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use registry_core::{RegistryError, StoreError};
use registry_dek::DekError;
use registry_exporter::ExporterError;
use serde::Serialize;

/// Everything a request can fail with: the service's errors plus what the HTTP layer itself rejects.
///
/// Turned into a response exactly once, by [`IntoResponse`], with body `{"error_code","message"}` and
/// `Content-Type: application/vnd.schemaregistry.v1+json`.
#[derive(Debug)]
pub enum ApiError {
    /// A service error; its family decides the status and `error_code`.
    Registry(RegistryError),
    /// A DEK registry error (Confluent's `DekRegistryErrors`).
    Dek(DekError),
    /// A schema linking error (Confluent's exporter errors).
    Exporter(ExporterError),
    /// No such path, or a path parameter that is not of its type (JAX-RS answers 404 for both).
    NotFound,
    /// The path exists but not with this method.
    MethodNotAllowed,
    /// The request `Content-Type` is not one Confluent consumes.
    UnsupportedMediaType,
    /// The body is larger than [`crate::MAX_BODY_BYTES`].
    PayloadTooLarge,
    /// The body is not JSON, or a field has the wrong type; the parser's message.
    BadRequest(String),
    /// The body could not be read (client went away, transport error); the detail is logged only.
    BodyUnreadable(String),
    /// No body, or a JSON `null`, where the endpoint requires one: Confluent's bean validation of the
    /// `@NotNull` request parameter, named as JAX-RS names it (`register.arg5`).
    NullBody(&'static str),
    /// A response could not be serialized; the detail is logged only.
    Internal(String),
    /// No valid credentials: 401 with the `WWW-Authenticate` challenges (`Bearer` too when tokens
    /// are accepted).
    Unauthorized { bearer: bool },
    /// A failure of the HTTP exchange itself, answered as Confluent answers what its server framework
    /// refuses: `error_code` = the status, message `HTTP <status> <reason>` (e.g. 414 URI too long, 431
    /// headers too large, 400 unparsable request, 408 body not received in time, 504 time budget spent).
    Http(StatusCode),
}

impl From<DekError> for ApiError {
    fn from(error: DekError) -> Self {
        ApiError::Dek(error)
    }
}

impl From<ExporterError> for ApiError {
    fn from(error: ExporterError) -> Self {
        ApiError::Exporter(error)
    }
}

impl From<RegistryError> for ApiError {
    fn from(error: RegistryError) -> Self {
        ApiError::Registry(error)
    }
}

/// The error detail of a 5xx answer, attached to the response as an extension so the
/// observability middleware can log it. Never serialized into the body.
#[derive(Debug, Clone)]
pub struct ErrorDetail(pub String);

/// The `error_code` of an error answer, attached to every error response as an extension so the
/// observability middleware can log and count it (50002 = storage throttled) without parsing the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub u32);

/// Confluent's error envelope (`ErrorMessage`).
#[derive(Debug, Serialize, serde::Deserialize)]
struct ErrorBody<'a> {
    error_code: u32,
    #[serde(borrow)]
    message: std::borrow::Cow<'a, str>,
}

/// The `error_code` of an incompatible-schema answer (HTTP 409 either way).
///
/// Confluent 8.0.4+, 8.1.2+ and 8.2+ answer 40901 (the default); earlier releases, and tests
/// written against them (Confluent's own Python client tests among them), expect the bare 409.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IncompatibleErrorCode {
    /// 40901, as current Confluent releases answer.
    #[default]
    Current,
    /// 409, as Confluent answered before 8.0.4/8.1.2.
    Legacy,
}

impl IncompatibleErrorCode {
    /// From the configured number: `40901` or `409`.
    pub fn from_code(code: u32) -> Result<IncompatibleErrorCode, String> {
        match code {
            40901 => Ok(IncompatibleErrorCode::Current),
            409 => Ok(IncompatibleErrorCode::Legacy),
            other => Err(format!("incompatible-schema error code must be 40901 or 409, not {other}")),
        }
    }
}

/// Middleware of a registry configured with [`IncompatibleErrorCode::Legacy`]: the one error whose
/// `error_code` depends on a setting is answered with 409 instead of 40901. Only incompatible-schema
/// answers are touched (their [`ErrorCode`] extension says so); their body is the small envelope.
pub async fn legacy_incompatible_code(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let response = next.run(request).await;
    if response.extensions().get::<ErrorCode>() != Some(&ErrorCode(INCOMPATIBLE_CODE)) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return ApiError::Internal("incompatible-schema answer unreadable".into()).into_response();
    };
    let Ok(envelope) = serde_json::from_slice::<ErrorBody>(&bytes) else {
        return ApiError::Internal("incompatible-schema answer is not an error envelope".into()).into_response();
    };
    parts.extensions.insert(ErrorCode(LEGACY_INCOMPATIBLE_CODE));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(error_body(LEGACY_INCOMPATIBLE_CODE, &envelope.message)))
}

/// The incompatible-schema `error_code` of current Confluent releases, and the older one.
const INCOMPATIBLE_CODE: u32 = 40901;
const LEGACY_INCOMPATIBLE_CODE: u32 = 409;

/// Generic texts for 5xx answers (the detail goes to the log).
const STORE_ERROR_MESSAGE: &str = "Error while accessing the backend store";
const STORE_TIMEOUT_MESSAGE: &str = "Backend store operation timed out";
const INTERNAL_MESSAGE: &str = "Internal Server Error";

impl ApiError {
    /// `(status, error_code, message, detail-to-log)` per Confluent's `Errors.java` and rest-utils mappers.
    fn parts(&self) -> (StatusCode, u32, String, Option<String>) {
        use RegistryError as R;
        let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
        match self {
            ApiError::Registry(error) => {
                let message = error.to_string();
                match error {
                    R::SubjectNotFound { .. } => (StatusCode::NOT_FOUND, 40401, message, None),
                    R::VersionNotFound { .. } => (StatusCode::NOT_FOUND, 40402, message, None),
                    R::SchemaIdNotFound { .. } | R::SchemaNotFound => (StatusCode::NOT_FOUND, 40403, message, None),
                    R::SubjectSoftDeleted { .. } => (StatusCode::NOT_FOUND, 40404, message, None),
                    R::SubjectNotSoftDeleted { .. } => (StatusCode::NOT_FOUND, 40405, message, None),
                    R::VersionSoftDeleted { .. } => (StatusCode::NOT_FOUND, 40406, message, None),
                    R::VersionNotSoftDeleted { .. } => (StatusCode::NOT_FOUND, 40407, message, None),
                    R::SubjectConfigNotFound { .. } => (StatusCode::NOT_FOUND, 40408, message, None),
                    R::SubjectModeNotFound { .. } => (StatusCode::NOT_FOUND, 40409, message, None),
                    // CP 8.x: releases 8.0.4+, 8.1.2+ and 8.2+ answer error_code 40901 (commit ef43652bfe);
                    // only the early 8.0.x/8.1.x patches kept the bare 409. We follow the current 8.x line.
                    // Clients key on the HTTP status (409), which is the same either way.
                    // `REGISTRY_INCOMPATIBLE_ERROR_CODE=409` answers the bare 409 ([`legacy_incompatible_code`]).
                    R::IncompatibleSchema { .. } => (StatusCode::CONFLICT, INCOMPATIBLE_CODE, message, None),
                    R::InvalidSchema { .. } => (unprocessable, 42201, message, None),
                    R::InvalidVersion { .. } => (unprocessable, 42202, message, None),
                    R::InvalidCompatibilityLevel { .. } => (unprocessable, 42203, message, None),
                    R::InvalidMode { .. } => (unprocessable, 42204, message, None),
                    R::OperationNotPermitted { .. } => (unprocessable, 42205, message, None),
                    R::ReferenceExists { .. } => (unprocessable, 42206, message, None),
                    R::IdDoesNotMatch => (unprocessable, 42207, message, None),
                    R::InvalidSubject { .. } => (unprocessable, 42208, message, None),
                    R::InvalidContext { .. } => (StatusCode::BAD_REQUEST, 400, message, None),
                    R::ContextNotEmpty { .. } => (unprocessable, 42211, message, None),
                    R::SchemaTooLarge => (unprocessable, 42209, message, None),
                    R::InvalidRuleSet { .. } => (unprocessable, 42210, message, None),
                    R::OwnerRequired { .. } => (unprocessable, 42201, message, None),
                    R::TooManyRegistrations { .. } => (StatusCode::TOO_MANY_REQUESTS, 42901, message, None),
                    // The route guard's refusal and the registry's, for a subject reached indirectly.
                    R::Forbidden { .. } => (StatusCode::FORBIDDEN, 40301, message, None),
                    R::Store(store) => store_parts(store),
                }
            }
            ApiError::Dek(error) => {
                let message = error.to_string();
                match error {
                    DekError::KeyNotFound(_) => (StatusCode::NOT_FOUND, 40470, message, None),
                    DekError::KeyNotSoftDeleted(_) => (StatusCode::NOT_FOUND, 40471, message, None),
                    DekError::KeySoftDeleted(_) => (StatusCode::NOT_FOUND, 40472, message, None),
                    DekError::AlreadyExists(_) => (StatusCode::CONFLICT, 40971, message, None),
                    DekError::TooManyKeys(_) => (StatusCode::CONFLICT, 40972, message, None),
                    DekError::InvalidKey(_) => (unprocessable, 42271, message, None),
                    DekError::InvalidVersion(_) => (unprocessable, 42202, message, None),
                    DekError::ReferenceExists(_) => (unprocessable, 42272, message, None),
                    DekError::GenerationForbidden(_) => (StatusCode::FORBIDDEN, 40370, message, None),
                    DekError::Generation(_) => {
                        (StatusCode::INTERNAL_SERVER_ERROR, 50070, message.clone(), Some(message))
                    }
                    DekError::Store(store) => store_parts(store),
                }
            }
            ApiError::Exporter(ExporterError::Store(store)) => store_parts(store),
            ApiError::Exporter(error) => {
                let message = error.to_string();
                let (status, code) = error.status_and_code();
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let detail = status.is_server_error().then(|| message.clone());
                (status, code, message, detail)
            }
            ApiError::NotFound => (StatusCode::NOT_FOUND, 404, "HTTP 404 Not Found".into(), None),
            ApiError::MethodNotAllowed => {
                (StatusCode::METHOD_NOT_ALLOWED, 405, "HTTP 405 Method Not Allowed".into(), None)
            }
            ApiError::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, 415, "HTTP 415 Unsupported Media Type".into(), None)
            }
            ApiError::PayloadTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                413,
                format!("HTTP 413 Payload Too Large: the request body exceeds {} bytes", crate::MAX_BODY_BYTES),
                None,
            ),
            ApiError::BadRequest(message) => (StatusCode::BAD_REQUEST, 400, message.clone(), None),
            ApiError::BodyUnreadable(detail) => {
                (StatusCode::BAD_REQUEST, 400, "HTTP 400 Bad Request".into(), Some(detail.clone()))
            }
            ApiError::NullBody(parameter) => {
                let message = format!("{parameter} must not be null (was null)");
                (StatusCode::UNPROCESSABLE_ENTITY, 422, message, None)
            }
            ApiError::Internal(detail) => {
                (StatusCode::INTERNAL_SERVER_ERROR, 500, INTERNAL_MESSAGE.into(), Some(detail.clone()))
            }
            ApiError::Unauthorized { .. } => (StatusCode::UNAUTHORIZED, 40101, "Unauthorized".into(), None),
            ApiError::Http(status) => {
                let message = format!("HTTP {} {}", status.as_u16(), status.canonical_reason().unwrap_or_default());
                (*status, u32::from(status.as_u16()), message, None)
            }
        }
    }

    /// The status and the `{"error_code","message"}` body (in [`MEDIA_V1`]), for writers outside axum
    /// such as a listener answering a request it could not parse.
    pub fn status_and_body(&self) -> (StatusCode, Vec<u8>) {
        let (status, error_code, message, _) = self.parts();
        (status, error_body(error_code, &message))
    }
}

/// A storage failure: 50002 when unavailable (throttled, unreachable), else 50001; the detail is
/// logged, never answered. What a read region's replica has not received yet is not found there
/// (404 / 40403, asked again of the home region).
fn store_parts(store: &StoreError) -> (StatusCode, u32, String, Option<String>) {
    let detail = Some(store.to_string());
    match store {
        StoreError::Unavailable(_) => (StatusCode::INTERNAL_SERVER_ERROR, 50002, STORE_TIMEOUT_MESSAGE.into(), detail),
        StoreError::NotReplicated(_) => {
            (StatusCode::NOT_FOUND, 40403, RegistryError::SchemaNotFound.to_string(), detail)
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, 50001, STORE_ERROR_MESSAGE.into(), detail),
    }
}

fn error_body(error_code: u32, message: &str) -> Vec<u8> {
    serde_json::to_vec(&ErrorBody { error_code, message: message.into() })
        .unwrap_or_else(|_| br#"{"error_code":500,"message":"Internal Server Error"}"#.to_vec())
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, error_code, message, detail) = self.parts();
        let body = error_body(error_code, &message);
        let mut response = (status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_V1));
        response.extensions_mut().insert(ErrorCode(error_code));
        if let ApiError::Unauthorized { bearer } = self {
            let headers = response.headers_mut();
            headers.append(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Basic realm="schema-registry""#));
            if bearer {
                headers.append(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="schema-registry""#));
            }
        }
        if let Some(detail) = detail {
            response.extensions_mut().insert(ErrorDetail(detail));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_failures_never_leak_their_detail() {
        let error = ApiError::Registry(RegistryError::Store(StoreError::Corrupt("secret-bucket/key".into())));
        let (status, code, message, detail) = error.parts();
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(code, 50001);
        assert!(!message.contains("secret-bucket"));
        assert!(detail.is_some_and(|d| d.contains("secret-bucket")));
    }

    #[test]
    fn framework_refusals_carry_their_status_as_error_code() {
        let (status, body) = ApiError::Http(StatusCode::URI_TOO_LONG).status_and_body();
        assert_eq!(status, StatusCode::URI_TOO_LONG);
        assert_eq!(body, br#"{"error_code":414,"message":"HTTP 414 URI Too Long"}"#);
    }

    #[test]
    fn unavailable_store_is_50002() {
        let error = ApiError::Registry(RegistryError::Store(StoreError::Unavailable("throttled".into())));
        let (status, code, message, _) = error.parts();
        assert_eq!((status, code), (StatusCode::INTERNAL_SERVER_ERROR, 50002));
        assert!(!message.contains("throttled"));
    }

    /// What a read region's replica has not received yet is "not found" there, so the read
    /// region's application asks the home (and a body it lacks is never reported as corrupt).
    #[test]
    fn what_the_replica_lacks_is_not_found_there() {
        let error = ApiError::Registry(RegistryError::Store(StoreError::NotReplicated("body b1".into())));
        let (status, code, message, detail) = error.parts();
        assert_eq!((status, code, message.as_str()), (StatusCode::NOT_FOUND, 40403, "Schema not found"));
        assert!(detail.is_some_and(|d| d.contains("body b1")));
    }
}
