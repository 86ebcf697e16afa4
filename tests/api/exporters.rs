//! Schema linking's API (`/exporters`) over the wire, on every backend (memory, embedded, AWS in
//! process, and the Lambda function): Confluent's answers and error codes for every endpoint, the
//! state rules (changes need the exporter paused), credentials never answered (on AWS: stored only
//! as KMS ciphertext), and admin-only access.

use api_tests::Harness;
use api_tests::client::strings;
use reqwest::Method;
use serde_json::{Value, json};

const SECRET: &str = "s3cret-password";

fn exporter(name: &str) -> Value {
    json!({
        "name": name,
        "contextType": "CUSTOM",
        "context": ".team-a",
        "subjects": ["orders-*"],
        "subjectRenameFormat": "${subject}",
        "config": {
            "schema.registry.url": "http://127.0.0.1:9",
            "basic.auth.credentials.source": "USER_INFO",
            "basic.auth.user.info": format!("alice:{SECRET}"),
        },
    })
}

fn path(name: &str, tail: &str) -> String {
    format!("/exporters/{name}{tail}")
}

async fn put_empty(h: &Harness, path: &str) -> api_tests::Response {
    h.send(Method::PUT, path, None, None).await
}

/// Create, list, read (credentials masked), status, pause, update, config, reset, resume, delete.
async fn exporter_lifecycle(h: &Harness) {
    assert_eq!(h.get("/exporters").await.ok_json(200), json!([]));
    assert_eq!(h.post("/exporters", &exporter("to-b")).await.ok_json(200), json!({ "name": "to-b" }));
    assert_eq!(strings(&h.get("/exporters").await.ok_json(200)), ["to-b"]);

    let read = h.get(&path("to-b", "")).await;
    assert!(!read.text.contains(SECRET), "credentials are never answered: {}", read.text);
    let described = read.ok_json(200);
    assert_eq!(described["name"], "to-b");
    assert_eq!(described["contextType"], "CUSTOM");
    assert_eq!(described["context"], ".team-a");
    assert_eq!(described["subjects"], json!(["orders-*"]));
    assert_eq!(described["subjectRenameFormat"], "${subject}");
    assert_eq!(described["config"]["schema.registry.url"], "http://127.0.0.1:9");
    assert_eq!(described["config"]["basic.auth.credentials.source"], "USER_INFO");
    assert_eq!(described["config"]["basic.auth.user.info"], "[hidden]");
    assert_eq!(h.get(&path("to-b", "/config")).await.ok_json(200), described["config"]);

    let status = h.get(&path("to-b", "/status")).await.ok_json(200);
    assert_eq!(status["name"], "to-b");
    assert_eq!(status["state"], "STARTING");
    assert_eq!(status["offset"], 0);
    assert!(status["ts"].as_i64().is_some_and(|ts| ts > 0), "{status}");
    assert!(status.get("trace").is_none(), "{status}");

    // Changes need the exporter paused.
    h.put(&path("to-b", ""), &json!({ "subjects": ["payments-*"] })).await.assert_error(409, 40963);
    h.put(&path("to-b", "/config"), &json!({ "schema.registry.url": "http://x:1" })).await.assert_error(409, 40963);
    put_empty(h, &path("to-b", "/reset")).await.assert_error(409, 40963);
    put_empty(h, &path("to-b", "/resume")).await.assert_error(409, 40963);

    assert_eq!(put_empty(h, &path("to-b", "/pause")).await.ok_json(200), json!({ "name": "to-b" }));
    assert_eq!(h.get(&path("to-b", "/status")).await.ok_json(200)["state"], "PAUSED");
    assert_eq!(put_empty(h, &path("to-b", "/pause")).await.ok_json(200), json!({ "name": "to-b" }), "again");

    let update = json!({ "subjects": ["payments-*", "orders-value"], "contextType": "AUTO" });
    assert_eq!(h.put(&path("to-b", ""), &update).await.ok_json(200), json!({ "name": "to-b" }));
    let updated = h.get(&path("to-b", "")).await.ok_json(200);
    assert_eq!(updated["subjects"], json!(["payments-*", "orders-value"]));
    assert_eq!(updated["contextType"], "AUTO");
    assert_eq!(updated["config"]["basic.auth.user.info"], "[hidden]", "absent config keeps the credentials");

    // A config sent back with the mask keeps the stored credential for the same destination; the
    // rest is replaced.
    let config = json!({ "schema.registry.url": "http://127.0.0.1:9", "basic.auth.user.info": "[hidden]" });
    assert_eq!(h.put(&path("to-b", "/config"), &config).await.ok_json(200), json!({ "name": "to-b" }));
    assert_eq!(h.get(&path("to-b", "/config")).await.ok_json(200), config);
    // Another destination drops it: credentials are sent again for a new destination.
    let moved = json!({ "schema.registry.url": "http://127.0.0.1:10", "basic.auth.user.info": "[hidden]" });
    assert_eq!(h.put(&path("to-b", "/config"), &moved).await.ok_json(200), json!({ "name": "to-b" }));
    let kept = h.get(&path("to-b", "/config")).await.ok_json(200);
    assert_eq!(kept, json!({ "schema.registry.url": "http://127.0.0.1:10" }), "the credential is dropped");
    let wrapped = json!({ "config": { "schema.registry.url": "http://127.0.0.1:11" } });
    h.put(&path("to-b", "/config"), &wrapped).await.ok_json(200);
    assert_eq!(h.get(&path("to-b", "/config")).await.ok_json(200), wrapped["config"]);

    assert_eq!(put_empty(h, &path("to-b", "/reset")).await.ok_json(200), json!({ "name": "to-b" }));
    let status = h.get(&path("to-b", "/status")).await.ok_json(200);
    assert_eq!((status["state"].clone(), status["offset"].clone()), (json!("PAUSED"), json!(0)));
    assert_eq!(put_empty(h, &path("to-b", "/resume")).await.ok_json(200), json!({ "name": "to-b" }));
    assert_eq!(h.get(&path("to-b", "/status")).await.ok_json(200)["state"], "STARTING");

    let deleted = h.delete(&path("to-b", "")).await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    h.get(&path("to-b", "")).await.assert_error(404, 40450);
    assert_eq!(h.get("/exporters").await.ok_json(200), json!([]));
}

