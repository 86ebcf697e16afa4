//! HTTP caching: the by-ID answers carry a strong ETag and the configured `Cache-Control`, answer a
//! matching `If-None-Match` with 304, and every mutable answer is `Cache-Control: no-store`.

use crate::support::{USER_V1, USER_V2};
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use registry_core::{MemoryStore, Registry, RegistrySettings};
use registry_http::http_cache::{DEFAULT_ID_CACHE_CONTROL, HttpConfig};
use registry_http::{AppOptions, app};
use serde_json::json;
use std::sync::Arc;
use tower::ServiceExt;

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

struct App(axum::Router);

impl App {
    fn new(config: HttpConfig) -> App {
        let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
        App(app(registry, AppOptions { http: config, ..AppOptions::default() }))
    }

    async fn call(
        &self,
        method: &str,
        uri: &str,
        headers: &[(header::HeaderName, &str)],
        body: Option<String>,
    ) -> Answer {
        let mut builder = Request::builder().method(method).uri(uri);
        for (name, value) in headers {
            builder = builder.header(name, *value);
        }
        if body.is_some() {
            builder = builder.header(header::CONTENT_TYPE, "application/vnd.schemaregistry.v1+json");
        }
        let request = builder.body(body.map(Body::from).unwrap_or_else(Body::empty)).unwrap();
        let response = self.0.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes().to_vec();
        Answer { status: parts.status, headers: parts.headers, body }
    }

    async fn get(&self, uri: &str, headers: &[(header::HeaderName, &str)]) -> Answer {
        self.call("GET", uri, headers, None).await
    }

    async fn register(&self, subject: &str, schema: &str) -> i64 {
        let body = json!({ "schema": schema }).to_string();
        let answer = self.call("POST", &format!("/subjects/{subject}/versions"), &[], Some(body)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.header(header::CACHE_CONTROL), Some("no-store"), "writes are not cacheable");
        serde_json::from_slice::<serde_json::Value>(&answer.body).unwrap()["id"].as_i64().unwrap()
    }
}

#[tokio::test]
async fn by_id_answers_carry_an_etag_and_the_default_cache_control_and_revalidate_to_304() {
    let app = App::new(HttpConfig::default());
    let id = app.register("users", USER_V1).await;
    for path in [format!("/schemas/ids/{id}"), format!("/schemas/ids/{id}/schema")] {
        let first = app.get(&path, &[]).await;
        assert_eq!(first.status, StatusCode::OK);
        assert_eq!(first.header(header::CACHE_CONTROL), Some(DEFAULT_ID_CACHE_CONTROL));
        assert_eq!(first.header(header::VARY), Some("Accept"));
        let tag = first.header(header::ETAG).unwrap().to_string();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "a strong tag: {tag}");
        assert_eq!(app.get(&path, &[]).await.header(header::ETAG), Some(tag.as_str()), "stable across requests");

        let again = app.get(&path, &[(header::IF_NONE_MATCH, &tag)]).await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED);
        assert!(again.body.is_empty());
        assert_eq!(again.header(header::ETAG), Some(tag.as_str()));
        assert_eq!(again.header(header::CACHE_CONTROL), Some(DEFAULT_ID_CACHE_CONTROL));

        let other = app.get(&path, &[(header::IF_NONE_MATCH, "\"something-else\"")]).await;
        assert_eq!(other.status, StatusCode::OK);
        assert_eq!(other.body, first.body);
    }
}

#[tokio::test]
async fn tags_differ_between_schemas_endpoints_and_media_types() {
    let app = App::new(HttpConfig::default());
    let one = app.register("a", USER_V1).await;
    let two = app.register("b", USER_V2).await;
    let tag = |answer: Answer| answer.header(header::ETAG).unwrap().to_string();
    let object_one = tag(app.get(&format!("/schemas/ids/{one}"), &[]).await);
    let object_two = tag(app.get(&format!("/schemas/ids/{two}"), &[]).await);
    let text_one = tag(app.get(&format!("/schemas/ids/{one}/schema"), &[]).await);
    let json_one = tag(app.get(&format!("/schemas/ids/{one}"), &[(header::ACCEPT, "application/json")]).await);
    assert_ne!(object_one, object_two);
    assert_ne!(object_one, text_one);
    assert_ne!(object_one, json_one, "a different Content-Type is a different representation");
    let cross = app.get(&format!("/schemas/ids/{two}"), &[(header::IF_NONE_MATCH, &object_one)]).await;
    assert_eq!(cross.status, StatusCode::OK, "another schema's tag does not validate");
}

