//! `/subjects/{s}/versions[/{v}[/schema|/referencedby]]`: register, read, list and delete versions.

use api_tests::Harness;
use api_tests::client::{avro, enc};
use api_tests::schemas::{distinct, record, user_v1, user_v2_with_default};
use registry_core::RegistrySettings;
use serde_json::{Value, json};

async fn register_answers_full_schema(h: &Harness) {
    let answer = h.register_raw("orders-value", &avro(&user_v1())).await.ok_json(200);
    assert!(answer["id"].as_i64().is_some_and(|id| id >= 1), "{answer}");
    assert_eq!(answer["version"], 1);
    assert_eq!(answer["schema"], user_v1());
}

async fn reregister_returns_same_id_and_version(h: &Harness) {
    let first = h.register("s", &user_v1()).await;
    let again = h.register_raw("s", &avro(&user_v1())).await.ok_json(200);
    assert_eq!(again["id"], first);
    assert_eq!(again["version"], 1);
    assert_eq!(h.versions("s", "").await, [1]);
}

async fn same_schema_other_subject_shares_id(h: &Harness) {
    let a = h.register("a", &user_v1()).await;
    h.set_config(Some("b"), "NONE").await.ok_json(200);
    h.register("b", &distinct(1)).await;
    let b = h.register_raw("b", &avro(&user_v1())).await.ok_json(200);
    assert_eq!(b["id"], a);
    assert_eq!(b["version"], 2);
}

async fn distinct_schemas_get_increasing_ids(h: &Harness) {
    let first = h.register("a", &distinct(1)).await;
    let second = h.register("b", &distinct(2)).await;
    assert!(second > first, "{first} then {second}");
}

async fn whitespace_variants_dedupe(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    let spaced = "{\n  \"type\" : \"record\",\n  \"name\" : \"User\",\n  \"fields\" : [{\"type\":\"string\",\"name\":\"name\"}]\n}";
    let again = h.register_raw("s", &avro(spaced)).await.ok_json(200);
    assert_eq!((again["id"].as_i64(), again["version"].as_i64()), (Some(id), Some(1)));
}

