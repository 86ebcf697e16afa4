//! Auth matrix on the router: every endpoint × role × (no credentials, wrong password, right password),
//! subject-prefix scoping, IMPORT registrations and bearer tokens. An allowed request must get exactly the
//! answer the unprotected router gives on the same data.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use base64::Engine;
use http_body_util::BodyExt;
use registry_auth::{Authenticator, HashCost, JwtValidator, Role, UserEntry, UsersFile};
use registry_core::{MemoryStore, Registry, RegistrySettings};
use registry_http::{AppOptions, app as build_app};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

const V1: &str = "application/vnd.schemaregistry.v1+json";
const USER_V1: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"}]}"#;
const USER_V2: &str = r#"{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"email","type":"string","default":""}]}"#;

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
}

fn users() -> UsersFile {
    let mut file = UsersFile::default();
    let people: [(&str, Role, &[&str]); 5] = [
        ("reader", Role::Read, &[]),
        ("writer", Role::Write, &[]),
        ("admin", Role::Admin, &[]),
        ("team-a-writer", Role::Write, &["team-a."]),
        ("team-a-admin", Role::Admin, &["team-a.", "shared."]),
    ];
    for (user, role, prefixes) in people {
        let password = format!("{user}-secret");
        file.upsert(UserEntry::with_password(user, role, prefixes, &password, HashCost::TEST).unwrap());
    }
    file
}

