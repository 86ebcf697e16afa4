//! Authorization of the subjects a request reaches indirectly, on every backend, with
//! authentication on (the users of `api_tests::users`): an alias target (when the alias is set and
//! whenever it is followed), the candidates of the unqualified-subject context fallback, and every
//! referenced subject. A denied alias target or reference is 403 with the route guard's answer; a
//! fallback candidate the caller may not read is skipped, answered as if absent.

use api_tests::Harness;
use api_tests::client::Response;
use api_tests::schemas::{distinct, record};
use reqwest::Method;
use serde_json::{Value, json};

async fn send(h: &Harness, user: &str, method: Method, path: &str, body: Option<&Value>) -> Response {
    h.send_as(user, method, path, body).await
}

async fn register_as_admin(h: &Harness, subject: &str, body: &Value) -> i64 {
    let path = format!("/subjects/{subject}/versions");
    let reply = send(h, "admin", Method::POST, &path, Some(body)).await.ok_json(200);
    reply["id"].as_i64().unwrap_or_else(|| panic!("no id in {reply}"))
}

#[track_caller]
fn denied(reply: Response, operation: &str, subject: &str) {
    let message = reply.assert_error(403, 40301);
    assert_eq!(message, format!("User is denied operation {operation} on Subject: {subject}"));
}

/// An alias forwards every operation to its target, so setting one needs admin on the target, and
/// every request through one is judged on the target again (an alias an unscoped admin set does
/// not open another team's subject to the aliasing subject's scoped users).
async fn aliases_are_authorized_on_their_target(h: &Harness) {
    let secret = json!({ "schema": distinct(1) });
    let id = register_as_admin(h, "team-b.secret", &secret).await;
    let alias = |target: &str| json!({ "alias": target });
    for target in ["team-b.secret", ":.secret:pay"] {
        let reply = send(h, "team-a-admin", Method::PUT, "/config/team-a.x", Some(&alias(target))).await;
        denied(reply, "AlterConfigs", target);
    }
    send(h, "admin", Method::PUT, "/config/team-a.x", Some(&alias("team-b.secret"))).await.ok_json(200);

    let reads = [
        (Method::GET, "/subjects/team-a.x/versions".to_string(), None),
        (Method::GET, "/subjects/team-a.x/versions/1".to_string(), None),
        (Method::GET, "/subjects/team-a.x/versions/latest/schema".to_string(), None),
        (Method::GET, "/subjects/team-a.x/versions/1/referencedby".to_string(), None),
        (Method::POST, "/subjects/team-a.x".to_string(), Some(secret.clone())),
        (Method::POST, "/compatibility/subjects/team-a.x/versions".to_string(), Some(secret.clone())),
        (Method::POST, "/compatibility/subjects/team-a.x/versions/latest".to_string(), Some(secret.clone())),
        (Method::GET, format!("/schemas/ids/{id}?subject=team-a.x"), None),
        (Method::GET, format!("/schemas/ids/{id}/versions?subject=team-a.x"), None),
    ];
    for user in ["team-a-reader", "team-a", "team-a-admin"] {
        for (method, path, body) in &reads {
            denied(send(h, user, method.clone(), path, body.as_ref()).await, "Read", "team-b.secret");
        }
    }
    let register = json!({ "schema": distinct(2) });
    let reply = send(h, "team-a", Method::POST, "/subjects/team-a.x/versions", Some(&register)).await;
    denied(reply, "Write", "team-b.secret");
    denied(send(h, "team-a", Method::DELETE, "/subjects/team-a.x/versions/1", None).await, "Delete", "team-b.secret");
    denied(send(h, "team-a", Method::DELETE, "/subjects/team-a.x", None).await, "Delete", "team-b.secret");
    let hard = send(h, "team-a-admin", Method::DELETE, "/subjects/team-a.x?permanent=true", None).await;
    denied(hard, "PermanentDelete", "team-b.secret");
    let untouched = send(h, "admin", Method::GET, "/subjects/team-b.secret/versions", None).await.ok_json(200);
    assert_eq!(untouched, json!([1]), "nothing registered or deleted there");

    // Callers allowed the target follow the alias; an alias inside the scope works for the scope.
    let through = send(h, "reader", Method::GET, "/subjects/team-a.x/versions/1", None).await.ok_json(200);
    assert_eq!(through["subject"], "team-b.secret");
    register_as_admin(h, "team-a.z", &json!({ "schema": distinct(3) })).await;
    send(h, "team-a-admin", Method::PUT, "/config/team-a.y", Some(&alias("team-a.z"))).await.ok_json(200);
    let own = send(h, "team-a-reader", Method::GET, "/subjects/team-a.y/versions/1", None).await.ok_json(200);
    assert_eq!(own["subject"], "team-a.z");
}

