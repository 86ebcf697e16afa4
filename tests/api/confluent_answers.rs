//! Answers checked line by line against Confluent 8.3's source: version listings with `deletedOnly`,
//! lookups that match by equivalence, the 422 of a request without its body, and a malformed context
//! path refused to an unauthenticated caller with 401 before its 400.

use api_tests::Harness;
use api_tests::client::{avro, enc};
use reqwest::Method;
use serde_json::json;

/// Confluent `SubjectVersionsResource.listVersions`: `hasSubjects(subject, deleted || deletedOnly)`
/// decides the 404 (any version, live or soft-deleted), then the `DELETED_ONLY` filter may leave
/// nothing: 200 `[]` for a subject with live versions only.
async fn deleted_only_versions_of_a_live_subject_are_an_empty_list(h: &Harness) {
    h.register("live", r#"{"type":"record","name":"L","fields":[{"name":"a","type":"int"}]}"#).await;
    let listed = h.get("/subjects/live/versions?deletedOnly=true").await.ok_json(200);
    assert_eq!(listed, json!([]));
    let both = h.get("/subjects/live/versions?deleted=true&deletedOnly=true").await.ok_json(200);
    assert_eq!(both, json!([]));
    h.get("/subjects/missing/versions?deletedOnly=true").await.assert_error(404, 40401);
    h.register(
        "live",
        r#"{"type":"record","name":"L","fields":[{"name":"a","type":"int"},{"name":"b","type":"int","default":0}]}"#,
    )
    .await;
    h.delete_version("live", "1", false).await.ok_json(200);
    assert_eq!(h.versions("live", "?deletedOnly=true").await, [1]);
    assert_eq!(h.versions("live", "").await, [2]);
}

/// Confluent `AbstractSchemaRegistry.lookUpSchemaUnderSubject`: when the posted schema's canonical
/// form is no stored one it compares it with each version (`ParsedSchema.canLookup`, for Avro
/// `AvroSchema.equivalent`: the parsed schemas are equal), so a schema registered without
/// `normalize` is found by a lookup with it, and the other way round.
async fn a_normalized_lookup_finds_a_schema_registered_as_written(h: &Harness) {
    let written = r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]}"#;
    let id = h.register("eq", written).await;
    let found = h.post(&format!("/subjects/{}?normalize=true", enc("eq")), &avro(written)).await.ok_json(200);
    assert_eq!((found["id"].as_i64(), found["version"].as_i64()), (Some(id), Some(1)), "{found}");
    let other_order = r#"{"fields":[{"type":"int","name":"a"}],"name":"n.R","type":"record"}"#;
    let found = h.post(&format!("/subjects/{}?normalize=true", enc("eq")), &avro(other_order)).await.ok_json(200);
    assert_eq!(found["id"].as_i64(), Some(id), "{found}");
    let different = r#"{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"long"}]}"#;
    h.post(&format!("/subjects/{}?normalize=true", enc("eq")), &avro(different)).await.assert_error(404, 40403);

    let normalized_first = r#"{"type":"record","name":"S","namespace":"n","fields":[{"name":"a","type":"int"}]}"#;
    let body = avro(normalized_first);
    let id =
        h.post(&format!("/subjects/{}/versions?normalize=true", enc("eq2")), &body).await.ok_json(200)["id"].as_i64();
    let found = h.lookup("eq2", normalized_first).await.ok_json(200);
    assert_eq!(found["id"].as_i64(), id, "{found}");
}

/// Every endpoint that takes a body, with its JAX-RS method and the index of its `@NotNull`
/// request parameter in Confluent 8.3.1 (`SubjectVersionsResource.register`, `SubjectsResource`,
/// `CompatibilityResource`, `ConfigResource`, `ModeResource`, `DekRegistryResource`).
const BODY_ENDPOINTS: [(&str, &str, &str); 12] = [
    ("POST", "/subjects/s/versions", "register.arg5"),
    ("POST", "/subjects/s", "lookUpSchemaUnderSubject.arg5"),
    ("POST", "/compatibility/subjects/s/versions/latest", "testCompatibilityBySubjectName.arg4"),
    ("POST", "/compatibility/subjects/s/versions", "testCompatibilityForSubject.arg3"),
    ("PUT", "/config", "updateTopLevelConfig.arg1"),
    ("PUT", "/config/s", "updateSubjectLevelConfig.arg2"),
    ("PUT", "/mode", "updateTopLevelMode.arg1"),
    ("PUT", "/mode/s", "updateMode.arg2"),
    ("POST", "/dek-registry/v1/keks", "createKek.arg3"),
    ("PUT", "/dek-registry/v1/keks/k", "putKek.arg4"),
    ("POST", "/dek-registry/v1/keks/k/deks", "createDek.arg3"),
    ("POST", "/dek-registry/v1/keks/k/deks/s", "createDekWithSubject.arg5"),
];

/// A missing, empty or `null` body is Jackson's null entity, which the `@NotNull` on the request
/// parameter refuses: rest-utils' `ConstraintViolationExceptionMapper` answers 422 / 422 with
/// `ConstraintViolations.format`, `<method>.arg<N> must not be null (was null)`.
async fn a_missing_body_is_422_naming_the_request_parameter(h: &Harness) {
    for (method, path, parameter) in BODY_ENDPOINTS {
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST);
        let want = format!("{parameter} must not be null (was null)");
        let v1 = Some(api_tests::client::V1_JSON);
        for (body, content_type) in [(None, None), (Some(""), v1), (Some(" \n"), v1), (Some("null"), v1)] {
            let answer = h.send(method.clone(), path, body.map(|b: &str| b.as_bytes().to_vec()), content_type).await;
            let message = answer.assert_error(422, 422);
            assert_eq!(message, want, "{method} {path} body {body:?}");
        }
    }
    let answer = h.send(Method::POST, "/contexts/.c/subjects/s/versions", None, None).await;
    assert_eq!(answer.assert_error(422, 422), "register.arg5 must not be null (was null)");
}

api_tests::api_cases!(
    deleted_only_versions_of_a_live_subject_are_an_empty_list,
    a_normalized_lookup_finds_a_schema_registered_as_written,
    a_missing_body_is_422_naming_the_request_parameter,
);

/// Authentication is decided before the path is: an unauthenticated request to a malformed
/// `/contexts/{context}/...` path is 401, as to any other path (Confluent's authentication filter
/// runs before its `ContextFilter` rewrites the path); with credentials it is the context's 400.
async fn a_malformed_context_path_is_401_without_credentials(h: &Harness) {
    let path = format!("/contexts/{}/subjects", enc(".a:b"));
    let answer = h.get(&path).await;
    answer.assert_error(401, 40101);
    h.send_as("reader", Method::GET, &path, None).await.assert_error(400, 400);
    let answer = h.send(Method::POST, &format!("/contexts/{}/subjects/s/versions", enc(".a:b")), None, None).await;
    answer.assert_error(401, 40101);
}

mod authenticated {
    use super::a_malformed_context_path_is_401_without_credentials;
    api_tests::api_cases!(authenticated: a_malformed_context_path_is_401_without_credentials);
}
