//! Recording a concurrent history: one logical clock, each operation's invocation and
//! acknowledgement and its outcome, and each storage call it made (start, end, success), so the
//! checks can compare acknowledgement order with commit order. A storage call commits somewhere
//! between its start and its end; one that started after an acknowledgement committed after it.

use crate::cache::CachedStore;
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Mode, SchemaId, Scope, Subject, Version};
use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
use crate::store::{Store, StoreError, StoreResult};
use crate::testkit::{HookedStore, StoreCall, StoreHook};
use registry_schema::CompatibilityLevel;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

tokio::task_local! {
    /// The operation the current task runs, so the storage hook can attribute its calls.
    static OPERATION: usize;
}

/// What an operation asks the registry for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Register { subject: String, schema: Box<NewSchema> },
    PutConfig { subject: String, level: CompatibilityLevel },
    PutMode { subject: String, mode: Mode, force: bool },
    DeleteVersion { subject: String, version: i32, permanent: bool },
    DeleteSubject { subject: String, permanent: bool },
}

impl Request {
    /// The request in a few words, for anomaly reports.
    pub fn summary(&self) -> String {
        match self {
            Request::Register { subject, schema } => {
                format!("register into {subject} ({})", schema.schema.as_deref().unwrap_or_default())
            }
            Request::PutConfig { subject, level } => format!("PUT /config/{subject} {level}"),
            Request::PutMode { subject, mode, .. } => format!("PUT /mode/{subject} {}", mode.as_str()),
            Request::DeleteVersion { subject, version, permanent } => {
                format!("DELETE /subjects/{subject}/versions/{version} permanent={permanent}")
            }
            Request::DeleteSubject { subject, permanent } => {
                format!("DELETE /subjects/{subject} permanent={permanent}")
            }
        }
    }
}

/// How an operation ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A registration's answer.
    Registered { version: Version, id: SchemaId },
    /// A delete's answer.
    Deleted(Vec<Version>),
    /// A config or mode write's answer.
    Done,
    /// A client error (4xx), with its message.
    Refused(String),
    /// A server error (5xx): never acceptable.
    Failed(String),
}

impl Outcome {
    /// Classifies a registry error as a client would see it.
    pub fn of_error(error: &RegistryError) -> Outcome {
        match error {
            RegistryError::Store(StoreError::Unavailable(_) | StoreError::Corrupt(_) | StoreError::Other(_)) => {
                Outcome::Failed(error.to_string())
            }
            other => Outcome::Refused(other.to_string()),
        }
    }
}

/// One operation of the history.
#[derive(Debug, Clone)]
pub struct Operation {
    pub request: Request,
    pub invoked: u64,
    pub acked: u64,
    pub outcome: Outcome,
}

/// One storage call an operation made.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    pub operation: usize,
    pub call: StoreCall,
    pub start: u64,
    pub end: u64,
    pub ok: bool,
}

/// The recorded history of one round.
#[derive(Debug, Default)]
pub struct History {
    clock: AtomicU64,
    operations: Mutex<Vec<Option<Operation>>>,
    open: Mutex<HashMap<usize, (StoreCall, u64)>>,
    calls: Mutex<Vec<Call>>,
    retries: AtomicUsize,
    progress: Mutex<Option<tokio::sync::watch::Sender<Progress>>>,
}

/// How far a race got: storage calls made, tasks finished.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    calls: usize,
    tasks_done: usize,
}

impl History {
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    /// Runs `request` on `registry` as one recorded operation: its invocation, its storage calls,
    /// its outcome.
    pub async fn run(&self, registry: &Registry, request: Request) -> Outcome {
        let operation = perform(registry, request.clone());
        let index = {
            let mut operations = self.operations.lock().unwrap_or_else(|p| p.into_inner());
            operations.push(None);
            operations.len() - 1
        };
        let invoked = self.tick();
        let outcome = OPERATION.scope(index, operation).await;
        let acked = self.tick();
        let recorded = Operation { request, invoked, acked, outcome: outcome.clone() };
        self.operations.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(recorded);
        outcome
    }

    fn progress(&self) -> tokio::sync::watch::Sender<Progress> {
        let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        progress.get_or_insert_with(|| tokio::sync::watch::channel(Progress::default()).0).clone()
    }

    /// Counts a finished task of the race (see [`History::wait_until`]).
    pub fn task_done(&self) {
        self.progress().send_modify(|progress| progress.tasks_done += 1);
    }

    /// Waits until `calls` storage calls were made, or `tasks` racing tasks finished (so a task
    /// that waits for more calls than the race makes still runs).
    pub async fn wait_until(&self, calls: usize, tasks: usize) {
        let mut progress = self.progress().subscribe();
        // The sender lives in `self`, so the channel stays open while we wait.
        let _ = progress.wait_for(|p| p.calls >= calls || p.tasks_done >= tasks).await;
    }

