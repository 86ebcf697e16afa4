//! The typed HTTP client the API cases use: raw requests with any content type, and helpers for the
//! common Confluent calls that assert the success status so cases read as Given/When/Then.

use crate::Harness;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Method;
use serde_json::{Value, json};

/// The media type Confluent answers with by default and clients send.
pub const V1_JSON: &str = "application/vnd.schemaregistry.v1+json";

/// Characters the Java client leaves unencoded in a path segment (`UriBuilder`); `/` is encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'@')
    .remove(b':')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Percent-encodes one path segment the way the Java client does (`a/b` → `a%2Fb`).
pub fn enc(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// A response read fully: status, `Content-Type` and body text.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: Option<String>,
    pub text: String,
}

impl Response {
    /// Status, content type and text of `response` (to `path`, named when reading fails).
    async fn read(response: reqwest::Response, path: &str) -> Response {
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let text = response.text().await.unwrap_or_else(|error| panic!("reading {path}: {error}"));
        Response { status, content_type, text }
    }

    /// The body parsed as JSON; panics with the body when it is not JSON.
    pub fn json(&self) -> Value {
        match serde_json::from_str(&self.text) {
            Ok(value) => value,
            Err(error) => panic!("body is not JSON ({error}): status {} body {:?}", self.status, self.text),
        }
    }

    /// Asserts `status` and returns the JSON body.
    #[track_caller]
    pub fn ok_json(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.text);
        self.json()
    }

    /// Asserts a Confluent error: HTTP `status`, `error_code` and the v1 media type. Returns the message.
    #[track_caller]
    pub fn assert_error(&self, status: u16, error_code: i64) -> String {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.text);
        let body = self.json();
        assert_eq!(body["error_code"].as_i64(), Some(error_code), "unexpected error_code; body: {}", self.text);
        let message = body["message"].as_str().unwrap_or_else(|| panic!("no message in {}", self.text));
        assert!(!message.is_empty(), "empty message");
        assert_eq!(self.content_type.as_deref(), Some(V1_JSON), "error content type");
        message.to_string()
    }
}

/// Body of register, lookup and compatibility requests for an Avro schema text.
pub fn avro(schema: &str) -> Value {
    json!({ "schema": schema })
}

/// The same with an explicit `schemaType`.
pub fn typed(schema_type: &str, schema: &str) -> Value {
    json!({ "schemaType": schema_type, "schema": schema })
}