async fn stored_text_is_canonical(h: &Harness) {
    h.register("s", r#"{"type": "string"}"#).await;
    let got = h.get_version("s", "1").await.ok_json(200);
    assert_eq!(got["schema"], r#""string""#);
}

async fn versions_listed_ascending(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    for n in 0..3 {
        h.register("s", &distinct(n)).await;
    }
    assert_eq!(h.versions("s", "").await, [1, 2, 3]);
}

async fn versions_of_unknown_subject_is_40401(h: &Harness) {
    h.get("/subjects/nobody/versions").await.assert_error(404, 40401);
}

async fn get_version_by_number(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    let got = h.get_version("s", "1").await.ok_json(200);
    assert_eq!(got["subject"], "s");
    assert_eq!(got["version"], 1);
    assert_eq!(got["id"], id);
    assert_eq!(got["schema"], user_v1());
    assert!(got.get("references").is_none_or(|refs| refs.as_array().is_some_and(Vec::is_empty)), "{got}");
}

async fn latest_minus_one_and_case(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    for selector in ["latest", "-1", "LATEST", "Latest"] {
        let got = h.get_version("s", selector).await.ok_json(200);
        assert_eq!(got["version"], 2, "{selector}");
        assert_eq!(got["schema"], user_v2_with_default(), "{selector}");
    }
}

async fn invalid_version_strings_are_42202(h: &Harness) {
    h.register("s", &user_v1()).await;
    for bad in ["0", "-2", "abc", "1.5", "2147483648"] {
        let message = h.get_version("s", bad).await.assert_error(422, 42202);
        assert!(message.contains(&format!("'{bad}'")), "{message}");
    }
}

async fn missing_version_is_40402(h: &Harness) {
    h.register("s", &user_v1()).await;
    let message = h.get_version("s", "5").await.assert_error(404, 40402);
    assert_eq!(message, "Version 5 not found.");
}

async fn version_of_unknown_subject_is_40401(h: &Harness) {
    h.get_version("nobody", "1").await.assert_error(404, 40401);
    h.get_version("nobody", "latest").await.assert_error(404, 40401);
}

async fn schema_only_is_raw_text(h: &Harness) {
    h.register("s", &user_v1()).await;
    let raw = h.get("/subjects/s/versions/1/schema").await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.text, user_v1());
    h.get("/subjects/s/versions/9/schema").await.assert_error(404, 40402);
    h.get("/subjects/s/versions/zero/schema").await.assert_error(422, 42202);
}

async fn schema_only_of_primitive_is_json_string_text(h: &Harness) {
    h.register("s", r#""string""#).await;
    let raw = h.get("/subjects/s/versions/latest/schema").await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.text, r#""string""#);
}

async fn soft_delete_version_returns_number(h: &Harness) {
    h.register("s", &user_v1()).await;
    assert_eq!(h.delete_version("s", "1", false).await.ok_json(200), json!(1));
}

async fn soft_deleted_version_hidden_unless_deleted(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    h.get_version("s", "1").await.assert_error(404, 40402);
    let got = h.get("/subjects/s/versions/1?deleted=true").await.ok_json(200);
    assert_eq!(got["schema"], user_v1());
    assert_eq!(h.versions("s", "").await, [2]);
    assert_eq!(h.versions("s", "?deleted=true").await, [1, 2]);
    assert_eq!(h.versions("s", "?deletedOnly=true").await, [1]);
}

async fn delete_latest_resolves_number(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    assert_eq!(h.delete_version("s", "latest", false).await.ok_json(200), json!(2));
    assert_eq!(h.get_version("s", "latest").await.ok_json(200)["version"], 1);
    assert_eq!(h.delete_version("s", "-1", false).await.ok_json(200), json!(1));
}

async fn all_versions_soft_deleted_latest(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    h.get_version("s", "latest").await.assert_error(404, 40401);
    h.get("/subjects/s/versions/latest?deleted=true").await.assert_error(404, 40402);
    h.get("/subjects/s/versions").await.assert_error(404, 40401);
}

async fn soft_delete_twice_is_40406(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    let message = h.delete_version("s", "1", false).await.assert_error(404, 40406);
    assert_eq!(message, "Subject 's' Version 1 was soft deleted.Set permanent=true to delete permanently");
}

async fn hard_delete_live_version_is_40407(h: &Harness) {
    h.register("s", &user_v1()).await;
    let message = h.delete_version("s", "1", true).await.assert_error(404, 40407);
    assert_eq!(message, "Subject 's' Version 1 was not deleted first before being permanently deleted");
    assert_eq!(h.versions("s", "").await, [1]);
}

async fn delete_version_error_order(h: &Harness) {
    h.delete_version("nobody", "1", false).await.assert_error(404, 40401);
    h.delete_version("nobody", "abc", false).await.assert_error(422, 42202);
    h.register("s", &user_v1()).await;
    h.delete_version("s", "7", false).await.assert_error(404, 40402);
    h.delete_version("s", "7", true).await.assert_error(404, 40402);
    h.delete_version("s", "0", false).await.assert_error(422, 42202);
}

async fn soft_then_hard_delete_version(h: &Harness) {
    h.register("s", &user_v1()).await;
    h.register("s", &user_v2_with_default()).await;
    h.delete_version("s", "2", false).await.ok_json(200);
    assert_eq!(h.delete_version("s", "2", true).await.ok_json(200), json!(2));
    assert_eq!(h.versions("s", "?deleted=true").await, [1]);
    h.get("/subjects/s/versions/2?deleted=true").await.assert_error(404, 40402);
}

async fn hard_deleted_top_version_number_is_reused(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    h.register("s", &distinct(2)).await;
    h.delete_version("s", "2", false).await.ok_json(200);
    h.delete_version("s", "2", true).await.ok_json(200);
    let answer = h.register_raw("s", &avro(&distinct(3))).await.ok_json(200);
    assert_eq!(answer["version"], 2);
}

async fn soft_deleted_version_number_not_reused(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    h.register("s", &distinct(2)).await;
    h.delete_version("s", "2", false).await.ok_json(200);
    let answer = h.register_raw("s", &avro(&distinct(3))).await.ok_json(200);
    assert_eq!(answer["version"], 3);
}

async fn reregister_soft_deleted_revives_same_id_new_version(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    h.delete_version("s", "1", false).await.ok_json(200);
    let again = h.register_raw("s", &avro(&user_v1())).await.ok_json(200);
    assert_eq!((again["id"].as_i64(), again["version"].as_i64()), (Some(id), Some(2)));
    assert_eq!(h.versions("s", "?deleted=true").await, [2], "the superseded soft-deleted row is purged");
}

async fn id_resolves_after_soft_delete(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    h.delete_subject("s", false).await.ok_json(200);
    assert_eq!(h.get(&format!("/schemas/ids/{id}")).await.ok_json(200)["schema"], user_v1());
}

async fn id_gone_after_hard_delete_and_never_reused(h: &Harness) {
    let id = h.register("s", &user_v1()).await;
    h.delete_subject("s", false).await.ok_json(200);
    h.delete_subject("s", true).await.ok_json(200);
    let message = h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
    assert_eq!(message, format!("Schema {id} not found"));
    let other = h.register("t", &distinct(9)).await;
    assert!(other > id, "hard-deleted id {id} reissued to other content as {other}");
    let again = h.register_raw("s", &avro(&user_v1())).await.ok_json(200);
    assert_eq!(again["version"], 1);
    let again_id = again["id"].as_i64().unwrap_or_else(|| panic!("no id in {again}"));
    assert_ne!(again_id, other);
    assert!(
        again_id > other,
        "Confluent §6.1: the same text after a hard delete gets a new id (max+1), got {again_id}"
    );
    h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
    assert_eq!(h.get(&format!("/schemas/ids/{again_id}")).await.ok_json(200)["schema"], user_v1());
}

async fn explicit_version_not_next_is_42201(h: &Harness) {
    h.set_config(Some("s"), "NONE").await.ok_json(200);
    h.register("s", &distinct(1)).await;
    let wrong = json!({"schema": distinct(2), "version": 5});
    h.register_raw("s", &wrong).await.assert_error(422, 42201);
    assert_eq!(h.versions("s", "").await, [1]);
}

fn with_reference(schema: &str, name: &str, subject: &str, version: i64) -> Value {
    json!({"schema": schema, "references": [{"name": name, "subject": subject, "version": version}]})
}

fn referrer() -> String {
    record("Order", &[("user", r#""User""#)])
}

async fn references_registered_and_returned(h: &Harness) {
    h.register("user", &user_v1()).await;
    let id = h.register_body("order", &with_reference(&referrer(), "User", "user", 1)).await;
    let got = h.get_version("order", "1").await.ok_json(200);
    assert_eq!(got["references"], json!([{"name": "User", "subject": "user", "version": 1}]));
    let by_id = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(by_id["references"][0]["subject"], "user");
}

async fn referencedby_lists_referrer_ids(h: &Harness) {
    h.register("user", &user_v1()).await;
    assert_eq!(h.get("/subjects/user/versions/1/referencedby").await.ok_json(200), json!([]));
    let id = h.register_body("order", &with_reference(&referrer(), "User", "user", 1)).await;
    assert_eq!(h.get("/subjects/user/versions/1/referencedby").await.ok_json(200), json!([id]));
    assert_eq!(h.get("/subjects/user/versions/latest/referencedby").await.ok_json(200), json!([id]));
    h.get("/subjects/user/versions/0/referencedby").await.assert_error(422, 42202);
    h.get("/subjects/nobody/versions/1/referencedby").await.assert_error(404, 40401);
}

async fn referenced_version_cannot_be_deleted(h: &Harness) {
    h.register("user", &user_v1()).await;
    h.register_body("order", &with_reference(&referrer(), "User", "user", 1)).await;
    let message = h.delete_version("user", "1", false).await.assert_error(422, 42206);
    assert!(message.starts_with("One or more references exist to the schema"), "{message}");
    h.delete_subject("user", false).await.assert_error(422, 42206);
    h.delete_subject("order", false).await.ok_json(200);
    h.delete_version("user", "1", false).await.ok_json(200);
}

async fn missing_reference_is_42201(h: &Harness) {
    h.register_raw("order", &with_reference(&referrer(), "User", "user", 1)).await.assert_error(422, 42201);
    h.register("user", &user_v1()).await;
    h.register_raw("order", &with_reference(&referrer(), "User", "user", 2)).await.assert_error(422, 42201);
    h.register_raw("order", &avro(&referrer())).await.assert_error(422, 42201);
    h.get(&format!("/subjects/{}/versions", enc("order"))).await.assert_error(404, 40401);
}

/// Confluent's `RestApiReferenceVersionsStrictTest` (98aa28082a4): the root references `Inner` at
/// version 1 and `Middle`, which references `Inner` at version 2. By default the first binding of
/// a name wins (`AbstractSchemaProvider.resolveReferences`); with
/// `schema.providers.reference.versions.strict` (REGISTRY_REFERENCE_VERSIONS_STRICT) it is 42201,
/// and one name at one version is still accepted.
async fn a_reference_name_at_two_versions_binds_the_first_unless_strict(h: &Harness) {
    let inner_v1 = r#"{"type":"record","name":"Inner","fields":[{"name":"f1","type":"string"}]}"#;
    let inner_v2 = concat!(
        r#"{"type":"record","name":"Inner","fields":[{"name":"f1","type":"string"},"#,
        r#"{"name":"f2","type":["null","string"],"default":null}]}"#
    );
    let middle = r#"{"type":"record","name":"Middle","fields":[{"name":"m1","type":"string"}]}"#;
    let root = r#"{"type":"record","name":"Root","fields":[{"name":"r1","type":"string"}]}"#;
    h.register("inner", inner_v1).await;
    h.register("inner", inner_v2).await;
    h.register_body("middle", &with_reference(middle, "Inner", "inner", 2)).await;
    let both = |subject: &str| {
        json!({"schema": root, "references": [
            {"name": "Inner", "subject": "inner", "version": 1},
            {"name": "Middle", "subject": subject, "version": 1},
        ]})
    };
    let id = h.register_body("root", &both("middle")).await;
    let stored = h.get(&format!("/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(stored["references"][0], json!({"name": "Inner", "subject": "inner", "version": 1}), "{stored}");

    let settings = RegistrySettings { reference_versions_strict: true, ..RegistrySettings::default() };
    let strict = Harness::serve(h.backend().clone(), h.store().clone(), settings).await;
    let message = strict.register_raw("root-strict", &both("middle")).await.assert_error(422, 42201);
    assert!(message.contains(r#"Conflicting reference versions for "Inner": version 1 and version 2"#), "{message}");

    strict.register_body("middle-ok", &with_reference(middle, "Inner", "inner", 1)).await;
    strict.register_body("root-ok", &both("middle-ok")).await;
    // What was stored leniently still reads under the strict rule.
    strict.get(&format!("/schemas/ids/{id}?format=resolved")).await.ok_json(200);
}

/// `?format=resolved` writes an Avro schema's referenced types in full (Java's `Schema.toString()`)
/// on every read Confluent gives the parameter; `default` and unknown formats answer the stored text.
async fn format_resolved_inlines_avro_references_everywhere(h: &Harness) {
    let address =
        r#"{"type":"record","name":"Address","namespace":"acme","fields":[{"name":"street","type":"string"}]}"#;
    let user = r#"{"type":"record","name":"User","namespace":"acme","fields":[{"name":"home","type":"Address"}]}"#;
    let resolved = concat!(
        r#"{"type":"record","name":"User","namespace":"acme","fields":[{"name":"home","type":"#,
        r#"{"type":"record","name":"Address","fields":[{"name":"street","type":"string"}]}}]}"#
    );
    h.register("address", address).await;
    let body = json!({"schema": user, "references": [{"name": "acme.Address", "subject": "address", "version": 1}]});
    let registered = h.register_raw("user", &body).await.ok_json(200);
    assert_eq!(registered["schema"], user);
    let (id, guid) = (registered["id"].clone(), registered["guid"].as_str().unwrap_or_default().to_string());
    let reads = [
        "/subjects/user/versions/1?format=resolved".to_string(),
        "/subjects/user/versions/latest?format=resolved".to_string(),
        format!("/schemas/ids/{id}?format=resolved"),
        format!("/schemas/guids/{guid}?format=resolved"),
        "/subjects/user/metadata?format=resolved".to_string(),
    ];
    for path in &reads {
        assert_eq!(h.get(path).await.ok_json(200)["schema"], resolved, "{path}");
    }
    for path in
        ["/subjects/user/versions/1/schema?format=resolved", &format!("/schemas/ids/{id}/schema?format=resolved")]
    {
        assert_eq!(h.get(path).await.text, resolved, "{path}");
    }
    let lookup = h.post("/subjects/user?format=resolved", &body).await.ok_json(200);
    assert_eq!(lookup["schema"], resolved);
    let again = h.post("/subjects/user/versions?format=resolved", &body).await.ok_json(200);
    assert_eq!((again["id"].clone(), again["schema"].clone()), (id.clone(), json!(resolved)));
    for format in ["default", "no-such-format", ""] {
        let path = format!("/subjects/user/versions/1?format={format}");
        assert_eq!(h.get(&path).await.ok_json(200)["schema"], user, "{path}");
    }
    // Without references the resolved text is the stored one.
    assert_eq!(h.get("/subjects/address/versions/1?format=resolved").await.ok_json(200)["schema"], address);
}

api_tests::api_cases!(
    format_resolved_inlines_avro_references_everywhere,
    register_answers_full_schema,
    reregister_returns_same_id_and_version,
    same_schema_other_subject_shares_id,
    distinct_schemas_get_increasing_ids,
    whitespace_variants_dedupe,
    stored_text_is_canonical,
    versions_listed_ascending,
    versions_of_unknown_subject_is_40401,
    get_version_by_number,
    latest_minus_one_and_case,
    invalid_version_strings_are_42202,
    missing_version_is_40402,
    version_of_unknown_subject_is_40401,
    schema_only_is_raw_text,
    schema_only_of_primitive_is_json_string_text,
    soft_delete_version_returns_number,
    soft_deleted_version_hidden_unless_deleted,
    delete_latest_resolves_number,
    all_versions_soft_deleted_latest,
    soft_delete_twice_is_40406,
    hard_delete_live_version_is_40407,
    delete_version_error_order,
    soft_then_hard_delete_version,
    hard_deleted_top_version_number_is_reused,
    soft_deleted_version_number_not_reused,
    reregister_soft_deleted_revives_same_id_new_version,
    id_resolves_after_soft_delete,
    id_gone_after_hard_delete_and_never_reused,
    explicit_version_not_next_is_42201,
    references_registered_and_returned,
    referencedby_lists_referrer_ids,
    referenced_version_cannot_be_deleted,
    missing_reference_is_42201,
    a_reference_name_at_two_versions_binds_the_first_unless_strict,
);
