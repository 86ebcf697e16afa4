//! The DEK registry (`/dek-registry/v1/keks/...`) over the wire: Confluent's answers, status codes
//! and error codes for every endpoint, registry-generated DEKs of shared `local-kms` KEKs, a race of
//! DEK creations, and who may call what with authentication on.

use api_tests::client::{enc, strings};
use api_tests::{Harness, LOCAL_KMS_SECRET};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use registry_dek::{Kek, Kms, LocalKms};
use reqwest::Method;
use serde_json::{Value, json};

const KEKS: &str = "/dek-registry/v1/keks";

fn kek_body(name: &str, shared: bool) -> Value {
    json!({ "name": name, "kmsType": "local-kms", "kmsKeyId": "local-key", "shared": shared })
}

async fn create_kek(h: &Harness, name: &str, shared: bool) -> Value {
    h.post(KEKS, &kek_body(name, shared)).await.ok_json(200)
}

async fn create_dek(h: &Harness, kek: &str, subject: &str, body: Value) -> Value {
    h.post(&format!("{KEKS}/{kek}/deks/{}", enc(subject)), &body).await.ok_json(200)
}

async fn no_content(h: &Harness, method: Method, path: &str) {
    let response = h.send(method, path, None, None).await;
    assert_eq!(response.status, 204, "{path}: {}", response.text);
}

