//! The exporter tests' destination: a registry served on loopback over an embedded store in a
//! directory of its own, HTTP Basic on with one admin user.

use registry_core::{Registry, RegistrySettings};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The destination's one user (an admin) and its password.
pub const USER: &str = "exporter";
pub const PASSWORD: &str = "dest-password-never-stored-plain";

/// Serves the destination over `dir`: its URL, and the server's task.
pub async fn serve_embedded(dir: &std::path::Path) -> (String, tokio::task::JoinHandle<()>) {
    let store = registry_store_local::LocalStore::open(dir).unwrap_or_else(|e| panic!("{e}"));
    let mut users = registry_auth::UsersFile::default();
    let hash = registry_auth::hash_password(PASSWORD, registry_auth::HashCost::TEST).unwrap_or_else(|e| panic!("{e}"));
    users.upsert(registry_auth::UserEntry {
        user: USER.to_owned(),
        role: registry_auth::Role::Admin,
        subject_prefixes: Vec::new(),
        hash,
    });
    let authenticator = registry_auth::Authenticator::new(&users, None).unwrap_or_else(|e| panic!("{e}"));
    let options = registry_http::AppOptions { authenticator: Some(Arc::new(authenticator)), ..Default::default() };
    let app = registry_http::app(Registry::new(Arc::new(store), RegistrySettings::default()), options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{address}"), server)
}

/// What the exporters of these tests may send to: the destination on loopback, which
/// `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` refuses unless it lists it, as these tests do.
pub fn loopback() -> registry_exporter::DestinationPolicy {
    registry_exporter::DestinationPolicy::parse("127.0.0.1").unwrap_or_else(|e| panic!("{e}"))
}

/// [`loopback`], shared, as a destination client takes it.
pub fn loopback_shared() -> Arc<registry_exporter::DestinationPolicy> {
    Arc::new(loopback())
}

/// The client settings of the destination at `url`, with its user's credentials.
pub fn destination_config(url: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("schema.registry.url".to_owned(), url.to_owned()),
        ("basic.auth.credentials.source".to_owned(), "USER_INFO".to_owned()),
        ("basic.auth.user.info".to_owned(), format!("{USER}:{PASSWORD}")),
    ])
}

/// A registration body: an Avro record `Order` of the string `fields`, each with a default.
pub fn avro(fields: &[&str]) -> Value {
    let fields: Vec<Value> =
        fields.iter().map(|name| json!({ "name": name, "type": "string", "default": "" })).collect();
    json!({ "schema": json!({ "type": "record", "name": "Order", "fields": fields }).to_string() })
}
