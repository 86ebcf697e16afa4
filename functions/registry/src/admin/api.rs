//! One Confluent REST client for the admin commands, over two transports: a remote registry
//! (HTTP, optional basic auth) or the configured store (our router called in process, so every
//! write goes through the same `Registry` rules as a served request).
//!
//! A remote registry is not trusted: every request has a connect and a total time budget, every
//! answer a size limit (read chunk by chunk, never past it), paged listings a page limit, and
//! redirects are followed only within the registry (same scheme, host and port). Errors name the
//! request's URL, the status and what was expected instead of what came.

use super::AdminError;
use crate::config::RemoteArgs;
use axum::body::Body;
use http_body_util::BodyExt;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use registry_core::model::Context;
use registry_core::{Registry, Subject};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;
use tower::ServiceExt;

/// Characters kept as-is in a path segment; everything else (`/` included) is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The Confluent content type sent with every body.
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// Redirects followed within a remote registry, at most.
const MAX_REDIRECTS: usize = 5;

/// Bytes of an unexpected answer quoted in an error.
const QUOTED_BYTES: usize = 200;

/// A registry the admin commands talk to.
#[derive(Debug, Clone)]
pub enum Api {
    /// A registry at `base` (no trailing slash), e.g. `http://host:8081`.
    Remote { http: reqwest::Client, base: String, auth: Option<(String, String)>, limits: RemoteArgs },
    /// The configured store, through the router in process.
    Local { router: axum::Router, registry: Registry },
}

/// An answer: status and JSON body (`Null` when the body is empty or not JSON).
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// Parsed body.
    pub body: Value,
    /// The request's method and URL (a path for the configured store), for messages.
    pub request: String,
    /// Why a non-empty body is not JSON, quoting its start.
    pub not_json: Option<String>,
}

impl Answer {
    /// `Ok(body)` on 2xx with a JSON (or empty) body, else an error naming `what`, the request,
    /// the status and the body.
    pub fn ok(self, what: &str) -> Result<Value, AdminError> {
        let Answer { status, body, request, not_json } = self;
        if !(200..300).contains(&status) {
            let shown = not_json.unwrap_or_else(|| quote(&body.to_string()));
            return Err(format!("{what}: {request} answered HTTP {status}: {shown}").into());
        }
        match not_json {
            Some(problem) => Err(format!("{what}: {request} answered HTTP {status} with a body that {problem}").into()),
            None => Ok(body),
        }
    }

    /// The body of a 2xx answer as `T`; an error names `what`, the request, the status, what was
    /// `expected` and what came instead.
    pub fn parse<T: DeserializeOwned>(self, what: &str, expected: &str) -> Result<T, AdminError> {
        let (status, request) = (self.status, self.request.clone());
        let body = self.ok(what)?;
        serde_json::from_value(body.clone()).map_err(|error| {
            let got = quote(&body.to_string());
            format!("{what}: {request} answered HTTP {status} with {got}, expected {expected} ({error})").into()
        })
    }

    /// The Confluent `error_code` of a refusal.
    pub fn error_code(&self) -> Option<i64> {
        self.body.get("error_code").and_then(Value::as_i64)
    }
}

/// The start of `text`, for a message.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED_BYTES) {
        Some((end, _)) => format!("`{}...`", &text[..end]),
        None => format!("`{text}`"),
    }
}

/// `bytes` as JSON (`Null` when empty), or why they are not JSON.
fn json_of(bytes: &[u8]) -> (Value, Option<String>) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return (Value::Null, None);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => (value, None),
        Err(error) => {
            let start = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTED_BYTES * 4)]).into_owned();
            (Value::Null, Some(format!("is not JSON ({error}): {}", quote(&start))))
        }
    }
}

/// Whether `next` is on the same scheme, host and port as `first`.
fn same_origin(first: &reqwest::Url, next: &reqwest::Url) -> bool {
    first.scheme() == next.scheme()
        && first.host_str() == next.host_str()
        && first.port_or_known_default() == next.port_or_known_default()
}

