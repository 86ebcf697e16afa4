//! `/config[/{s}]` and `/mode[/{s}]`: resolution, echo shapes, READONLY and IMPORT behaviour.

use api_tests::Harness;
use api_tests::client::avro;
use api_tests::schemas::{distinct, user_v1, user_v2_with_default};
use serde_json::json;

async fn global_config_defaults_to_backward(h: &Harness) {
    assert_eq!(h.get("/config").await.ok_json(200), json!({"compatibilityLevel": "BACKWARD"}));
}

async fn put_global_config_echoes_and_persists(h: &Harness) {
    assert_eq!(h.set_config(None, "FULL").await.ok_json(200)["compatibility"], "FULL");
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "FULL");
}

async fn config_levels_are_case_insensitive(h: &Harness) {
    h.set_config(None, "forward_transitive").await.ok_json(200);
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "FORWARD_TRANSITIVE");
}

async fn every_level_round_trips(h: &Harness) {
    for level in ["NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE"]
    {
        h.set_config(Some("s"), level).await.ok_json(200);
        assert_eq!(h.get("/config/s").await.ok_json(200)["compatibilityLevel"], level);
    }
}

async fn invalid_level_is_42203(h: &Harness) {
    let message = h.set_config(None, "SIDEWAYS").await.assert_error(422, 42203);
    assert!(message.starts_with("Invalid compatibility level"), "{message}");
    h.set_config(Some("s"), "").await.assert_error(422, 42203);
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "BACKWARD");
}

async fn subject_config_unset_is_40408(h: &Harness) {
    h.register("s", &user_v1()).await;
    let message = h.get("/config/s").await.assert_error(404, 40408);
    assert_eq!(message, "Subject 's' does not have subject-level compatibility configured");
}

async fn subject_config_default_to_global(h: &Harness) {
    h.set_config(None, "FULL").await.ok_json(200);
    let effective = h.get("/config/s?defaultToGlobal=true").await.ok_json(200);
    assert_eq!(effective["compatibilityLevel"], "FULL");
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    assert_eq!(h.get("/config/s?defaultToGlobal=true").await.ok_json(200)["compatibilityLevel"], "NONE");
}

async fn subject_config_on_unknown_subject(h: &Harness) {
    assert_eq!(h.set_config(Some("future"), "NONE").await.ok_json(200), json!({"compatibility": "NONE"}));
    assert_eq!(h.get("/config/future").await.ok_json(200)["compatibilityLevel"], "NONE");
}

async fn delete_subject_config(h: &Harness) {
    h.set_config(Some("s"), "FULL").await.ok_json(200);
    assert_eq!(h.delete("/config/s").await.ok_json(200)["compatibilityLevel"], "FULL");
    h.get("/config/s").await.assert_error(404, 40408);
    let message = h.delete("/config/s").await.assert_error(404, 40401);
    assert_eq!(message, "Subject 's' not found.");
}

async fn delete_global_config_reverts_to_default(h: &Harness) {
    h.set_config(None, "NONE").await.ok_json(200);
    assert_eq!(h.delete("/config").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "BACKWARD");
}

async fn config_bad_body(h: &Harness) {
    let response = h.put("/config", &json!({"compatibility": 7})).await;
    assert!((400..500).contains(&response.status), "status {}", response.status);
    assert!(response.json()["error_code"].is_i64(), "{}", response.text);
}

async fn global_mode_defaults_to_readwrite(h: &Harness) {
    assert_eq!(h.get("/mode").await.ok_json(200), json!({"mode": "READWRITE"}));
}

async fn mode_is_case_insensitive(h: &Harness) {
    let echoed = h.set_mode(None, "readonly", "").await.ok_json(200);
    assert!(echoed["mode"].as_str().is_some_and(|m| m.eq_ignore_ascii_case("READONLY")), "{echoed}");
    assert_eq!(h.get("/mode").await.ok_json(200)["mode"], "READONLY");
}

async fn invalid_mode_is_42204(h: &Harness) {
    let message = h.set_mode(None, "WRITEONLY", "").await.assert_error(422, 42204);
    assert!(message.starts_with("Invalid mode"), "{message}");
    h.set_mode(Some("s"), "nope", "").await.assert_error(422, 42204);
}

async fn subject_mode_unset_is_40409(h: &Harness) {
    let message = h.get("/mode/s").await.assert_error(404, 40409);
    assert_eq!(message, "Subject 's' does not have subject-level mode configured");
    assert_eq!(h.get("/mode/s?defaultToGlobal=true").await.ok_json(200)["mode"], "READWRITE");
}

async fn delete_subject_mode(h: &Harness) {
    h.delete("/mode/s").await.assert_error(404, 40401);
    h.set_mode(Some("s"), "READONLY", "").await.ok_json(200);
    assert_eq!(h.delete("/mode/s").await.ok_json(200)["mode"], "READONLY");
    h.get("/mode/s").await.assert_error(404, 40409);
}

