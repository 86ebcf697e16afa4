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
    // Read through the server that wrote it (a read region serves another's write after the lag).
    assert_eq!(older.versions(subject, "").await, [1, 2]);
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
    // A member moved out of a oneof that stays only relaxes exclusivity (Confluent's MessageSchemaDiff
    // since DGS-24604, 3f5ff24387e: ONEOF_FIELD_MOVED_TO_TOP_LEVEL, compatible); so does one moved
    // into a new oneof of its own.
    let top =
        "syntax = \"proto3\";\npackage p;\n\nmessage M {\n  string b = 2;\n  oneof g {\n    int32 a = 1;\n  }\n}\n";
    let verdict = h.post(&path, &typed("PROTOBUF", top)).await.ok_json(200);
    assert_eq!(verdict["is_compatible"], true, "{verdict}");
    let into_new_oneof = top.replace("string b = 2;", "oneof k {\n    string b = 2;\n  }");
    let verdict = h.post(&path, &typed("PROTOBUF", &into_new_oneof)).await.ok_json(200);
    assert_eq!(verdict["is_compatible"], true, "{verdict}");
    h.register_body(subject, &typed("PROTOBUF", top)).await;
}

/// The cases of Confluent's `diff-schema-examples.json` (protobuf-provider, as of DGS-24604) that
/// touch a oneof, each registered under its own subject at BACKWARD: the update is a new version when
/// Confluent calls it compatible, else 409 naming its first incompatible change.
async fn confluents_oneof_examples_register_as_confluent_answers(h: &Harness) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/protobuf-compat/diff-schema-examples.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mentions_oneof = |case: &serde_json::Value| case.to_string().to_lowercase().contains("oneof");
    let oneof_cases: Vec<_> = cases.iter().filter(|case| mentions_oneof(case)).collect();
    assert!(oneof_cases.len() >= 18, "{} oneof cases", oneof_cases.len());
    for (index, case) in oneof_cases.into_iter().enumerate() {
        let (description, subject) = (&case["description"], format!("oneof-example-{index}"));
        let text = |side: &str| case[side].as_str().unwrap_or_default().to_string();
        h.register_body(&subject, &typed("PROTOBUF", &text("original_schema"))).await;
        let answer = h.register_raw(&subject, &typed("PROTOBUF", &text("update_schema"))).await;
        if case["compatible"] == true {
            assert_eq!(answer.status, 200, "{description}: {}", answer.text);
        } else {
            let message = answer.assert_error(409, 40901);
            let incompatible =
                ["ONEOF_FIELD_REMOVED", "FIELD_MOVED_TO_EXISTING_ONEOF", "MULTIPLE_FIELDS_MOVED_TO_ONEOF"]
                    .into_iter()
                    .chain(["FIELD_SCALAR_KIND_CHANGED", "FIELD_KIND_CHANGED", "FIELD_NAMED_TYPE_CHANGED"]);
            let named = incompatible.filter(|kind| case["changes"].to_string().contains(kind));
            for kind in named {
                assert!(message.contains(kind), "{description}: {message}");
            }
        }
    }
}

/// Confluent's `testNormalizationWithNestedComplexCustomOptions` and
/// `testNormalizationWithRepeatedNestedCustomOptions` (eec1a8b62bf) through the API: registered with
/// `normalize=true`, each stores Confluent's normal form (dotted custom options aggregated under the
/// extension's full name); the second, a dotted path through a repeated field, also registers as written.
async fn normalize_aggregates_dotted_custom_options(h: &Harness) {
    let fixture = |name: &str| {
        let path = format!("{}/fixtures/protobuf-render/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    for case in ["nested-complex-custom-options", "repeated-nested-custom-options"] {
        let input = fixture(&format!("{case}.input.proto"));
        let path = format!("/subjects/{case}/versions?normalize=true");
        let id = h.post(&path, &typed("PROTOBUF", &input)).await.ok_json(200)["id"].as_i64().unwrap_or_default();
        let stored = h.get(&format!("/schemas/ids/{id}/schema")).await;
        assert_eq!(stored.text, fixture(&format!("{case}.normalized.proto")), "{case}");
    }
    let input = fixture("repeated-nested-custom-options.input.proto");
    h.register_body("repeated-options-as-written", &typed("PROTOBUF", &input)).await;
}

api_tests::api_cases!(
    format_ignore_extensions_drops_custom_options,
    stored_text_is_confluents_rendering,
    incompatible_change_is_409_and_compatible_one_is_a_new_version,
    references_resolve_imports_across_slash_subjects,
    normalize_stores_the_normal_form,
    a_package_change_is_incompatible_unless_the_older_rule_is_set,
    oneof_changes_follow_confluents_rules,
    confluents_oneof_examples_register_as_confluent_answers,
    normalize_aggregates_dotted_custom_options,
);
