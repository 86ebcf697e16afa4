//! `/`, `GET /subjects`, lookup (`POST /subjects/{s}`) and `DELETE /subjects/{s}`.

use api_tests::Harness;
use api_tests::client::{enc, strings};
use api_tests::schemas::{distinct, user_v1};
use serde_json::json;

async fn root_answers_empty_object(h: &Harness) {
    assert_eq!(h.get("/").await.ok_json(200), json!({}));
}

async fn server_metadata_names_the_registry_and_its_version(h: &Harness) {
    let id = h.get("/v1/metadata/id").await.ok_json(200);
    let clusters = json!({"kafka-cluster": null, "schema-registry-cluster": "schema-registry"});
    assert_eq!(id, json!({"scope": {"path": [], "clusters": clusters}}));
    let version = h.get("/v1/metadata/version").await.ok_json(200);
    assert_eq!(version, json!({"version": env!("CARGO_PKG_VERSION")}));
}

async fn subjects_empty_registry(h: &Harness) {
    assert_eq!(h.subjects("").await, Vec::<String>::new());
}

async fn subjects_sorted(h: &Harness) {
    for (n, subject) in ["charlie", "alpha", "bravo"].iter().enumerate() {
        h.register(subject, &distinct(n)).await;
    }
    assert_eq!(h.subjects("").await, ["alpha", "bravo", "charlie"]);
}

async fn subjects_prefix_filter(h: &Harness) {
    for (n, subject) in ["orders-key", "orders-value", "payments-value"].iter().enumerate() {
        h.register(subject, &distinct(n)).await;
    }
    assert_eq!(h.subjects("?subjectPrefix=orders").await, ["orders-key", "orders-value"]);
    assert_eq!(h.subjects("?subjectPrefix=zzz").await, Vec::<String>::new());
}

async fn subjects_deleted_and_deleted_only(h: &Harness) {
    h.register("kept", &distinct(1)).await;
    h.register("gone", &distinct(2)).await;
    h.delete_subject("gone", false).await.ok_json(200);
    assert_eq!(h.subjects("").await, ["kept"]);
    assert_eq!(h.subjects("?deleted=true").await, ["gone", "kept"]);
    assert_eq!(h.subjects("?deletedOnly=true").await, ["gone"]);
}

async fn subjects_offset_and_limit(h: &Harness) {
    for n in 0..5 {
        h.register(&format!("s{n}"), &distinct(n)).await;
    }
    assert_eq!(h.subjects("?offset=1&limit=2").await, ["s1", "s2"]);
    assert_eq!(h.subjects("?limit=1").await, ["s0"]);
    assert_eq!(h.subjects("?offset=4").await, ["s4"]);
}

async fn config_alone_does_not_create_subject(h: &Harness) {
    h.set_config(Some("configured-only"), "FULL").await.ok_json(200);
    assert_eq!(h.subjects("").await, Vec::<String>::new());
    assert_eq!(h.subjects("?deleted=true").await, Vec::<String>::new());
}

async fn lookup_returns_schema_object(h: &Harness) {
    let id = h.register("orders-value", &user_v1()).await;
    let found = h.lookup("orders-value", &user_v1()).await.ok_json(200);
    assert_eq!(found["subject"], "orders-value");
    assert_eq!(found["version"], 1);
    assert_eq!(found["id"], id);
    assert_eq!(found["schema"], user_v1());
}

async fn lookup_matches_whitespace_variant(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    let spaced = r#"{ "type": "record", "name": "User", "fields": [ { "name": "name", "type": "string" } ] }"#;
    let found = h.lookup("s", spaced).await.ok_json(200);
    assert_eq!(found["id"], id);
}

async fn lookup_finds_older_version(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    let first = h.register("s", &distinct(1)).await;
    h.register("s", &distinct(2)).await;
    let found = h.lookup("s", &distinct(1)).await.ok_json(200);
    assert_eq!((found["id"].as_i64(), found["version"].as_i64()), (Some(first), Some(1)));
}

