//! A Lambda Runtime API emulator: runs a real function binary (`registry-lambda`) the way Lambda
//! runs it and serves it as a Function URL on a local port.
//!
//! ```text
//!  HTTP client ──► front (127.0.0.1:P, plain paths: /subjects/...) ──► Function URL event (2.0)
//!                                                                         │ queue
//!  instance k: registry-lambda process ◄── Runtime API of its own (AWS_LAMBDA_RUNTIME_API) ◄┘
//!     GET  /2018-06-01/runtime/invocation/next          → the next event (blocks while none)
//!     POST /2018-06-01/runtime/invocation/{id}/response → prelude, 8 NULs, streamed body
//!     POST /2018-06-01/runtime/invocation/{id}/error, /runtime/init/error
//! ```
//!
//! As in Lambda, an instance serves one invocation at a time, and a request that finds no idle
//! instance starts a new one (a cold start), up to [`FunctionConfig::max_instances`]; further
//! requests queue. Requests larger than 6 MB get Function URL's 413. Every instance is a child
//! process, killed by its PID when the emulator stops (or is dropped). The time from spawning
//! an instance to its first `GET /runtime/invocation/next` is its init time ([`LambdaEmulator::init_times`]).
//! Each invocation's deadline is the function's timeout after its pick-up, or another
//! ([`InvocationDeadline`]: shorter, passed, or `cargo lambda watch`'s constant), and the first
//! response posts can be made to fail ([`FunctionConfig::failed_responses`]).

mod answer;
pub mod cargo_lambda;
mod event;
mod runtime_api;

pub use answer::Answer;
pub use cargo_lambda::CargoLambdaWatch;
pub use event::function_url_event;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

/// Function URL's limit on a request payload.
pub const MAX_REQUEST_BYTES: usize = 6 * 1024 * 1024;

/// Lambda's longest function timeout (15 minutes).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(900);

/// The function to run and how.
#[derive(Debug, Clone)]
pub struct FunctionConfig {
    /// The function's executable (Lambda's `bootstrap`).
    pub binary: PathBuf,
    /// Environment of every instance, on top of this process's and the `AWS_LAMBDA_*` variables.
    pub env: Vec<(String, String)>,
    /// Most instances running at once (Lambda's concurrency limit).
    pub max_instances: usize,
    /// How long a request waits for the function's answer (status and headers) before a 504.
    pub timeout: Duration,
    /// The deadline each invocation is handed (`Lambda-Runtime-Deadline-Ms`).
    pub deadline: InvocationDeadline,
    /// How many response posts fail, the first ones: the emulator cuts the post's connection
    /// before answering it (as `cargo lambda watch` does when an invocation's caller has gone
    /// away), and the invocation's caller gets 502.
    pub failed_responses: usize,
    /// Where every instance's stdout and stderr go (appended); `None`: discarded.
    pub log: Option<PathBuf>,
    /// Run before each request is handed to the function (a read region's harness makes
    /// replication catch up there); a panic in it answers the request 502 naming it.
    pub before_invoke: Option<BeforeInvoke>,
    /// Run while the function serves each request, dropped when it answers (a read region's
    /// harness replicates meanwhile, as a write there waits for its replica to show it).
    pub while_invoking: Option<BeforeInvoke>,
}

/// The deadline the emulator hands an invocation when an instance picks it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvocationDeadline {
    /// The function's timeout ([`FunctionConfig::timeout`]) after the pick-up, as Lambda does.
    Timeout,
    /// This long after the pick-up (a function with a shorter timeout).
    After(Duration),
    /// Passed by this much at the pick-up.
    PassedBy(Duration),
    /// These milliseconds since the epoch, whatever the time (`cargo lambda watch` sends 600000).
    Fixed(u64),
}

/// What [`FunctionConfig::before_invoke`] and [`FunctionConfig::while_invoking`] run: a future
/// per request.
#[derive(Clone)]
pub struct BeforeInvoke(pub Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>);

