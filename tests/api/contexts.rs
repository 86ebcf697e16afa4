//! Contexts: qualified subjects `:.ctx:name`, `/contexts`, the base-URL form, and where reads
//! resolve a subject or an ID.
//! Every case runs on every backend (each keys IDs by context).

use api_tests::Harness;
use api_tests::client::{enc, strings};
use api_tests::schemas::{distinct, user_v1};
use serde_json::json;

async fn the_default_context_qualifier_names_the_plain_subject(h: &Harness) {
    let id = h.register(":.:orders", &user_v1()).await;
    assert_eq!(h.versions("orders", "").await, vec![1], ":.:orders is orders");
    assert_eq!(h.register("orders", &user_v1()).await, id, "the same subject: the same id, no new version");
    assert_eq!(h.subjects("").await, vec!["orders".to_string()], "listed unqualified");
}

async fn context_only_and_wildcard_subjects_are_42208(h: &Harness) {
    for subject in [":.ctx:", ":.ctx", ":*:orders", ":.__GLOBAL:orders", ":.ctx:__GLOBAL"] {
        h.register_raw(subject, &json!({"schema": user_v1()})).await.assert_error(422, 42208);
    }
}

async fn deleting_a_context_with_a_colon_is_400(h: &Harness) {
    let message = h.delete(&format!("/contexts/{}", enc(".a:b"))).await.assert_error(400, 400);
    assert_eq!(message, "Context name '.a:b' cannot contain a colon");
}

async fn deleting_an_empty_context_is_204_and_a_used_one_42211(h: &Harness) {
    assert_eq!(h.delete("/contexts/.unused").await.status, 204);
    h.register(":.team:orders", &user_v1()).await;
    let message = h.delete("/contexts/.team").await.assert_error(422, 42211);
    assert_eq!(message, "The specified context '.team' is not empty.");
    h.delete_subject(":.team:orders", false).await.ok_json(200);
    h.delete("/contexts/.team").await.assert_error(422, 42211);
    h.delete_subject(":.team:orders", true).await.ok_json(200);
    assert_eq!(h.delete("/contexts/.team").await.status, 204);
    assert_eq!(h.get("/contexts").await.ok_json(200), json!(["."]), "a deleted context is not listed");
}

async fn subjects_list_every_context_qualified_and_a_prefix_narrows(h: &Harness) {
    h.register("orders", &distinct(1)).await;
    h.register(":.team:orders", &distinct(2)).await;
    h.register(":.team:payments", &distinct(3)).await;
    let everything = vec![":.team:orders", ":.team:payments", "orders"];
    assert_eq!(h.subjects("").await, everything);
    assert_eq!(strings(&h.get("/subjects?subjectPrefix=:*:").await.ok_json(200)), everything);
    assert_eq!(h.subjects("?subjectPrefix=:.team:").await, vec![":.team:orders", ":.team:payments"]);
}

/// A client whose base URL is `/contexts/.team` works unchanged and lands in `.team`, as
/// Confluent's `ContextFilter` routes it.
async fn a_context_base_url_qualifies_every_subject(h: &Harness) {
    let base = "/contexts/.team";
    let registered = h.post(&format!("{base}/subjects/orders/versions"), &json!({"schema": user_v1()})).await;
    let id = registered.ok_json(200)["id"].clone();
    assert_eq!(h.subjects("").await, vec![":.team:orders"], "registered in .team");
    assert_eq!(strings(&h.get(&format!("{base}/subjects")).await.ok_json(200)), vec![":.team:orders"]);
    let version = h.get(&format!("{base}/subjects/orders/versions/1")).await.ok_json(200);
    assert_eq!((version["subject"].clone(), version["id"].clone()), (json!(":.team:orders"), id.clone()));
    let by_id = h.get(&format!("{base}/schemas/ids/{id}")).await.ok_json(200);
    assert_eq!(by_id["schema"], json!(user_v1()));
    let found = h.post(&format!("{base}/subjects/orders"), &json!({"schema": user_v1()})).await.ok_json(200);
    assert_eq!(found["id"], id, "lookup in the context");
    h.get(&format!("{base}/subjects/payments/versions")).await.assert_error(404, 40401);
    h.get(&format!("/contexts/{}/subjects", enc(".a:b"))).await.assert_error(400, 400);
}