async fn readonly_refuses_new_schemas(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.set_mode(None, "READONLY", "").await.ok_json(200);
    h.register_raw("s", &avro(&user_v2_with_default())).await.assert_error(422, 42205);
    h.register_raw("t", &avro(&distinct(1))).await.assert_error(422, 42205);
    h.set_mode(None, "READWRITE", "").await.ok_json(200);
    h.register("s", &user_v2_with_default()).await;
}

async fn readonly_answers_existing_registration_and_reads(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    h.set_mode(None, "READONLY", "").await.ok_json(200);
    assert_eq!(h.register("s", &user_v1()).await, id);
    assert_eq!(h.lookup("s", &user_v1()).await.ok_json(200)["id"], id);
    h.get_version("s", "1").await.ok_json(200);
    h.check("s", Some("latest"), &user_v2_with_default(), "").await.ok_json(200);
}

async fn readonly_refuses_deletes_and_config(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.set_mode(Some("s"), "READONLY", "").await.ok_json(200);
    h.delete_version("s", "1", false).await.assert_error(422, 42205);
    h.delete_subject("s", false).await.assert_error(422, 42205);
    h.set_config(Some("s"), "NONE").await.assert_error(422, 42205);
    assert_eq!(h.versions("s", "").await, [1]);
    h.delete("/mode/s").await.ok_json(200);
    h.delete_subject("s", false).await.ok_json(200);
}

async fn subject_mode_only_affects_that_subject(h: &Harness) {
    h.set_mode(Some("frozen"), "READONLY", "").await.ok_json(200);
    h.register_raw("frozen", &avro(&distinct(1))).await.assert_error(422, 42205);
    h.register("open", &distinct(2)).await;
}

async fn readonly_override_beats_subject_mode(h: &Harness) {
    h.set_mode(Some("s"), "READWRITE", "").await.ok_json(200);
    h.set_mode(None, "READONLY_OVERRIDE", "").await.ok_json(200);
    h.register_raw("s", &avro(&distinct(1))).await.assert_error(422, 42205);
}

async fn import_takes_explicit_id_and_version(h: &Harness) {
    h.set_mode(None, "IMPORT", "").await.ok_json(200);
    let body = json!({"schema": user_v1(), "id": 100, "version": 3});
    assert_eq!(h.register_body("imported", &body).await, 100);
    assert_eq!(h.get_version("imported", "3").await.ok_json(200)["id"], 100);
    assert_eq!(h.get("/schemas/ids/100").await.ok_json(200)["schema"], user_v1());
    h.set_mode(None, "READWRITE", "").await.ok_json(200);
    let next = h.register("other", &distinct(1)).await;
    assert!(next > 100, "ids after an import must exceed it, got {next}");
}

async fn import_without_id_is_42205(h: &Harness) {
    h.set_mode(None, "IMPORT", "").await.ok_json(200);
    h.register_raw("s", &avro(&user_v1())).await.assert_error(422, 42205);
}

async fn explicit_id_outside_import_is_42205(h: &Harness) {
    h.register_raw("s", &json!({"schema": user_v1(), "id": 77})).await.assert_error(422, 42205);
}

async fn import_same_id_different_schema_is_42205(h: &Harness) {
    h.set_mode(None, "IMPORT", "").await.ok_json(200);
    h.register_body("a", &json!({"schema": distinct(1), "id": 5, "version": 1})).await;
    let clash = json!({"schema": distinct(2), "id": 5, "version": 1});
    h.register_raw("b", &clash).await.assert_error(422, 42205);
}

async fn import_needs_force_with_live_subjects(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.set_mode(None, "IMPORT", "").await.assert_error(422, 42205);
    assert_eq!(h.get("/mode").await.ok_json(200)["mode"], "READWRITE");
    h.set_mode(None, "IMPORT", "?force=true").await.ok_json(200);
    assert_eq!(h.get("/mode").await.ok_json(200)["mode"], "IMPORT");
}

api_tests::api_cases!(
    global_config_defaults_to_backward,
    put_global_config_echoes_and_persists,
    config_levels_are_case_insensitive,
    every_level_round_trips,
    invalid_level_is_42203,
    subject_config_unset_is_40408,
    subject_config_default_to_global,
    subject_config_on_unknown_subject,
    delete_subject_config,
    delete_global_config_reverts_to_default,
    config_bad_body,
    global_mode_defaults_to_readwrite,
    mode_is_case_insensitive,
    invalid_mode_is_42204,
    subject_mode_unset_is_40409,
    delete_subject_mode,
    readonly_refuses_new_schemas,
    readonly_answers_existing_registration_and_reads,
    readonly_refuses_deletes_and_config,
    subject_mode_only_affects_that_subject,
    readonly_override_beats_subject_mode,
    import_takes_explicit_id_and_version,
    import_without_id_is_42205,
    explicit_id_outside_import_is_42205,
    import_same_id_different_schema_is_42205,
    import_needs_force_with_live_subjects,
);
