//! A read region's application in a multi-region registry: reads are answered by an [`app`](crate::app)
//! over the local replica, writes by one over the home region's storage.
//!
//! - `GET`/`HEAD` and lookups (`POST /subjects/{subject}`, also under `/contexts/{context}`) go to
//!   the local application, whose store reads the local replica alone. An answer of 404 (a
//!   subject, version, ID, config or key this replica has not received yet, a body its bucket has
//!   not, or one that does not exist) is asked again of the home application, whose answer is
//!   final: a client never gets a "not found" the home region would not give it. This is the read
//!   region's only fallback to the home, counted by [`HomeFallbacks`] (`home_fallback_total`): one
//!   per request, whatever the request read.
//! - Every other request (registrations, deletes, config and mode changes, compatibility checks,
//!   DEK writes, exporters) goes to the home application, which commits in the home region exactly
//!   as a single-region registry does, and answers what a home-region call answers.
//! - With [`app_forgetting`], after each such request the local application's registry forgets
//!   the answers it remembers (IDs and guids carried, lookups), whatever the outcome (a failed
//!   write may still have been applied), as a single registry does after its own writes: a
//!   process's own hard delete or IMPORT rebinding shows in its next read as soon as the replica
//!   has it, not only after the memory's time to live.
//! - [`following`]: one such application per region that may be home, and per request the one of
//!   the region a [`CurrentHome`] names (the home marker, in a multi-region registry): a failover
//!   moves the writes without rebuilding anything.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use registry_core::Registry;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tower::ServiceExt;

/// The two applications a read region serves.
#[derive(Clone)]
struct Apps {
    local: axum::Router,
    home: axum::Router,
    /// The local application's registry, told to forget after each write.
    local_registry: Option<Registry>,
    fallbacks: HomeFallbacks,
}

/// Reads the local application could not answer and the home application was asked
/// (`home_fallback_total`); clones count together.
#[derive(Clone, Default, Debug)]
pub struct HomeFallbacks(Arc<AtomicU64>);

impl HomeFallbacks {
    /// The reads asked of the home since the counter was made.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn fell_back(&self, method: &Method, path: &str) {
        self.0.fetch_add(1, Ordering::Relaxed);
        tracing::info!(metric = "home_fallback_total", %method, path, "not found in the local replica; asked the home region");
    }
}

/// `local` (over the local replica) and `home` (over the home region's storage) as one
/// application, dispatched as the module documentation says.
pub fn app(local: axum::Router, home: axum::Router) -> axum::Router {
    read_region(local, home, None, HomeFallbacks::default())
}

/// [`app`], with `local_registry` (the registry `local` serves) forgetting its remembered answers
/// after each request the home application answers, and the reads asked of the home counted in
/// `fallbacks`.
pub fn app_forgetting(
    local: axum::Router,
    home: axum::Router,
    local_registry: Registry,
    fallbacks: HomeFallbacks,
) -> axum::Router {
    read_region(local, home, Some(local_registry), fallbacks)
}

fn read_region(
    local: axum::Router,
    home: axum::Router,
    local_registry: Option<Registry>,
    fallbacks: HomeFallbacks,
) -> axum::Router {
    let apps = Apps { local, home, local_registry, fallbacks };
    axum::Router::new().fallback(dispatch).with_state(Arc::new(apps))
}

/// Whether a request only reads.
pub fn is_read(method: &Method, path: &str) -> bool {
    match *method {
        Method::GET | Method::HEAD => true,
        Method::POST => is_lookup(path),
        _ => false,
    }
}

/// `/subjects/{subject}` (one segment, optional trailing slash), also under `/contexts/{context}`.
fn is_lookup(path: &str) -> bool {
    let path = match path.strip_prefix("/contexts/") {
        Some(rest) => match rest.split_once('/') {
            Some((_, rest)) => rest,
            None => return false,
        },
        None => path.strip_prefix('/').unwrap_or(path),
    };
    let path = path.strip_suffix('/').unwrap_or(path);
    matches!(path.split_once('/'), Some(("subjects", subject)) if !subject.is_empty() && !subject.contains('/'))
}

async fn dispatch(State(apps): State<Arc<Apps>>, request: Request) -> Response {
    if !is_read(request.method(), request.uri().path()) {
        let written = answer(apps.home.clone(), request).await;
        if let Some(registry) = &apps.local_registry {
            registry.forget_remembered_answers();
        }
        return written;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, crate::MAX_BODY_BYTES).await else {
        let message = format!("HTTP 413 Payload Too Large: the request body exceeds {} bytes", crate::MAX_BODY_BYTES);
        let body = serde_json::json!({"error_code": 413, "message": message});
        return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(body)).into_response();
    };
    let again = |bytes: &axum::body::Bytes| {
        let mut request = Request::new(Body::from(bytes.clone()));
        *request.method_mut() = parts.method.clone();
        *request.uri_mut() = parts.uri.clone();
        *request.version_mut() = parts.version;
        *request.headers_mut() = parts.headers.clone();
        *request.extensions_mut() = parts.extensions.clone();
        request
    };
    let mut asked_locally = again(&bytes);
    asked_locally.extensions_mut().insert(crate::observability::HomeAnswersNotFound);
    let local = answer(apps.local.clone(), asked_locally).await;
    if local.status() != StatusCode::NOT_FOUND {
        return local;
    }
    apps.fallbacks.fell_back(&parts.method, parts.uri.path());
    answer(apps.home.clone(), again(&bytes)).await
}