async fn a_context_prefix_filters_the_context_listing(h: &Harness) {
    assert_eq!(h.get("/contexts?contextPrefix=.").await.ok_json(200), json!(["."]));
    assert_eq!(h.get("/contexts?contextPrefix=.team").await.ok_json(200), json!([]));
    assert_eq!(h.get("/contexts?contextPrefix=").await.ok_json(200), json!(["."]), "empty: no filter");
}

/// `:.a:user` version 1 (ID `id`) rendered `format=resolved`, by version and by ID: its `home`
/// field holds the Address with `street` inlined.
async fn assert_user_resolves_with_its_street(h: &Harness, id: i64) {
    let resolved = concat!(
        r#"{"type":"record","name":"User","namespace":"acme","fields":[{"name":"home","type":"#,
        r#"{"type":"record","name":"Address","fields":[{"name":"street","type":"string"}]}}]}"#
    );
    let read = h.get(&format!("/subjects/{}/versions/1?format=resolved", enc(":.a:user"))).await.ok_json(200);
    assert_eq!(read["schema"], resolved);
    let by_id = h.get(&format!("/schemas/ids/{id}?format=resolved&subject={}", enc(":.a:user"))).await.ok_json(200);
    assert_eq!(by_id["schema"], resolved);
    assert_eq!(h.get(&format!("/contexts/.a/schemas/ids/{id}?format=resolved")).await.ok_json(200)["schema"], resolved);
}

/// A schema in one context may reference a subject of another by its qualified name: the
/// reference resolves, lists its referrer, blocks the referenced version's delete (42206) and is
/// inlined by `format=resolved`.
async fn a_reference_may_name_a_subject_of_another_context(h: &Harness) {
    let address =
        r#"{"type":"record","name":"Address","namespace":"acme","fields":[{"name":"street","type":"string"}]}"#;
    let user = r#"{"type":"record","name":"User","namespace":"acme","fields":[{"name":"home","type":"Address"}]}"#;
    h.register(":.b:address", address).await;
    let reference = json!([{"name": "acme.Address", "subject": ":.b:address", "version": 1}]);
    let id = h.register_body(":.a:user", &json!({"schema": user, "references": reference})).await;
    assert_eq!(h.get_version(":.a:user", "1").await.ok_json(200)["references"], reference);

    let referrers = h.get(&format!("/subjects/{}/versions/1/referencedby", enc(":.b:address"))).await;
    assert_eq!(referrers.ok_json(200), json!([id]));
    h.delete_version(":.b:address", "1", false).await.assert_error(422, 42206);
    h.delete_subject(":.b:address", false).await.assert_error(422, 42206);

    assert_user_resolves_with_its_street(h, id).await;

    h.delete_subject(":.a:user", false).await.ok_json(200);
    h.delete_subject(":.a:user", true).await.ok_json(200);
    h.delete_version(":.b:address", "1", false).await.ok_json(200);
}