/// An unqualified read falls back to the same name in each named context only where the caller
/// may read: a reader scoped to `orders` gets the answer of a missing subject for
/// `orders-value` when only `:.hidden:orders-value` exists.
async fn context_fallback_skips_subjects_the_caller_may_not_read(h: &Harness) {
    let hidden = json!({ "schema": distinct(4) });
    let id = register_as_admin(h, ":.hidden:orders-value", &hidden).await;
    let missing = |reply: Response| reply.assert_error(404, 40401);
    let as_scoped = |method: Method, path: String, body: Option<Value>| async move {
        send(h, "orders-reader", method, &path, body.as_ref()).await
    };
    for path in ["/subjects/orders-value/versions/1", "/subjects/orders-value/versions/latest/schema"] {
        let message = missing(as_scoped(Method::GET, path.to_string(), None).await);
        assert_eq!(message, "Subject 'orders-value' not found.", "{path}");
    }
    let lookup = as_scoped(Method::POST, "/subjects/orders-value".into(), Some(hidden.clone())).await;
    assert_eq!(missing(lookup), "Subject 'orders-value' not found.");
    let by_id = as_scoped(Method::GET, format!("/schemas/ids/{id}/versions?subject=orders-value"), None).await;
    by_id.assert_error(404, 40403);

    // Unscoped readers still get Confluent's fallback.
    let found = send(h, "reader", Method::GET, "/subjects/orders-value/versions/1", None).await.ok_json(200);
    assert_eq!(found["subject"], ":.hidden:orders-value");
    let looked_up = send(h, "reader", Method::POST, "/subjects/orders-value", Some(&hidden)).await.ok_json(200);
    assert_eq!(looked_up["subject"], ":.hidden:orders-value");
    let by_id = send(h, "reader", Method::GET, &format!("/schemas/ids/{id}/versions?subject=orders-value"), None).await;
    assert_eq!(by_id.ok_json(200), json!([{ "subject": ":.hidden:orders-value", "version": 1 }]));
}

/// A reference needs read on its subject, decided before anything is read there: a scoped writer
/// cannot pin another team's version (which its owner could then not delete), and a scoped reader
/// learns nothing about which versions exist there (an existing and a missing version are denied
/// alike).
async fn references_need_read_on_the_referenced_subject(h: &Harness) {
    let customer = record("Customer", &[("name", r#""string""#)]);
    register_as_admin(h, "team-b.cust", &json!({ "schema": customer })).await;
    register_as_admin(h, "team-a.common", &json!({ "schema": customer })).await;
    let order = record("Order", &[("customer", r#""Customer""#)]);
    let referencing = |subject: &str, version: i64| json!({ "schema": order, "references": [{ "name": "Customer", "subject": subject, "version": version }] });
    let own = referencing("team-a.common", 1);
    let registered = send(h, "team-a", Method::POST, "/subjects/team-a.order/versions", Some(&own)).await;
    let id = registered.ok_json(200)["id"].clone();

    for version in [1, 9, -1] {
        let body = referencing("team-b.cust", version);
        let reply = send(h, "team-a", Method::POST, "/subjects/team-a.order/versions", Some(&body)).await;
        denied(reply, "Read", "team-b.cust");
        for path in ["/subjects/team-a.order", "/compatibility/subjects/team-a.order/versions"] {
            denied(send(h, "team-a-reader", Method::POST, path, Some(&body)).await, "Read", "team-b.cust");
        }
    }
    let deleted = send(h, "admin", Method::DELETE, "/subjects/team-b.cust/versions/1", None).await;
    assert_eq!(deleted.ok_json(200), json!(1), "no team-a schema holds team-b's version");
    let found = send(h, "team-a-reader", Method::POST, "/subjects/team-a.order", Some(&own)).await.ok_json(200);
    assert_eq!(found["id"], id, "references inside the scope resolve");
}

api_tests::api_cases!(
    authenticated: aliases_are_authorized_on_their_target,
    context_fallback_skips_subjects_the_caller_may_not_read,
    references_need_read_on_the_referenced_subject,
);
