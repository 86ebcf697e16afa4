//! One Confluent REST client for the admin commands, over two transports: a remote registry
//! (HTTP, optional basic auth) or the configured store (our router called in process, so every
//! write goes through the same `Registry` rules as a served request).

use super::AdminError;
use axum::body::Body;
use http_body_util::BodyExt;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use registry_core::model::Context;
use registry_core::{Registry, Subject};
use serde_json::Value;
use tower::ServiceExt;

/// Characters kept as-is in a path segment; everything else (`/` included) is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The Confluent content type sent with every body.
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// A registry the admin commands talk to.
#[derive(Debug, Clone)]
pub enum Api {
    /// A registry at `base` (no trailing slash), e.g. `http://host:8081`.
    Remote { http: reqwest::Client, base: String, auth: Option<(String, String)> },
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
}

impl Answer {
    /// `Ok(body)` on 2xx, else an error naming `what`, the status and the body.
    pub fn ok(self, what: &str) -> Result<Value, AdminError> {
        if (200..300).contains(&self.status) {
            Ok(self.body)
        } else {
            Err(format!("{what}: HTTP {} {}", self.status, self.body).into())
        }
    }

    /// The Confluent `error_code` of a refusal.
    pub fn error_code(&self) -> Option<i64> {
        self.body.get("error_code").and_then(Value::as_i64)
    }
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
    /// A remote registry at `url`; `user` is `USER:PASSWORD` for basic auth.
    pub fn remote(url: &str, user: Option<&str>) -> Result<Api, AdminError> {
        let auth = match user {
            Some(pair) => match pair.split_once(':') {
                Some((name, password)) => Some((name.to_string(), password.to_string())),
                None => return Err("credentials must be USER:PASSWORD".into()),
            },
            None => None,
        };
        let http = reqwest::Client::builder().build()?;
        Ok(Api::Remote { http, base: url.trim_end_matches('/').to_string(), auth })
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
        let (status, bytes) = match self {
            Api::Remote { http, base, auth } => {
                let method = reqwest::Method::from_bytes(method.as_bytes())?;
                let mut request = http.request(method, format!("{base}{path}"));
                if let Some((user, password)) = auth {
                    request = request.basic_auth(user, Some(password));
                }
                if let Some(body) = body {
                    request = request.header("content-type", CONTENT_TYPE).body(body.to_string());
                }
                let response = request.send().await?;
                let status = response.status().as_u16();
                (status, response.bytes().await?.to_vec())
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
                (status, response.into_body().collect().await?.to_bytes().to_vec())
            }
        };
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Answer { status, body })
    }

    /// `GET` that must succeed.
    pub async fn get(&self, path: &str) -> Result<Value, AdminError> {
        self.call("GET", path, None).await?.ok(&format!("GET {path}"))
    }

    /// Every context the registry lists (`GET /contexts`, page by page), the default one first;
    /// just the default context from a registry without contexts (404).
    pub async fn contexts(&self) -> Result<Vec<Context>, AdminError> {
        let mut contexts = vec![Context::DEFAULT];
        for offset in (0..).step_by(CONTEXTS_PAGE) {
            let path = format!("/contexts?offset={offset}&limit={CONTEXTS_PAGE}");
            let answer = self.call("GET", &path, None).await?;
            if answer.status == 404 && offset == 0 {
                break;
            }
            let page: Vec<String> = serde_json::from_value(answer.ok(&format!("GET {path}"))?)?;
            let known = contexts.len();
            for name in &page {
                let context = Context::parse(name).map_err(|e| format!("GET /contexts listed {name:?}: {e}"))?;
                if !contexts.contains(&context) {
                    contexts.push(context);
                }
            }
            // A short page is the last; a page of known contexts means the source ignores `offset`.
            if page.len() < CONTEXTS_PAGE || contexts.len() == known {
                break;
            }
        }
        Ok(contexts)
    }

    /// Every subject of every context (qualified), soft-deleted ones included
    /// (`/subjects?deleted=true`, whose default prefix `:*:` spans the contexts), sorted.
    pub async fn subjects(&self) -> Result<Vec<String>, AdminError> {
        let mut subjects: Vec<String> = serde_json::from_value(self.get("/subjects?deleted=true").await?)?;
        subjects.sort();
        Ok(subjects)
    }

    /// The subjects of the named `context`, soft-deleted ones included (`subjectPrefix=:.ctx:`: a
    /// registry from before `:*:` became the default prefix lists only the default context's).
    pub async fn subjects_in(&self, context: &Context) -> Result<Vec<String>, AdminError> {
        let path = format!("/subjects?deleted=true&subjectPrefix={}", segment(&context.subject_prefix()));
        Ok(serde_json::from_value(self.get(&path).await?)?)
    }

    /// Version numbers of `subject`, with soft-deleted ones when `deleted` (empty when the subject is unknown).
    pub async fn versions(&self, subject: &str, deleted: bool) -> Result<Vec<i32>, AdminError> {
        let path = format!("/subjects/{}/versions?deleted={deleted}", segment(subject));
        let answer = self.call("GET", &path, None).await?;
        if answer.status == 404 {
            return Ok(Vec::new());
        }
        let mut versions: Vec<i32> = serde_json::from_value(answer.ok(&format!("GET {path}"))?)?;
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
