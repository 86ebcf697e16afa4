//! Compatibility on register and on `POST /compatibility/subjects/{s}/versions[/{v}]`.

use api_tests::Harness;
use api_tests::client::{Response, typed};
use api_tests::schemas::{
    distinct, record, user_empty, user_type_changed, user_v1, user_v2_no_default, user_v2_with_default,
};
use serde_json::json;

#[track_caller]
fn assert_incompatible(response: &Response, subject: &str) {
    assert_eq!(response.status, 409, "body: {}", response.text);
    let body = response.json();
    let code = body["error_code"].as_i64();
    assert!(code == Some(409) || code == Some(40901), "error_code {code:?}");
    let message = body["message"].as_str().unwrap_or_default();
    let prefix = format!("Schema being registered is incompatible with an earlier schema for subject \"{subject}\"");
    assert!(message.starts_with(&prefix), "{message}");
}

fn is_compatible(response: &Response) -> bool {
    let body = response.ok_json(200);
    body["is_compatible"].as_bool().unwrap_or_else(|| panic!("no is_compatible in {body}"))
}

async fn default_backward_rejects_type_change(h: &Harness) {
    h.register("s", &user_v1()).await;
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&user_type_changed())).await, "s");
    assert_eq!(h.versions("s", "").await, [1]);
}

async fn backward_accepts_field_with_default(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    assert_eq!(h.versions("s", "").await, [1, 2]);
}

async fn backward_rejects_field_without_default(h: &Harness) {
    h.register("s", &user_v1()).await;
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&user_v2_no_default())).await, "s");
}

async fn forward_accepts_field_without_default(h: &Harness) {
    h.set_config(Some("s"), "FORWARD").await.ok_json(200);
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_no_default()).await;
    assert_eq!(h.versions("s", "").await, [1, 2]);
}

async fn forward_rejects_removing_required_field(h: &Harness) {
    h.set_config(Some("s"), "FORWARD").await.ok_json(200);
    h.register("s", &user_v1()).await;
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&user_empty())).await, "s");
}

async fn full_needs_both_directions(h: &Harness) {
    h.set_config(Some("s"), "FULL").await.ok_json(200);
    h.register("s", &user_v1()).await;
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&user_v2_no_default())).await, "s");
    h.register("s", &user_v2_with_default()).await;
}

async fn none_accepts_anything(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &user_v1()).await;
    h.register("s", &user_type_changed()).await;
    h.register("s", r#""int""#).await;
    assert_eq!(h.versions("s", "").await, [1, 2, 3]);
}

fn name_as_int_with_default() -> String {
    r#"{"type":"record","name":"User","fields":[{"name":"name","type":"int","default":0}]}"#.to_string()
}

async fn backward_checks_latest_only(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_empty()).await;
    h.register("s", &name_as_int_with_default()).await;
    assert_eq!(h.versions("s", "").await, [1, 2, 3]);
}

async fn backward_transitive_checks_all_versions(h: &Harness) {
    h.set_config(Some("s"), "BACKWARD_TRANSITIVE").await.ok_json(200);
    h.register("s", &user_v1()).await;
    h.register("s", &user_empty()).await;
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&name_as_int_with_default())).await, "s");
}

async fn soft_deleted_versions_are_ignored(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    h.register("s", &user_type_changed()).await;
    assert_eq!(h.versions("s", "").await, [2]);
}

