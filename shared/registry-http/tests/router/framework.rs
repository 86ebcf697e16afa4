//! Transport-level behaviour that needs no stored data: root, unknown paths, wrong verbs, media
//! types, body limits, malformed bodies and invalid path parameters.

use crate::support::{Api, GENERIC, JSON, V1};
use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::json;

const NOT_FOUND: &str = "HTTP 404 Not Found";

#[tokio::test]
async fn root_get_and_post_answer_an_empty_object() {
    let api = Api::new();
    assert_eq!(api.get("/").await.ok(), json!({}));
    assert_eq!(api.raw(Method::POST, "/", None, &[], Body::empty()).await.ok(), json!({}));
}

#[tokio::test]
async fn schema_types_lists_the_three_formats() {
    let types = Api::new().get("/schemas/types").await.ok();
    let mut names: Vec<&str> = types.as_array().unwrap().iter().filter_map(|t| t.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["AVRO", "JSON", "PROTOBUF"]);
}

#[tokio::test]
async fn unknown_paths_get_the_framework_404_body() {
    let api = Api::new();
    for uri in ["/associations/subjects/orders-value", "/nope", "/subjects/a/versions/1/extra", "/schemas/ids"] {
        let reply = api.get(uri).await;
        assert_eq!(reply.error(404, 404), NOT_FOUND, "{uri}");
        assert_eq!(reply.text(), r#"{"error_code":404,"message":"HTTP 404 Not Found"}"#);
    }
}

#[tokio::test]
async fn wrong_verbs_get_405() {
    let api = Api::new();
    let cases = [
        (Method::PUT, "/subjects"),
        (Method::DELETE, "/schemas/types"),
        (Method::POST, "/schemas/ids/1"),
        (Method::PUT, "/subjects/a/versions"),
        (Method::GET, "/compatibility/subjects/a/versions/1"),
        (Method::POST, "/contexts"),
    ];
    for (method, uri) in cases {
        let reply = api.raw(method.clone(), uri, None, &[], Body::empty()).await;
        assert_eq!(reply.error(405, 405), "HTTP 405 Method Not Allowed", "{method} {uri}");
    }
}

#[tokio::test]
async fn unsupported_request_media_types_are_415() {
    let api = Api::new();
    let body = json!({"schema": "\"string\""}).to_string();
    for content_type in ["text/plain", "", "application/xml", "application/vnd.schemaregistry.v2+json"] {
        let reply = api.raw(Method::POST, "/subjects/s/versions", Some(content_type), &[], body.clone()).await;
        assert_eq!(reply.error(415, 415), "HTTP 415 Unsupported Media Type", "{content_type:?}");
    }
}

#[tokio::test]
async fn accepted_request_media_types_reach_the_body_parser() {
    // An invalid level is only detected after the body was accepted and parsed: 42203, not 415.
    let api = Api::new();
    let body = json!({"compatibility": "SIDEWAYS"}).to_string();
    let types = [
        Some(V1),
        Some(GENERIC),
        Some(JSON),
        Some("application/octet-stream"),
        Some("application/json; charset=utf-8"),
        None,
    ];
    for content_type in types {
        let reply = api.raw(Method::PUT, "/config", content_type, &[], body.clone()).await;
        reply.error(422, 42203);
    }
}

#[tokio::test]
async fn malformed_json_is_400_with_the_parser_message() {
    let api = Api::new();
    for body in ["{\"schema\":", "not json", "[1,2"] {
        let reply = api.raw(Method::POST, "/subjects/s/versions", Some(V1), &[], body).await;
        let message = reply.error(400, 400);
        assert!(!message.is_empty(), "{body:?}");
    }
}

/// No body, or `null`, is the `@NotNull` request parameter's violation (Confluent: 422 / 422).
#[tokio::test]
async fn a_missing_body_is_422() {
    let api = Api::new();
    for body in ["", " ", "null"] {
        let reply = api.raw(Method::POST, "/subjects/s/versions", Some(V1), &[], body).await;
        assert_eq!(reply.error(422, 422), "register.arg5 must not be null (was null)", "{body:?}");
    }
}

#[tokio::test]
async fn wrong_field_types_are_400() {
    let api = Api::new();
    let cases = [
        ("/subjects/s/versions", json!({"schema": 5})),
        ("/subjects/s/versions", json!({"schema": "\"string\"", "references": "x"})),
        ("/subjects/s", json!({"schema": "\"string\"", "version": "one"})),
        ("/compatibility/subjects/s/versions", json!({"schema": ["a"]})),
    ];
    for (uri, body) in cases {
        let message = api.post(uri, body.clone()).await.error(400, 400);
        assert!(message.contains("invalid type"), "{body}: {message}");
    }
    api.put("/config", json!({"compatibility": 1})).await.error(400, 400);
    api.put("/mode", json!({"mode": true})).await.error(400, 400);
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let api = Api::new();
    let schema = "x".repeat(registry_http::MAX_BODY_BYTES + 1);
    let body = json!({ "schema": schema }).to_string();
    let reply = api.raw(Method::POST, "/subjects/s/versions", Some(V1), &[], body).await;
    let message = reply.error(413, 413);
    assert!(message.contains("413"), "{message}");
    // Up to the limit the body is read (here, the schema is then too large for the registry), past
    // the 2 MB a reader would default to.
    let schema = "x".repeat(registry_http::MAX_BODY_BYTES - 64);
    let body = json!({ "schema": schema }).to_string();
    assert!(body.len() <= registry_http::MAX_BODY_BYTES);
    let reply = api.raw(Method::POST, "/subjects/s/versions", Some(V1), &[], body).await;
    assert_ne!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "{:?}", reply.body);
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", reply.body);
}