/// Create, read, list, update, soft and permanent delete and undelete of a KEK, with Confluent's
/// entity fields (`kmsProps` always, `doc` when set, `deleted` only when true).
async fn kek_lifecycle(h: &Harness) {
    let created = create_kek(h, "orders", false).await;
    assert_eq!(created["name"], "orders");
    assert_eq!(created["kmsType"], "local-kms");
    assert_eq!(created["kmsKeyId"], "local-key");
    assert_eq!(created["kmsProps"], json!({}));
    assert_eq!(created["shared"], false);
    assert!(created["ts"].as_i64().is_some_and(|ts| ts > 0), "{created}");
    assert!(created.get("doc").is_none() && created.get("deleted").is_none(), "{created}");
    assert_eq!(h.get(&format!("{KEKS}/orders")).await.ok_json(200), created);

    h.post(KEKS, &kek_body("orders", false)).await.assert_error(409, 40971);
    let aws = json!({ "name": "aws", "kmsType": "AWS", "kmsKeyId": "arn:aws:kms:us-east-1:111122223333:key/k" });
    assert_eq!(h.post(KEKS, &aws).await.ok_json(200)["kmsType"], "aws-kms", "kmsType normalised");
    create_kek(h, "payments", false).await;
    assert_eq!(strings(&h.get(KEKS).await.ok_json(200)), ["aws", "orders", "payments"]);
    assert_eq!(strings(&h.get(&format!("{KEKS}?offset=1&limit=1")).await.ok_json(200)), ["orders"]);

    let update = json!({ "doc": "order keys", "kmsProps": { "b": "2", "a": "1" } });
    let updated = h.put(&format!("{KEKS}/orders"), &update).await.ok_json(200);
    assert_eq!(updated["doc"], "order keys");
    assert_eq!(serde_json::to_string(&updated["kmsProps"]).ok().as_deref(), Some(r#"{"a":"1","b":"2"}"#));
    let cleared = h.put(&format!("{KEKS}/orders"), &json!({ "doc": null })).await.ok_json(200);
    assert!(cleared.get("doc").is_none(), "null clears: {cleared}");
    assert_eq!(cleared["kmsProps"], json!({ "a": "1", "b": "2" }), "absent keeps: {cleared}");

    h.delete(&format!("{KEKS}/payments?permanent=true")).await.assert_error(404, 40471);
    no_content(h, Method::DELETE, &format!("{KEKS}/payments")).await;
    h.get(&format!("{KEKS}/payments")).await.assert_error(404, 40470);
    assert_eq!(h.get(&format!("{KEKS}/payments?deleted=true")).await.ok_json(200)["deleted"], true);
    assert_eq!(strings(&h.get(KEKS).await.ok_json(200)), ["aws", "orders"]);
    assert_eq!(strings(&h.get(&format!("{KEKS}?deleted=true")).await.ok_json(200)), ["aws", "orders", "payments"]);
    h.put(&format!("{KEKS}/payments"), &json!({ "doc": "x" })).await.assert_error(404, 40470);
    no_content(h, Method::POST, &format!("{KEKS}/payments/undelete")).await;
    assert!(h.get(&format!("{KEKS}/payments")).await.ok_json(200).get("deleted").is_none());
    no_content(h, Method::DELETE, &format!("{KEKS}/payments")).await;
    no_content(h, Method::DELETE, &format!("{KEKS}/payments?permanent=true")).await;
    h.get(&format!("{KEKS}/payments?deleted=true")).await.assert_error(404, 40470);
    h.delete(&format!("{KEKS}/payments")).await.assert_error(404, 40470);
    h.post(&format!("{KEKS}/payments/undelete"), &json!({})).await.assert_error(404, 40470);
}

/// Bad KEK input is 422 / 42271 naming the field; bad bodies are 400.
async fn kek_input_errors(h: &Harness) {
    let cases = [
        (json!({ "name": "9bad", "kmsType": "local-kms", "kmsKeyId": "k" }), "'name'"),
        (json!({ "kmsType": "local-kms", "kmsKeyId": "k" }), "'name'"),
        (json!({ "name": "k", "kmsType": "local-kms" }), "'kmsKeyId'"),
        (json!({ "name": "k", "kmsType": "local-kms", "kmsKeyId": "" }), "'kmsKeyId'"),
        (json!({ "name": "k", "kmsKeyId": "k" }), "'kmsType'"),
        (json!({ "name": "k", "kmsType": "aws-kms", "kmsKeyId": "not-an-arn" }), "'kmsKeyId'"),
    ];
    for (body, field) in cases {
        let message = h.post(KEKS, &body).await.assert_error(422, 42271);
        assert_eq!(message, format!("Invalid or missing value for field {field} of key"), "{body}");
    }
    h.post(KEKS, &json!({ "name": "k", "kmsType": "local-kms", "kmsKeyId": "k", "shared": "yes" }))
        .await
        .assert_error(400, 400);
    h.get(&format!("{KEKS}/bad.name")).await.assert_error(422, 42271);
    h.get(&format!("{KEKS}/missing")).await.assert_error(404, 40470);
}

/// Fields too large for any store (a DynamoDB key holds 1024 bytes, an item 400 KB) are 422 /
/// 42271 naming the field on every backend, never a storage error, and nothing is written.
async fn oversized_fields_are_refused(h: &Harness) {
    let big = "x".repeat(16 * 1024 + 1);
    let cases = [
        (json!({ "name": "k", "kmsType": "local-kms", "kmsKeyId": "k", "doc": big }), "'doc'"),
        (json!({ "name": "k", "kmsType": "local-kms", "kmsKeyId": "k", "kmsProps": { "p": big } }), "'kmsProps'"),
    ];
    for (body, field) in cases {
        let message = h.post(KEKS, &body).await.assert_error(422, 42271);
        assert_eq!(message, format!("Invalid or missing value for field {field} of key"));
    }
    h.get(&format!("{KEKS}/k")).await.assert_error(404, 40470);
    create_kek(h, "k", false).await;
    let subject = "s".repeat(1001);
    let path = format!("{KEKS}/k/deks/{subject}");
    let message = h.post(&path, &json!({ "encryptedKeyMaterial": "AAAA" })).await.assert_error(422, 42271);
    assert_eq!(message, "Invalid or missing value for field 'subject' of key");
    assert_eq!(h.get(&format!("{KEKS}/k/deks")).await.ok_json(200), json!([]), "no DEK was written");
}

/// DEKs under a non-shared KEK: the client's wrapped key is stored as sent; versions, listings,
/// deletes and undeletes as Confluent.
async fn client_wrapped_deks(h: &Harness) {
    create_kek(h, "k", false).await;
    let subject = "orders-value";
    let path = |rest: &str| format!("{KEKS}/k/deks/{subject}{rest}");
    let first = create_dek(h, "k", subject, json!({ "encryptedKeyMaterial": "d3JhcHBlZDE=" })).await;
    assert_eq!(
        (&first["kekName"], &first["subject"], &first["version"], &first["algorithm"]),
        (&json!("k"), &json!(subject), &json!(1), &json!("AES256_GCM")),
    );
    assert_eq!(first["encryptedKeyMaterial"], "d3JhcHBlZDE=");
    assert!(first.get("keyMaterial").is_none() && first.get("deleted").is_none(), "{first}");
    let second = json!({ "version": 2, "encryptedKeyMaterial": "d3JhcHBlZDI=" });
    assert_eq!(create_dek(h, "k", subject, second).await["version"], 2);
    // The deprecated form names the subject in the body.
    let other = json!({ "subject": "payments-value", "encryptedKeyMaterial": "d3JhcA==" });
    assert_eq!(h.post(&format!("{KEKS}/k/deks"), &other).await.ok_json(200)["subject"], "payments-value");

    assert_eq!(h.get(&path("")).await.ok_json(200)["version"], 1, "the subject path is version 1");
    assert_eq!(h.get(&path("/versions/latest")).await.ok_json(200)["version"], 2);
    assert_eq!(h.get(&path("/versions/-1")).await.ok_json(200)["version"], 2);
    assert_eq!(h.get(&path("/versions/1")).await.ok_json(200), first);
    assert_eq!(h.get(&path("/versions")).await.ok_json(200), json!([1, 2]));
    assert_eq!(h.get(&path("/versions?offset=1")).await.ok_json(200), json!([2]));
    assert_eq!(strings(&h.get(&format!("{KEKS}/k/deks")).await.ok_json(200)), ["orders-value", "payments-value"]);
    assert_eq!(strings(&h.get(&format!("{KEKS}?subjectPrefix=pay")).await.ok_json(200)), ["k"]);
    assert_eq!(h.get(&format!("{KEKS}?subjectPrefix=nothing")).await.ok_json(200), json!([]));

    h.get(&path("/versions/3")).await.assert_error(404, 40470);
    h.get(&path("/versions/abc")).await.assert_error(422, 42202);
    h.get(&path("/versions/0")).await.assert_error(422, 42202);
    h.get(&path("?algorithm=AES256_SIV")).await.assert_error(404, 40470);
    h.get(&path("?algorithm=ROT13")).await.assert_error(404, 404);
    h.get(&format!("{KEKS}/missing/deks/{subject}")).await.assert_error(404, 40470);
    h.post(&path(""), &json!({ "encryptedKeyMaterial": "d3JhcHBlZDE=" })).await.assert_error(409, 40971);
    h.post(&path(""), &json!({ "version": 3 })).await.assert_error(422, 42271);
    h.post(&path(""), &json!({ "version": 3, "encryptedKeyMaterial": "%%" })).await.assert_error(422, 42271);
    h.post(&path(""), &json!({ "algorithm": "ROT13" })).await.assert_error(400, 400);
    h.delete(&format!("{KEKS}/k")).await.assert_error(422, 42272);

    no_content(h, Method::DELETE, &path("/versions/2")).await;
    assert_eq!(h.get(&path("/versions")).await.ok_json(200), json!([1]));
    assert_eq!(h.get(&path("/versions?deleted=true")).await.ok_json(200), json!([1, 2]));
    assert_eq!(h.get(&path("/versions/2?deleted=true")).await.ok_json(200)["deleted"], true);
    h.get(&path("/versions/2")).await.assert_error(404, 40470);
    no_content(h, Method::POST, &path("/versions/2/undelete")).await;
    assert_eq!(h.get(&path("/versions")).await.ok_json(200), json!([1, 2]));

    h.delete(&path("?permanent=true")).await.assert_error(404, 40471);
    no_content(h, Method::DELETE, &path("")).await;
    assert_eq!(strings(&h.get(&format!("{KEKS}/k/deks")).await.ok_json(200)), ["payments-value"]);
    no_content(h, Method::POST, &path("/undelete")).await;
    assert_eq!(h.get(&path("/versions")).await.ok_json(200), json!([1, 2]));
    no_content(h, Method::DELETE, &path("")).await;
    no_content(h, Method::DELETE, &path("?permanent=true")).await;
    assert_eq!(h.get(&path("/versions?deleted=true")).await.ok_json(200), json!([]), "gone, as in Confluent");
    h.get(&path("/versions/1?deleted=true")).await.assert_error(404, 40470);

    // A deleted KEK refuses DEK undeletes (40472) and creations (40470).
    no_content(h, Method::DELETE, &format!("{KEKS}/k/deks/payments-value")).await;
    no_content(h, Method::DELETE, &format!("{KEKS}/k")).await;
    h.post(&format!("{KEKS}/k/deks/payments-value/undelete"), &json!({})).await.assert_error(404, 40472);
    h.post(&path(""), &json!({ "encryptedKeyMaterial": "d3JhcA==" })).await.assert_error(404, 40470);
    h.delete(&format!("{KEKS}/k?permanent=true")).await.assert_error(422, 42272);
}

/// A shared `local-kms` KEK: the registry generates the DEK, stores it wrapped by the KEK's KMS,
/// and answers the plaintext key material (a Tink AES256-GCM key) to creators and readers.
async fn shared_kek_generates_deks(h: &Harness) {
    let created = h.post(&format!("{KEKS}?testSharing=true"), &kek_body("shared", true)).await.ok_json(200);
    assert_eq!(created["shared"], true);
    let dek = create_dek(h, "shared", "users-value", json!({})).await;
    let key_material = BASE64.decode(dek["keyMaterial"].as_str().unwrap_or_default()).unwrap_or_default();
    assert_eq!((key_material.first(), key_material.len()), (Some(&0x1a), 34), "{dek}");
    let wrapped = BASE64.decode(dek["encryptedKeyMaterial"].as_str().unwrap_or_default()).unwrap_or_default();
    let kek: Kek = serde_json::from_value(created.clone()).unwrap_or_else(|error| panic!("{error}: {created}"));
    let local = LocalKms::new(LOCAL_KMS_SECRET).unwrap_or_else(|error| panic!("{error}"));
    let unwrapped = local.decrypt(&kek, &wrapped).await.unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(unwrapped, key_material, "stored wrapped by local-kms, readable with the same secret");

    let read = h.get(&format!("{KEKS}/shared/deks/users-value/versions/latest")).await.ok_json(200);
    assert_eq!(read["keyMaterial"], dek["keyMaterial"]);
    let siv = create_dek(h, "shared", "users-value", json!({ "algorithm": "AES256_SIV" })).await;
    assert_eq!(BASE64.decode(siv["keyMaterial"].as_str().unwrap_or_default()).map(|k| k.len()).ok(), Some(66));
    let rewrapped = h.post(&format!("{KEKS}/shared/deks/users-value?rewrap=true"), &json!({})).await.ok_json(200);
    assert_eq!(rewrapped["keyMaterial"], dek["keyMaterial"], "same key");
    assert_ne!(rewrapped["encryptedKeyMaterial"], dek["encryptedKeyMaterial"], "wrapped anew");
    let supplied = json!({ "encryptedKeyMaterial": "d3JhcA==" });
    h.post(&format!("{KEKS}/shared/deks/users-value"), &supplied).await.assert_error(409, 40971);

    assert_eq!(h.post(&format!("{KEKS}/shared/test"), &json!({})).await.ok_json(200)["name"], "shared");
    create_kek(h, "private", false).await;
    h.post(&format!("{KEKS}/private/test"), &json!({})).await.assert_error(422, 42271);
    // A shared KEK of a KMS this registry does not have: stored, but no DEK can be generated.
    let gcp = json!({ "name": "gcp", "kmsType": "gcp-kms", "kmsKeyId": "projects/p/keys/k", "shared": true });
    h.post(KEKS, &gcp).await.ok_json(200);
    let message = h.post(&format!("{KEKS}/gcp/deks/s"), &json!({})).await.assert_error(500, 50070);
    assert!(message.contains("gcp-kms"), "{message}");
    h.post(
        &format!("{KEKS}?testSharing=true"),
        &json!({ "name": "gcp2", "kmsType": "gcp-kms", "kmsKeyId": "projects/p", "shared": true }),
    )
    .await
    .assert_error(500, 50070);
}

/// Eight clients create version 1 of one DEK at once: one wins (200), the others get 409 / 40971,
/// and every reader sees the winner's key.
async fn concurrent_dek_creates_have_one_winner(h: &Harness) {
    create_kek(h, "race", true).await;
    let path = format!("{KEKS}/race/deks/race-value");
    let empty = json!({});
    let answers = futures::future::join_all((0..8).map(|_| h.post(&path, &empty))).await;
    let winners: Vec<Value> =
        answers.iter().filter(|answer| answer.status == 200).map(|answer| answer.json()).collect();
    assert_eq!(winners.len(), 1, "{:?}", answers.iter().map(|a| (a.status, &a.text)).collect::<Vec<_>>());
    for answer in answers.iter().filter(|answer| answer.status != 200) {
        answer.assert_error(409, 40971);
    }
    let stored = h.get(&format!("{path}/versions/1")).await.ok_json(200);
    assert_eq!(stored["keyMaterial"], winners[0]["keyMaterial"]);
}

api_tests::api_cases!(
    kek_lifecycle,
    kek_input_errors,
    oversized_fields_are_refused,
    client_wrapped_deks,
    shared_kek_generates_deks,
    concurrent_dek_creates_have_one_winner
);

/// With authentication on: KEK reads need `read`, KEK writes `admin`; DEKs are judged on their
/// subject (scopes apply), creating them needs `write`, a permanent delete `admin`; a scoped
/// user's DEK subject listing holds its own subjects only.
async fn dek_registry_access(h: &Harness) {
    let send = |user: &'static str, method: Method, path: String, body: Option<Value>| async move {
        h.send_as(user, method, &path, body.as_ref()).await
    };
    send("writer", Method::POST, KEKS.into(), Some(kek_body("k", false))).await.assert_error(403, 40301);
    send("admin", Method::POST, KEKS.into(), Some(kek_body("k", false))).await.ok_json(200);
    send("reader", Method::GET, format!("{KEKS}/k"), None).await.ok_json(200);
    send("team-a", Method::PUT, format!("{KEKS}/k"), Some(json!({ "doc": "x" }))).await.assert_error(403, 40301);
    send("writer", Method::DELETE, format!("{KEKS}/k"), None).await.assert_error(403, 40301);

    let material = json!({ "encryptedKeyMaterial": "d3JhcA==" });
    let dek = |subject: &str| format!("{KEKS}/k/deks/{subject}");
    send("reader", Method::POST, dek("team-a.orders"), Some(material.clone())).await.assert_error(403, 40301);
    send("team-a", Method::POST, dek("team-b.orders"), Some(material.clone())).await.assert_error(403, 40301);
    let in_body = json!({ "subject": "team-b.orders", "encryptedKeyMaterial": "d3JhcA==" });
    send("team-a", Method::POST, format!("{KEKS}/k/deks"), Some(in_body)).await.assert_error(403, 40301);
    send("team-a", Method::POST, dek("team-a.orders"), Some(material.clone())).await.ok_json(200);
    send("writer", Method::POST, dek("team-b.orders"), Some(material.clone())).await.ok_json(200);

    send("team-a", Method::GET, dek("team-a.orders"), None).await.ok_json(200);
    send("team-a", Method::GET, dek("team-b.orders"), None).await.assert_error(403, 40301);
    let listed = send("team-a", Method::GET, format!("{KEKS}/k/deks"), None).await.ok_json(200);
    assert_eq!(strings(&listed), ["team-a.orders"]);
    let all = send("reader", Method::GET, format!("{KEKS}/k/deks"), None).await.ok_json(200);
    assert_eq!(strings(&all), ["team-a.orders", "team-b.orders"]);

    let status = send("team-a", Method::DELETE, dek("team-a.orders"), None).await.status;
    assert_eq!(status, 204);
    send("team-a", Method::DELETE, format!("{}?permanent=true", dek("team-a.orders")), None)
        .await
        .assert_error(403, 40301);
    let status = send("admin", Method::DELETE, format!("{}?permanent=true", dek("team-a.orders")), None).await.status;
    assert_eq!(status, 204);
}

mod authenticated {
    use super::dek_registry_access;
    api_tests::api_cases!(authenticated: dek_registry_access);
}

/// A shared `aws-kms` KEK whose key KMS refuses (here: no such key in the account): generating a
/// DEK answers 403 / 40370 with KMS's reason naming the key, never a 5xx.
async fn an_aws_kms_refusal_is_forbidden_not_a_server_error(h: &Harness) {
    let arn = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000";
    let kek = json!({ "name": "refused", "kmsType": "aws-kms", "kmsKeyId": arn, "shared": true });
    h.post(KEKS, &kek).await.ok_json(200);
    let message = h.post(&format!("{KEKS}/refused/deks/orders-value"), &json!({})).await.assert_error(403, 40370);
    assert!(message.contains(arn), "{message}");
    h.get(&format!("{KEKS}/refused/deks/orders-value")).await.assert_error(404, 40470);
}

/// `aws-kms` exists on the AWS backends only.
mod aws_kms {
    use super::an_aws_kms_refusal_is_forbidden_not_a_server_error;
    api_tests::api_cases!(@emulated aws, api_tests::aws::AwsCase::start_as(api_tests::Serving::Open);
        an_aws_kms_refusal_is_forbidden_not_a_server_error);
    api_tests::api_cases!(@emulated lambda, api_tests::aws::AwsCase::start_lambda_as(1, api_tests::Serving::Open);
        an_aws_kms_refusal_is_forbidden_not_a_server_error);
}