/// A reference's unqualified subject names the subject of that name in the referrer's context, as
/// Confluent's `QualifiedSubject.qualifySubjectWithParent` resolves it (`:.:name` counts as
/// unqualified); the reference is stored and answered as posted. `referencedby`, deletes and
/// `format=resolved` follow it, and a nested reference resolves in its own referrer's context.
async fn an_unqualified_reference_resolves_in_the_referrers_context(h: &Harness) {
    let address = |field: &str| {
        format!(
            r#"{{"type":"record","name":"Address","namespace":"acme","fields":[{{"name":"{field}","type":"string"}}]}}"#
        )
    };
    let user = r#"{"type":"record","name":"User","namespace":"acme","fields":[{"name":"home","type":"Address"}]}"#;
    h.register(":.a:address", &address("street")).await;
    h.register("address", &address("city")).await;
    let reference = json!([{"name": "acme.Address", "subject": "address", "version": 1}]);
    let id = h.register_body(":.a:user", &json!({"schema": user, "references": reference})).await;
    assert_eq!(h.get_version(":.a:user", "1").await.ok_json(200)["references"], reference, "stored as posted");
    let through_base = h.get("/contexts/.a/subjects/user/versions/1").await.ok_json(200);
    assert_eq!(through_base["references"], reference);

    let referrers = |subject: &str| {
        let path = format!("/subjects/{}/versions/1/referencedby", enc(subject));
        async move { h.get(&path).await }
    };
    assert_eq!(referrers(":.a:address").await.ok_json(200), json!([id]), "the referrer's context");
    assert_eq!(referrers("address").await.ok_json(200), json!([]), "not the default context's");
    h.delete_version(":.a:address", "1", false).await.assert_error(422, 42206);
    h.delete_subject(":.a:address", false).await.assert_error(422, 42206);
    h.delete_version("address", "1", false).await.ok_json(200);

    assert_user_resolves_with_its_street(h, id).await;

    // `:.:address` counts as unqualified too; a lookup with the references as posted finds the version.
    let default_qualified = json!([{"name": "acme.Address", "subject": ":.:address", "version": 1}]);
    let posted = json!({"schema": user, "references": default_qualified});
    let again = h.register_body(":.a:user2", &posted).await;
    assert_eq!(referrers(":.a:address").await.ok_json(200), json!([id, again]));
    let lookup = json!({"schema": user, "references": reference});
    assert_eq!(h.post(&format!("/subjects/{}", enc(":.a:user")), &lookup).await.ok_json(200)["id"], id);

    // A nested reference resolves in the context of the subject that holds it.
    let holder = r#"{"type":"record","name":"Holder","namespace":"acme","fields":[{"name":"user","type":"User"}]}"#;
    let nested = json!([{"name": "acme.User", "subject": ":.a:user", "version": 1}]);
    h.register_body(":.b:holder", &json!({"schema": holder, "references": nested})).await;
    let holder_resolved = h.get(&format!("/subjects/{}/versions/1?format=resolved", enc(":.b:holder"))).await;
    assert!(holder_resolved.ok_json(200)["schema"].as_str().is_some_and(|text| text.contains("street")));

    // A reference to a subject the referrer's context does not hold is 42201 even where the
    // default context holds it.
    h.register("only-default", &address("zip")).await;
    let missing = json!([{"name": "acme.Address", "subject": "only-default", "version": 1}]);
    h.register_raw(":.a:user3", &json!({"schema": user, "references": missing})).await.assert_error(422, 42201);
}

/// `GET /schemas/guids/{guid}` finds a schema only named contexts hold, while any of them holds it.
async fn a_guid_resolves_while_a_named_context_holds_its_schema(h: &Harness) {
    h.register(":.b:pad", &distinct(1)).await;
    h.register(":.b:s", &user_v1()).await;
    let registered = h.register_raw(":.c:s", &json!({"schema": user_v1()})).await.ok_json(200);
    let path = format!("/schemas/guids/{}", registered["guid"].as_str().unwrap_or_default());
    assert_eq!(h.get(&path).await.ok_json(200)["schema"], json!(user_v1()));
    for (subject, left) in [(":.b:s", true), (":.c:s", false)] {
        h.delete_subject(subject, false).await.ok_json(200);
        h.delete_subject(subject, true).await.ok_json(200);
        let answer = h.get(&path).await;
        match left {
            true => assert_eq!(answer.ok_json(200)["schema"], json!(user_v1()), "still in .c"),
            false => {
                answer.assert_error(404, 40403);
            }
        }
    }
}