impl std::fmt::Debug for BeforeInvoke {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeInvoke")
    }
}

impl FunctionConfig {
    /// `binary` with the given environment, 4 instances at most, Lambda's longest timeout (so that a
    /// test never fails because a busy machine is slow), output discarded.
    pub fn new(binary: impl Into<PathBuf>, env: Vec<(String, String)>) -> FunctionConfig {
        FunctionConfig {
            binary: binary.into(),
            env,
            max_instances: 4,
            timeout: MAX_TIMEOUT,
            deadline: InvocationDeadline::Timeout,
            failed_responses: 0,
            log: None,
            before_invoke: None,
            while_invoking: None,
        }
    }
}

/// The `registry-lambda` binary: `REGISTRY_LAMBDA_BIN`, else `registry-lambda` in the profile
/// directory this test executable was built into (`debug/` under cargo's target directory, wherever
/// CARGO_TARGET_DIR puts it; `cargo test --workspace` and `make test` build it). Panics, naming the build command, when it is not there.
pub fn function_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("REGISTRY_LAMBDA_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/<test>-<hash> for a test, target/<profile>/<name> for a binary.
    let executable = std::env::current_exe().unwrap_or_default();
    let mut dir = executable.parent().map(PathBuf::from).unwrap_or_default();
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.pop();
    }
    let binary = dir.join("registry-lambda");
    assert!(
        binary.is_file(),
        "no {}: build it with `cargo build -p registry-lambda` (or set REGISTRY_LAMBDA_BIN)",
        binary.display()
    );
    binary
}

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error("binding {0}: {1}")]
    Bind(&'static str, std::io::Error),
    #[error("starting {0}: {1}")]
    Spawn(String, std::io::Error),
    #[error("the first instance exited before asking for an event: {0}")]
    InitFailed(String),
}

/// One invocation waiting for, or held by, an instance.
struct Invocation {
    id: String,
    event: Value,
    answer: oneshot::Sender<Answer>,
}

/// State shared by the front, every instance's Runtime API and the process watchers.
struct Shared {
    config: FunctionConfig,
    queue: Mutex<VecDeque<Invocation>>,
    queued: Notify,
    /// Invocations handed to an instance, by request id, until it answers.
    dispatched: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    instances: Mutex<Vec<InstanceRecord>>,
    /// Instances currently waiting in `GET /runtime/invocation/next`.
    idle: AtomicUsize,
    /// Response posts still to fail ([`FunctionConfig::failed_responses`]).
    failing_responses: AtomicUsize,
    next_request: AtomicU64,
}

/// What the emulator keeps of an instance.
struct InstanceRecord {
    pid: Option<u32>,
    init: Arc<Mutex<Option<Duration>>>,
    exited: Arc<Mutex<Option<String>>>,
    kill: Option<oneshot::Sender<()>>,
    watcher: JoinHandle<()>,
    runtime_api: JoinHandle<()>,
}

/// A running emulator. Stop it with [`LambdaEmulator::stop`]; dropping it kills the instances too.
pub struct LambdaEmulator {
    url: String,
    shared: Arc<Shared>,
    front: JoinHandle<()>,
}

impl std::fmt::Debug for LambdaEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LambdaEmulator").field("url", &self.url).finish_non_exhaustive()
    }
}

