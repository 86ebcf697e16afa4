//! Protobuf through the API: Confluent's stored text, `%2F` subjects, references by import,
//! normalize, 409 on an incompatible change (Confluent's Protobuf diff), a package change refused
//! unless the CP 7.x rule is chosen, and Confluent's oneof rules.

use api_tests::Harness;
use api_tests::client::{enc, typed};
use registry_core::{RegistrySettings, Rules};
use serde_json::json;

const V1: &str = "syntax = \"proto3\";\npackage pkg1;\n\nmessage Msg1 {\n  string name = 1;\n}\n";
const V1_LOOSE: &str = "syntax=\"proto3\"; package pkg1; // same schema\nmessage Msg1 { string name = 1; }";

/// Registering `schema` under `subject` is 409 / 40901, its message naming `difference`.
async fn assert_incompatible(h: &Harness, subject: &str, schema: &str, difference: &str) {
    let message = h.register_raw(subject, &typed("PROTOBUF", schema)).await.assert_error(409, 40901);
    assert!(message.contains(difference), "{message}");
}

async fn stored_text_is_confluents_rendering(h: &Harness) {
    let id = h.register_body("pkg1/msg1.proto", &typed("PROTOBUF", V1_LOOSE)).await;
    let version = h.get(&format!("/subjects/{}/versions/1", enc("pkg1/msg1.proto"))).await.ok_json(200);
    assert_eq!(version["schema"], V1);
    assert_eq!(version["subject"], "pkg1/msg1.proto");
    assert_eq!(h.register_body("pkg1/msg1.proto", &typed("PROTOBUF", V1)).await, id, "same schema, same id");
    let raw = h.get(&format!("/schemas/ids/{id}/schema")).await;
    assert_eq!(raw.text, V1);
    let found =
        h.post(&format!("/subjects/{}", enc("pkg1/msg1.proto")), &typed("PROTOBUF", V1_LOOSE)).await.ok_json(200);
    assert_eq!(found["id"], id);
}

async fn incompatible_change_is_409_and_compatible_one_is_a_new_version(h: &Harness) {
    let subject = "pkg1/msg1.proto";
    h.register_body(subject, &typed("PROTOBUF", V1)).await;
    let changed = V1.replace("string name = 1;", "int64 name = 1;");
    assert_incompatible(h, subject, &changed, "FIELD_SCALAR_KIND_CHANGED").await;
    let added = V1.replace("string name = 1;", "string name = 1;\n  int64 at = 2;");
    let answer = h.register_raw(subject, &typed("PROTOBUF", &added)).await.ok_json(200);
    assert!(answer["id"].as_i64().is_some(), "{answer}");
    let path = format!("/compatibility/subjects/{}/versions/latest?verbose=true", enc(subject));
    let verdict = h.post(&path, &typed("PROTOBUF", &V1.replace("string name = 1;", "bytes name = 1;"))).await;
    assert_eq!(verdict.ok_json(200)["is_compatible"], true);
    let verdict = h.post(&path, &typed("PROTOBUF", &changed)).await.ok_json(200);
    assert_eq!(verdict["is_compatible"], false);
    let messages = verdict["messages"].to_string();
    assert!(messages.contains("errorType:\\\"FIELD_SCALAR_KIND_CHANGED\\\""), "{messages}");
}

async fn references_resolve_imports_across_slash_subjects(h: &Harness) {
    let money =
        "syntax = \"proto3\";\npackage acme.money;\n\nmessage Money {\n  string currency = 1;\n  int64 units = 2;\n}\n";
    h.register_body("acme/money.proto", &typed("PROTOBUF", money)).await;
    let order = "syntax = \"proto3\";\npackage acme;\n\nimport \"acme/money.proto\";\n\nmessage Order {\n  acme.money.Money total = 1;\n}\n";
    let reference = json!([{"name": "acme/money.proto", "subject": "acme/money.proto", "version": 1}]);
    let body = json!({"schemaType": "PROTOBUF", "schema": order, "references": reference});
    let id = h.register_body("acme/order.proto", &body).await;
    let got = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(got["schema"], order);
    assert_eq!(got["references"], reference);
    let missing = json!({"schemaType": "PROTOBUF", "schema": order});
    h.register_raw("acme/other.proto", &missing).await.assert_error(422, 42201);
}

async fn normalize_stores_the_normal_form(h: &Harness) {
    let text = "syntax = \"proto3\";\npackage n;\n\nmessage M {\n  string b = 2;\n  int32 a = 1;\n}\n";
    let answer =
        h.post(&format!("/subjects/{}/versions?normalize=true", enc("n/m.proto")), &typed("PROTOBUF", text)).await;
    let id = answer.ok_json(200)["id"].as_i64().unwrap_or_default();
    let raw = h.get(&format!("/schemas/ids/{id}/schema")).await;
    assert_eq!(raw.text, "syntax = \"proto3\";\npackage n;\n\nmessage M {\n  int32 a = 1;\n  string b = 2;\n}\n");
}