#[tokio::test]
async fn the_cache_control_is_configurable_or_absent() {
    let app = App::new(HttpConfig::with_id_cache_control("no-cache").unwrap());
    let id = app.register("users", USER_V1).await;
    assert_eq!(app.get(&format!("/schemas/ids/{id}"), &[]).await.header(header::CACHE_CONTROL), Some("no-cache"));

    let app = App::new(HttpConfig::with_id_cache_control("").unwrap());
    let id = app.register("users", USER_V1).await;
    let answer = app.get(&format!("/schemas/ids/{id}"), &[]).await;
    assert!(answer.header(header::ETAG).is_some(), "still revalidatable");
    assert_eq!(answer.header(header::CACHE_CONTROL), Some("no-store"), "no configured policy: not stored");
}

#[tokio::test]
async fn mutable_answers_errors_and_fetch_max_id_are_not_cacheable() {
    let app = App::new(HttpConfig::default());
    let id = app.register("users", USER_V1).await;
    for path in [
        "/subjects".to_string(),
        "/subjects/users/versions".to_string(),
        "/subjects/users/versions/latest".to_string(),
        "/schemas".to_string(),
        "/config".to_string(),
        format!("/schemas/ids/{id}/subjects"),
        format!("/schemas/ids/{id}?fetchMaxId=true"),
        "/schemas/ids/999".to_string(),
    ] {
        let answer = app.get(&path, &[]).await;
        assert_eq!(answer.header(header::CACHE_CONTROL), Some("no-store"), "{path}");
        assert!(answer.header(header::ETAG).is_none(), "{path}");
    }
    let missing = app.get("/schemas/ids/999", &[(header::IF_NONE_MATCH, "*")]).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "If-None-Match never hides a 40403");
}

/// A by-ID answer seen once is answered again from its rendered form: no store read at all, in
/// any media type, and the same bytes and tags as the first answer.
#[tokio::test]
async fn a_repeated_by_id_answer_reads_nothing_from_the_store() {
    let store = Arc::new(registry_core::CachedStore::new(MemoryStore::new()));
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let app = App(app(registry, AppOptions::default()));
    let id = app.register("users", USER_V1).await;
    let json = [(header::ACCEPT, "application/json")];
    let paths = [format!("/schemas/ids/{id}"), format!("/schemas/ids/{id}/schema")];
    let mut first = Vec::new();
    for path in &paths {
        first.push((app.get(path, &[]).await, app.get(path, &json).await));
    }
    let reads = |stats: registry_core::CacheStats| stats.hits + stats.misses;
    let before = reads(store.stats());
    for _ in 0..5 {
        for (path, (plain, as_json)) in paths.iter().zip(&first) {
            let again = app.get(path, &[]).await;
            assert_eq!((again.status, &again.body), (StatusCode::OK, &plain.body));
            assert_eq!(again.header(header::ETAG), plain.header(header::ETAG));
            let again = app.get(path, &json).await;
            assert_eq!((&again.body, again.header(header::ETAG)), (&as_json.body, as_json.header(header::ETAG)));
            assert_eq!(again.header(header::CONTENT_TYPE), Some("application/json"));
        }
    }
    assert_eq!(reads(store.stats()), before, "20 repeated answers read the store");
}