async fn different_schema_type_is_incompatible(h: &Harness) {
    h.register("s", &user_v1()).await;
    let json = typed("JSON", r#"{"type":"object"}"#);
    assert_incompatible(&h.register_raw("s", &json).await, "s");
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register_body("s", &json).await;
}

async fn subject_config_overrides_global(h: &Harness) {
    h.set_config(None, "NONE").await.ok_json(200);
    h.set_config(Some("strict"), "BACKWARD").await.ok_json(200);
    h.register("loose", &user_v1()).await;
    h.register("loose", &user_type_changed()).await;
    h.register("strict", &user_v1()).await;
    assert_incompatible(&h.register_raw("strict", &api_tests::client::avro(&user_type_changed())).await, "strict");
}

async fn check_latest_compatible(h: &Harness) {
    h.register("s", &user_v1()).await;
    let response = h.check("s", Some("latest"), &user_v2_with_default(), "").await;
    assert_eq!(response.ok_json(200), json!({"is_compatible": true}));
}

async fn check_latest_incompatible(h: &Harness) {
    h.register("s", &user_v1()).await;
    assert!(!is_compatible(&h.check("s", Some("latest"), &user_type_changed(), "").await));
    assert!(!is_compatible(&h.check("s", Some("1"), &user_type_changed(), "").await));
}

async fn check_verbose_messages(h: &Harness) {
    h.register("s", &user_v1()).await;
    let bad = h.check("s", Some("1"), &user_type_changed(), "?verbose=true").await.ok_json(200);
    assert_eq!(bad["is_compatible"], false);
    assert!(bad["messages"].as_array().is_some_and(|m| !m.is_empty()), "{bad}");
    let good = h.check("s", Some("1"), &user_v2_with_default(), "?verbose=true").await.ok_json(200);
    assert_eq!(good, json!({"is_compatible": true, "messages": []}));
}

async fn check_unknown_subject_latest_is_compatible(h: &Harness) {
    assert!(is_compatible(&h.check("nobody", Some("latest"), &user_v1(), "").await));
}

async fn check_missing_version_is_40402(h: &Harness) {
    h.check("nobody", Some("3"), &user_v1(), "").await.assert_error(404, 40402);
    h.register("s", &user_v1()).await;
    h.check("s", Some("3"), &user_v1(), "").await.assert_error(404, 40402);
}

async fn check_bad_version_is_42202(h: &Harness) {
    h.register("s", &user_v1()).await;
    for bad in ["0", "x", "-5"] {
        h.check("s", Some(bad), &user_v1(), "").await.assert_error(422, 42202);
    }
}

async fn check_invalid_schema(h: &Harness) {
    h.register("s", &user_v1()).await;
    let broken = r#"{"type":"record","name":"User","fields":[{"name":"a","type":"int","default":"abc"}]}"#;
    h.check("s", Some("latest"), broken, "").await.assert_error(422, 42201);
    let verbose = h.check("s", Some("latest"), broken, "?verbose=true").await.ok_json(200);
    assert_eq!(verbose["is_compatible"], false);
    assert!(verbose["messages"].as_array().is_some_and(|m| !m.is_empty()), "{verbose}");
}

async fn check_without_version_honours_transitive(h: &Harness) {
    h.set_config(Some("s"), "BACKWARD_TRANSITIVE").await.ok_json(200);
    h.register("s", &user_v1()).await;
    h.register("s", &user_empty()).await;
    assert!(is_compatible(&h.check("s", Some("latest"), &name_as_int_with_default(), "").await));
    assert!(!is_compatible(&h.check("s", None, &name_as_int_with_default(), "").await));
    h.set_config(Some("s"), "BACKWARD").await.ok_json(200);
    assert!(is_compatible(&h.check("s", None, &name_as_int_with_default(), "").await));
}

async fn check_never_registers(h: &Harness) {
    h.register("s", &user_v1()).await;
    assert!(is_compatible(&h.check("s", None, &user_v2_with_default(), "").await));
    assert_eq!(h.versions("s", "").await, [1]);
    h.lookup("s", &user_v2_with_default()).await.assert_error(404, 40403);
}

async fn check_against_soft_deleted_version_ignored(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &user_v1()).await;
    h.register("s", &distinct(2)).await;
    h.set_config(Some("s"), "BACKWARD").await.ok_json(200);
    h.delete_version("s", "2", false).await.ok_json(200);
    assert!(is_compatible(&h.check("s", Some("latest"), &user_v2_with_default(), "").await));
}

async fn renamed_record_is_incompatible(h: &Harness) {
    h.register("s", &user_v1()).await;
    let renamed = record("Person", &[("name", r#""string""#)]);
    assert_incompatible(&h.register_raw("s", &api_tests::client::avro(&renamed)).await, "s");
}

/// Confluent's `RestApiCompatibilityTest.testForceSkipsCompatibilityCheck` (commit 38996279868): an
/// added required field is refused at BACKWARD, and registers with `?force=true` as the next version.
async fn force_skips_the_compatibility_check(h: &Harness) {
    let subject = "testForceSubject";
    let v1 = r#"{"type":"record","name":"myrecord","fields":[{"type":"string","name":"f1"}]}"#;
    let incompatible =
        r#"{"type":"record","name":"myrecord","fields":[{"type":"string","name":"f1"},{"type":"string","name":"f2"}]}"#;
    h.register_body(subject, &json!({"schema": v1})).await;
    assert_incompatible(&h.register_raw(subject, &json!({"schema": incompatible})).await, subject);
    let forced = h.post(&format!("/subjects/{subject}/versions?force=true"), &json!({"schema": incompatible})).await;
    let id = forced.ok_json(200)["id"].as_i64().unwrap_or_default();
    assert!(id > 0, "{}", forced.text);
    assert_eq!(h.versions(subject, "").await, [1, 2]);
    let latest = h.get(&format!("/subjects/{subject}/versions/latest")).await.ok_json(200);
    assert_eq!((&latest["version"], &latest["id"]), (&json!(2), &json!(id)));
    // `force=false` is the ordinary check.
    let third = r#"{"type":"record","name":"myrecord","fields":[{"type":"int","name":"f1"}]}"#;
    let unforced = h.post(&format!("/subjects/{subject}/versions?force=false"), &json!({"schema": third})).await;
    assert_incompatible(&unforced, subject);
}

api_tests::api_cases!(
    default_backward_rejects_type_change,
    backward_accepts_field_with_default,
    backward_rejects_field_without_default,
    forward_accepts_field_without_default,
    forward_rejects_removing_required_field,
    full_needs_both_directions,
    none_accepts_anything,
    backward_checks_latest_only,
    backward_transitive_checks_all_versions,
    soft_deleted_versions_are_ignored,
    different_schema_type_is_incompatible,
    subject_config_overrides_global,
    check_latest_compatible,
    check_latest_incompatible,
    check_verbose_messages,
    check_unknown_subject_latest_is_compatible,
    check_missing_version_is_40402,
    check_bad_version_is_42202,
    check_invalid_schema,
    check_without_version_honours_transitive,
    check_never_registers,
    check_against_soft_deleted_version_ignored,
    renamed_record_is_incompatible,
    force_skips_the_compatibility_check,
);