impl Harness {
    /// Sends `method path` with `body` (raw bytes) and `content_type` (`None` = no header).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        content_type: Option<&str>,
    ) -> Response {
        let mut request = self.http().request(method, format!("{}{}", self.base_url(), path));
        if let Some(content_type) = content_type {
            request = request.header(reqwest::header::CONTENT_TYPE, content_type);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => panic!("request {path} failed: {error}"),
        };
        Response::read(response, path).await
    }

    /// `method path` as `user` (see [`crate::users`]), with `body` sent as JSON of the v1 media type.
    pub async fn send_as(&self, user: &str, method: Method, path: &str, body: Option<&Value>) -> Response {
        let mut request = self.http().request(method, format!("{}{}", self.base_url(), path));
        request = request.header(reqwest::header::AUTHORIZATION, crate::users::basic(user));
        if let Some(body) = body {
            request = request.header(reqwest::header::CONTENT_TYPE, V1_JSON).body(body.to_string());
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => panic!("request {path} as {user} failed: {error}"),
        };
        Response::read(response, path).await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Response {
        self.send(Method::GET, path, None, None).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Response {
        self.send(Method::DELETE, path, None, None).await
    }

    /// `POST path` with a JSON body sent as the v1 media type.
    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.send(Method::POST, path, Some(body.to_string().into_bytes()), Some(V1_JSON)).await
    }

    /// `PUT path` with a JSON body sent as the v1 media type.
    pub async fn put(&self, path: &str, body: &Value) -> Response {
        self.send(Method::PUT, path, Some(body.to_string().into_bytes()), Some(V1_JSON)).await
    }

    /// `POST /subjects/{subject}/versions` with `body`; returns the raw response.
    pub async fn register_raw(&self, subject: &str, body: &Value) -> Response {
        self.post(&format!("/subjects/{}/versions", enc(subject)), body).await
    }

    /// Registers an Avro schema; asserts 200 and returns its ID.
    pub async fn register(&self, subject: &str, schema: &str) -> i64 {
        self.register_body(subject, &avro(schema)).await
    }

    /// Registers `body`; asserts 200 and returns the ID.
    pub async fn register_body(&self, subject: &str, body: &Value) -> i64 {
        let answer = self.register_raw(subject, body).await.ok_json(200);
        answer["id"].as_i64().unwrap_or_else(|| panic!("no id in register answer {answer}"))
    }

    /// `POST /subjects/{subject}` (lookup) with an Avro schema.
    pub async fn lookup(&self, subject: &str, schema: &str) -> Response {
        self.post(&format!("/subjects/{}", enc(subject)), &avro(schema)).await
    }

    /// `GET /subjects/{subject}/versions/{version}`.
    pub async fn get_version(&self, subject: &str, version: &str) -> Response {
        self.get(&format!("/subjects/{}/versions/{version}", enc(subject))).await
    }

    /// `GET /subjects/{subject}/versions` as numbers; asserts 200.
    pub async fn versions(&self, subject: &str, query: &str) -> Vec<i64> {
        let body = self.get(&format!("/subjects/{}/versions{query}", enc(subject))).await.ok_json(200);
        numbers(&body)
    }

    /// `GET /subjects{query}` as names; asserts 200.
    pub async fn subjects(&self, query: &str) -> Vec<String> {
        let body = self.get(&format!("/subjects{query}")).await.ok_json(200);
        strings(&body)
    }

    /// `DELETE /subjects/{subject}/versions/{version}`, permanent or not.
    pub async fn delete_version(&self, subject: &str, version: &str, permanent: bool) -> Response {
        let query = if permanent { "?permanent=true" } else { "" };
        self.delete(&format!("/subjects/{}/versions/{version}{query}", enc(subject))).await
    }

    /// `DELETE /subjects/{subject}`, permanent or not.
    pub async fn delete_subject(&self, subject: &str, permanent: bool) -> Response {
        let query = if permanent { "?permanent=true" } else { "" };
        self.delete(&format!("/subjects/{}{query}", enc(subject))).await
    }

    /// `PUT /config[/{subject}]` `{"compatibility": level}`.
    pub async fn set_config(&self, subject: Option<&str>, level: &str) -> Response {
        self.put(&config_path("/config", subject), &json!({ "compatibility": level })).await
    }

    /// `PUT /mode[/{subject}]` `{"mode": mode}` with an optional query (e.g. `?force=true`).
    pub async fn set_mode(&self, subject: Option<&str>, mode: &str, query: &str) -> Response {
        self.put(&format!("{}{query}", config_path("/mode", subject)), &json!({ "mode": mode })).await
    }

    /// `POST /compatibility/subjects/{subject}/versions[/{version}]{query}` with an Avro schema.
    pub async fn check(&self, subject: &str, version: Option<&str>, schema: &str, query: &str) -> Response {
        let version = version.map(|v| format!("/{v}")).unwrap_or_default();
        self.post(&format!("/compatibility/subjects/{}/versions{version}{query}", enc(subject)), &avro(schema)).await
    }
}

fn config_path(root: &str, subject: Option<&str>) -> String {
    match subject {
        Some(subject) => format!("{root}/{}", enc(subject)),
        None => root.to_string(),
    }
}

/// A JSON array of integers; panics on anything else.
pub fn numbers(body: &Value) -> Vec<i64> {
    let items = body.as_array().unwrap_or_else(|| panic!("expected an array, got {body}"));
    items.iter().map(|item| item.as_i64().unwrap_or_else(|| panic!("not an int: {item}"))).collect()
}

/// A JSON array of strings; panics on anything else.
pub fn strings(body: &Value) -> Vec<String> {
    let items = body.as_array().unwrap_or_else(|| panic!("expected an array, got {body}"));
    items.iter().map(|item| item.as_str().unwrap_or_else(|| panic!("not a string: {item}")).to_string()).collect()
}