/// Which region is home now (asked once per request by [`following`]).
pub trait CurrentHome: Send + Sync {
    /// The home region's name.
    fn current_home(&self) -> BoxFuture<'_, String>;
}

/// A [`CurrentHome`] asking `home` (an async closure) for every request.
pub fn home_from<F, Fut>(home: F) -> Arc<dyn CurrentHome>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = String> + Send + 'static,
{
    Arc::new(HomeFrom(home))
}

struct HomeFrom<F>(F);

impl<F, Fut> CurrentHome for HomeFrom<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = String> + Send + 'static,
{
    fn current_home(&self) -> BoxFuture<'_, String> {
        Box::pin((self.0)())
    }
}

/// The applications of every region that may be home, and what says which one is.
#[derive(Clone)]
struct Following {
    apps: Arc<BTreeMap<String, axum::Router>>,
    home: Arc<dyn CurrentHome>,
}

/// `apps` (per region, the application this process serves while that region is home) as one
/// application: each request goes to the application of the region `home` names then. A home
/// without an application (a region the process was not given) answers 500 / 50002 (retryable:
/// a failover in progress) and logs which region it was.
pub fn following(apps: BTreeMap<String, axum::Router>, home: Arc<dyn CurrentHome>) -> axum::Router {
    axum::Router::new().fallback(follow).with_state(Following { apps: Arc::new(apps), home })
}

async fn follow(State(following): State<Following>, request: Request) -> Response {
    let home = following.home.current_home().await;
    match following.apps.get(&home) {
        Some(app) => answer(app.clone(), request).await,
        None => {
            let known: Vec<&String> = following.apps.keys().collect();
            let detail =
                format!("the home marker names {home}, a region this process has no stores for (it has {known:?})");
            tracing::error!(%home, ?known, "{detail}");
            let error = registry_core::RegistryError::Store(registry_core::StoreError::Unavailable(detail));
            crate::error::ApiError::from(error).into_response()
        }
    }
}