/// Defaults of a minimal create: AUTO, every subject, the subject's own name.
async fn exporter_defaults(h: &Harness) {
    let minimal = json!({ "name": "all", "config": { "schema.registry.url": "https://dest:8081" } });
    h.post("/exporters", &minimal).await.ok_json(200);
    let described = h.get(&path("all", "")).await.ok_json(200);
    assert_eq!(described["contextType"], "AUTO");
    assert_eq!(described["subjects"], json!(["*"]));
    assert_eq!(described["subjectRenameFormat"], "${subject}");
    assert!(described.get("context").is_none(), "{described}");
    assert_eq!(described["config"], json!({ "schema.registry.url": "https://dest:8081" }));
}

/// Every endpoint of an unknown exporter is 404 / 40450; bad input is Confluent's 4095x.
async fn exporter_errors(h: &Harness) {
    for (method, tail) in [
        (Method::GET, ""),
        (Method::DELETE, ""),
        (Method::GET, "/status"),
        (Method::GET, "/config"),
        (Method::PUT, "/pause"),
        (Method::PUT, "/resume"),
        (Method::PUT, "/reset"),
    ] {
        let message = h.send(method.clone(), &path("nope", tail), None, None).await.assert_error(404, 40450);
        assert!(message.contains("nope"), "{method} {tail}: {message}");
    }
    h.put(&path("nope", ""), &json!({ "subjects": ["a"] })).await.assert_error(404, 40450);
    h.put(&path("nope", "/config"), &json!({ "schema.registry.url": "http://x:1" })).await.assert_error(404, 40450);
    h.put(&path("nope", ""), &exporter("nope")).await.assert_error(404, 40450);

    let with = |change: &dyn Fn(&mut Value)| {
        let mut body = exporter("bad");
        change(&mut body);
        body
    };
    let cases: Vec<(Value, i64)> = vec![
        (with(&|b| b["name"] = Value::Null), 40950),
        (with(&|b| b["name"] = json!("")), 40950),
        (with(&|b| b["name"] = json!("two words")), 40950),
        (with(&|b| b["config"] = Value::Null), 40951),
        (with(&|b| b["config"] = json!({ "basic.auth.user.info": "a:b" })), 40951),
        (with(&|b| b["config"] = json!({ "schema.registry.url": "ftp://x" })), 40951),
        // Credentials never go in a URL; a fragment or a query would pin or bend every call's path.
        (with(&|b| b["config"] = json!({ "schema.registry.url": "http://u:urlpass@x:1" })), 40951),
        (with(&|b| b["config"] = json!({ "schema.registry.url": "http://x:1/#" })), 40951),
        (with(&|b| b["config"] = json!({ "schema.registry.url": "http://x:1/?a=b" })), 40951),
        (with(&|b| b["contextType"] = json!("WEIRD")), 40951),
        (with(&|b| b["context"] = Value::Null), 40951),
        (with(&|b| b["context"] = json!("a:b")), 40951),
        (with(&|b| b["subjects"] = json!([])), 40952),
        (with(&|b| b["subjects"] = json!([""])), 40952),
        (with(&|b| b["subjectRenameFormat"] = json!("")), 40952),
    ];
    for (body, code) in cases {
        let response = h.post("/exporters", &body).await;
        assert_eq!(response.status, 409, "{body}: {}", response.text);
        assert!(!response.text.contains("urlpass"), "a refusal never repeats a password: {}", response.text);
        response.assert_error(409, code);
    }
    assert_eq!(h.get("/exporters").await.ok_json(200), json!([]), "nothing was created");

    h.post("/exporters", &exporter("dup")).await.ok_json(200);
    let message = h.post("/exporters", &exporter("dup")).await.assert_error(409, 40960);
    assert!(message.contains("dup"), "{message}");

    put_empty(h, &path("dup", "/pause")).await.ok_json(200);
    h.put(&path("dup", ""), &json!({ "subjects": [] })).await.assert_error(409, 40952);
    h.put(&path("dup", ""), &json!({ "contextType": "CUSTOM", "context": "" })).await.assert_error(409, 40951);
    h.put(&path("dup", "/config"), &json!({ "other": "x" })).await.assert_error(409, 40951);

    // Malformed bodies: not an object, a config value that is not a scalar, no body.
    h.send(Method::POST, "/exporters", Some(b"[1]".to_vec()), Some("application/json")).await.assert_error(400, 400);
    let nested = with(&|b| b["config"]["x"] = json!({ "y": 1 }));
    h.post("/exporters", &nested).await.assert_error(400, 400);
    h.send(Method::POST, "/exporters", None, Some("application/json")).await.assert_error(422, 422);
}