impl LambdaEmulator {
    /// Serves the front on `port` of 127.0.0.1 (0: any free port) and starts the first instance.
    pub async fn start(config: FunctionConfig, port: u16) -> Result<LambdaEmulator, EmulatorError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| EmulatorError::Bind("the Function URL port", e))?;
        let address = listener.local_addr().map_err(|e| EmulatorError::Bind("the Function URL port", e))?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            queued: Notify::new(),
            dispatched: Mutex::new(HashMap::new()),
            instances: Mutex::new(Vec::new()),
            idle: AtomicUsize::new(0),
            failing_responses: AtomicUsize::new(config.failed_responses),
            next_request: AtomicU64::new(1),
            config,
        });
        Shared::spawn_instance(&shared, 1)?;
        let app = Router::new().fallback(invoke).with_state(shared.clone());
        let front = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("lambda emulator: front server failed: {error}");
            }
        });
        Ok(LambdaEmulator { url: format!("http://{address}"), shared, front })
    }

    /// `http://127.0.0.1:<port>`: the Function URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits until the first instance asks for an event and returns its init time (spawn → first
    /// `GET /runtime/invocation/next`); `InitFailed` if it exited first.
    pub async fn first_init(&self) -> Result<Duration, EmulatorError> {
        let (init, exited) = {
            let instances = lock(&self.shared.instances);
            let first = instances.first().ok_or_else(|| EmulatorError::InitFailed("no instance".into()))?;
            (first.init.clone(), first.exited.clone())
        };
        loop {
            if let Some(init) = *lock(&init) {
                return Ok(init);
            }
            if let Some(status) = lock(&exited).clone() {
                return Err(EmulatorError::InitFailed(status));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The init time of every instance that has asked for an event, in start order.
    pub fn init_times(&self) -> Vec<Duration> {
        lock(&self.shared.instances).iter().filter_map(|i| *lock(&i.init)).collect()
    }

    /// Instances started so far (cold starts).
    pub fn instances_started(&self) -> usize {
        lock(&self.shared.instances).len()
    }

    /// PIDs of the instances still running.
    pub fn pids(&self) -> Vec<u32> {
        lock(&self.shared.instances).iter().filter(|i| lock(&i.exited).is_none()).filter_map(|i| i.pid).collect()
    }

    /// Stops serving, kills every instance by its PID and waits for it to exit.
    pub async fn stop(self) {
        self.front.abort();
        let records: Vec<InstanceRecord> = std::mem::take(&mut *lock(&self.shared.instances));
        for mut record in records {
            if let Some(kill) = record.kill.take() {
                let _ = kill.send(());
            }
            let _ = (&mut record.watcher).await;
            record.runtime_api.abort();
        }
    }
}

impl Drop for LambdaEmulator {
    fn drop(&mut self) {
        self.front.abort();
        for record in lock(&self.shared.instances).iter_mut() {
            if let Some(kill) = record.kill.take() {
                let _ = kill.send(());
            }
            record.runtime_api.abort();
        }
    }
}

impl Shared {
    /// Starts one instance (its own Runtime API on a free port, then the process) unless
    /// `max_running` instances already run; true when it started one.
    fn spawn_instance(shared: &Arc<Shared>, max_running: usize) -> Result<bool, EmulatorError> {
        let mut instances = lock(&shared.instances);
        if instances.iter().filter(|i| lock(&i.exited).is_none()).count() >= max_running {
            return Ok(false);
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|e| EmulatorError::Bind("a Runtime API port", e))?;
        let runtime_address = listener.local_addr().map_err(|e| EmulatorError::Bind("a Runtime API port", e))?;
        let config = &shared.config;
        let mut command = tokio::process::Command::new(&config.binary);
        let index = instances.len();
        command
            .env("AWS_LAMBDA_RUNTIME_API", runtime_address.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", "registry-lambda")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/registry-lambda")
            .env("AWS_LAMBDA_LOG_STREAM_NAME", format!("emulator/instance-{index}"))
            .env("AWS_EXECUTION_ENV", "AWS_Lambda_provided.al2023")
            .envs(config.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        match &config.log {
            Some(path) => {
                let open = || std::fs::OpenOptions::new().create(true).append(true).open(path);
                let (out, err) = open()
                    .and_then(|out| open().map(|err| (out, err)))
                    .map_err(|e| EmulatorError::Spawn(path.display().to_string(), e))?;
                command.stdout(out).stderr(err);
            }
            None => {
                command.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| EmulatorError::Spawn(config.binary.display().to_string(), e))?;
        let init = Arc::new(Mutex::new(None));
        let exited = Arc::new(Mutex::new(None));
        let runtime_api = runtime_api::serve(listener, shared.clone(), started, init.clone());
        let (kill, killed) = oneshot::channel::<()>();
        let pid = child.id();
        let watcher = {
            let (shared, exited) = (shared.clone(), exited.clone());
            tokio::spawn(async move {
                let status = tokio::select! {
                    status = child.wait() => status.map(|s| s.to_string()),
                    _ = killed => {
                        let _ = child.kill().await;
                        Ok("killed by the emulator".to_string())
                    }
                };
                *lock(&exited) = Some(status.unwrap_or_else(|e| e.to_string()));
                shared.instance_exited();
            })
        };
        instances.push(InstanceRecord { pid, init, exited, kill: Some(kill), watcher, runtime_api });
        Ok(true)
    }

    /// Instances not yet exited.
    fn running(&self) -> usize {
        lock(&self.instances).iter().filter(|i| lock(&i.exited).is_none()).count()
    }

    /// After an instance exits: when none is left, queued requests fail (a new request starts a
    /// new instance). Requests the instance held fail too.
    fn instance_exited(&self) {
        if self.running() == 0 {
            for invocation in lock(&self.queue).drain(..) {
                let _ = invocation.answer.send(Answer::Failed("every instance exited".into()));
            }
            for (_, answer) in lock(&self.dispatched).drain() {
                let _ = answer.send(Answer::Failed("the instance exited during the invocation".into()));
            }
        }
    }

    /// A cold start when no instance is idle and the concurrency limit allows one.
    fn scale(shared: &Arc<Shared>) {
        let waiting = lock(&shared.queue).len();
        let idle = shared.idle.load(Ordering::SeqCst);
        if waiting > idle
            && let Err(error) = Shared::spawn_instance(shared, shared.config.max_instances)
        {
            eprintln!("lambda emulator: cannot start another instance: {error}");
        }
    }

    /// Waits for the next queued invocation (for an instance in `GET /runtime/invocation/next`).
    async fn next_invocation(&self) -> Invocation {
        loop {
            let notified = self.queued.notified();
            if let Some(invocation) = lock(&self.queue).pop_front() {
                return invocation;
            }
            notified.await;
        }
    }
}

/// The front: one request → one invocation → the function's answer.
async fn invoke(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Request Entity Too Large").into_response();
    };
    if let Some(before) = &shared.config.before_invoke
        && let Err(panic) = tokio::spawn((before.0)()).await
    {
        let message = format!("before the invocation: {panic}");
        return (StatusCode::BAD_GATEWAY, Body::from(message)).into_response();
    }
    let number = shared.next_request.fetch_add(1, Ordering::SeqCst);
    let id = format!("{:08x}-0000-4000-8000-{:012x}", std::process::id(), number);
    let event = function_url_event(&parts, &body, &id, "127.0.0.1");
    let (answer, answered) = oneshot::channel();
    // When every instance is gone (crashed or failed init), this request is a fresh cold start.
    if let Err(error) = Shared::spawn_instance(&shared, 1) {
        return Answer::Failed(error.to_string()).into_response();
    }
    lock(&shared.queue).push_back(Invocation { id, event, answer });
    shared.queued.notify_one();
    Shared::scale(&shared);
    // Aborted when the request is answered (dropping the handle alone would not stop it).
    let meanwhile = shared.config.while_invoking.as_ref().map(|during| AbortOnDrop(tokio::spawn((during.0)())));
    let _meanwhile = meanwhile;
    match tokio::time::timeout(shared.config.timeout, answered).await {
        Ok(Ok(answer)) => answer.into_response(),
        Ok(Err(_)) => Answer::Failed("the invocation was dropped".into()).into_response(),
        Err(_) => (StatusCode::GATEWAY_TIMEOUT, Body::from("function timed out")).into_response(),
    }
}

/// A task aborted when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Locks `mutex`; a panic while holding one of these locks leaves plain data, so poison is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