async fn lookup_unknown_subject_is_40401(h: &Harness) {
    let message = h.lookup("nobody", &user_v1()).await.assert_error(404, 40401);
    assert_eq!(message, "Subject 'nobody' not found.");
}

async fn lookup_unknown_schema_is_40403(h: &Harness) {
    h.register("s", &distinct(1)).await;
    let message = h.lookup("s", &distinct(2)).await.assert_error(404, 40403);
    assert_eq!(message, "Schema not found");
}

async fn lookup_schema_of_other_subject_is_40403(h: &Harness) {
    h.register("a", &distinct(1)).await;
    h.register("b", &distinct(2)).await;
    h.lookup("a", &distinct(2)).await.assert_error(404, 40403);
}

async fn lookup_of_an_empty_schema_matches_nothing(h: &Harness) {
    for body in [json!({}), json!({"schema": ""}), json!({"schema": "  "})] {
        h.post("/subjects/nobody", &body).await.assert_error(404, 40401);
    }
    h.register("s", &distinct(1)).await;
    for body in [json!({}), json!({"schema": ""}), json!({"schema": "  "})] {
        let message = h.post("/subjects/s", &body).await.assert_error(404, 40403);
        assert_eq!(message, "Schema not found");
    }
}

async fn lookup_invalid_schema_is_42201(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.lookup("s", r#"{"type":"record","name":"Broken"}"#).await.assert_error(422, 42201);
}

async fn lookup_soft_deleted_needs_deleted_flag(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(2)).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    h.lookup("s", &distinct(1)).await.assert_error(404, 40403);
    let found = h.post(&format!("/subjects/{}?deleted=true", enc("s")), &api_tests::client::avro(&distinct(1))).await;
    assert_eq!(found.ok_json(200)["version"], 1);
}

async fn lookup_fully_deleted_subject_is_40401(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.delete_subject("s", false).await.ok_json(200);
    h.lookup("s", &distinct(1)).await.assert_error(404, 40401);
}

async fn lookup_never_registers(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.lookup("s", &distinct(2)).await.assert_error(404, 40403);
    assert_eq!(h.versions("s", "").await, [1]);
}

async fn delete_subject_returns_live_versions(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    for n in 0..3 {
        h.register("s", &distinct(n)).await;
    }
    h.delete_version("s", "2", false).await.ok_json(200);
    let deleted = h.delete_subject("s", false).await.ok_json(200);
    assert_eq!(deleted, json!([1, 3]));
    h.get(&format!("/subjects/{}/versions", enc("s"))).await.assert_error(404, 40401);
}

async fn delete_unknown_subject_is_40401(h: &Harness) {
    let message = h.delete_subject("ghost", false).await.assert_error(404, 40401);
    assert_eq!(message, "Subject 'ghost' not found.");
    h.delete_subject("ghost", true).await.assert_error(404, 40401);
}

async fn delete_subject_twice_is_40404(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.delete_subject("s", false).await.ok_json(200);
    let message = h.delete_subject("s", false).await.assert_error(404, 40404);
    assert_eq!(message, "Subject 's' was soft deleted.Set permanent=true to delete permanently");
}

async fn hard_delete_live_subject_is_40405(h: &Harness) {
    h.register("orders-value", &distinct(1)).await;
    let message = h.delete_subject("orders-value", true).await.assert_error(404, 40405);
    assert_eq!(message, "Subject 'orders-value' was not deleted first before being permanently deleted");
    assert_eq!(h.versions("orders-value", "").await, [1]);
}

async fn soft_then_hard_delete_subject(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    h.register("s", &distinct(2)).await;
    assert_eq!(h.delete_subject("s", false).await.ok_json(200), json!([1, 2]));
    assert_eq!(h.delete_subject("s", true).await.ok_json(200), json!([1, 2]));
    assert_eq!(h.subjects("?deleted=true").await, Vec::<String>::new());
    h.delete_subject("s", true).await.assert_error(404, 40401);
}