#[tokio::test]
async fn unknown_schema_type_is_42201() {
    let api = Api::new();
    for (uri, kind) in
        [("/subjects/s/versions", "XML"), ("/subjects/s", "avro"), ("/compatibility/subjects/s/versions", "Json")]
    {
        let reply = api.post(uri, json!({"schema": "\"string\"", "schemaType": kind})).await;
        assert_eq!(reply.error(422, 42201), format!("Invalid schema type {kind}"));
    }
}

#[tokio::test]
async fn non_int_schema_ids_are_framework_404s() {
    let api = Api::new();
    for id in ["abc", "1.5", "2147483648", "-2147483649"] {
        for suffix in ["", "/schema", "/subjects", "/versions"] {
            let reply = api.get(&format!("/schemas/ids/{id}{suffix}")).await;
            assert_eq!(reply.error(404, 404), NOT_FOUND, "{id}{suffix}");
        }
    }
}

#[tokio::test]
async fn invalid_versions_are_42202_on_every_version_endpoint() {
    let api = Api::new();
    for version in ["0", "-2", "abc", "1.5", "2147483648"] {
        let expected = format!(
            "The specified version '{version}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""
        );
        for suffix in ["", "/schema", "/referencedby"] {
            let reply = api.get(&format!("/subjects/s/versions/{version}{suffix}")).await;
            assert_eq!(reply.error(422, 42202), expected, "{version}{suffix}");
        }
        api.delete(&format!("/subjects/s/versions/{version}")).await.error(422, 42202);
        let uri = format!("/compatibility/subjects/s/versions/{version}");
        api.post(&uri, json!({"schema": "\"string\""})).await.error(422, 42202);
    }
}

#[tokio::test]
async fn invalid_level_and_mode_are_42203_and_42204() {
    let api = Api::new();
    let level = api.put("/config/s", json!({"compatibility": "MOSTLY"})).await.error(422, 42203);
    assert!(level.starts_with("Invalid compatibility level."), "{level}");
    let mode = api.put("/mode/s", json!({"mode": "WRITEONLY"})).await.error(422, 42204);
    assert!(mode.starts_with("Invalid mode."), "{mode}");
    api.put("/mode", json!({})).await.error(422, 42204);
}

#[tokio::test]
async fn subjects_with_control_characters_are_42208() {
    let api = Api::new();
    let message = api.put("/config/bad%01subject", json!({"compatibility": "NONE"})).await.error(422, 42208);
    assert_eq!(message, "The specified subject 'bad\u{1}subject' is not a valid.");
}

#[tokio::test]
async fn accept_header_picks_the_response_media_type() {
    let api = Api::new();
    let cases = [
        (None, V1),
        (Some("*/*"), V1),
        (Some(JSON), JSON),
        (Some(GENERIC), GENERIC),
        (Some("application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"), V1),
    ];
    for (accept, expected) in cases {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let reply = api.raw(Method::GET, "/schemas/types", None, &headers, Body::empty()).await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.content_type.as_deref(), Some(expected), "{accept:?}");
    }
    let error = api.raw(Method::GET, "/nope", None, &[("accept", JSON)], Body::empty()).await;
    error.error(404, 404);
}