async fn format_ignore_extensions_drops_custom_options(h: &Harness) {
    let text = concat!(
        "syntax = \"proto2\";\npackage acme;\n\nimport \"google/protobuf/descriptor.proto\";\n\n",
        "extend google.protobuf.FieldOptions {\n  optional string pii = 50001;\n}\n\n",
        "message Person {\n  optional string name = 1 [(pii) = \"yes\"];\n}\n"
    );
    let id = h.register_body("people", &typed("PROTOBUF", text)).await;
    let stored = h.get("/subjects/people/versions/1").await.ok_json(200)["schema"].clone();
    assert!(stored.as_str().is_some_and(|s| s.contains("(pii)") && s.contains("extend")), "{stored}");
    let expected = concat!(
        "syntax = \"proto2\";\npackage acme;\n\nimport \"google/protobuf/descriptor.proto\";\n\n",
        "message Person {\n  optional string name = 1;\n}\n"
    );
    for path in
        ["/subjects/people/versions/1?format=ignore_extensions", &format!("/schemas/ids/{id}?format=ignore_extensions")]
    {
        assert_eq!(h.get(path).await.ok_json(200)["schema"], expected, "{path}");
    }
}

async fn a_package_change_is_incompatible_unless_the_older_rule_is_set(h: &Harness) {
    let subject = "pkg/renamed.proto";
    h.register_body(subject, &typed("PROTOBUF", V1)).await;
    let moved = V1.replace("package pkg1;", "package pkg2;");
    assert_incompatible(h, subject, &moved, "PACKAGE_CHANGED").await;
    let settings =
        RegistrySettings { compat_rules: Rules { protobuf_package_change: true }, ..RegistrySettings::default() };
    let older = Harness::serve(h.backend().clone(), h.store().clone(), settings).await;
    let answer = older.register_raw(subject, &typed("PROTOBUF", &moved)).await.ok_json(200);
    assert!(answer["id"].as_i64().is_some(), "{answer}");
    assert_eq!(h.versions(subject, "").await, [1, 2]);
}

async fn oneof_changes_follow_confluents_rules(h: &Harness) {
    let subject = "pkg/oneof.proto";
    let v1 =
        "syntax = \"proto3\";\npackage p;\n\nmessage M {\n  oneof g {\n    int32 a = 1;\n    string b = 2;\n  }\n}\n";
    h.register_body(subject, &typed("PROTOBUF", v1)).await;
    let path = format!("/compatibility/subjects/{}/versions/latest?verbose=true", enc(subject));
    // A renamed oneof must not hide a member's type change.
    let renamed = v1.replace("oneof g {", "oneof h {").replace("string b = 2;", "int64 b = 2;");
    let verdict = h.post(&path, &typed("PROTOBUF", &renamed)).await.ok_json(200);
    assert_eq!(verdict["is_compatible"], false, "{verdict}");
    assert!(verdict["messages"].to_string().contains("FIELD_SCALAR_KIND_CHANGED"), "{verdict}");
    // A member moved out of a oneof that stays is missing from it, as Confluent 8.3's `OneOfDiff` reports
    // (protobuf-provider/.../diff/OneOfDiff.java: ONEOF_FIELD_REMOVED; diff-schema-examples.json "Detect
    // incompatible remove field from oneof"): 409 on register, incompatible on test.
    let top =
        "syntax = \"proto3\";\npackage p;\n\nmessage M {\n  string b = 2;\n  oneof g {\n    int32 a = 1;\n  }\n}\n";
    let verdict = h.post(&path, &typed("PROTOBUF", top)).await.ok_json(200);
    assert_eq!(verdict["is_compatible"], false, "{verdict}");
    assert!(verdict["messages"].to_string().contains("#/M/g/2"), "{verdict}");
    assert_incompatible(h, subject, top, "ONEOF_FIELD_REMOVED").await;
    let into_new_oneof = top.replace("string b = 2;", "oneof k {\n    string b = 2;\n  }");
    assert_incompatible(h, subject, &into_new_oneof, "ONEOF_FIELD_REMOVED").await;
}

api_tests::api_cases!(
    format_ignore_extensions_drops_custom_options,
    stored_text_is_confluents_rendering,
    incompatible_change_is_409_and_compatible_one_is_a_new_version,
    references_resolve_imports_across_slash_subjects,
    normalize_stores_the_normal_form,
    a_package_change_is_incompatible_unless_the_older_rule_is_set,
    oneof_changes_follow_confluents_rules,
);
