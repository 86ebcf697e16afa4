//! API test harness: serves `registry_http::app` on a real socket over a chosen backend, with a small
//! typed HTTP client and the macro that instantiates each case once per backend.

pub mod aws;
pub mod client;
pub mod deployed;
pub mod lambda;
pub mod regions;
pub mod schemas;
pub mod users;

pub use client::Response;

use registry_core::{MemoryStore, Registry, RegistrySettings, Store};
use registry_dek::model::LOCAL_KMS;
use registry_dek::{DekBackend, DekRegistry, LocalKms, MemoryKeyStore};
use registry_exporter::{ExporterService, ExporterStore, MemoryExporterStore, SecretBox};
use registry_http::AppOptions;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Which store the server under test runs on.
#[derive(Debug, Clone)]
pub enum Backend {
    /// `MemoryStore`: nothing survives the harness.
    Memory,
    /// `LocalStore` in this directory (the embedded default); data survives a restart on the same directory.
    Local(PathBuf),
    /// `AwsStore` (DynamoDB + S3) on the emulator, over an existing table and bucket.
    Aws(Box<aws::AwsTarget>),
    /// The real `registry-lambda` process under the Lambda Runtime API emulator ([`lambda`]),
    /// reached through Function URL requests, over an existing table and bucket on the emulator (the
    /// home region's: the function runs as a read region's, see [`regions`]).
    Lambda(Box<aws::AwsTarget>),
}

/// Whether the server under test asks for credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Serving {
    /// Authentication off (the default of `registry serve` without users).
    #[default]
    Open,
    /// Authentication on, with the users of [`users`] (`REGISTRY_USERS` for the Lambda function).
    Authenticated,
}

impl Serving {
    /// How `registry_http::app` is assembled for this mode.
    pub fn app_options(self) -> AppOptions {
        match self {
            Serving::Open => AppOptions::default(),
            Serving::Authenticated => {
                AppOptions { authenticator: Some(users::authenticator()), ..AppOptions::default() }
            }
        }
    }

    /// The environment a function needs for this mode, on top of its store's.
    pub fn function_env(self) -> Vec<(String, String)> {
        match self {
            Serving::Open => Vec::new(),
            Serving::Authenticated => vec![("REGISTRY_USERS".to_string(), users::users_file().to_string())],
        }
    }
}

/// Which backend a macro-generated test uses; `Local` gets a fresh temporary directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Memory,
    Local,
}

/// A registry served over HTTP on `127.0.0.1:<ephemeral>`: the router inside the test process, or
/// the Lambda function as a process of its own behind the Runtime API emulator.
#[derive(Debug)]
pub struct Harness {
    base: String,
    http: reqwest::Client,
    backend: Backend,
    store: Arc<dyn Store>,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
    function: Option<lambda::LambdaEmulator>,
    /// The function under `cargo lambda watch` ([`lambda::cargo_lambda`]) instead.
    cargo_lambda: Option<lambda::CargoLambdaWatch>,
    _tempdir: Option<tempfile::TempDir>,
}

impl Harness {
    /// Opens the backend, builds the router and starts serving. Panics (failing the test) if the store
    /// cannot be opened or the socket cannot be bound.
    pub async fn start(backend: Backend) -> Harness {
        Self::start_with(backend, RegistrySettings::default()).await
    }

    /// As [`Harness::start`] with explicit registry settings.
    pub async fn start_with(backend: Backend, settings: RegistrySettings) -> Harness {
        let store = open_store(&backend);
        Self::serve(backend, store, settings).await
    }

    /// Serves `store` (already opened on `backend`, possibly wrapped, e.g. in `CachedStore`) with
    /// `settings`. Panics if the socket cannot be bound.
    pub async fn serve(backend: Backend, store: Arc<dyn Store>, settings: RegistrySettings) -> Harness {
        Self::serve_as(backend, store, settings, Serving::Open).await
    }

