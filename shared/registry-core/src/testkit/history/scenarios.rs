//! The racing scenarios and the invariants each asserts over its recorded history.
//!
//! Each scenario builds its subjects (unrecorded), races its operations (recorded), then checks
//! the history and the final state, returning what it found: anomalies (each naming its
//! invariant) and work counts that show the races really interleaved.

use super::record::{Call, Cluster, History, Outcome, Request};
use crate::model::{ConfigRecord, Mode, SchemaId, Scope, Subject, Version, VersionRow};
use crate::registry::{NewSchema, RegisterOptions, Registry};
use crate::store::SettingKind;
use crate::testkit::{StoreCall, StoreTestExt, unique_name};
use registry_schema::{CompatibilityLevel, Fingerprint, SchemaReference};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What the scenarios of a run found.
#[derive(Debug, Default)]
pub struct Findings {
    /// Violated invariants, each starting with its name.
    pub anomalies: Vec<String>,
    /// Registrations that created a version.
    pub registered: usize,
    /// Operations a concurrent operation made fail (409 after a stricter config, 42205 after
    /// READONLY, references gone, 40405 because a version appeared, ...).
    pub refused: usize,
    /// Conditional writes that lost and were retried with fresh reads.
    pub conflicts: usize,
}

impl Findings {
    /// Adds `other`'s anomalies and counts to these.
    pub fn add(&mut self, other: Findings) {
        self.anomalies.extend(other.anomalies);
        self.registered += other.registered;
        self.refused += other.refused;
        self.conflicts += other.conflicts;
    }

    fn absorb(&mut self, history: &History) {
        self.conflicts += history.conflicts();
        for (_, op) in history.operations() {
            match &op.outcome {
                Outcome::Registered { .. } => self.registered += 1,
                Outcome::Refused(_) => self.refused += 1,
                Outcome::Failed(e) => self.anomalies.push(format!("no 5xx: {} answered {e}", op.request.summary())),
                Outcome::Deleted(_) | Outcome::Done => {}
            }
        }
    }
}

/// A task of a race: waits until the race made `after` storage calls, then runs `requests` one
/// after the other. Rounds vary `after`, so the task starts at a different point of the others'
/// work each time.
struct Job {
    after: usize,
    requests: Vec<Request>,
}

/// Where in the others' work a late task starts in `round`: 0, 7, 14, ... modulo `span` calls.
fn sweep(round: usize, span: usize) -> usize {
    round * 7 % span
}

fn job(after: usize, request: Request) -> Job {
    Job { after, requests: vec![request] }
}