fn authenticator() -> Arc<Authenticator> {
    static AUTH: OnceLock<Arc<Authenticator>> = OnceLock::new();
    AUTH.get_or_init(|| Arc::new(Authenticator::new(&users(), None).unwrap())).clone()
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn right(user: &str) -> String {
    basic(user, &format!("{user}-secret"))
}

async fn send(app: &Router, method: &Method, path: &str, body: Option<&Value>, authorization: Option<&str>) -> Reply {
    let mut request = Request::builder().method(method.clone()).uri(path);
    if let Some(authorization) = authorization {
        request = request.header(header::AUTHORIZATION, authorization);
    }
    let body = match body {
        Some(body) => {
            request = request.header(header::CONTENT_TYPE, V1);
            Body::from(body.to_string())
        }
        None => Body::empty(),
    };
    let response = app.clone().oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    Reply { status, headers, body: without_ts(body) }
}

fn without_ts(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().filter(|(k, _)| k != "ts").map(|(k, v)| (k, without_ts(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(without_ts).collect()),
        other => other,
    }
}

/// A registry holding `orders-value` v1+v2, `gone-value` v1 soft-deleted, and `team-a.orders`,
/// `team-b.orders`, `shared.ids`; plain (`protected = false`) or behind auth.
async fn app(protected: bool) -> Router {
    let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
    let plain = build_app(registry.clone(), AppOptions::default());
    let schema = |text: &str| json!({ "schema": text });
    for (subject, text) in [
        ("orders-value", USER_V1),
        ("orders-value", USER_V2),
        ("gone-value", USER_V1),
        ("team-a.orders", USER_V1),
        ("team-b.orders", USER_V2),
        ("shared.ids", USER_V1),
    ] {
        let reply =
            send(&plain, &Method::POST, &format!("/subjects/{subject}/versions"), Some(&schema(text)), None).await;
        assert_eq!(reply.status, StatusCode::OK, "seed {subject}: {}", reply.body);
    }
    assert_eq!(
        send(&plain, &Method::DELETE, "/subjects/gone-value/versions/1", None, None).await.status,
        StatusCode::OK
    );
    if protected {
        build_app(registry, AppOptions { authenticator: Some(authenticator()), ..AppOptions::default() })
    } else {
        plain
    }
}

fn endpoints() -> Vec<(Method, &'static str, Option<Value>, Role)> {
    let schema = Some(json!({ "schema": USER_V2 }));
    let import = Some(json!({ "schema": USER_V2, "id": 100 }));
    let get = |path| (Method::GET, path, None, Role::Read);
    vec![
        get("/schemas"),
        get("/schemas/types"),
        get("/schemas/ids/1"),
        get("/schemas/ids/1/schema"),
        get("/schemas/ids/1/subjects"),
        get("/schemas/ids/1/versions"),
        get("/contexts"),
        get("/subjects"),
        get("/subjects/orders-value/versions"),
        get("/subjects/orders-value/versions/1"),
        get("/subjects/orders-value/versions/latest/schema"),
        get("/subjects/orders-value/versions/1/referencedby"),
        get("/config"),
        get("/config/orders-value"),
        get("/mode"),
        get("/mode/orders-value"),
        get("/no/such/path"),
        (Method::POST, "/subjects/orders-value", schema.clone(), Role::Read),
        (Method::POST, "/compatibility/subjects/orders-value/versions/latest", schema.clone(), Role::Read),
        (Method::POST, "/compatibility/subjects/orders-value/versions", schema.clone(), Role::Read),
        (Method::POST, "/subjects/new-value/versions", schema.clone(), Role::Write),
        (Method::POST, "/subjects/orders-value/versions", Some(json!({ "schema": USER_V2, "id": -1 })), Role::Write),
        (Method::DELETE, "/subjects/orders-value/versions/2", None, Role::Write),
        (Method::DELETE, "/subjects/orders-value", None, Role::Write),
        (Method::DELETE, "/subjects/orders-value?permanent=false", None, Role::Write),
        (Method::POST, "/subjects/orders-value/versions", import, Role::Admin),
        (Method::DELETE, "/subjects/gone-value/versions/1?permanent=true", None, Role::Admin),
        (Method::DELETE, "/subjects/gone-value?permanent=TRUE", None, Role::Admin),
        (Method::PUT, "/config", Some(json!({ "compatibility": "FULL" })), Role::Admin),
        (Method::PUT, "/config/orders-value", Some(json!({ "compatibility": "NONE" })), Role::Admin),
        (Method::DELETE, "/config", None, Role::Admin),
        (Method::DELETE, "/config/orders-value", None, Role::Admin),
        (Method::PUT, "/mode", Some(json!({ "mode": "READONLY" })), Role::Admin),
        (Method::PUT, "/mode/orders-value", Some(json!({ "mode": "IMPORT" })), Role::Admin),
        (Method::DELETE, "/mode", None, Role::Admin),
        (Method::DELETE, "/mode/orders-value", None, Role::Admin),
        (Method::PATCH, "/subjects/orders-value", None, Role::Admin),
    ]
}

fn assert_unauthorized(reply: &Reply, context: &str) {
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{context}: {}", reply.body);
    assert_eq!(reply.body, json!({ "error_code": 40101, "message": "Unauthorized" }), "{context}");
    assert_eq!(reply.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some(V1), "{context}");
    let challenges: Vec<_> =
        reply.headers.get_all(header::WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()).collect();
    assert_eq!(challenges, ["Basic realm=\"schema-registry\""], "{context}");
}

fn assert_forbidden(reply: &Reply, context: &str) -> String {
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{context}: {}", reply.body);
    assert_eq!(reply.body["error_code"], json!(40301), "{context}");
    assert_eq!(reply.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some(V1), "{context}");
    reply.body["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn every_endpoint_by_role_and_credentials() {
    let roles = [("reader", Role::Read), ("writer", Role::Write), ("admin", Role::Admin)];
    for (method, path, body, required) in endpoints() {
        let expected = send(&app(false).await, &method, path, body.as_ref(), None).await;
        for (user, role) in roles {
            let context = format!("{method} {path} as {user}");
            let protected = app(true).await;
            assert_unauthorized(&send(&protected, &method, path, body.as_ref(), None).await, &context);
            let wrong = basic(user, "not-the-password");
            assert_unauthorized(&send(&protected, &method, path, body.as_ref(), Some(&wrong)).await, &context);
            let reply = send(&protected, &method, path, body.as_ref(), Some(&right(user))).await;
            if role >= required {
                assert_eq!((reply.status, &reply.body), (expected.status, &expected.body), "{context}");
            } else {
                assert_forbidden(&reply, &context);
            }
        }
    }
}

#[tokio::test]
async fn health_check_stays_open_and_unknown_users_look_like_wrong_passwords() {
    let app = app(true).await;
    for authorization in [None, Some(basic("nobody", "x")), Some(basic("admin", "wrong"))] {
        let reply = send(&app, &Method::GET, "/", None, authorization.as_deref()).await;
        assert_eq!((reply.status, reply.body), (StatusCode::OK, json!({})));
    }
    let unknown = send(&app, &Method::GET, "/subjects", None, Some(&basic("nobody", "x"))).await;
    let wrong = send(&app, &Method::GET, "/subjects", None, Some(&basic("admin", "x"))).await;
    assert_unauthorized(&unknown, "unknown user");
    assert_eq!((unknown.status, unknown.body), (wrong.status, wrong.body));
    for header in ["Bearer abc.def.ghi", "Digest x", "Basic %%%"] {
        assert_unauthorized(&send(&app, &Method::GET, "/subjects", None, Some(header)).await, header);
    }
}

#[tokio::test]
async fn subject_prefix_scoping() {
    let app = app(true).await;
    let writer = right("team-a-writer");
    let schema = json!({ "schema": USER_V1 });
    let call = |method: Method, path: &'static str, body: Option<Value>| {
        let (app, writer) = (app.clone(), writer.clone());
        async move { send(&app, &method, path, body.as_ref(), Some(&writer)).await }
    };
    assert_eq!(call(Method::POST, "/subjects/team-a.new/versions", Some(schema.clone())).await.status, StatusCode::OK);
    let message =
        assert_forbidden(&call(Method::POST, "/subjects/team-b.new/versions", Some(schema.clone())).await, "b");
    assert_eq!(message, "User is denied operation Write on Subject: team-b.new");
    for path in ["/subjects/team-b.orders/versions", "/subjects/team-b%2Eorders/versions/1", "/config/team-b.orders"] {
        assert_forbidden(&call(Method::GET, path, None).await, path);
    }
    assert_forbidden(&call(Method::POST, "/subjects/team-b.orders", Some(schema.clone())).await, "lookup");
    assert_forbidden(&call(Method::DELETE, "/subjects/team-b.orders", None).await, "delete");
    assert_eq!(call(Method::GET, "/subjects", None).await.body, json!(["team-a.new", "team-a.orders"]));
    let subjects = call(Method::GET, "/schemas", None).await.body;
    let named: Vec<&str> = subjects.as_array().unwrap().iter().filter_map(|s| s["subject"].as_str()).collect();
    assert_eq!(named, ["team-a.new", "team-a.orders"]);
    assert_eq!(call(Method::GET, "/schemas/ids/1/subjects", None).await.body, json!(["team-a.new", "team-a.orders"]));
    assert_eq!(call(Method::GET, "/schemas/ids/1/versions", None).await.body.as_array().map(Vec::len), Some(2));
    assert_eq!(call(Method::GET, "/schemas/ids/2", None).await.status, StatusCode::OK, "IDs stay readable");
    assert_eq!(call(Method::GET, "/config", None).await.status, StatusCode::OK);

    let admin = right("team-a-admin");
    let put = |path: &'static str| {
        let (app, admin) = (app.clone(), admin.clone());
        async move { send(&app, &Method::PUT, path, Some(&json!({"compatibility": "NONE"})), Some(&admin)).await }
    };
    assert_eq!(put("/config/team-a.orders").await.status, StatusCode::OK);
    assert_eq!(put("/config/shared.ids").await.status, StatusCode::OK);
    assert_eq!(
        assert_forbidden(&put("/config").await, "global"),
        "User is denied operation AlterConfigs on SchemaRegistry"
    );
    assert_forbidden(&put("/config/team-b.orders").await, "other team");
    let all = send(&app, &Method::GET, "/subjects", None, Some(&admin)).await.body;
    assert_eq!(all, json!(["shared.ids", "team-a.new", "team-a.orders"]));
}

#[tokio::test]
async fn by_id_answers_are_private_when_authentication_is_on() {
    let cache_control =
        |reply: &Reply| reply.headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()).map(str::to_string);
    let open = send(&app(false).await, &Method::GET, "/schemas/ids/1", None, None).await;
    assert_eq!(cache_control(&open).as_deref(), Some("public, max-age=0, must-revalidate"));
    let protected = send(&app(true).await, &Method::GET, "/schemas/ids/1", None, Some(&right("reader"))).await;
    assert_eq!(protected.status, StatusCode::OK);
    assert_eq!(cache_control(&protected).as_deref(), Some("private, max-age=0, must-revalidate"));
}

