//! Request and response media types (§1.1): which request types register, which get 415, what answers carry.

use api_tests::Harness;
use api_tests::client::V1_JSON;
use api_tests::schemas::{distinct, user_v1};
use reqwest::Method;
use serde_json::json;

async fn register_with(h: &Harness, content_type: Option<&str>) -> u16 {
    let body = json!({ "schema": user_v1() }).to_string().into_bytes();
    let response = h.send(Method::POST, "/subjects/s/versions", Some(body), content_type).await;
    if response.status == 200 {
        assert!(response.json()["id"].is_i64(), "{}", response.text);
    }
    response.status
}

async fn v1_type_accepted(h: &Harness) {
    assert_eq!(register_with(h, Some(V1_JSON)).await, 200);
}

async fn generic_type_accepted(h: &Harness) {
    assert_eq!(register_with(h, Some("application/vnd.schemaregistry+json")).await, 200);
}

async fn application_json_accepted(h: &Harness) {
    assert_eq!(register_with(h, Some("application/json")).await, 200);
    assert_eq!(register_with(h, Some("application/json; charset=utf-8")).await, 200);
}

async fn octet_stream_accepted(h: &Harness) {
    assert_eq!(register_with(h, Some("application/octet-stream")).await, 200);
}

async fn no_content_type_accepted(h: &Harness) {
    assert_eq!(register_with(h, None).await, 200);
}

async fn text_plain_is_415(h: &Harness) {
    let body = json!({ "schema": user_v1() }).to_string().into_bytes();
    let response = h.send(Method::POST, "/subjects/s/versions", Some(body), Some("text/plain")).await;
    assert_eq!(response.assert_error(415, 415), "HTTP 415 Unsupported Media Type");
    h.get("/subjects/s/versions").await.assert_error(404, 40401);
}

async fn other_types_are_415(h: &Harness) {
    for content_type in ["application/xml", "text/html", "application/x-www-form-urlencoded"] {
        let body = json!({ "compatibility": "NONE" }).to_string().into_bytes();
        h.send(Method::PUT, "/config", Some(body), Some(content_type)).await.assert_error(415, 415);
    }
}

async fn answers_use_v1_type(h: &Harness) {
    let id = h.register("s", &distinct(1)).await;
    for path in ["/", "/subjects", "/config", "/mode", "/schemas/types", "/subjects/s/versions/1"] {
        let response = h.get(path).await;
        assert_eq!(response.status, 200, "{path}");
        assert_eq!(response.content_type.as_deref(), Some(V1_JSON), "{path}");
    }
    let by_id = h.get(&format!("/schemas/ids/{id}")).await;
    assert_eq!(by_id.content_type.as_deref(), Some(V1_JSON));
}

async fn lookup_and_config_accept_every_json_type(h: &Harness) {
    h.register("s", &user_v1()).await;
    for content_type in [Some("application/json"), Some("application/octet-stream"), None] {
        let body = json!({ "schema": user_v1() }).to_string().into_bytes();
        let response = h.send(Method::POST, "/subjects/s", Some(body), content_type).await;
        assert_eq!(response.ok_json(200)["version"], 1, "{content_type:?}");
        let config = json!({ "compatibility": "FULL" }).to_string().into_bytes();
        h.send(Method::PUT, "/config/s", Some(config), content_type).await.ok_json(200);
    }
}

async fn accept_negotiates_response_type(h: &Harness) {
    for (accept, expected) in [
        ("application/json", "application/json"),
        ("*/*", V1_JSON),
        ("application/vnd.schemaregistry.v1+json", V1_JSON),
    ] {
        let response = h
            .http()
            .get(format!("{}/subjects", h.base_url()))
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .unwrap_or_else(|error| panic!("GET /subjects: {error}"));
        assert_eq!(response.status().as_u16(), 200, "{accept}");
        let content_type = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        assert_eq!(content_type, Some(expected), "Accept: {accept}");
    }
}

api_tests::api_cases!(
    v1_type_accepted,
    generic_type_accepted,
    application_json_accepted,
    octet_stream_accepted,
    no_content_type_accepted,
    text_plain_is_415,
    other_types_are_415,
    answers_use_v1_type,
    lookup_and_config_accept_every_json_type,
    accept_negotiates_response_type,
);