/// At most 100 exporters: the 101st is 409 / 40964.
async fn exporter_limit(h: &Harness) {
    for index in 0..100 {
        h.post("/exporters", &exporter(&format!("e{index:03}"))).await.ok_json(200);
    }
    h.post("/exporters", &exporter("one-more")).await.assert_error(409, 40964);
    assert_eq!(h.get("/exporters").await.ok_json(200).as_array().map(Vec::len), Some(100));
}

api_tests::api_cases!(exporter_lifecycle, exporter_defaults, exporter_errors, exporter_limit);

/// On AWS a credential is stored as a KMS ciphertext: the exporter's item holds no plaintext, every
/// answer shows `[hidden]`, and the exporters' service (as the exporter function builds it) opens
/// it back through KMS for the destination's client.
mod kms_sealed {
    use super::{SECRET, exporter, path};
    use api_tests::{Backend, Harness};
    use registry_store_aws::exporter_secrets::SEALED_PREFIX;
    use registry_store_aws::exporter_store::exporter_service;

    async fn exporter_credentials_sealed_by_kms(h: &Harness) {
        let target = match h.backend() {
            Backend::Aws(target) | Backend::Lambda(target) => target,
            other => panic!("an AWS backend, not {other:?}"),
        };
        h.post("/exporters", &exporter("sealed")).await.ok_json(200);

        let item = registry_store_aws::testing::exporter_item(&target.sdk, &target.names.table, "sealed").await;
        let raw = format!("{item:?}");
        assert!(!raw.contains(SECRET) && !raw.contains("alice"), "plaintext in the stored item: {raw}");

        let service = exporter_service(&target.env());
        let stored = service.store().exporter("sealed").await.unwrap_or_else(|e| panic!("{e}"));
        let exporter = stored.unwrap_or_else(|| panic!("no record")).value.exporter;
        let sealed = &exporter.config["basic.auth.user.info"];
        assert!(sealed.starts_with(SEALED_PREFIX), "not a KMS ciphertext: {sealed}");
        assert_eq!(exporter.config["basic.auth.credentials.source"], "USER_INFO", "other settings stay plain");

        for tail in ["", "/config"] {
            let answer = h.get(&path("sealed", tail)).await;
            assert!(!answer.text.contains(SECRET), "{tail}: {}", answer.text);
            let config = answer.ok_json(200);
            let config = if tail.is_empty() { &config["config"] } else { &config };
            assert_eq!(config["basic.auth.user.info"], "[hidden]", "{tail}");
        }

        let opened = service.destination_config(&exporter).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opened["basic.auth.user.info"], format!("alice:{SECRET}"), "KMS Decrypt gives the credential back");
    }

    api_tests::api_cases!(@emulated aws, api_tests::aws::AwsCase::start(); exporter_credentials_sealed_by_kms);
    api_tests::api_cases!(@emulated lambda, api_tests::aws::AwsCase::start_lambda(1); exporter_credentials_sealed_by_kms);
}

