//! Bounds and trust rules of the DEK registry: a KEK's `kmsType` is bounded like its other fields,
//! replacing a DEK's wrapped key (`rewrap` with `encryptedKeyMaterial`) needs the admin role, and the
//! KEK listing by `subjectPrefix` is bounded and never answers about subjects outside the caller's
//! scope.

use api_tests::Harness;
use serde_json::json;

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

