//! The [`RegistryApi`] transports: [`HttpApi`], a destination over HTTP with the exporter's
//! client settings, and [`RouterApi`], this registry's own router called in process (the source:
//! no socket, no credentials, the same answers a client gets).

use crate::engine::{Answer, Method, RegistryApi};
use async_trait::async_trait;
use axum::body::Body;
use http_body_util::BodyExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use tower::ServiceExt;

const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// Largest answer read from a destination (64 MiB).
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The header naming the exporter on each request, as Confluent's exporter sends it.
const EXPORTER_HEADER: &str = "Confluent-Schema-Exporter-Name";

/// How a destination authenticates the exporter.
#[derive(Clone)]
enum Credentials {
    None,
    Basic(String, String),
    Bearer(String),
}

/// A destination registry over HTTP, configured from an exporter's `config` (credentials opened):
/// `schema.registry.url` (the first of a comma-separated list), `basic.auth.user.info`
/// (`user:password`, with `basic.auth.credentials.source` USER_INFO or unset), `bearer.auth.token`
/// (with `bearer.auth.credentials.source` STATIC_TOKEN or unset), `request.timeout.ms`.
#[derive(Clone)]
pub struct HttpApi {
    http: reqwest::Client,
    base: String,
    credentials: Credentials,
    exporter: String,
}

impl std::fmt::Debug for HttpApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpApi").field("base", &self.base).finish_non_exhaustive()
    }
}

impl HttpApi {
    /// The destination `config` names, for exporter `exporter`.
    pub fn from_config(exporter: &str, config: &BTreeMap<String, String>) -> Result<Self, String> {
        let url = config.get(crate::model::DESTINATION_URL).ok_or("no schema.registry.url")?;
        let base = url.split(',').next().unwrap_or_default().trim().trim_end_matches('/').to_owned();
        let credentials = if let Some(info) = config.get("basic.auth.user.info") {
            let (user, password) = info.split_once(':').unwrap_or((info.as_str(), ""));
            Credentials::Basic(user.to_owned(), password.to_owned())
        } else if let Some(token) = config.get("bearer.auth.token") {
            Credentials::Bearer(token.clone())
        } else {
            Credentials::None
        };
        let timeout = config
            .get("request.timeout.ms")
            .and_then(|ms| ms.parse::<u64>().ok())
            .map_or(Duration::from_secs(60), Duration::from_millis);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
        Ok(Self { http, base, credentials, exporter: exporter.to_owned() })
    }
}

#[async_trait]
impl RegistryApi for HttpApi {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        let method = match method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(reqwest::header::ACCEPT, CONTENT_TYPE)
            .header(EXPORTER_HEADER, &self.exporter);
        request = match &self.credentials {
            Credentials::None => request,
            Credentials::Basic(user, password) => request.basic_auth(user, Some(password)),
            Credentials::Bearer(token) => request.bearer_auth(token),
        };
        if let Some(body) = body {
            request = request.header(reqwest::header::CONTENT_TYPE, CONTENT_TYPE).body(body.to_string());
        }
        let mut response = request.send().await.map_err(|error| error.without_url().to_string())?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| error.without_url().to_string())? {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(format!("answer larger than {MAX_ANSWER_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) })
    }

    fn describe(&self) -> String {
        self.base.clone()
    }
}

/// This registry's router, called in process.
#[derive(Clone, Debug)]
pub struct RouterApi {
    router: axum::Router,
}

impl RouterApi {
    /// `router` must serve without authentication (it is called by the registry itself).
    pub fn new(router: axum::Router) -> Self {
        Self { router }
    }
}

#[async_trait]
impl RegistryApi for RouterApi {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        let builder = axum::http::Request::builder()
            .method(method.as_str())
            .uri(path)
            .header(axum::http::header::ACCEPT, CONTENT_TYPE)
            .header(axum::http::header::CONTENT_TYPE, CONTENT_TYPE);
        let request = builder
            .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
            .map_err(|error| error.to_string())?;
        let response = self.router.clone().oneshot(request).await.map_err(|error| error.to_string())?;
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.map_err(|error| error.to_string())?.to_bytes();
        Ok(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) })
    }

    fn describe(&self) -> String {
        "this registry".to_owned()
    }
}