/// An AWS registry deployed without `REGISTRY_EXPORTER_KMS_KEY` serves exporters without
/// credentials; one carrying a credential is refused with 500 / 50001 and a message naming the
/// variable, and only after what Confluent answers first: an unknown exporter (40450), one not
/// paused (40963), an invalid change (4095x).
mod without_kms_key {
    use super::{exporter, path, put_empty};
    use api_tests::Harness;
    use serde_json::json;

    async fn exporter_credentials_without_kms_key(h: &Harness) {
        let refused = h.post("/exporters", &exporter("sealed")).await.assert_error(500, 50001);
        assert!(refused.contains("REGISTRY_EXPORTER_KMS_KEY"), "{refused}");
        assert_eq!(h.get("/exporters").await.ok_json(200), json!([]), "nothing was created");

        h.put(&path("nope", ""), &exporter("nope")).await.assert_error(404, 40450);
        let with_credential = json!({ "schema.registry.url": "http://x:1", "basic.auth.user.info": "a:b" });
        h.put(&path("nope", "/config"), &with_credential).await.assert_error(404, 40450);

        let plain = json!({ "name": "plain", "config": { "schema.registry.url": "http://127.0.0.1:9" } });
        h.post("/exporters", &plain).await.ok_json(200);
        h.put(&path("plain", "/config"), &with_credential).await.assert_error(409, 40963);
        put_empty(h, &path("plain", "/pause")).await.ok_json(200);
        h.put(&path("plain", "/config"), &json!({ "basic.auth.user.info": "a:b" })).await.assert_error(409, 40951);
        let mut no_subjects = exporter("plain");
        no_subjects["subjects"] = json!([]);
        h.put(&path("plain", ""), &no_subjects).await.assert_error(409, 40952);

        let refused = h.put(&path("plain", "/config"), &with_credential).await.assert_error(500, 50001);
        assert!(refused.contains("REGISTRY_EXPORTER_KMS_KEY"), "{refused}");
        let config = h.get(&path("plain", "/config")).await.ok_json(200);
        assert_eq!(config, json!({ "schema.registry.url": "http://127.0.0.1:9" }), "the refused change is not stored");
        h.put(&path("plain", "/config"), &json!({ "schema.registry.url": "http://x:1" })).await.ok_json(200);
    }

    api_tests::api_cases!(
        @emulated aws, api_tests::aws::AwsCase::start_without_exporter_key(); exporter_credentials_without_kms_key
    );
}

/// With authentication on, every exporter endpoint needs `admin`.
mod access {
    use super::{exporter, path};
    use api_tests::Harness;
    use reqwest::Method;

    async fn exporters_need_admin(h: &Harness) {
        let body = exporter("guarded");
        for user in ["reader", "writer", "team-a-admin"] {
            let refused = h.send_as(user, Method::POST, "/exporters", Some(&body)).await;
            assert_eq!(refused.status, 403, "{user}: {}", refused.text);
            let refused = h.send_as(user, Method::GET, "/exporters", None).await;
            assert_eq!(refused.status, 403, "{user}: {}", refused.text);
        }
        assert_eq!(h.send_as("admin", Method::POST, "/exporters", Some(&body)).await.ok_json(200)["name"], "guarded");
        for (method, tail) in
            [(Method::GET, ""), (Method::GET, "/status"), (Method::GET, "/config"), (Method::PUT, "/pause")]
        {
            let refused = h.send_as("reader", method.clone(), &path("guarded", tail), None).await;
            assert_eq!(refused.status, 403, "{method} {tail}: {}", refused.text);
            let allowed = h.send_as("admin", method.clone(), &path("guarded", tail), None).await;
            assert_eq!(allowed.status, 200, "{method} {tail}: {}", allowed.text);
        }
        let anonymous = h.get("/exporters").await;
        assert_eq!(anonymous.status, 401, "{}", anonymous.text);
    }

    api_tests::api_cases!(authenticated: exporters_need_admin);
}