#[tokio::test]
async fn an_answer_kept_by_id_ends_with_a_hard_delete_of_its_schema() {
    let app = App::new(HttpConfig::default());
    let id = app.register("users", USER_V1).await;
    let paths = [format!("/schemas/ids/{id}"), format!("/schemas/ids/{id}/schema")];
    for path in &paths {
        // Read, then remembered, then kept by the ID and answered from there.
        for _ in 0..3 {
            assert_eq!(app.get(path, &[]).await.status, StatusCode::OK, "{path}");
        }
    }
    assert_eq!(app.call("DELETE", "/subjects/users", &[], None).await.status, StatusCode::OK);
    assert_eq!(app.call("DELETE", "/subjects/users?permanent=true", &[], None).await.status, StatusCode::OK);
    for path in &paths {
        let gone = app.get(path, &[]).await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND, "{path}: {}", String::from_utf8_lossy(&gone.body));
    }
}

/// A lookup answer is kept for its request (subject, options and body bytes) only while the
/// registry's lookup memory holds: a write of this process ends it at once.
#[tokio::test]
async fn a_lookup_answer_kept_for_its_request_ends_with_a_write_of_this_process() {
    let app = App::new(HttpConfig::default());
    app.register("users", USER_V1).await;
    app.register("users", USER_V2).await;
    let body = json!({ "schema": USER_V1 }).to_string();
    let spaced = format!(" {body}\n");
    let lookup = |path: &'static str, body: &String| app.call("POST", path, &[], Some(body.clone()));
    let first = lookup("/subjects/users", &body).await;
    assert_eq!(first.status, StatusCode::OK);
    for _ in 0..3 {
        let again = lookup("/subjects/users", &body).await;
        assert_eq!((again.status, &again.body), (StatusCode::OK, &first.body));
        let other_bytes = lookup("/subjects/users", &spaced).await;
        assert_eq!((other_bytes.status, &other_bytes.body), (StatusCode::OK, &first.body));
    }
    assert_eq!(app.call("DELETE", "/subjects/users/versions/1", &[], None).await.status, StatusCode::OK);
    for request in [&body, &spaced] {
        let gone = lookup("/subjects/users", request).await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", String::from_utf8_lossy(&gone.body));
    }
    let with_deleted = lookup("/subjects/users?deleted=true", &body).await;
    assert_eq!(with_deleted.status, StatusCode::OK, "the options are part of the request");
    let found: serde_json::Value = serde_json::from_slice(&with_deleted.body).unwrap();
    assert_eq!(found["version"], 1);
}

/// Another process's write is seen once the lookup memory's TTL has run out, by the answer kept for
/// the request too (at once with a zero TTL); with a long TTL the kept answer is still given.
#[tokio::test]
async fn a_lookup_answer_kept_for_its_request_expires_with_the_lookup_memory() {
    let store = Arc::new(MemoryStore::new());
    let process = |ttl| {
        let settings = RegistrySettings { lookup_ttl: ttl, ..RegistrySettings::default() };
        App(app(Registry::new(store.clone(), settings), AppOptions::default()))
    };
    let writer = process(std::time::Duration::ZERO);
    writer.register("users", USER_V1).await;
    writer.register("users", USER_V2).await;
    let day = std::time::Duration::from_secs(24 * 3600);
    let short = std::time::Duration::from_millis(50);
    let readers = [process(day), process(short), process(std::time::Duration::ZERO)];
    let body = json!({ "schema": USER_V1 }).to_string();
    for reader in &readers {
        for _ in 0..3 {
            assert_eq!(reader.call("POST", "/subjects/users", &[], Some(body.clone())).await.status, StatusCode::OK);
        }
    }
    assert_eq!(writer.call("DELETE", "/subjects/users/versions/1", &[], None).await.status, StatusCode::OK);
    // Sleeping makes at least that much time pass, however busy the machine is.
    tokio::time::sleep(short + std::time::Duration::from_millis(10)).await;
    let status = |answer: Answer| answer.status;
    let [long, short, none] = &readers;
    assert_eq!(status(long.call("POST", "/subjects/users", &[], Some(body.clone())).await), StatusCode::OK);
    assert_eq!(status(short.call("POST", "/subjects/users", &[], Some(body.clone())).await), StatusCode::NOT_FOUND);
    assert_eq!(status(none.call("POST", "/subjects/users", &[], Some(body.clone())).await), StatusCode::NOT_FOUND);
}
