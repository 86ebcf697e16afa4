//! Authorization of the subjects a request reaches indirectly, on every backend, with
//! authentication on (the users of `api_tests::users`): an alias target (when the alias is set and
//! whenever it is followed, for the operation performed: an import through one needs the target's
//! whole context), the candidates of the unqualified-subject context fallback, a by-ID request's
//! `?subject=`, and every referenced subject, direct or nested, posted or stored. A denied alias
//! target, `?subject=` or reference is 403 with the route guard's answer; a fallback candidate the
//! caller may not read is skipped, answered as if absent. DEK subject prefixes: `dek_limits`.

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
        (Method::GET, "/subjects/team-a.x/versions/latest?format=resolved".to_string(), None),
        (Method::GET, "/subjects/team-a.x/metadata?key=owner&value=team-b".to_string(), None),
        (Method::GET, format!("/schemas/ids/{id}?subject=team-a.x"), None),
        (Method::GET, format!("/schemas/ids/{id}/schema?subject=team-a.x"), None),
        (Method::GET, format!("/schemas/ids/{id}/subjects?subject=team-a.x"), None),
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
    let hard = send(h, "team-a-admin", Method::DELETE, "/subjects/team-a.x/versions/1?permanent=true", None).await;
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
    for listing in ["versions", "subjects"] {
        let path = format!("/schemas/ids/{id}/{listing}?subject=orders-value");
        as_scoped(Method::GET, path, None).await.assert_error(404, 40403);
    }
    for path in
        [format!("/schemas/ids/{id}?subject=orders-value"), format!("/schemas/ids/{id}/schema?subject=orders-value")]
    {
        let message = as_scoped(Method::GET, path.clone(), None).await.assert_error(404, 40403);
        assert_eq!(message, format!("Schema {id} not found"), "{path}: the hidden context is not searched");
    }

    // Unscoped readers still get Confluent's fallback.
    let found = send(h, "reader", Method::GET, "/subjects/orders-value/versions/1", None).await.ok_json(200);
    assert_eq!(found["subject"], ":.hidden:orders-value");
    let looked_up = send(h, "reader", Method::POST, "/subjects/orders-value", Some(&hidden)).await.ok_json(200);
    assert_eq!(looked_up["subject"], ":.hidden:orders-value");
    // The answer the unscoped reader's lookup left in memory is not the scoped reader's.
    let lookup = as_scoped(Method::POST, "/subjects/orders-value".into(), Some(hidden.clone())).await;
    assert_eq!(missing(lookup), "Subject 'orders-value' not found.");
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

/// An IMPORT registration (explicit ID) through an alias is judged on the target's whole context,
/// as one at the target itself: an admin whose scope holds a whole context and one subject prefix
/// of another cannot move that other context's IDs through an alias an unscoped admin set.
async fn an_import_through_an_alias_needs_the_targets_whole_context(h: &Harness) {
    let user = "ctx-a-team-b-admin";
    let import = json!({ "mode": "IMPORT" });
    for subject in [":.ctx-a:imp", ":.ctx-b:team-b.imp"] {
        send(h, "admin", Method::PUT, &format!("/mode/{subject}"), Some(&import)).await.ok_json(200);
    }
    let alias = json!({ "alias": ":.ctx-b:team-b.imp" });
    send(h, "admin", Method::PUT, "/config/:.ctx-a:imp", Some(&alias)).await.ok_json(200);
    let body = json!({ "schema": distinct(5), "id": 5000 });

    let direct = send(h, user, Method::POST, "/subjects/:.ctx-b:team-b.imp/versions", Some(&body)).await;
    assert_eq!(direct.assert_error(403, 40301), "User is denied operation Import on Subject: :.ctx-b:");
    let through = send(h, user, Method::POST, "/subjects/:.ctx-a:imp/versions", Some(&body)).await;
    assert_eq!(through.assert_error(403, 40301), "User is denied operation Import on Subject: :.ctx-b:");
    let missing = send(h, "admin", Method::GET, "/schemas/ids/5000?subject=:.ctx-b:", None).await;
    missing.assert_error(404, 40403);
    let untouched = send(h, "admin", Method::GET, "/subjects/:.ctx-b:team-b.imp/versions", None).await;
    untouched.assert_error(404, 40401);

    // Its scope may register there without an ID, and import into the context it holds whole.
    let registered = json!({ "schema": distinct(6) });
    send(h, "admin", Method::PUT, "/mode/:.ctx-a:imp", Some(&json!({ "mode": "READWRITE" }))).await.ok_json(200);
    send(h, "admin", Method::PUT, "/mode/:.ctx-b:team-b.imp", Some(&json!({ "mode": "READWRITE" }))).await.ok_json(200);
    let written = send(h, user, Method::POST, "/subjects/:.ctx-a:imp/versions", Some(&registered)).await.ok_json(200);
    assert!(written["id"].is_i64(), "{written}");
    let own = json!({ "schema": distinct(7), "id": 7000 });
    send(h, "admin", Method::PUT, "/mode/:.ctx-a:own", Some(&import)).await.ok_json(200);
    let imported = send(h, user, Method::POST, "/subjects/:.ctx-a:own/versions", Some(&own)).await.ok_json(200);
    assert_eq!(imported["id"], 7000);
}

