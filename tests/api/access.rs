//! Access control over the wire, on every backend, with authentication on (the users of
//! `api_tests::users`): scoped users page through listings of their own subjects only, and an
//! IMPORT registration is judged on the request the registry executes, whatever its JSON shape.

use api_tests::Harness;
use api_tests::client::strings;
use api_tests::schemas::{distinct, user_v1};
use reqwest::Method;
use serde_json::{Value, json};

async fn as_user(h: &Harness, user: &str, method: Method, path: &str, body: Option<&Value>) -> Value {
    h.send_as(user, method, path, body).await.ok_json(200)
}

async fn register_as_admin(h: &Harness, subject: &str, schema: &str) -> i64 {
    let path = format!("/subjects/{subject}/versions");
    let reply = as_user(h, "admin", Method::POST, &path, Some(&json!({ "schema": schema }))).await;
    reply["id"].as_i64().unwrap_or_else(|| panic!("no id in {reply}"))
}

/// `team-a` (scoped to `team-a.`) pages through `GET /subjects`, `GET /schemas` and the listings
/// by ID with `limit=2`: full pages of its own subjects, none missing, none of other teams.
async fn scoped_users_page_through_their_own_subjects(h: &Harness) {
    let shared = user_v1();
    for (subject, schema) in [
        ("other.1", shared.clone()),
        ("team-a.1", distinct(1)),
        ("team-b.1", shared.clone()),
        ("team-a.2", shared.clone()),
        ("team-a.3", shared.clone()),
        ("team-b.2", distinct(2)),
    ] {
        register_as_admin(h, subject, &schema).await;
    }
    let id = register_as_admin(h, "team-a.2", &shared).await;
    let get = |path: String| async move { as_user(h, "team-a", Method::GET, &path, None).await };

    assert_eq!(strings(&get("/subjects?limit=2".into()).await), ["team-a.1", "team-a.2"]);
    assert_eq!(strings(&get("/subjects?offset=2&limit=2".into()).await), ["team-a.3"]);
    let listed = |body: Value| -> Vec<String> {
        let items = body.as_array().cloned().unwrap_or_default();
        items.iter().map(|item| item["subject"].as_str().unwrap_or_default().to_string()).collect()
    };
    assert_eq!(listed(get("/schemas?limit=2".into()).await), ["team-a.1", "team-a.2"]);
    assert_eq!(listed(get("/schemas?offset=2&limit=2".into()).await), ["team-a.3"]);
    assert_eq!(strings(&get(format!("/schemas/ids/{id}/subjects?limit=1")).await), ["team-a.2"]);
    assert_eq!(strings(&get(format!("/schemas/ids/{id}/subjects?offset=1&limit=1")).await), ["team-a.3"]);
    assert_eq!(listed(get(format!("/schemas/ids/{id}/versions?limit=1")).await), ["team-a.2"]);
    assert_eq!(listed(get(format!("/schemas/ids/{id}/versions?offset=1")).await), ["team-a.3"]);
    let all = as_user(h, "reader", Method::GET, "/subjects", None).await;
    assert_eq!(strings(&all).len(), 6, "unscoped users see every subject: {all}");
    let only_others = register_as_admin(h, "team-b.3", &distinct(3)).await;
    assert_eq!(get(format!("/schemas/ids/{only_others}/subjects")).await, json!([]), "an ID outside the scope");
}

/// A writer's register body carrying an ID is an IMPORT (admin only), as an object or as a JSON
/// array (which serde would read as the same request): refused, nothing changes; an admin's passes.
async fn imports_are_judged_on_the_request_registered(h: &Harness) {
    register_as_admin(h, "imported", &user_v1()).await;
    as_user(h, "admin", Method::PUT, "/mode/imported?force=true", Some(&json!({ "mode": "IMPORT" }))).await;
    let register = "/subjects/imported/versions";
    let as_array = json!([distinct(7), null, null, null, null, 1000, 2]);
    let refused = h.send_as("writer", Method::POST, register, Some(&as_array)).await;
    assert!(matches!(refused.status, 400 | 403), "array body: {} {}", refused.status, refused.text);
    let as_object = json!({ "schema": distinct(7), "id": 1000, "version": 2 });
    let message = h.send_as("writer", Method::POST, register, Some(&as_object)).await.assert_error(403, 40301);
    assert_eq!(message, "User is denied operation Import on Subject: imported");
    assert_eq!(as_user(h, "reader", Method::GET, register, None).await, json!([1]), "nothing registered");
    h.send_as("reader", Method::GET, "/schemas/ids/1000", None).await.assert_error(404, 40403);

    let imported = as_user(h, "admin", Method::POST, register, Some(&as_object)).await;
    assert_eq!((imported["id"].as_i64(), imported["version"].as_i64()), (Some(1000), Some(2)), "{imported}");
}

/// `ctx-a`, scoped to the context `.ctx-a` (prefix `:.ctx-a:`), writes and reads there through
/// qualified subjects and through the base-URL form alike (judged on the qualified request the
/// registry executes), and nowhere else.
async fn a_scope_may_name_a_context(h: &Harness) {
    register_as_admin(h, "orders", &distinct(1)).await;
    let body = json!({ "schema": user_v1() });
    let send = |method: Method, path: &'static str, body: Option<Value>| async move {
        h.send_as("ctx-a", method, path, body.as_ref()).await
    };
    send(Method::POST, "/contexts/.ctx-a/subjects/orders/versions", Some(body.clone())).await.ok_json(200);
    send(Method::POST, "/subjects/:.ctx-a:payments/versions", Some(body.clone())).await.ok_json(200);
    send(Method::POST, "/subjects/orders/versions", Some(body.clone())).await.assert_error(403, 40301);
    send(Method::POST, "/contexts/.ctx-b/subjects/orders/versions", Some(body.clone())).await.assert_error(403, 40301);
    send(Method::GET, "/contexts/.ctx-b/subjects/orders/versions", None).await.assert_error(403, 40301);
    let listed = strings(&send(Method::GET, "/subjects", None).await.ok_json(200));
    assert_eq!(listed, [":.ctx-a:orders", ":.ctx-a:payments"]);
    let in_context = strings(&send(Method::GET, "/contexts/.ctx-a/subjects", None).await.ok_json(200));
    assert_eq!(in_context, listed, "the base-URL listing");
}

api_tests::api_cases!(
    authenticated: scoped_users_page_through_their_own_subjects,
    imports_are_judged_on_the_request_registered,
    a_scope_may_name_a_context,
);
