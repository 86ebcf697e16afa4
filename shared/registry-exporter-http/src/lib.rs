//! The transports of the exporters' [`RegistryApi`] ports, kept out of the domain crate
//! `registry-exporter` (whose stores and engine need no HTTP client): [`HttpApi`], a destination
//! over HTTP with the exporter's client settings, opened by [`HttpConnect`], and [`RouterApi`], this registry's own router called in process (the source:
//! no socket, no credentials, the same answers a client gets).
//!
//! A destination is untrusted input. Its URL and address pass the operator's allow-list
//! ([`registry_exporter::destination`], each resolved address checked by [`CheckedResolver`]); every call ends within [`MAX_TIMEOUT`] whatever `request.timeout.ms`
//! says; no redirect is followed and no proxy of the environment is used (the address checked is
//! the address connected to); an answer is read into at most [`MAX_ANSWER_BYTES`] and parsed only
//! when it holds at most [`MAX_ANSWER_VALUES`] JSON values nested at most [`MAX_ANSWER_DEPTH`]
//! deep, so an answer costs a bounded amount of memory whatever its shape.

use async_trait::async_trait;
use axum::body::Body;
use http_body_util::BodyExt;
use registry_exporter::destination::{Destination, DestinationPolicy};
use registry_exporter::engine::{Answer, Connect, Method, RegistryApi};
use registry_schema::JsonShape;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// Largest answer read from a destination (8 MiB: a version of the largest schema the registry
/// accepts by default, 1 MiB, escaped, with room to spare).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Most JSON values (scalars, arrays, objects) of one answer parsed (a listing of 100 000
/// subjects); each costs a few dozen bytes parsed.
pub const MAX_ANSWER_VALUES: usize = 200_000;

/// Deepest nesting of an answer parsed.
pub const MAX_ANSWER_DEPTH: usize = 128;

/// Longest a destination call may take (`request.timeout.ms` is capped here).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
/// (with `bearer.auth.credentials.source` STATIC_TOKEN or unset), `request.timeout.ms` (at most
/// [`MAX_TIMEOUT`], the default).
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
    /// The destination `config` names, for exporter `exporter`, if `policy` allows it.
    pub fn from_config(
        exporter: &str,
        config: &BTreeMap<String, String>,
        policy: &Arc<DestinationPolicy>,
    ) -> Result<Self, String> {
        let url = config.get(registry_exporter::model::DESTINATION_URL).ok_or("no schema.registry.url")?;
        let destination = Destination::parse(url)?;
        let check_addresses = !policy.admits_host(&destination)?;
        let base = destination.base;
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
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .filter(|&ms| ms > 0)
            .map_or(MAX_TIMEOUT, |ms| Duration::from_millis(ms).min(MAX_TIMEOUT));
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if check_addresses {
            builder = builder.dns_resolver(Arc::new(CheckedResolver { policy: policy.clone() }));
        }
        let http = builder.build().map_err(|error| format!("cannot build the HTTP client: {error}"))?;
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
        let mut response = request.send().await.map_err(describe_error)?;
        let status = response.status().as_u16();
        if response.content_length().is_some_and(|length| length > MAX_ANSWER_BYTES as u64) {
            return Err(format!("answer larger than {MAX_ANSWER_BYTES} bytes"));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(describe_error)? {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(format!("answer larger than {MAX_ANSWER_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Answer { status, body: bounded_json(&bytes)? })
    }

    fn describe(&self) -> String {
        self.base.clone()
    }
}

/// Opens destinations over HTTP ([`HttpApi::from_config`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpConnect;

impl Connect for HttpConnect {
    fn connect(
        &self,
        exporter: &str,
        config: &BTreeMap<String, String>,
        policy: &Arc<DestinationPolicy>,
    ) -> Result<Box<dyn RegistryApi>, String> {
        Ok(Box::new(HttpApi::from_config(exporter, config, policy)?))
    }
}

/// Resolves names as the system does and keeps only the addresses the policy allows; a name with
/// none left does not resolve (the connection fails naming the policy).
#[derive(Debug)]
pub struct CheckedResolver {
    policy: Arc<DestinationPolicy>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> =
                resolved.iter().copied().filter(|address| policy.admits_address(address.ip())).collect();
            if allowed.is_empty() {
                let shown =
                    resolved.first().map_or_else(|| name.clone(), |address| format!("{name} ({})", address.ip()));
                return Err(policy.refusal(&shown).into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// A transport error without the URL, with its causes (the allow-list's refusal is a cause).
fn describe_error(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `bytes` parsed as JSON when its shape is within [`MAX_ANSWER_VALUES`] and [`MAX_ANSWER_DEPTH`]
/// (counted in one pass over the bytes before anything is allocated); `Null` when it is not JSON.
pub fn bounded_json(bytes: &[u8]) -> Result<Value, String> {
    let shape = JsonShape::of(bytes);
    if shape.depth > MAX_ANSWER_DEPTH {
        return Err(format!("answer nested deeper than {MAX_ANSWER_DEPTH}"));
    }
    if shape.values > MAX_ANSWER_VALUES {
        return Err(format!("answer holds more than {MAX_ANSWER_VALUES} JSON values"));
    }
    Ok(serde_json::from_slice(bytes).unwrap_or(Value::Null))
}

/// This registry's router, called in process.
#[derive(Clone, Debug)]
pub struct RouterApi {
    router: axum::Router,
    /// The registry the router serves, when this is an exporter's source: it lists the subjects
    /// holding a config, which no endpoint answers.
    registry: Option<registry_core::Registry>,
}

impl RouterApi {
    /// `router` must serve without authentication (it is called by the registry itself).
    pub fn new(router: axum::Router) -> Self {
        Self { router, registry: None }
    }

    /// An exporter's source: `router`, serving `registry` without authentication.
    pub fn source(router: axum::Router, registry: registry_core::Registry) -> Self {
        Self { router, registry: Some(registry) }
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

    async fn subjects_with_config(&self) -> Result<Vec<String>, String> {
        let Some(registry) = &self.registry else { return Ok(Vec::new()) };
        let subjects = registry.subjects_with_config().await.map_err(|error| error.to_string())?;
        Ok(subjects.into_iter().map(String::from).collect())
    }
}