    /// As [`Harness::serve`], with authentication as `serving` says.
    pub async fn serve_as(
        backend: Backend,
        store: Arc<dyn Store>,
        settings: RegistrySettings,
        serving: Serving,
    ) -> Harness {
        let registry = Registry::new(store.clone(), settings);
        let options =
            AppOptions { deks: dek_registry(&backend), exporters: exporter_service(&backend), ..serving.app_options() };
        let app = registry_http::app(registry, options);
        let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
            Ok(listener) => listener,
            Err(error) => panic!("cannot bind 127.0.0.1:0: {error}"),
        };
        let address: SocketAddr = match listener.local_addr() {
            Ok(address) => address,
            Err(error) => panic!("no local address: {error}"),
        };
        let (shutdown, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let serving = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(error) = serving.await {
                panic!("server failed: {error}");
            }
        });
        Harness {
            base: format!("http://{address}"),
            http: http_client(),
            backend,
            store,
            shutdown: Some(shutdown),
            server: Some(server),
            function: None,
            cargo_lambda: None,
            _tempdir: None,
        }
    }

    /// A harness whose requests go to `function` (the Lambda process behind the emulator) over the
    /// table and bucket of `target`; [`Harness::store`] is an `AwsStore` of its own over them.
    pub fn of_function(target: aws::AwsTarget, function: lambda::LambdaEmulator) -> Harness {
        Self::of_function_as(target, function, None)
    }

    /// As [`Harness::of_function`], the client sending `user`'s credentials ([`users`]) on every
    /// request that sets no `Authorization` of its own.
    pub fn of_function_as(target: aws::AwsTarget, function: lambda::LambdaEmulator, user: Option<&str>) -> Harness {
        let base = function.url().to_string();
        let mut harness = Self::of_function_url(target, base, user);
        harness.function = Some(function);
        harness
    }

    /// As [`Harness::of_function_as`], the function served by `cargo lambda watch`.
    pub fn of_cargo_lambda_as(target: aws::AwsTarget, watch: lambda::CargoLambdaWatch, user: Option<&str>) -> Harness {
        let base = watch.url().to_string();
        let mut harness = Self::of_function_url(target, base, user);
        harness.cargo_lambda = Some(watch);
        harness
    }

    /// Requests to the function at `base` over the table and bucket of `target`.
    fn of_function_url(target: aws::AwsTarget, base: String, user: Option<&str>) -> Harness {
        let store: Arc<dyn Store> =
            Arc::new(registry_store_aws::AwsStore::with_path_style(&target.sdk, target.names.clone(), true));
        let http = match user {
            None => http_client(),
            Some(user) => {
                let mut headers = reqwest::header::HeaderMap::new();
                match reqwest::header::HeaderValue::from_str(&users::basic(user)) {
                    Ok(value) => headers.insert(reqwest::header::AUTHORIZATION, value),
                    Err(error) => panic!("the {user} user's Authorization header: {error}"),
                };
                match reqwest::Client::builder().no_proxy().default_headers(headers).build() {
                    Ok(client) => client,
                    Err(error) => panic!("cannot build the HTTP client: {error}"),
                }
            }
        };
        Harness {
            base,
            http,
            backend: Backend::Lambda(Box::new(target)),
            store,
            shutdown: None,
            server: None,
            function: None,
            cargo_lambda: None,
            _tempdir: None,
        }
    }

    /// The Lambda emulator serving this harness, for [`Backend::Lambda`].
    pub fn function(&self) -> Option<&lambda::LambdaEmulator> {
        self.function.as_ref()
    }

    /// A harness on `kind`, with a fresh temporary directory for `Kind::Local` (removed on drop).
    pub async fn start_kind(kind: Kind) -> Harness {
        Self::start_kind_as(kind, Serving::Open).await
    }

    /// As [`Harness::start_kind`], with authentication as `serving` says.
    pub async fn start_kind_as(kind: Kind, serving: Serving) -> Harness {
        let start = |backend: Backend| {
            let store = open_store(&backend);
            Self::serve_as(backend, store, RegistrySettings::default(), serving)
        };
        match kind {
            Kind::Memory => start(Backend::Memory).await,
            Kind::Local => {
                let dir = match tempfile::tempdir() {
                    Ok(dir) => dir,
                    Err(error) => panic!("cannot create a temporary directory: {error}"),
                };
                let mut harness = start(Backend::Local(dir.path().to_path_buf())).await;
                harness._tempdir = Some(dir);
                harness
            }
        }
    }

    /// Stops accepting, waits for in-flight requests, and releases the store (so a new harness can
    /// open the same directory). A Lambda function's processes are killed by PID.
    pub async fn stop(mut self) {
        if let Some(function) = self.function.take() {
            function.stop().await;
        }
        if let Some(watch) = self.cargo_lambda.take() {
            watch.stop();
        }
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(server) = self.server.take()
            && let Err(error) = server.await
        {
            panic!("server task failed: {error}");
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The backend this harness serves.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The store under the server, for seeding and for checks the API cannot express.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The underlying HTTP client (no proxy), for requests the typed helpers do not cover.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

/// Opens the store `backend` names. Panics if the embedded store cannot open its directory. The AWS
/// store opens without any call: its table and bucket must already exist.
pub fn open_store(backend: &Backend) -> Arc<dyn Store> {
    match backend {
        Backend::Memory => Arc::new(MemoryStore::new()),
        Backend::Local(dir) => Arc::new(open_local(dir)),
        Backend::Aws(target) | Backend::Lambda(target) => {
            Arc::new(registry_store_aws::AwsStore::with_path_style(&target.sdk, target.names.clone(), true))
        }
    }
}

/// The `local-kms` secret of every server under test (`REGISTRY_LOCAL_KMS_SECRET` of the functions).
pub const LOCAL_KMS_SECRET: &str = "api-tests-local-kms-secret";

/// The DEK registry of a server on `backend`, with `local-kms` under [`LOCAL_KMS_SECRET`]; `None`
/// where the backend has no key store.
pub fn dek_registry(backend: &Backend) -> Option<Arc<DekRegistry>> {
    let dek_backend = match backend {
        Backend::Memory => DekBackend::new(Arc::new(MemoryKeyStore::new())),
        // A second handle on the same database: SQLite serialises its writers with the first's.
        Backend::Local(dir) => DekBackend::new(Arc::new(open_local(dir))),
        Backend::Aws(target) | Backend::Lambda(target) => {
            let store = registry_store_aws::AwsStore::with_path_style(&target.sdk, target.names.clone(), true);
            registry_store_aws::dek_registry::dek_backend(&store)?
        }
    };
    let local = match LocalKms::new(LOCAL_KMS_SECRET) {
        Ok(local) => local,
        Err(error) => panic!("local KMS: {error}"),
    };
    let kms = dek_backend.kms.with(LOCAL_KMS, Arc::new(local));
    Some(Arc::new(DekRegistry::new(dek_backend.key_store, kms)))
}

/// The key exporter credentials are sealed with on every server under test (the runner of an
/// end-to-end test opens them with it).
pub const EXPORTER_SECRET: &[u8] = b"api-tests-exporter-secret";

/// The exporters API of a server on `backend`: credentials sealed under [`EXPORTER_SECRET`], or on
/// AWS with the target's KMS key, as the Lambda function seals them.
pub fn exporter_service(backend: &Backend) -> Option<Arc<ExporterService>> {
    let store: Arc<dyn ExporterStore> = match backend {
        Backend::Memory => Arc::new(MemoryExporterStore::new()),
        // A second handle on the same database, as for the DEK registry.
        Backend::Local(dir) => Arc::new(open_local(dir)),
        Backend::Aws(target) | Backend::Lambda(target) => {
            return Some(Arc::new(registry_store_aws::exporter_store::exporter_service(&target.env())));
        }
    };
    let secrets = match SecretBox::new(EXPORTER_SECRET) {
        Ok(secrets) => secrets,
        Err(error) => panic!("exporter secrets: {error}"),
    };
    Some(Arc::new(ExporterService::new(store, Arc::new(secrets))))
}

fn http_client() -> reqwest::Client {
    match reqwest::Client::builder().no_proxy().build() {
        Ok(client) => client,
        Err(error) => panic!("cannot build the HTTP client: {error}"),
    }
}

fn open_local(dir: &Path) -> registry_store_local::LocalStore {
    match registry_store_local::LocalStore::open(dir) {
        Ok(store) => store,
        Err(error) => panic!("cannot open LocalStore in {}: {error}", dir.display()),
    }
}

/// Instantiates each listed `async fn(&Harness)` once per backend, as `memory::<case>`,
/// `local::<case>`, `aws::<case>` and `lambda::<case>`. Use it once per test module, after the
/// cases. An `aws::` case runs on a table and bucket of its own, deleted afterwards even when the
/// case fails; it skips only when neither `AWS_ENDPOINT_URL` nor `CI` is set (see
/// [`aws::emulator_sdk`]). A `lambda::` case does the same through the real `registry-lambda`
/// binary under the Runtime API emulator, run as a read region's function over a replica of the
/// table and bucket brought up to date before every request (see [`aws::AwsCase::start_lambda`]). With
/// `api_cases!(authenticated: ...)` every server asks for credentials ([`Serving::Authenticated`]).
#[macro_export]
macro_rules! api_cases {
    (authenticated: $($case:ident),* $(,)?) => {
        $crate::api_cases!(@serving $crate::Serving::Authenticated; $($case),*);
    };
    (@serving $serving:expr; $($case:ident),*) => {
        $crate::api_cases!(@in_process memory, Memory, $serving; $($case),*);
        $crate::api_cases!(@in_process local, Local, $serving; $($case),*);
        $crate::api_cases!(@emulated aws, $crate::aws::AwsCase::start_as($serving); $($case),*);
        $crate::api_cases!(@emulated lambda, $crate::aws::AwsCase::start_lambda_as(1, $serving); $($case),*);
    };
    (@in_process $module:ident, $kind:ident, $serving:expr; $($case:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let harness = $crate::Harness::start_kind_as($crate::Kind::$kind, $serving).await;
                    super::$case(&harness).await;
                    harness.stop().await;
                }
            )*
        }
    };
    (@emulated $module:ident, $start:expr; $($case:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(case) = $start.await else { return };
                    let outcome = $crate::aws::catch(super::$case(case.harness())).await;
                    case.finish(outcome).await;
                }
            )*
        }
    };
    ($($case:ident),* $(,)?) => {
        $crate::api_cases!(@serving $crate::Serving::Open; $($case),*);
    };
}