async fn register_after_hard_delete_restarts_at_version_1(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    h.register("s", &user_v1()).await;
    h.delete_subject("s", false).await.ok_json(200);
    h.delete_subject("s", true).await.ok_json(200);
    h.register("s", &distinct(3)).await;
    assert_eq!(h.versions("s", "?deleted=true").await, [1]);
}

async fn register_after_soft_delete_continues_numbering(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    h.register("s", &distinct(2)).await;
    h.delete_subject("s", false).await.ok_json(200);
    h.register("s", &distinct(3)).await;
    h.register("s", &distinct(4)).await;
    assert_eq!(h.versions("s", "").await, [3, 4]);
}

async fn soft_delete_keeps_subject_config(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.set_config(Some("s"), "FULL").await.ok_json(200);
    h.delete_subject("s", false).await.ok_json(200);
    assert_eq!(h.get("/config/s").await.ok_json(200)["compatibilityLevel"], "FULL");
}

async fn hard_delete_removes_subject_config_and_mode(h: &Harness) {
    h.register("s", &distinct(1)).await;
    h.set_config(Some("s"), "FULL").await.ok_json(200);
    h.set_mode(Some("s"), "READWRITE", "").await.ok_json(200);
    h.delete_subject("s", false).await.ok_json(200);
    h.delete_subject("s", true).await.ok_json(200);
    h.get("/config/s").await.assert_error(404, 40408);
    h.get("/mode/s").await.assert_error(404, 40409);
}

async fn slash_subject_round_trips(h: &Harness) {
    let subject = "pkg1/msg1.proto";
    let id = h.register(subject, &distinct(1)).await;
    assert_eq!(h.subjects("").await, [subject]);
    let got = h.get("/subjects/pkg1%2Fmsg1.proto/versions/1").await.ok_json(200);
    assert_eq!((got["subject"].as_str(), got["id"].as_i64()), (Some(subject), Some(id)));
    let subjects = h.get(&format!("/schemas/ids/{id}/subjects")).await.ok_json(200);
    assert_eq!(strings(&subjects), [subject]);
    assert_eq!(h.delete_subject(subject, false).await.ok_json(200), json!([1]));
}

async fn subject_with_space_and_colon(h: &Harness) {
    let subject = "team a:orders value";
    h.register(subject, &distinct(1)).await;
    assert_eq!(h.subjects("").await, [subject]);
    assert_eq!(h.get_version(subject, "latest").await.ok_json(200)["subject"], subject);
}

api_tests::api_cases!(
    root_answers_empty_object,
    server_metadata_names_the_registry_and_its_version,
    subjects_empty_registry,
    subjects_sorted,
    subjects_prefix_filter,
    subjects_deleted_and_deleted_only,
    subjects_offset_and_limit,
    config_alone_does_not_create_subject,
    lookup_returns_schema_object,
    lookup_matches_whitespace_variant,
    lookup_finds_older_version,
    lookup_unknown_subject_is_40401,
    lookup_unknown_schema_is_40403,
    lookup_schema_of_other_subject_is_40403,
    lookup_of_an_empty_schema_matches_nothing,
    lookup_invalid_schema_is_42201,
    lookup_soft_deleted_needs_deleted_flag,
    lookup_fully_deleted_subject_is_40401,
    lookup_never_registers,
    delete_subject_returns_live_versions,
    delete_unknown_subject_is_40401,
    delete_subject_twice_is_40404,
    hard_delete_live_subject_is_40405,
    soft_then_hard_delete_subject,
    register_after_hard_delete_restarts_at_version_1,
    register_after_soft_delete_continues_numbering,
    soft_delete_keeps_subject_config,
    hard_delete_removes_subject_config_and_mode,
    slash_subject_round_trips,
    subject_with_space_and_colon,
);