#[tokio::test]
async fn writers_cannot_import_with_an_explicit_id() {
    let app = app(true).await;
    let writer = right("writer");
    for (id, allowed) in [(json!(7), false), (json!(0), false), (json!(-1), true), (Value::Null, true)] {
        let body = json!({ "schema": USER_V1, "id": id });
        let reply = send(&app, &Method::POST, "/subjects/orders-value/versions", Some(&body), Some(&writer)).await;
        if allowed {
            assert_eq!(reply.status, StatusCode::OK, "id {id}: {}", reply.body);
        } else {
            assert_eq!(assert_forbidden(&reply, "import"), "User is denied operation Import on Subject: orders-value");
        }
    }
}

/// The IMPORT check reads the request the handler registers: a body in any JSON shape that
/// carries an ID (serde reads a struct from an array too) is an IMPORT, refused to a writer before
/// anything is stored, and allowed to an admin.
#[tokio::test]
async fn an_import_is_judged_on_the_request_registered_whatever_its_json_shape() {
    let app = app(true).await;
    let (writer, admin) = (right("writer"), right("admin"));
    let import_mode = json!({ "mode": "IMPORT" });
    let reply = send(&app, &Method::PUT, "/mode/orders-value?force=true", Some(&import_mode), Some(&admin)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let snapshot = |app: Router| async move {
        let mut seen = Vec::new();
        for path in ["/subjects/orders-value/versions", "/subjects/orders-value/versions/1", "/schemas/ids/1"] {
            seen.push(send(&app, &Method::GET, path, None, Some(&right("admin"))).await.body);
        }
        seen
    };
    let before = snapshot(app.clone()).await;
    let register = "/subjects/orders-value/versions";
    let as_array = json!([USER_V2, null, null, null, null, 100, 3]);
    let reply = send(&app, &Method::POST, register, Some(&as_array), Some(&writer)).await;
    assert!(matches!(reply.status, StatusCode::BAD_REQUEST | StatusCode::FORBIDDEN), "array body: {}", reply.body);
    let as_object = json!({ "schema": USER_V2, "id": 1, "version": 1 });
    let reply = send(&app, &Method::POST, register, Some(&as_object), Some(&writer)).await;
    assert_eq!(assert_forbidden(&reply, "object body"), "User is denied operation Import on Subject: orders-value");
    assert_eq!(snapshot(app.clone()).await, before, "nothing a writer sent changed the subject");

    let imported = json!({ "schema": USER_V2, "id": 100, "version": 3 });
    let reply = send(&app, &Method::POST, register, Some(&imported), Some(&admin)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["id"], json!(100), "{}", reply.body);
}

mod bearer {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    use jsonwebtoken::jwk::{Jwk, JwkSet};
    use jsonwebtoken::{Algorithm, EncodingKey, Header};

    const ISSUER: &str = "https://idp.example.com";

    fn now() -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
    }

    #[tokio::test]
    async fn tokens_map_to_roles_and_failures_challenge_both_schemes() {
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new()).unwrap();
        let key = EncodingKey::from_ec_der(der.as_ref());
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some("k".into());
        let jwks = serde_json::to_string(&JwkSet { keys: vec![jwk] }).unwrap();
        let validator = JwtValidator::new(ISSUER, "sr", &jwks, "scope").unwrap();
        let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
        let auth = Arc::new(Authenticator::new(&users(), Some(validator)).unwrap());
        let app = build_app(registry, AppOptions { authenticator: Some(auth), ..AppOptions::default() });
        let token = |scope: &str, exp: u64| {
            let mut header = Header::new(Algorithm::ES256);
            header.kid = Some("k".into());
            let claims = json!({"iss": ISSUER, "aud": "sr", "sub": "svc", "exp": exp, "scope": scope});
            format!("Bearer {}", jsonwebtoken::encode(&header, &claims, &key).unwrap())
        };
        let body = json!({ "schema": USER_V1 });
        let reader = token("registry:read", now() + 300);
        assert_eq!(send(&app, &Method::GET, "/subjects", None, Some(&reader)).await.status, StatusCode::OK);
        assert_forbidden(
            &send(&app, &Method::POST, "/subjects/s/versions", Some(&body), Some(&reader)).await,
            "read token",
        );
        let writer = token("registry:write", now() + 300);
        assert_eq!(
            send(&app, &Method::POST, "/subjects/s/versions", Some(&body), Some(&writer)).await.status,
            StatusCode::OK
        );
        assert_forbidden(
            &send(&app, &Method::GET, "/subjects", None, Some(&token("openid", now() + 300))).await,
            "no role",
        );
        assert_eq!(send(&app, &Method::GET, "/subjects", None, Some(&right("reader"))).await.status, StatusCode::OK);
        let expired = send(&app, &Method::GET, "/subjects", None, Some(&token("registry:admin", now() - 3600))).await;
        assert_eq!(expired.status, StatusCode::UNAUTHORIZED);
        assert_eq!(expired.body["error_code"], json!(40101));
        let challenges: Vec<_> =
            expired.headers.get_all(header::WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()).collect();
        assert_eq!(challenges, ["Basic realm=\"schema-registry\"", "Bearer realm=\"schema-registry\""]);
    }
}