api_tests::api_cases!(
    a_guid_resolves_while_a_named_context_holds_its_schema,
    an_unqualified_reference_resolves_in_the_referrers_context,
    a_reference_may_name_a_subject_of_another_context,
    a_context_base_url_qualifies_every_subject,
    a_context_prefix_filters_the_context_listing,
    the_default_context_qualifier_names_the_plain_subject,
    context_only_and_wildcard_subjects_are_42208,
    deleting_a_context_with_a_colon_is_400,
    deleting_an_empty_context_is_204_and_a_used_one_42211,
    subjects_list_every_context_qualified_and_a_prefix_narrows,
    each_context_has_its_own_ids,
);

/// The same schema gets each context's own first ID; one ID names different schemas in two
/// contexts; `?subject=` picks the context (an unqualified subject found only in a named context
/// resolves there, as Confluent's `getSchemaKeyUsingContexts`); `GET /contexts` lists both.
async fn each_context_has_its_own_ids(h: &Harness) {
    assert_eq!(h.register("orders", &user_v1()).await, 1);
    assert_eq!(h.register(":.team:orders", &user_v1()).await, 1, "the same schema: the context's first id");
    assert_eq!(h.register(":.team:payments", &distinct(1)).await, 2);
    assert_eq!(h.register("invoices", &distinct(2)).await, 2, "id 2 names another schema in each context");

    let schema = |path: String| async move { h.get(&path).await.ok_json(200)["schema"].clone() };
    assert_eq!(schema("/schemas/ids/2".to_string()).await, json!(distinct(2)), "no subject: the default context");
    assert_eq!(schema(format!("/schemas/ids/2?subject={}", enc(":.team:payments"))).await, json!(distinct(1)));
    assert_eq!(schema("/schemas/ids/2?subject=payments".to_string()).await, json!(distinct(1)), "found in .team");
    assert_eq!(schema("/schemas/ids/2?subject=invoices".to_string()).await, json!(distinct(2)));
    assert_eq!(schema("/contexts/.team/schemas/ids/2".to_string()).await, json!(distinct(1)), "base URL: .team");
    let raw = h.get(&format!("/schemas/ids/2/schema?subject={}", enc(":.team:payments"))).await;
    assert_eq!(raw.text, distinct(1));

    let max = h.get(&format!("/schemas/ids/1?fetchMaxId=true&subject={}", enc(":.team:orders"))).await.ok_json(200);
    assert_eq!(max["maxId"], 2, "the context's own max id");
    let subjects = h.get(&format!("/schemas/ids/1/subjects?subject={}", enc(":.team:orders"))).await.ok_json(200);
    assert_eq!(strings(&subjects), vec![":.team:orders"], "rows of the context only");
    assert_eq!(strings(&h.get("/schemas/ids/1/subjects").await.ok_json(200)), vec!["orders"]);
    h.get(&format!("/schemas/ids/3?subject={}", enc(":.team:orders"))).await.assert_error(404, 40403);

    // An unqualified subject missing from the default context is looked for in each context.
    let version = h.get_version("payments", "1").await.ok_json(200);
    assert_eq!((version["subject"].clone(), version["id"].clone()), (json!(":.team:payments"), json!(2)));
    let found = h.lookup("payments", &distinct(1)).await.ok_json(200);
    assert_eq!((found["subject"].clone(), found["id"].clone()), (json!(":.team:payments"), json!(2)));
    h.get_version("nowhere", "1").await.assert_error(404, 40401);

    assert_eq!(h.get("/contexts").await.ok_json(200), json!([".", ".team"]));
    assert_eq!(h.get("/contexts?offset=1&limit=1").await.ok_json(200), json!([".team"]));
    assert_eq!(h.get("/contexts?contextPrefix=.te").await.ok_json(200), json!([".team"]));
    assert_eq!(h.get("/contexts?contextPrefix=.&offset=1").await.ok_json(200), json!([".team"]), "filter, then page");
}
