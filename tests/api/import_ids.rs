//! IMPORT under an explicit ID whose schema was hard-deleted: the ID is free again once no
//! version (live or soft-deleted, in any subject of its context) holds it, as in Confluent, so a
//! wiped registry can be restored from a backup; an ID a version still holds stays refused (42205).

use api_tests::Harness;
use api_tests::schemas::{distinct, user_v1};
use serde_json::json;

/// Registers `schema` under `subject` and hard-deletes the subject: the ID it got, now free.
async fn freed_id(h: &Harness, subject: &str, schema: &str) -> i64 {
    let id = h.register(subject, schema).await;
    h.delete_subject(subject, false).await.ok_json(200);
    h.delete_subject(subject, true).await.ok_json(200);
    h.get(&format!("/schemas/ids/{id}")).await.assert_error(404, 40403);
    id
}

/// `GET path` with `If-None-Match: tag`: the status and the `ETag` answered.
async fn get_if_none_match(h: &Harness, path: &str, tag: &str) -> (u16, Option<String>) {
    let request = h.http().get(format!("{}{path}", h.base_url())).header(reqwest::header::IF_NONE_MATCH, tag);
    let response = request.send().await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let etag = response.headers().get(reqwest::header::ETAG).and_then(|v| v.to_str().ok()).map(str::to_string);
    (response.status().as_u16(), etag)
}

async fn import_reuses_an_id_whose_schema_was_hard_deleted(h: &Harness) {
    let id = h.register("old", &user_v1()).await;
    let path = format!("/schemas/ids/{id}");
    let (_, old_tag) = get_if_none_match(h, &path, "\"none\"").await;
    let old_tag = old_tag.unwrap_or_else(|| panic!("{path} answers an ETag"));
    h.delete_subject("old", false).await.ok_json(200);
    h.delete_subject("old", true).await.ok_json(200);

    h.set_mode(None, "IMPORT", "").await.ok_json(200);
    let restored = json!({"schema": distinct(1), "id": id, "version": 1});
    assert_eq!(h.register_body("restored", &restored).await, id);
    let by_id = h.get(&path).await.ok_json(200);
    assert_eq!(by_id["schema"], distinct(1), "the freed id names the imported schema");
    assert_eq!(h.get(&format!("{path}/subjects")).await.ok_json(200), json!(["restored"]));
    assert_eq!(h.get_version("restored", "1").await.ok_json(200)["id"], id);
    let (status, new_tag) = get_if_none_match(h, &path, &old_tag).await;
    assert_eq!(status, 200, "a cache revalidating the old answer gets the new schema, not a 304");
    assert_ne!(new_tag.as_deref(), Some(old_tag.as_str()), "the ETag names the schema the id names now");

    // The old schema registered again outside IMPORT takes a new ID: the freed one is taken.
    h.set_mode(None, "READWRITE", "").await.ok_json(200);
    let again = h.register("again", &user_v1()).await;
    assert!(again > id, "the hard-deleted schema gets a new id ({again}), never {id}");
}

async fn import_refuses_an_id_a_soft_deleted_version_holds(h: &Harness) {
    let id = h.register("old", &user_v1()).await;
    h.delete_subject("old", false).await.ok_json(200);
    h.set_mode(Some("restored"), "IMPORT", "").await.ok_json(200);
    let restored = json!({"schema": distinct(1), "id": id, "version": 1});
    let message = h.register_raw("restored", &restored).await.assert_error(422, 42205);
    assert!(message.contains(&format!("Overwrite new schema with id {id}")), "{message}");
    let by_id = h.get(&format!("/schemas/ids/{id}?deleted=true")).await.ok_json(200);
    assert_eq!(by_id["schema"], user_v1(), "the soft-deleted schema keeps its id");
}

async fn import_refuses_an_id_another_subject_holds_until_it_is_hard_deleted(h: &Harness) {
    let id = h.register("first", &user_v1()).await;
    assert_eq!(h.register("second", &user_v1()).await, id);
    h.delete_subject("first", false).await.ok_json(200);
    h.delete_subject("first", true).await.ok_json(200);
    h.set_mode(Some("restored"), "IMPORT", "").await.ok_json(200);
    let restored = json!({"schema": distinct(1), "id": id, "version": 1});
    h.register_raw("restored", &restored).await.assert_error(422, 42205);
    h.delete_subject("second", false).await.ok_json(200);
    h.delete_subject("second", true).await.ok_json(200);
    assert_eq!(h.register_body("restored", &restored).await, id);
    assert_eq!(h.get(&format!("/schemas/ids/{id}")).await.ok_json(200)["schema"], distinct(1));
}

async fn import_of_the_same_schema_under_its_freed_id_restores_it(h: &Harness) {
    let id = freed_id(h, "old", &user_v1()).await;
    h.set_mode(None, "IMPORT", "").await.ok_json(200);
    let restored = json!({"schema": user_v1(), "id": id, "version": 1});
    assert_eq!(h.register_body("old", &restored).await, id);
    assert_eq!(h.get(&format!("/schemas/ids/{id}")).await.ok_json(200)["schema"], user_v1());
    h.set_mode(None, "READWRITE", "").await.ok_json(200);
    assert_eq!(h.register("elsewhere", &user_v1()).await, id, "the restored schema keeps its id everywhere");
}

async fn a_freed_id_is_free_in_its_own_context_only(h: &Harness) {
    let in_ctx = freed_id(h, ":.team:old", &user_v1()).await;
    let default_id = h.register("kept", &distinct(7)).await;
    assert_eq!(in_ctx, default_id, "both contexts start at 1");
    h.set_mode(Some(":.team:restored"), "IMPORT", "").await.ok_json(200);
    let restored = json!({"schema": distinct(1), "id": in_ctx, "version": 1});
    assert_eq!(h.register_body(":.team:restored", &restored).await, in_ctx);
    let by_id = h.get(&format!("/schemas/ids/{in_ctx}?subject=:.team:restored")).await.ok_json(200);
    assert_eq!(by_id["schema"], distinct(1));
    assert_eq!(h.get(&format!("/schemas/ids/{default_id}")).await.ok_json(200)["schema"], distinct(7));
    h.set_mode(Some("other"), "IMPORT", "").await.ok_json(200);
    let clash = json!({"schema": distinct(2), "id": default_id, "version": 1});
    h.register_raw("other", &clash).await.assert_error(422, 42205);
}

api_tests::api_cases!(
    import_reuses_an_id_whose_schema_was_hard_deleted,
    import_refuses_an_id_a_soft_deleted_version_holds,
    import_refuses_an_id_another_subject_holds_until_it_is_hard_deleted,
    import_of_the_same_schema_under_its_freed_id_restores_it,
    a_freed_id_is_free_in_its_own_context_only,
);