/// A by-ID request's `?subject=` names a subject the request reads: outside the caller's scope it
/// is refused as a path naming it would be (it used to be ignored, answering from the default
/// context), qualified or not; without it, or inside the scope, bodies by ID stay readable.
async fn a_by_id_subject_outside_the_scope_is_refused(h: &Harness) {
    let id = register_as_admin(h, "team-b.secret", &json!({ "schema": distinct(8) })).await;
    register_as_admin(h, ":.secret:pay", &json!({ "schema": distinct(9) })).await;
    register_as_admin(h, "team-a.own", &json!({ "schema": distinct(8) })).await;
    for subject in ["team-b.secret", ":.secret:pay", "team-b.absent"] {
        for path in ["", "/schema", "/subjects", "/versions"] {
            let path = format!("/schemas/ids/{id}{path}?subject={subject}");
            denied(send(h, "team-a-reader", Method::GET, &path, None).await, "Read", subject);
        }
    }
    for query in ["", "?subject=team-a.own"] {
        send(h, "team-a-reader", Method::GET, &format!("/schemas/ids/{id}/schema{query}"), None).await.ok_json(200);
    }
    let path = format!("/schemas/ids/{id}/versions?subject=team-a.own");
    let versions = send(h, "team-a-reader", Method::GET, &path, None).await;
    assert_eq!(versions.ok_json(200), json!([{ "subject": "team-a.own", "version": 1 }]));
    let path = format!("/schemas/ids/{id}/subjects?subject=team-b.secret");
    let unscoped = send(h, "reader", Method::GET, &path, None);
    assert_eq!(unscoped.await.ok_json(200), json!(["team-a.own", "team-b.secret"]));
}

/// References lead on to references of their own: a chain is authorized link by link, whoever
/// wrote it. `team-a.mid` (registered by an unscoped admin) references `team-b.cust`: a caller
/// scoped to `team-a.` reaches `team-b.cust` through it neither when it posts a schema referencing
/// `team-a.mid` (register, lookup, compatibility) nor when it reads `team-a.mid` in a form that
/// resolves its references (a rendering, a compatibility check against it). Unscoped callers do.
async fn nested_references_are_authorized_link_by_link(h: &Harness) {
    let customer = record("Customer", &[("name", r#""string""#)]);
    register_as_admin(h, "team-b.cust", &json!({ "schema": customer })).await;
    let mid = record("Mid", &[("customer", r#""Customer""#)]);
    let mid_refs = json!([{ "name": "Customer", "subject": "team-b.cust", "version": 1 }]);
    register_as_admin(h, "team-a.mid", &json!({ "schema": mid, "references": mid_refs })).await;
    let order = record("Order", &[("mid", r#""Mid""#)]);
    let body = json!({ "schema": order, "references": [{ "name": "Mid", "subject": "team-a.mid", "version": 1 }] });

    let registered = send(h, "team-a", Method::POST, "/subjects/team-a.order/versions", Some(&body)).await;
    denied(registered, "Read", "team-b.cust");
    for path in ["/subjects/team-a.mid", "/compatibility/subjects/team-a.mid/versions/latest"] {
        denied(send(h, "team-a-reader", Method::POST, path, Some(&body)).await, "Read", "team-b.cust");
    }
    let lookup = json!({ "schema": mid, "references": mid_refs });
    denied(send(h, "team-a-reader", Method::POST, "/subjects/team-a.mid", Some(&lookup)).await, "Read", "team-b.cust");
    let rendered = send(h, "team-a-reader", Method::GET, "/subjects/team-a.mid/versions/1?format=resolved", None).await;
    denied(rendered, "Read", "team-b.cust");
    let compatibility = json!({ "schema": distinct(10) });
    let checked = send(
        h,
        "team-a-reader",
        Method::POST,
        "/compatibility/subjects/team-a.mid/versions/latest",
        Some(&compatibility),
    );
    denied(checked.await, "Read", "team-b.cust");
    // The stored text itself is the subject's own: readable as stored.
    let stored = send(h, "team-a-reader", Method::GET, "/subjects/team-a.mid/versions/1", None).await.ok_json(200);
    assert_eq!(stored["references"], mid_refs);
    let held = send(h, "admin", Method::GET, "/subjects/team-b.cust/versions/1/referencedby", None).await.ok_json(200);
    assert_eq!(held.as_array().map(Vec::len), Some(1), "only team-a.mid holds team-b.cust: {held}");

    let by_writer = send(h, "writer", Method::POST, "/subjects/team-a.order/versions", Some(&body)).await.ok_json(200);
    let found = send(h, "reader", Method::POST, "/subjects/team-a.order", Some(&body)).await.ok_json(200);
    assert_eq!(found["id"], by_writer["id"]);
    // The answer the unscoped reader's lookup left in memory is not the scoped reader's.
    let remembered = send(h, "team-a-reader", Method::POST, "/subjects/team-a.order", Some(&body)).await;
    denied(remembered, "Read", "team-b.cust");
    let rendered = send(h, "reader", Method::GET, "/subjects/team-a.mid/versions/1?format=resolved", None).await;
    assert!(rendered.ok_json(200)["schema"].as_str().is_some_and(|text| text.contains("Customer")));
}

api_tests::api_cases!(
    authenticated: aliases_are_authorized_on_their_target,
    an_import_through_an_alias_needs_the_targets_whole_context,
    a_by_id_subject_outside_the_scope_is_refused,
    context_fallback_skips_subjects_the_caller_may_not_read,
    references_need_read_on_the_referenced_subject,
    nested_references_are_authorized_link_by_link,
);