/// Runs the jobs concurrently, spreading them over the cluster's instances.
async fn race(cluster: &Cluster, jobs: Vec<Job>) {
    let half = jobs.len() / 2;
    let tasks: Vec<_> = jobs
        .into_iter()
        .enumerate()
        .map(|(n, job)| {
            let (registry, history) = (cluster.instance(n), cluster.history.clone());
            tokio::spawn(async move {
                history.wait_until(job.after, half).await;
                for request in job.requests {
                    history.run(&registry, request).await;
                }
                history.task_done();
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("history: a racing task panicked");
    }
}

fn record(name: &str, fields: &[(&str, &str)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(f, t)| format!(r#"{{"name":"{f}","type":"{t}"}}"#)).collect();
    format!(r#"{{"type":"record","name":"{name}","fields":[{}]}}"#, fields.join(","))
}

fn schema(text: String) -> NewSchema {
    NewSchema { schema: Some(text), ..NewSchema::default() }
}

fn register(subject: &str, text: String) -> Request {
    Request::Register { subject: subject.to_string(), schema: Box::new(schema(text)) }
}

/// Unrecorded setup and final reads: fail loudly.
async fn given_registered(registry: &Registry, subject: &str, text: String) -> (Version, SchemaId) {
    let record = registry
        .register(subject, schema(text), RegisterOptions::default())
        .await
        .unwrap_or_else(|e| panic!("history setup: register into {subject}: {e}"));
    (record.version, record.id)
}

async fn given_level(registry: &Registry, subject: &str, level: CompatibilityLevel) {
    let config = ConfigRecord { compatibility_level: Some(level), ..ConfigRecord::default() };
    registry.set_config(&scope(subject), config).await.unwrap_or_else(|e| panic!("history setup: config: {e}"));
}

/// A fresh subject named from `prefix`, at compatibility NONE, with `first` registered through
/// instance 0 (returned with it).
async fn given_subject_at_none(cluster: &Cluster, prefix: &str, first: String) -> (String, Registry) {
    let subject = unique_name(prefix);
    let registry = cluster.instance(0);
    given_level(&registry, &subject, CompatibilityLevel::None).await;
    given_registered(&registry, &subject, first).await;
    (subject, registry)
}

fn scope(subject: &str) -> Scope {
    Scope::Subject(Subject::new(subject).expect("history subjects are valid"))
}

async fn rows(cluster: &Cluster, subject: &str) -> Vec<VersionRow> {
    let subject = Subject::new(subject).expect("history subjects are valid");
    cluster.store.versions(&subject).await.expect("history: versions")
}

/// The successful store call `call` of operation `index`, if it made one.
fn committed(history: &History, index: usize, call: StoreCall) -> Option<Call> {
    history.calls_of(index).into_iter().find(|c| c.ok && c.call == call)
}

/// Whether a registration that answered `row` had committed it before the clock read `instant`.
fn registered_before(history: &History, row: &VersionRow, instant: u64) -> bool {
    find(history, |r| matches!(r, Request::Register { .. }))
        .into_iter()
        .filter(|(_, op)| op.outcome == Outcome::Registered { version: row.version, id: row.id })
        .filter_map(|(index, _)| created(history, index))
        .any(|created| created.end < instant)
}

/// The successful version commit of operation `index`, if it made one (either store call commits a row).
fn created(history: &History, index: usize) -> Option<Call> {
    committed(history, index, StoreCall::CreateVersion)
        .or_else(|| committed(history, index, StoreCall::CreateVersionAssigningId))
}

/// Whether `call` changes what clients of a subject see (staging a body, a guid or an ID does not).
fn changes_subject(call: StoreCall) -> bool {
    matches!(
        call,
        StoreCall::CreateVersion
            | StoreCall::CreateVersionAssigningId
            | StoreCall::SoftDeleteVersions
            | StoreCall::HardDeleteVersions
            | StoreCall::WriteSetting { kind: SettingKind::Config }
    )
}

/// The recorded operation matching `wanted`, with its index.
fn find(history: &History, wanted: impl Fn(&Request) -> bool) -> Vec<(usize, super::record::Operation)> {
    history.operations().into_iter().filter(|(_, op)| wanted(&op.request)).collect()
}

/// Field-type changes: under FULL every one of them is incompatible with every other.
const TYPES: [&str; 5] = ["long", "float", "double", "string", "boolean"];

/// Invariant 1: with a subject at NONE, `PUT /config FULL` races registrations that change a
/// field's type; no version may be committed after the config write committed.
pub async fn stricter_config(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let (subject, _) = given_subject_at_none(cluster, "h-config", record("Tight", &[("f", "int")])).await;
    let mut jobs: Vec<Job> = TYPES.iter().map(|t| job(0, register(&subject, record("Tight", &[("f", t)])))).collect();
    let config = Request::PutConfig { subject: subject.clone(), level: CompatibilityLevel::Full };
    jobs.insert(round % (TYPES.len() + 1), job(sweep(round, 30), config));
    race(cluster, jobs).await;
    let history = &cluster.history;
    let Some(config_written) = find(history, |r| matches!(r, Request::PutConfig { .. }))
        .first()
        .and_then(|(index, _)| committed(history, *index, StoreCall::WriteSetting { kind: SettingKind::Config }))
    else {
        findings.anomalies.push(format!("stricter config: PUT /config/{subject} did not commit"));
        return;
    };
    for (index, op) in find(history, |r| matches!(r, Request::Register { .. })) {
        if let Some(created) = created(history, index)
            && created.start > config_written.end
        {
            findings.anomalies.push(format!(
                "stricter config: {subject} {:?} committed at {} after FULL committed at {} (acked {})",
                op.outcome, created.start, config_written.end, op.acked
            ));
        }
    }
}

/// Invariant 2: `PUT /mode READONLY` races registrations, a soft delete and `PUT /config`; no
/// write of theirs may commit after the mode write committed.
pub async fn readonly_barrier(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let (subject, _) = given_subject_at_none(cluster, "h-readonly", record("Frozen", &[("f", "int")])).await;
    let mut jobs: Vec<Job> = TYPES.iter().map(|t| job(0, register(&subject, record("Frozen", &[("f", t)])))).collect();
    jobs.push(job(
        sweep(round + 1, 30),
        Request::PutConfig { subject: subject.clone(), level: CompatibilityLevel::None },
    ));
    jobs.push(job(
        sweep(round + 2, 30),
        Request::DeleteVersion { subject: subject.clone(), version: 1, permanent: false },
    ));
    jobs.push(job(
        sweep(round + 3, 30),
        Request::PutConfig { subject: subject.clone(), level: CompatibilityLevel::None },
    ));
    let mode = Request::PutMode { subject: subject.clone(), mode: Mode::ReadOnly, force: false };
    jobs.insert(round % (TYPES.len() + 1), job(sweep(round, 30), mode));
    race(cluster, jobs).await;
    let history = &cluster.history;
    let Some((mode_index, frozen)) =
        find(history, |r| matches!(r, Request::PutMode { .. })).first().and_then(|(index, _)| {
            committed(history, *index, StoreCall::WriteSetting { kind: SettingKind::Mode }).map(|c| (*index, c))
        })
    else {
        findings.anomalies.push(format!("readonly: PUT /mode/{subject} did not commit"));
        return;
    };
    for write in history.committed_writes() {
        if write.operation != mode_index && changes_subject(write.call) && write.start > frozen.end {
            let op = &history.operations()[write.operation].1;
            findings.anomalies.push(format!(
                "write after READONLY: {:?} by {} at {} after READONLY committed at {}",
                write.call,
                op.request.summary(),
                write.start,
                frozen.end
            ));
        }
    }
}

/// Entering IMPORT (without `force`) races registrations into a subject whose only version is
/// soft-deleted: when IMPORT is acknowledged, no live version may have been committed before it.
pub async fn import_entry(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let (subject, registry) = given_subject_at_none(cluster, "h-import", record("Imported", &[("i", "int")])).await;
    registry.delete_subject(&subject, false).await.unwrap_or_else(|e| panic!("history setup: soft delete: {e}"));
    let mut jobs: Vec<Job> =
        TYPES[..3].iter().map(|t| job(0, register(&subject, record("Imported", &[("i", t)])))).collect();
    let mode = Request::PutMode { subject: subject.clone(), mode: Mode::Import, force: false };
    jobs.insert(round % 4, job(sweep(round, 30), mode));
    race(cluster, jobs).await;
    let history = &cluster.history;
    let entered = find(history, |r| matches!(r, Request::PutMode { .. }))
        .first()
        .filter(|(_, op)| op.outcome == Outcome::Done)
        .and_then(|(index, _)| committed(history, *index, StoreCall::WriteSetting { kind: SettingKind::Mode }));
    let Some(entered) = entered else { return };
    for row in rows(cluster, &subject).await.iter().filter(|r| !r.deleted) {
        if registered_before(history, row, entered.start) {
            findings.anomalies.push(format!(
                "IMPORT entry: {subject} v{} was live before IMPORT was entered without force",
                row.version
            ));
        }
    }
}

/// Invariant 3: referrers of `b` v1 race its soft and then hard delete, after which `b` gets an
/// unrelated schema; every live referrer must still resolve to the schema it was registered with.
pub async fn referenced_delete(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let target = unique_name("h-ref-target");
    let registry = cluster.instance(0);
    given_level(&registry, &target, CompatibilityLevel::None).await;
    let type_name = format!("Ref{round}");
    given_registered(&registry, &target, record(&type_name, &[("x", "int")])).await;
    let original = rows(cluster, &target).await[0].fingerprint;
    let referrers: Vec<String> = (0..4).map(|i| unique_name(&format!("h-ref-holder{i}"))).collect();
    let mut jobs: Vec<Job> = referrers
        .iter()
        .map(|holder| {
            let text = record("Holder", &[("r", &type_name)]);
            let reference = SchemaReference { name: type_name.clone(), subject: target.clone(), version: 1 };
            let schema = NewSchema { references: vec![reference], ..schema(text) };
            job(0, Request::Register { subject: holder.clone(), schema: Box::new(schema) })
        })
        .collect();
    let deletes = Job {
        after: sweep(round, 30),
        requests: vec![
            Request::DeleteVersion { subject: target.clone(), version: 1, permanent: false },
            Request::DeleteVersion { subject: target.clone(), version: 1, permanent: true },
        ],
    };
    jobs.insert(round % 5, deletes);
    race(cluster, jobs).await;
    given_registered(&registry, &target, record("Unrelated", &[("y", "string")])).await;
    for holder in &referrers {
        for row in rows(cluster, holder).await {
            let resolved = rows(cluster, &target).await.into_iter().find(|r| r.version == Version(1));
            let fine = match &resolved {
                Some(referenced) => referenced.fingerprint == original && (row.deleted || !referenced.deleted),
                None => false,
            };
            if !fine {
                findings.anomalies.push(format!(
                    "reference to a deleted version: {holder} v{} (deleted: {}) references {target} v1, now {:?}",
                    row.version,
                    row.deleted,
                    resolved.map(|r| (r.fingerprint == original, r.deleted))
                ));
            }
        }
    }
}

/// Invariants 4 and 5: a soft-deleted subject's permanent delete races registrations into it, and
/// the permanent delete of a version races registrations of its schema into other subjects.
pub async fn hard_deletes(cluster: &Cluster, round: usize, findings: &mut Findings) {
    subject_hard_delete(cluster, round, findings).await;
    version_hard_delete(cluster, round, findings).await;
}

async fn subject_hard_delete(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let (subject, registry) = given_subject_at_none(cluster, "h-purge", record("Purged", &[("a", "int")])).await;
    given_registered(&registry, &subject, record("Purged", &[("a", "long")])).await;
    registry.delete_subject(&subject, false).await.unwrap_or_else(|e| panic!("history setup: soft delete: {e}"));
    let mut jobs: Vec<Job> =
        TYPES[2..].iter().map(|t| job(0, register(&subject, record("Purged", &[("a", t)])))).collect();
    jobs.insert(round % 4, job(sweep(round, 20), Request::DeleteSubject { subject: subject.clone(), permanent: true }));
    race(cluster, jobs).await;
    let history = &cluster.history;
    let left = rows(cluster, &subject).await;
    let numbers: Vec<i32> = left.iter().map(|r| r.version.0).collect();
    if numbers != (1..=left.len() as i32).collect::<Vec<_>>() {
        findings.anomalies.push(format!("versions dense: {subject} holds {numbers:?} after the race"));
    }
    let delete = find(history, |r| matches!(r, Request::DeleteSubject { .. }));
    let Some((delete_index, delete_op)) = delete.first() else { return };
    let config = cluster.store.get_config(&scope(&subject)).await.expect("history: get_config");
    let purged = committed(history, *delete_index, StoreCall::HardDeleteVersions);
    match (&delete_op.outcome, purged) {
        (Outcome::Deleted(_), Some(purge)) => {
            for row in &left {
                if registered_before(history, row, purge.start) {
                    findings.anomalies.push(format!(
                        "hard delete vs registration: {subject} v{} was committed before the permanent delete that answered {:?}",
                        row.version, delete_op.outcome
                    ));
                }
            }
            if config.is_some() {
                findings.anomalies.push(format!("config survives: {subject}'s config outlived its permanent delete"));
            }
        }
        _ if config.is_none() => findings.anomalies.push(format!(
            "config survives: {subject}'s config is gone though its permanent delete answered {:?}",
            delete_op.outcome
        )),
        _ => {}
    }
}

async fn version_hard_delete(cluster: &Cluster, round: usize, findings: &mut Findings) {
    let origin = unique_name("h-unbind");
    let registry = cluster.instance(0);
    let text = record(&format!("Unbound{round}"), &[("u", "int")]);
    given_registered(&registry, &origin, text.clone()).await;
    let selector = crate::model::VersionSelector::Number(Version(1));
    registry.delete_version(&origin, selector, false).await.unwrap_or_else(|e| panic!("history setup: {e}"));
    let fingerprint: Fingerprint = rows(cluster, &origin).await[0].fingerprint;
    let others: Vec<String> = (0..6).map(|i| unique_name(&format!("h-unbind-other{i}"))).collect();
    let mut jobs: Vec<Job> = others
        .iter()
        .enumerate()
        .map(|(i, s)| job(if i % 2 == 0 { 0 } else { sweep(round + i, 30) }, register(s, text.clone())))
        .collect();
    let purge = Request::DeleteVersion { subject: origin.clone(), version: 1, permanent: true };
    jobs.insert(round % 5, job(sweep(round, 30), purge));
    jobs.push(job(40, register(&unique_name("h-unbind-late"), text.clone())));
    race(cluster, jobs).await;
    let mut ids: BTreeSet<SchemaId> = BTreeSet::new();
    let mut subjects = others.clone();
    subjects.push(origin.clone());
    for (_, op) in find(&cluster.history, |r| matches!(r, Request::Register { .. })) {
        if let Request::Register { subject, .. } = &op.request
            && !subjects.contains(subject)
        {
            subjects.push(subject.clone());
        }
    }
    for subject in &subjects {
        ids.extend(rows(cluster, subject).await.iter().filter(|r| r.fingerprint == fingerprint).map(|r| r.id));
    }
    let bound = cluster.store.id_for_fingerprint(&fingerprint).await.expect("history: id_for_fingerprint");
    if ids.len() > 1 || (!ids.is_empty() && bound.is_none_or(|id| !ids.contains(&id))) {
        findings.anomalies.push(format!(
            "same schema, same id: rows of {fingerprint} carry ids {ids:?}, the schema is bound to {bound:?}"
        ));
    }
}

/// Runs every scenario once on a fresh history of `cluster`'s instances.
pub async fn round(store: Arc<dyn crate::store::Store>, instances: usize, round: usize, findings: &mut Findings) {
    type Scenario = for<'a> fn(
        &'a Cluster,
        usize,
        &'a mut Findings,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;
    let scenarios: [Scenario; 5] = [
        |c, r, f| Box::pin(stricter_config(c, r, f)),
        |c, r, f| Box::pin(readonly_barrier(c, r, f)),
        |c, r, f| Box::pin(referenced_delete(c, r, f)),
        |c, r, f| Box::pin(hard_deletes(c, r, f)),
        |c, r, f| Box::pin(import_entry(c, r, f)),
    ];
    for scenario in scenarios {
        let cluster = Cluster::new(store.clone(), instances);
        scenario(&cluster, round, findings).await;
        findings.absorb(&cluster.history);
    }
}
