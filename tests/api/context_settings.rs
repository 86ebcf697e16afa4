//! Config and mode per context (`/config/:.ctx:`, `/mode/:.ctx:`, also through the base-URL form
//! `/contexts/.ctx/config`) and registry-wide (`:.__GLOBAL:`), resolved as Confluent's
//! `InMemoryCache.config`/`mode`: the subject, then its context (the global scope for the default
//! context), then `:.__GLOBAL:`, then the server default.
//! Every case runs on every backend (memory, embedded, DynamoDB+S3 in process and the Lambda).

use api_tests::Harness;
use api_tests::schemas::{user_v1, user_v2_no_default};
use serde_json::json;

/// Registers `user_v1` then the backward-incompatible `user_v2_no_default` in `subject`: the
/// second answers 200 when the effective level allows it, 409 otherwise.
async fn incompatible_second_version_status(h: &Harness, subject: &str) -> u16 {
    h.register(subject, &user_v1()).await;
    h.register_raw(subject, &json!({"schema": user_v2_no_default()})).await.status
}

async fn the_default_context_qualifier_is_the_global_scope(h: &Harness) {
    assert_eq!(h.set_config(Some(":.:"), "NONE").await.ok_json(200), json!({"compatibility": "NONE"}));
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/config/:.:").await.ok_json(200)["compatibilityLevel"], "NONE");
    h.set_mode(Some(":.:"), "READONLY", "").await.ok_json(200);
    assert_eq!(h.get("/mode").await.ok_json(200)["mode"], "READONLY");
    assert_eq!(h.get("/contexts/:.:/mode").await.ok_json(200)["mode"], "READONLY", "the base-URL form");
}

/// A named context's subjects fall back to their context's settings and then the registry-wide
/// ones, not to the global (default context's) config, as in Confluent.
async fn a_named_context_does_not_inherit_the_global_config(h: &Harness) {
    h.set_config(None, "NONE").await.ok_json(200);
    assert_eq!(incompatible_second_version_status(h, "orders").await, 200, "the global NONE applies");
    assert_eq!(incompatible_second_version_status(h, ":.team:orders").await, 409, "the server default applies");
    let effective = h.get("/config/:.team:orders?defaultToGlobal=true").await.ok_json(200);
    assert_eq!(effective["compatibilityLevel"], "BACKWARD");
}

async fn settings_of_a_wildcard_or_a_subject_of_the_registry_wide_context_are_42208(h: &Harness) {
    for subject in [":*:orders", ":.__GLOBAL:orders", ":.a:__GLOBAL"] {
        h.set_config(Some(subject), "NONE").await.assert_error(422, 42208);
        h.set_mode(Some(subject), "READONLY", "").await.assert_error(422, 42208);
    }
}

/// A context's config applies to its subjects without their own, and only to them; a subject's
/// own config wins; the base-URL form reads and writes the same item.
async fn a_context_config_applies_to_its_subjects(h: &Harness) {
    assert_eq!(h.set_config(Some(":.team:"), "NONE").await.ok_json(200), json!({"compatibility": "NONE"}));
    assert_eq!(h.get("/config/:.team:").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/contexts/.team/config").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/config/:.team").await.ok_json(200)["compatibilityLevel"], "NONE", "one item for both forms");
    h.get("/config/:.team:orders").await.assert_error(404, 40408);
    let effective = h.get("/config/:.team:orders?defaultToGlobal=true").await.ok_json(200);
    assert_eq!(effective["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/contexts/.team/config/orders?defaultToGlobal=true").await.ok_json(200), effective);

    assert_eq!(incompatible_second_version_status(h, ":.team:orders").await, 200, "the context's NONE");
    assert_eq!(incompatible_second_version_status(h, "orders").await, 409, "not the default context");
    assert_eq!(incompatible_second_version_status(h, ":.other:orders").await, 409, "not another context");

    h.put("/contexts/.team/config/payments", &json!({"compatibility": "BACKWARD"})).await.ok_json(200);
    assert_eq!(h.get("/config/:.team:payments").await.ok_json(200)["compatibilityLevel"], "BACKWARD");
    assert_eq!(incompatible_second_version_status(h, ":.team:payments").await, 409, "its own config wins");

    assert_eq!(h.delete("/contexts/.team/config").await.ok_json(200)["compatibilityLevel"], "NONE");
    h.get("/config/:.team:").await.assert_error(404, 40408);
    h.delete("/config/:.team:").await.assert_error(404, 40401);
    let effective = h.get("/config/:.team:orders?defaultToGlobal=true").await.ok_json(200);
    assert_eq!(effective["compatibilityLevel"], "BACKWARD", "the server default again");
}

