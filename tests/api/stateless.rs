//! The AWS backend's promise to stateless functions: two instances over one table and bucket, each
//! with its own `Registry` and warm `CachedStore`, answer as one registry. No other backend can
//! share its storage between processes, so these cases run on AWS only.

use api_tests::Harness;
use api_tests::aws::{AwsCase, catch};
use api_tests::client::avro;
use api_tests::schemas::{distinct, user_type_changed, user_v1, user_v2_with_default};
use futures::future::join_all;
use std::collections::{BTreeSet, HashSet};
use std::future::Future;

/// Runs `case` with two instances on a fresh table and bucket, cleaning up whatever happens.
async fn with_two_instances<F, Fut>(case: F)
where
    F: FnOnce(Harness, Harness) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(aws) = AwsCase::start().await else { return };
    let first = aws.instance().await;
    let second = aws.instance().await;
    let outcome = catch(async move {
        case(first, second).await;
    })
    .await;
    aws.finish(outcome).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_on_one_instance_are_read_on_the_other() {
    with_two_instances(|a, b| async move {
        let v1 = a.register("orders-value", &user_v1()).await;
        assert_eq!(b.subjects("").await, ["orders-value"]);
        assert_eq!(b.lookup("orders-value", &user_v1()).await.ok_json(200)["id"], v1);
        assert_eq!(b.get(&format!("/schemas/ids/{v1}")).await.ok_json(200)["schema"], user_v1());

        let v2 = b.register("orders-value", &user_v2_with_default()).await;
        assert!(v2 > v1, "the ID counter is shared: {v1} then {v2}");
        assert_eq!(a.versions("orders-value", "").await, [1, 2]);
        assert_eq!(a.register("orders-value", &user_v2_with_default()).await, v2, "re-registering is idempotent");
        assert_eq!(a.get(&format!("/schemas/ids/{v2}?fetchMaxId=true")).await.ok_json(200)["maxId"], v2);
        a.stop().await;
        b.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_mode_and_deletes_apply_across_instances() {
    with_two_instances(|a, b| async move {
        a.register("s", &user_v1()).await;
        b.set_config(Some("s"), "FULL").await.ok_json(200);
        assert_eq!(a.get("/config/s").await.ok_json(200)["compatibilityLevel"], "FULL");
        let refused = a.register_raw("s", &avro(&user_type_changed())).await;
        assert_eq!(refused.status, 409, "FULL set on the other instance applies: {}", refused.text);

        b.set_mode(Some("s"), "READONLY", "").await.ok_json(200);
        a.register_raw("s", &avro(&user_v2_with_default())).await.assert_error(422, 42205);
        b.set_mode(Some("s"), "READWRITE", "").await.ok_json(200);
        a.register("s", &user_v2_with_default()).await;

        b.delete_version("s", "2", false).await.ok_json(200);
        assert_eq!(a.versions("s", "").await, [1]);
        a.lookup("s", &user_v2_with_default()).await.assert_error(404, 40403);
        a.delete_subject("s", false).await.ok_json(200);
        b.delete_subject("s", true).await.ok_json(200);
        a.get("/subjects/s/versions").await.assert_error(404, 40401);
        assert!(a.subjects("?deleted=true").await.is_empty());
        a.stop().await;
        b.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_on_two_instances_keep_ids_unique_and_versions_dense() {
    const WRITERS: usize = 12;
    with_two_instances(|a, b| async move {
        a.set_config(Some("s"), "NONE").await.ok_json(200);
        let calls = (0..WRITERS).map(|n| {
            let instance = if n % 2 == 0 { &a } else { &b };
            async move {
                let body = instance.register_raw("s", &avro(&distinct(n))).await.ok_json(200);
                (body["id"].as_i64(), body["version"].as_i64())
            }
        });
        let answers = join_all(calls).await;
        let ids: HashSet<Option<i64>> = answers.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), WRITERS, "one ID per schema: {answers:?}");
        let versions: BTreeSet<Option<i64>> = answers.iter().map(|(_, version)| *version).collect();
        let dense: BTreeSet<Option<i64>> = (1..=WRITERS as i64).map(Some).collect();
        assert_eq!(versions, dense, "versions 1..={WRITERS}: {answers:?}");
        for (n, (id, _)) in answers.iter().enumerate() {
            let other = if n % 2 == 0 { &b } else { &a };
            assert_eq!(other.lookup("s", &distinct(n)).await.ok_json(200)["id"].as_i64(), *id);
        }
        a.stop().await;
        b.stop().await;
    })
    .await;
}

/// `GET path` on `h`, with `If-None-Match: tag` when given: the status, `ETag`, `Cache-Control` and
/// body, what a caching proxy in front of the instance sees.
async fn proxied_get(h: &Harness, path: &str, tag: Option<&str>) -> (u16, Option<String>, String, String) {
    let mut request = h.http().get(format!("{}{path}", h.base_url()));
    if let Some(tag) = tag {
        request = request.header(reqwest::header::IF_NONE_MATCH, tag);
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let header = |name| response.headers().get(name).and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok());
    let etag = header(reqwest::header::ETAG).map(str::to_string);
    let cache_control = header(reqwest::header::CACHE_CONTROL).unwrap_or_default().to_string();
    let status = response.status().as_u16();
    (status, etag, cache_control, response.text().await.unwrap_or_default())
}

/// Whether a shared cache may answer with a stored response under `cache_control` without asking the
/// origin first (RFC 9111: fresh for a positive `max-age`/`s-maxage` and no `no-cache`/`no-store`).
fn reusable_without_revalidation(cache_control: &str) -> bool {
    let directives: Vec<String> = cache_control.split(',').map(|d| d.trim().to_ascii_lowercase()).collect();
    if directives.iter().any(|d| d == "no-cache" || d == "no-store") {
        return false;
    }
    directives
        .iter()
        .filter_map(|d| d.strip_prefix("s-maxage=").or_else(|| d.strip_prefix("max-age=")))
        .any(|age| age.parse::<u64>().is_ok_and(|age| age > 0))
}

/// No cache answers a body an ID no longer names: after instance `b` has answered an ID (and so
/// remembers it), the ID's schema is hard-deleted and IMPORT through `a` rebinds the ID to another
/// schema; `b`'s very next answer for the ID is the new schema, and a proxy in front of `b` that
/// kept the old answer may not reuse it unrevalidated, and revalidating it gets the new schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_rebound_by_import_is_never_answered_with_its_old_schema_by_another_instance() {
    with_two_instances(|a, b| async move {
        let id = a.register("old", &user_v1()).await;
        let path = format!("/schemas/ids/{id}");
        let (status, old_tag, cache_control, old_body) = proxied_get(&b, &path, None).await;
        assert_eq!(status, 200, "{old_body}");
        let old_tag = old_tag.unwrap_or_else(|| panic!("{path} answers an ETag"));
        assert!(
            !reusable_without_revalidation(&cache_control) && !cache_control.contains("immutable"),
            "a proxy could serve {path} unrevalidated after a rebind: Cache-Control {cache_control:?}"
        );
        let (status, _, _, _) = proxied_get(&b, &path, Some(&old_tag)).await;
        assert_eq!(status, 304, "unchanged, revalidation is a 304");

        a.delete_subject("old", false).await.ok_json(200);
        a.delete_subject("old", true).await.ok_json(200);
        a.set_mode(None, "IMPORT", "").await.ok_json(200);
        let restored = serde_json::json!({"schema": distinct(1), "id": id, "version": 1});
        assert_eq!(a.register_body("restored", &restored).await, id);

        assert_eq!(b.get_version("restored", "1").await.ok_json(200)["id"], id, "b sees the rebind");
        assert_eq!(b.get(&path).await.ok_json(200)["schema"], distinct(1), "b answers the schema the ID names now");
        let (status, new_tag, _, body) = proxied_get(&b, &path, Some(&old_tag)).await;
        assert_eq!(status, 200, "a proxy revalidating the old answer gets the new schema, not a 304: {body}");
        assert_ne!(new_tag.as_deref(), Some(old_tag.as_str()), "the ETag names the schema the ID names now");
        let guid = a.get(&path).await.ok_json(200)["guid"].clone();
        if let Some(guid) = guid.as_str() {
            assert_eq!(b.get(&format!("/schemas/guids/{guid}")).await.ok_json(200)["schema"], distinct(1));
        }
        a.stop().await;
        b.stop().await;
    })
    .await;
}
