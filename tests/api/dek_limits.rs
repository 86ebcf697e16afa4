//! Bounds and trust rules of the DEK registry: a KEK's `kmsType` is bounded like its other fields,
//! replacing a DEK's wrapped key (`rewrap` with `encryptedKeyMaterial`) needs the admin role, and the
//! KEK listing by `subjectPrefix` is bounded and never answers about subjects outside the caller's
//! scope.

use api_tests::Harness;
use api_tests::client::strings;
use reqwest::Method;
use serde_json::{Value, json};

const KEKS: &str = "/dek-registry/v1/keks";

/// A `kmsType` over 256 bytes is 422 / 42271 naming the field, as an oversized `kmsKeyId`, `doc`
/// or `kmsProps` is (Confluent sets no bound; see `registry_dek::service::validate`).
async fn an_oversized_kms_type_is_refused(h: &Harness) {
    let long = "x".repeat(257);
    let kek = json!({ "name": "k", "kmsType": long, "kmsKeyId": "key" });
    let message = h.post(KEKS, &kek).await.assert_error(422, 42271);
    assert!(message.contains("'kmsType'"), "{message}");
    h.get(&format!("{KEKS}/k")).await.assert_error(404, 40470);
    let fits = json!({ "name": "k", "kmsType": "x".repeat(256), "kmsKeyId": "key" });
    assert_eq!(h.post(KEKS, &fits).await.ok_json(200)["name"], "k");
}

api_tests::api_cases!(an_oversized_kms_type_is_refused);

async fn send(h: &Harness, user: &str, method: Method, path: &str, body: Option<Value>) -> api_tests::client::Response {
    h.send_as(user, method, path, body.as_ref()).await
}

/// Confluent's `AbstractDekRegistry.createDek` lets `rewrap=true` overwrite an existing version's
/// `encryptedKeyMaterial` under a non-shared KEK (the registry cannot check that the new material wraps
/// the same key): here that needs the admin role on the subject, so a writer cannot make data encrypted
/// under the DEK undecryptable; the material it replaces stays in the record.
async fn replacing_a_deks_wrapped_key_needs_admin(h: &Harness) {
    let kek = json!({ "name": "k", "kmsType": "local-kms", "kmsKeyId": "local-key" });
    send(h, "admin", Method::POST, KEKS, Some(kek)).await.ok_json(200);
    let dek = format!("{KEKS}/k/deks/team-a.orders");
    let first = json!({ "encryptedKeyMaterial": "d3JhcA==" });
    send(h, "writer", Method::POST, &dek, Some(first)).await.ok_json(200);
    let second = json!({ "encryptedKeyMaterial": "bmV3" });
    let rewrap = format!("{dek}?rewrap=true");
    send(h, "writer", Method::POST, &rewrap, Some(second.clone())).await.assert_error(403, 40301);
    send(h, "team-a", Method::POST, &rewrap, Some(second.clone())).await.assert_error(403, 40301);
    let kept = send(h, "reader", Method::GET, &dek, None).await.ok_json(200);
    assert_eq!(kept["encryptedKeyMaterial"], "d3JhcA==", "{kept}");
    let deprecated = json!({ "subject": "team-a.orders", "encryptedKeyMaterial": "bmV3" });
    let path = format!("{KEKS}/k/deks?rewrap=true");
    send(h, "writer", Method::POST, &path, Some(deprecated)).await.assert_error(403, 40301);
    send(h, "team-a-admin", Method::POST, &rewrap, Some(second)).await.ok_json(200);
    let replaced = send(h, "reader", Method::GET, &dek, None).await.ok_json(200);
    assert_eq!(replaced["encryptedKeyMaterial"], "bmV3", "{replaced}");
}

/// Most `subjectPrefix` values one KEK listing takes.
const MAX_PREFIXES: usize = 16;

/// Confluent `AbstractDekRegistry.getKekNames`: the KEKs with a DEK whose subject starts with one of
/// the prefixes. Here a prefix counts only inside the caller's scope (a scoped reader learns nothing
/// of other subjects' DEKs), and more than [`MAX_PREFIXES`] prefixes are refused before any read.
async fn kek_listing_by_subject_prefix_is_scoped_and_bounded(h: &Harness) {
    for name in ["ka", "kb"] {
        let kek = json!({ "name": name, "kmsType": "local-kms", "kmsKeyId": "local-key" });
        send(h, "admin", Method::POST, KEKS, Some(kek)).await.ok_json(200);
    }
    let material = json!({ "encryptedKeyMaterial": "d3JhcA==" });
    send(h, "writer", Method::POST, &format!("{KEKS}/ka/deks/team-a.x"), Some(material.clone())).await.ok_json(200);
    send(h, "writer", Method::POST, &format!("{KEKS}/kb/deks/team-b.x"), Some(material)).await.ok_json(200);
    let names = |user: &'static str, query: &'static str| async move {
        strings(&send(h, user, Method::GET, &format!("{KEKS}{query}"), None).await.ok_json(200))
    };
    assert_eq!(names("reader", "?subjectPrefix=team-b.").await, ["kb"]);
    assert_eq!(names("reader", "?subjectPrefix=team").await, ["ka", "kb"]);
    assert_eq!(names("reader", "?subjectPrefix=team-a.x&subjectPrefix=team-b.x").await, ["ka", "kb"]);
    assert_eq!(names("team-a-reader", "?subjectPrefix=team-b.").await, Vec::<String>::new());
    assert_eq!(names("team-a-reader", "?subjectPrefix=team").await, ["ka"]);
    assert_eq!(names("team-a-reader", "?subjectPrefix=team-a.x").await, ["ka"]);
    assert_eq!(names("team-a-reader", "").await, ["ka", "kb"], "KEK names are not subject-scoped");
    let many: String = (0..=MAX_PREFIXES).map(|i| format!("&subjectPrefix=p{i}")).collect();
    let answer = send(h, "reader", Method::GET, &format!("{KEKS}?deleted=false{many}"), None).await;
    let message = answer.assert_error(422, 42271);
    assert!(message.contains("'subjectPrefix'"), "{message}");
}

mod authenticated {
    use super::{kek_listing_by_subject_prefix_is_scoped_and_bounded, replacing_a_deks_wrapped_key_needs_admin};
    api_tests::api_cases!(
        authenticated: replacing_a_deks_wrapped_key_needs_admin,
        kek_listing_by_subject_prefix_is_scoped_and_bounded,
    );
}