/// A context's READONLY stops writes to its subjects only; a subject's own mode wins; IMPORT at a
/// context needs only that context to be empty.
async fn a_context_mode_applies_to_its_subjects(h: &Harness) {
    h.register("orders", &user_v1()).await;
    assert_eq!(h.set_mode(Some(":.team:"), "READONLY", "").await.ok_json(200), json!({"mode": "READONLY"}));
    assert_eq!(h.get("/contexts/.team/mode").await.ok_json(200)["mode"], "READONLY");
    let message = h.register_raw(":.team:orders", &json!({"schema": user_v1()})).await.assert_error(422, 42205);
    assert!(message.contains("read-only mode"), "{message}");
    h.post("/contexts/.team/subjects/orders/versions", &json!({"schema": user_v1()})).await.assert_error(422, 42205);
    h.register(":.other:orders", &user_v1()).await;
    h.register("payments", &user_v1()).await;
    assert_eq!(h.get("/mode/:.team:orders?defaultToGlobal=true").await.ok_json(200)["mode"], "READONLY");
    h.get("/mode/:.team:orders").await.assert_error(404, 40409);
    h.set_config(Some(":.team:"), "NONE").await.assert_error(422, 42205);

    h.set_mode(Some(":.team:orders"), "READWRITE", "").await.ok_json(200);
    h.register(":.team:orders", &user_v1()).await;
    assert_eq!(h.delete("/mode/:.team:").await.ok_json(200)["mode"], "READONLY");
    h.delete("/mode/:.team:").await.assert_error(404, 40401);

    let message = h.set_mode(Some(":.team:"), "IMPORT", "").await.assert_error(422, 42205);
    assert_eq!(message, "Cannot import since found existing subjects");
    h.set_mode(Some(":.empty:"), "IMPORT", "").await.ok_json(200);
    let imported = json!({"schema": user_v1(), "id": 42, "version": 3});
    assert_eq!(h.register_raw(":.empty:orders", &imported).await.ok_json(200)["id"], 42);
    h.register_raw(":.other:x", &imported).await.assert_error(422, 42205);
}

/// `:.__GLOBAL:` applies below every context and the global scope, as Confluent's
/// `testGlobalContextWithNone` and `testGlobalContextWithReadOnlyMode`.
async fn registry_wide_settings_apply_below_every_context(h: &Harness) {
    assert_eq!(h.get("/config/:.__GLOBAL:").await.ok_json(200)["compatibilityLevel"], "BACKWARD", "unset: default");
    assert_eq!(h.set_config(Some(":.__GLOBAL:"), "NONE").await.ok_json(200), json!({"compatibility": "NONE"}));
    assert_eq!(h.get("/config/:.__GLOBAL:").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/config?defaultToGlobal=true").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.get("/config").await.ok_json(200)["compatibilityLevel"], "BACKWARD", "the global item is unset");
    assert_eq!(incompatible_second_version_status(h, "orders").await, 200);
    assert_eq!(incompatible_second_version_status(h, ":.team:orders").await, 200);
    h.set_config(None, "FULL").await.ok_json(200);
    h.set_config(Some(":.team:"), "FULL").await.ok_json(200);
    assert_eq!(incompatible_second_version_status(h, "invoices").await, 409, "the global FULL first");
    assert_eq!(incompatible_second_version_status(h, ":.team:invoices").await, 409, "the context's FULL first");
    assert_eq!(incompatible_second_version_status(h, ":.other:invoices").await, 200, "then :.__GLOBAL:");
    assert_eq!(h.delete("/config/:.__GLOBAL:").await.ok_json(200)["compatibilityLevel"], "NONE");
    assert_eq!(h.delete("/config/:.__GLOBAL:").await.ok_json(200)["compatibilityLevel"], "BACKWARD", "reverted");

    h.set_mode(Some(":.__GLOBAL:"), "READONLY", "").await.ok_json(200);
    assert_eq!(h.get("/mode/:.__GLOBAL:").await.ok_json(200)["mode"], "READONLY");
    assert_eq!(h.get("/mode?defaultToGlobal=true").await.ok_json(200)["mode"], "READONLY");
    assert_eq!(h.get("/mode").await.ok_json(200)["mode"], "READWRITE");
    h.register_raw("fresh", &json!({"schema": user_v1()})).await.assert_error(422, 42205);
    h.register_raw(":.fresh:s", &json!({"schema": user_v1()})).await.assert_error(422, 42205);
    h.set_mode(Some(":.fresh:"), "READWRITE", "").await.ok_json(200);
    h.register(":.fresh:s", &user_v1()).await;
    assert_eq!(h.delete("/mode/:.__GLOBAL:").await.ok_json(200)["mode"], "READONLY");
    h.register("fresh", &user_v1()).await;
}

api_tests::api_cases!(
    the_default_context_qualifier_is_the_global_scope,
    a_named_context_does_not_inherit_the_global_config,
    settings_of_a_wildcard_or_a_subject_of_the_registry_wide_context_are_42208,
    a_context_config_applies_to_its_subjects,
    a_context_mode_applies_to_its_subjects,
    registry_wide_settings_apply_below_every_context,
);