async fn answer(app: axum::Router, request: Request) -> Response {
    match app.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_gets_and_lookups() {
        assert!(is_read(&Method::GET, "/schemas/ids/1"));
        assert!(is_read(&Method::HEAD, "/subjects"));
        assert!(is_read(&Method::POST, "/subjects/orders-value"));
        assert!(is_read(&Method::POST, "/subjects/orders-value/"));
        assert!(is_read(&Method::POST, "/contexts/.team/subjects/orders-value"));
        assert!(!is_read(&Method::POST, "/subjects/orders-value/versions"));
        assert!(!is_read(&Method::POST, "/contexts/.team/subjects/orders-value/versions"));
        assert!(!is_read(&Method::POST, "/compatibility/subjects/s/versions/latest"));
        assert!(!is_read(&Method::POST, "/subjects/"));
        assert!(!is_read(&Method::PUT, "/config"));
        assert!(!is_read(&Method::DELETE, "/subjects/s"));
    }

    /// Each request goes to the application of the home named at that moment; an unknown home
    /// answers 500 / 50002.
    #[tokio::test]
    async fn following_sends_each_request_to_the_current_home() {
        use registry_core::{MemoryStore, RegistrySettings};
        let home = Arc::new(std::sync::Mutex::new("a".to_string()));
        let named = home.clone();
        let current = home_from(move || {
            let home = named.lock().map(|home| home.clone()).unwrap_or_default();
            async move { home }
        });
        let registries: Vec<Registry> =
            (0..2).map(|_| Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default())).collect();
        let apps = BTreeMap::from([
            ("a".to_string(), crate::app(registries[0].clone(), Default::default())),
            ("b".to_string(), crate::app(registries[1].clone(), Default::default())),
        ]);
        let app = following(apps, current);
        let register = |subject: &'static str| {
            let mut request = Request::new(Body::from(r#"{"schema": "\"string\""}"#));
            *request.method_mut() = Method::POST;
            *request.uri_mut() = format!("/subjects/{subject}/versions").parse().unwrap_or_else(|e| panic!("{e}"));
            request.headers_mut().insert("content-type", "application/json".parse().unwrap_or_else(|e| panic!("{e}")));
            answer(app.clone(), request)
        };
        assert_eq!(register("first").await.status(), StatusCode::OK);
        *home.lock().unwrap_or_else(|e| panic!("{e}")) = "b".to_string();
        assert_eq!(register("second").await.status(), StatusCode::OK);
        for (registry, expected) in registries.iter().zip([["first"], ["second"]]) {
            let mut request = Request::new(Body::empty());
            *request.uri_mut() = "/subjects".parse().unwrap_or_else(|e| panic!("{e}"));
            let listed = answer(crate::app(registry.clone(), Default::default()), request).await;
            let body = axum::body::to_bytes(listed.into_body(), usize::MAX).await.unwrap_or_else(|e| panic!("{e}"));
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(body, serde_json::json!(expected));
        }
        *home.lock().unwrap_or_else(|e| panic!("{e}")) = "c".to_string();
        let refused = register("third").await;
        assert_eq!(refused.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(refused.into_body(), usize::MAX).await.unwrap_or_else(|e| panic!("{e}"));
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(body["error_code"], 50002, "{body}");
    }

    /// A read the local replica cannot answer is asked of the home once and counted; one it
    /// answers reaches the home not at all.
    #[tokio::test]
    async fn a_read_the_local_replica_cannot_answer_is_asked_of_the_home_once() {
        use registry_core::{MemoryStore, RegistrySettings};
        let get = |app: &axum::Router, path: &str| {
            let mut request = Request::new(Body::empty());
            *request.uri_mut() = path.parse().unwrap_or_else(|e| panic!("{e}"));
            answer(app.clone(), request)
        };
        let (local, home) = (Arc::new(MemoryStore::new()), Arc::new(MemoryStore::new()));
        let (local, home) =
            (Registry::new(local, RegistrySettings::default()), Registry::new(home, RegistrySettings::default()));
        let schema = || registry_core::NewSchema { schema: Some(r#""string""#.into()), ..Default::default() };
        for (registry, subject) in [(&home, "at-home"), (&local, "here")] {
            registry.register(subject, schema(), Default::default()).await.unwrap_or_else(|e| panic!("{e}"));
        }
        let fallbacks = HomeFallbacks::default();
        let app = app_forgetting(
            crate::app(local.clone(), Default::default()),
            crate::app(home, Default::default()),
            local,
            fallbacks.clone(),
        );
        assert_eq!(get(&app, "/subjects/here/versions/1").await.status(), StatusCode::OK);
        assert_eq!(fallbacks.count(), 0);
        assert_eq!(get(&app, "/subjects/at-home/versions/1").await.status(), StatusCode::OK);
        assert_eq!(fallbacks.count(), 1);
        let missing = get(&app, "/subjects/nowhere/versions/1").await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(fallbacks.count(), 2);
    }

    /// A read region's two registries over one store (as if replication were instant): a hard
    /// delete through the home application shows in the local one's next by-ID read only when it
    /// forgets after writes; without, the local registry answers from its memory.
    #[tokio::test]
    async fn after_a_write_through_home_the_local_registry_forgets_what_it_remembers() {
        use registry_core::{MemoryStore, RegistrySettings};
        async fn call(app: &axum::Router, method: Method, path: &str, body: Option<&str>) -> StatusCode {
            let mut request = Request::new(body.map_or_else(Body::empty, |b| Body::from(b.to_string())));
            *request.method_mut() = method;
            *request.uri_mut() = path.parse().unwrap_or_else(|e| panic!("{e}"));
            request.headers_mut().insert("content-type", "application/json".parse().unwrap_or_else(|e| panic!("{e}")));
            answer(app.clone(), request).await.status()
        }
        for forgetting in [true, false] {
            let store: Arc<dyn registry_core::Store> = Arc::new(MemoryStore::new());
            let local = Registry::new(store.clone(), RegistrySettings::default());
            let home = Registry::new(store, RegistrySettings::default());
            let (local_app, home_app) =
                (crate::app(local.clone(), Default::default()), crate::app(home, Default::default()));
            let app = if forgetting {
                app_forgetting(local_app, home_app, local, HomeFallbacks::default())
            } else {
                app(local_app, home_app)
            };
            let schema = r#"{"schema": "\"string\""}"#;
            assert_eq!(call(&app, Method::POST, "/subjects/s/versions", Some(schema)).await, StatusCode::OK);
            assert_eq!(call(&app, Method::GET, "/schemas/ids/1", None).await, StatusCode::OK);
            assert_eq!(call(&app, Method::DELETE, "/subjects/s", None).await, StatusCode::OK);
            assert_eq!(call(&app, Method::DELETE, "/subjects/s?permanent=true", None).await, StatusCode::OK);
            let expected = if forgetting { StatusCode::NOT_FOUND } else { StatusCode::OK };
            assert_eq!(call(&app, Method::GET, "/schemas/ids/1", None).await, expected, "forgetting: {forgetting}");
        }
    }
}