/// The redirect policy for a remote registry: within the registry only, at most [`MAX_REDIRECTS`].
fn redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else { return attempt.follow() };
        if !same_origin(first, attempt.url()) {
            let refused = format!("redirected to {}, outside the registry; not followed", attempt.url());
            attempt.error(refused)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A failed request to a remote registry as one line: the request, and what went wrong in terms of
/// the bound that stopped it.
fn remote_error(request: &str, error: &reqwest::Error, limits: &RemoteArgs) -> AdminError {
    if error.is_timeout() && error.is_connect() {
        let ms = limits.remote_connect_timeout_ms;
        return format!("{request}: no connection within {ms} ms (REGISTRY_REMOTE_CONNECT_TIMEOUT_MS)").into();
    }
    if error.is_timeout() {
        let ms = limits.remote_timeout_ms;
        return format!("{request}: no complete answer within {ms} ms (REGISTRY_REMOTE_TIMEOUT_MS)").into();
    }
    let mut causes = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    // A refused redirect: the policy's own reason says it all.
    let text = if error.is_redirect() { causes.last().cloned().unwrap_or_default() } else { causes.join(": ") };
    format!("{request}: {text}").into()
}

/// The body of `response`, read chunk by chunk and refused past `limits`' size.
async fn read_bounded(
    mut response: reqwest::Response,
    request: &str,
    limits: &RemoteArgs,
) -> Result<Vec<u8>, AdminError> {
    let max = limits.remote_max_answer_bytes;
    let too_big = || -> AdminError {
        format!("{request}: the answer exceeds {max} bytes (REGISTRY_REMOTE_MAX_ANSWER_BYTES)").into()
    };
    if response.content_length().is_some_and(|length| length > max) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| remote_error(request, &error, limits))? {
        if (bytes.len() + chunk.len()) as u64 > max {
            return Err(too_big());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Contexts asked for per `GET /contexts` page.
const CONTEXTS_PAGE: usize = 1000;

/// The path of the setting `kind` (`config` or `mode`) at `subject`, or the global one.
fn setting_path(kind: &str, subject: Option<&str>) -> String {
    match subject {
        Some(subject) => format!("/{kind}/{}", segment(subject)),
        None => format!("/{kind}"),
    }
}

/// `s` as one percent-encoded path segment.
pub fn segment(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

impl Api {
    /// A remote registry at `url`, within `limits`; `user` is `USER:PASSWORD` for basic auth.
    pub fn remote(url: &str, user: Option<&str>, limits: RemoteArgs) -> Result<Api, AdminError> {
        let auth = match user {
            Some(pair) => match pair.split_once(':') {
                Some((name, password)) => Some((name.to_string(), password.to_string())),
                None => return Err("credentials must be USER:PASSWORD".into()),
            },
            None => None,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(limits.remote_connect_timeout_ms))
            .timeout(Duration::from_millis(limits.remote_timeout_ms))
            .redirect(redirects())
            .build()?;
        Ok(Api::Remote { http, base: url.trim_end_matches('/').to_string(), auth, limits })
    }

    /// The configured store behind `registry`.
    pub fn local(registry: Registry) -> Api {
        let router = registry_http::app(registry.clone(), registry_http::AppOptions::default());
        Api::Local { router, registry }
    }

    /// Where this API points, for messages.
    pub fn describe(&self) -> String {
        match self {
            Api::Remote { base, .. } => base.clone(),
            Api::Local { .. } => "the configured store".to_string(),
        }
    }

    /// Sends one request; `path` includes the query string.
    pub async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, AdminError> {
        let (status, bytes, request) = match self {
            Api::Remote { http, base, auth, limits } => {
                let url = format!("{base}{path}");
                let request = format!("{method} {url}");
                let mut builder = http.request(reqwest::Method::from_bytes(method.as_bytes())?, url);
                if let Some((user, password)) = auth {
                    builder = builder.basic_auth(user, Some(password));
                }
                if let Some(body) = body {
                    builder = builder.header("content-type", CONTENT_TYPE).body(body.to_string());
                }
                let response = builder.send().await.map_err(|error| remote_error(&request, &error, limits))?;
                let status = response.status().as_u16();
                (status, read_bounded(response, &request, limits).await?, request)
            }
            Api::Local { router, .. } => {
                let mut request = axum::http::Request::builder().method(method).uri(path);
                let payload = match body {
                    Some(body) => {
                        request = request.header("content-type", CONTENT_TYPE);
                        Body::from(body.to_string())
                    }
                    None => Body::empty(),
                };
                let response = router.clone().oneshot(request.body(payload)?).await?;
                let status = response.status().as_u16();
                (status, response.into_body().collect().await?.to_bytes().to_vec(), format!("{method} {path}"))
            }
        };
        let (body, not_json) = json_of(&bytes);
        Ok(Answer { status, body, request, not_json })
    }

    /// `GET` that must succeed.
    pub async fn get(&self, path: &str) -> Result<Value, AdminError> {
        self.call("GET", path, None).await?.ok(&format!("GET {path}"))
    }

    /// Every context the registry lists (`GET /contexts`, page by page), the default one first;
    /// just the default context from a registry without contexts (404). A page that brings no new
    /// context ends the listing (the registry ignores `offset`); a remote registry still listing new
    /// ones after its page limit is an error.
    pub async fn contexts(&self) -> Result<Vec<Context>, AdminError> {
        let max_pages = match self {
            Api::Remote { limits, .. } => limits.remote_max_pages as usize,
            Api::Local { .. } => usize::MAX,
        };
        let mut contexts = vec![Context::DEFAULT];
        let mut seen: HashSet<Context> = contexts.iter().cloned().collect();
        for page in 0..max_pages {
            let offset = page * CONTEXTS_PAGE;
            let path = format!("/contexts?offset={offset}&limit={CONTEXTS_PAGE}");
            let answer = self.call("GET", &path, None).await?;
            if answer.status == 404 && offset == 0 {
                return Ok(contexts);
            }
            let names: Vec<String> = answer.parse("listing contexts", "a JSON array of context names")?;
            let known = contexts.len();
            for name in &names {
                let context = Context::parse(name).map_err(|e| format!("GET /contexts listed {name:?}: {e}"))?;
                if seen.insert(context.clone()) {
                    contexts.push(context);
                }
            }
            // A short page is the last; a page of known contexts means the source ignores `offset`.
            if names.len() < CONTEXTS_PAGE || contexts.len() == known {
                return Ok(contexts);
            }
        }
        Err(format!(
            "listing contexts: {} still lists new contexts after {max_pages} pages of {CONTEXTS_PAGE} \
             (REGISTRY_REMOTE_MAX_PAGES)",
            self.describe()
        )
        .into())
    }

    /// Every subject of every context (qualified), soft-deleted ones included
    /// (`/subjects?deleted=true`, whose default prefix `:*:` spans the contexts), sorted.
    pub async fn subjects(&self) -> Result<Vec<String>, AdminError> {
        let answer = self.call("GET", "/subjects?deleted=true", None).await?;
        let mut subjects: Vec<String> = answer.parse("listing subjects", "a JSON array of subject names")?;
        subjects.sort();
        Ok(subjects)
    }

    /// The subjects of the named `context`, soft-deleted ones included (`subjectPrefix=:.ctx:`: a
    /// registry from before `:*:` became the default prefix lists only the default context's).
    pub async fn subjects_in(&self, context: &Context) -> Result<Vec<String>, AdminError> {
        let path = format!("/subjects?deleted=true&subjectPrefix={}", segment(&context.subject_prefix()));
        let answer = self.call("GET", &path, None).await?;
        answer.parse(&format!("listing the subjects of {context}"), "a JSON array of subject names")
    }

    /// Version numbers of `subject`, with soft-deleted ones when `deleted` (empty when the subject is unknown).
    pub async fn versions(&self, subject: &str, deleted: bool) -> Result<Vec<i32>, AdminError> {
        let path = format!("/subjects/{}/versions?deleted={deleted}", segment(subject));
        let answer = self.call("GET", &path, None).await?;
        if answer.status == 404 {
            return Ok(Vec::new());
        }
        let mut versions: Vec<i32> =
            answer.parse(&format!("listing the versions of {subject}"), "a JSON array of version numbers")?;
        versions.sort_unstable();
        Ok(versions)
    }

    /// One version (soft-deleted ones too) as the API answers it.
    pub async fn version(&self, subject: &str, version: i32) -> Result<Value, AdminError> {
        self.get(&format!("/subjects/{}/versions/{version}?deleted=true", segment(subject))).await
    }

    /// The config stored at a scope (`None` subject: global), `None` when the subject has none.
    pub async fn config(&self, subject: Option<&str>) -> Result<Option<Value>, AdminError> {
        self.setting("config", subject).await
    }

    /// The effective compatibility level of `subject` (subject → global → default).
    pub async fn effective_level(&self, subject: &str) -> Result<String, AdminError> {
        let config = self.get(&format!("/config/{}?defaultToGlobal=true", segment(subject))).await?;
        Ok(config.get("compatibilityLevel").and_then(Value::as_str).unwrap_or("BACKWARD").to_string())
    }

    /// The mode stored at a scope, `None` when the subject has none.
    pub async fn mode(&self, subject: Option<&str>) -> Result<Option<String>, AdminError> {
        let body = self.setting("mode", subject).await?;
        Ok(body.as_ref().and_then(|body| body.get("mode")).and_then(Value::as_str).map(str::to_string))
    }

    /// `GET /<kind>[/{subject}]` (`config` or `mode`), `None` when the subject has none (404).
    async fn setting(&self, kind: &str, subject: Option<&str>) -> Result<Option<Value>, AdminError> {
        let path = setting_path(kind, subject);
        let answer = self.call("GET", &path, None).await?;
        if answer.status == 404 {
            return Ok(None);
        }
        answer.ok(&format!("GET {path}")).map(Some)
    }

    /// Sets the mode at a scope (with `force`, so IMPORT is allowed over existing schemas).
    pub async fn set_mode(&self, subject: Option<&str>, mode: &str) -> Result<(), AdminError> {
        let answer = self.put_mode(subject, mode).await?;
        answer.ok(&format!("PUT /mode/{} {mode}", subject.unwrap_or_default()))?;
        Ok(())
    }

    /// `PUT /mode[/{subject}]?force=true`, answered as is.
    pub async fn put_mode(&self, subject: Option<&str>, mode: &str) -> Result<Answer, AdminError> {
        let path = format!("{}?force=true", setting_path("mode", subject));
        self.call("PUT", &path, Some(&serde_json::json!({ "mode": mode }))).await
    }

    /// Removes the mode stored at `subject` (a subject or a context's `:.ctx:`).
    pub async fn delete_mode(&self, subject: &str) -> Result<(), AdminError> {
        let path = format!("/mode/{}", segment(subject));
        self.call("DELETE", &path, None).await?.ok(&format!("DELETE {path}"))?;
        Ok(())
    }

    /// Sets the config at a scope from a `GET /config` answer (`compatibilityLevel`, `normalize`).
    pub async fn set_config(&self, subject: Option<&str>, config: &Value) -> Result<(), AdminError> {
        let answer = self.put_config(subject, config).await?;
        answer.ok(&format!("PUT /config/{}", subject.unwrap_or_default()))?;
        Ok(())
    }

    /// `PUT /config[/{subject}]` from a `GET /config` answer, answered as is.
    pub async fn put_config(&self, subject: Option<&str>, config: &Value) -> Result<Answer, AdminError> {
        let path = setting_path("config", subject);
        let mut request = serde_json::Map::new();
        if let Some(level) = config.get("compatibilityLevel") {
            request.insert("compatibility".to_string(), level.clone());
        }
        if let Some(normalize) = config.get("normalize") {
            request.insert("normalize".to_string(), normalize.clone());
        }
        self.call("PUT", &path, Some(&Value::Object(request))).await
    }

    /// `DELETE /subjects/{s}/versions/{v}`, soft or `permanent`.
    pub async fn delete_version(&self, subject: &str, version: i32, permanent: bool) -> Result<Answer, AdminError> {
        let path = format!("/subjects/{}/versions/{version}?permanent={permanent}", segment(subject));
        self.call("DELETE", &path, None).await
    }

    /// `DELETE /subjects/{s}`, soft or `permanent`.
    pub async fn delete_subject(&self, subject: &str, permanent: bool) -> Result<Answer, AdminError> {
        let path = format!("/subjects/{}?permanent={permanent}", segment(subject));
        self.call("DELETE", &path, None).await
    }

    /// The last-used day of `subject` (local stores only: the API does not expose it).
    pub async fn last_used(&self, subject: &str) -> Result<Option<u32>, AdminError> {
        match self {
            Api::Local { registry, .. } => Ok(registry.last_used_day(&Subject::new(subject)?).await?),
            Api::Remote { .. } => Err("the last-used marker is only readable from the configured store".into()),
        }
    }
}