    /// Every finished operation, with its index.
    pub fn operations(&self) -> Vec<(usize, Operation)> {
        let operations = self.operations.lock().unwrap_or_else(|p| p.into_inner());
        operations.iter().enumerate().filter_map(|(i, op)| op.clone().map(|op| (i, op))).collect()
    }

    /// Every storage call of operation `index`.
    pub fn calls_of(&self, index: usize) -> Vec<Call> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|c| c.operation == index).copied().collect()
    }

    /// The successful write calls of every operation.
    pub fn committed_writes(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|c| c.ok && c.call.is_write())
            .copied()
            .collect()
    }

    /// Storage writes that lost a condition and were retried by the registry (`Conflict` answers).
    pub fn conflicts(&self) -> usize {
        self.retries.load(Ordering::SeqCst)
    }
}

/// The storage hook that records calls into a [`History`].
#[derive(Debug, Clone)]
pub struct Recorder(pub Arc<History>);

impl StoreHook for Recorder {
    fn yields(&self, _call: StoreCall) -> usize {
        // A cheap pseudo-random 0..=3 from the clock: in-memory calls interleave as remote ones do.
        let tick = self.0.clock.load(Ordering::Relaxed);
        (tick.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 62) as usize
    }

    fn before(&self, call: StoreCall) -> StoreResult<()> {
        if let Ok(operation) = OPERATION.try_with(|op| *op) {
            let start = self.0.tick();
            self.0.open.lock().unwrap_or_else(|p| p.into_inner()).insert(operation, (call, start));
        }
        Ok(())
    }

    fn after(&self, call: StoreCall, ok: bool) {
        let Ok(operation) = OPERATION.try_with(|op| *op) else { return };
        let end = self.0.tick();
        let opened = self.0.open.lock().unwrap_or_else(|p| p.into_inner()).remove(&operation);
        let start = opened.filter(|(c, _)| *c == call).map_or(end, |(_, start)| start);
        if !ok && call.is_write() {
            self.0.retries.fetch_add(1, Ordering::SeqCst);
        }
        self.0.calls.lock().unwrap_or_else(|p| p.into_inner()).push(Call { operation, call, start, end, ok });
        self.0.progress().send_modify(|progress| progress.calls += 1);
    }
}

/// Registry instances over one store, each with its own cache and no answer memory (as separate
/// Lambda instances whose lookups always read), all recording into one history.
pub struct Cluster {
    pub store: Arc<dyn Store>,
    pub registries: Vec<Registry>,
    pub history: Arc<History>,
}

impl Cluster {
    /// `instances` registries over `store`.
    pub fn new(store: Arc<dyn Store>, instances: usize) -> Cluster {
        let history = Arc::new(History::default());
        let settings = RegistrySettings {
            lookup_ttl: std::time::Duration::ZERO,
            live_id_ttl: std::time::Duration::ZERO,
            usage_granularity_days: 0,
            ..RegistrySettings::default()
        };
        let registries = (0..instances.max(1))
            .map(|_| {
                let hooked = HookedStore::new(store.clone(), Recorder(history.clone()));
                Registry::new(Arc::new(CachedStore::new(hooked)), settings.clone())
            })
            .collect();
        Cluster { store, registries, history }
    }

    /// The instance that serves request number `n` (round robin).
    pub fn instance(&self, n: usize) -> Registry {
        self.registries[n % self.registries.len()].clone()
    }
}

/// Sends `request` to `registry` and classifies the answer.
async fn perform(registry: &Registry, request: Request) -> Outcome {
    let scope = |subject: &str| Subject::new(subject).map(Scope::Subject);
    let answer = match request {
        Request::Register { subject, schema } => registry
            .register(&subject, *schema, RegisterOptions::default())
            .await
            .map(|record| Outcome::Registered { version: record.version, id: record.id }),
        Request::PutConfig { subject, level } => match scope(&subject) {
            Ok(scope) => {
                let config = ConfigRecord { compatibility_level: Some(level), ..ConfigRecord::default() };
                registry.set_config(&scope, config).await.map(|_| Outcome::Done)
            }
            Err(e) => Err(e),
        },
        Request::PutMode { subject, mode, force } => match scope(&subject) {
            Ok(scope) => registry.set_mode(&scope, mode, force).await.map(|_| Outcome::Done),
            Err(e) => Err(e),
        },
        Request::DeleteVersion { subject, version, permanent } => registry
            .delete_version(&subject, crate::model::VersionSelector::Number(Version(version)), permanent)
            .await
            .map(|v| Outcome::Deleted(vec![v])),
        Request::DeleteSubject { subject, permanent } => {
            registry.delete_subject(&subject, permanent).await.map(Outcome::Deleted)
        }
    };
    answer.unwrap_or_else(|e| Outcome::of_error(&e))
}
