//! RPO 0 on request for every write, on the emulator: a home region (us-east-1) and a read region
//! (eu-west-1), the test-only [`Replicator`] standing in for global tables (paused, or run every
//! 20 ms by a task). For each write kind (soft delete, hard delete, config and mode, KEK and DEK):
//! with replication paused the write answers 500/50002 once the bound ran out and counts the
//! timeout, and what sending it again answers; with replication running it is acknowledged, and
//! the read region then answers the new state from its replica with no call to the home. Prints
//! the AWS calls each acknowledgement cost
//! (`cargo test -p registry-store-aws --test regions_ack -- --nocapture`).

mod support;

use support::http::{call, registry, schema};

use axum::http::{Method, StatusCode};
use registry_dek::{DekRegistry, KmsRegistry};
use registry_http::AppOptions;
use registry_store_aws::AwsStore;
use registry_store_aws::regions::{AckReplicas, RegionalStore};
use registry_store_aws::testing::replicator::{Replicator, Site};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";
/// The bound of a wait that must run out (replication paused).
const QUICK: Duration = Duration::from_millis(400);
/// The bound of a wait that must not: sized for a loaded machine, so only a replica that never
/// shows the write fails.
const PATIENT: Duration = Duration::from_secs(120);

/// The application over `store`, with the DEK registry in its table.
fn app(store: AwsStore) -> axum::Router {
    let deks = Arc::new(DekRegistry::new(Arc::new(store.clone()), KmsRegistry::new()));
    registry_http::app(registry(Arc::new(store)), AppOptions { deks: Some(deks), ..AppOptions::default() })
}

/// The home application waiting at most `timeout` for the read region's replicas, and what it
/// waits for.
fn home_app(home: &Site, read: &Site, timeout: Duration) -> (axum::Router, Arc<AckReplicas>) {
    let (acked, acks) = support::acknowledging_home(home, read, timeout);
    (app(acked), acks)
}

/// The read region's application (local reads, writes through the home) and its store, whose
/// `home()` calls tell whether a read asked the home region.
fn read_app(home: &Site, read: &Site) -> (axum::Router, RegionalStore) {
    let writes = home.store().fenced_by(HOME);
    let reads = RegionalStore::new(read.store(), writes.clone());
    let local = registry_http::app(registry(Arc::new(reads.clone())), dek_options(reads.local()));
    (registry_http::regional::app(local, app(writes)), reads)
}

fn dek_options(store: &AwsStore) -> AppOptions {
    let deks = Arc::new(DekRegistry::new(Arc::new(store.clone()), KmsRegistry::new()));
    AppOptions { deks: Some(deks), ..AppOptions::default() }
}

/// The answer's status and `error_code` (none on success).
fn code(answer: &(StatusCode, Value)) -> (StatusCode, Option<i64>) {
    (answer.0, answer.1["error_code"].as_i64())
}

async fn register(app: &axum::Router, subject: &str, tag: &str) -> i64 {
    let path = format!("/subjects/{subject}/versions");
    let answer = call(app, Method::POST, &path, Some(json!({"schema": schema(tag)}))).await;
    answer.1["id"].as_i64().unwrap_or_else(|| panic!("registering {subject}: {answer:?}"))
}

/// Sends the write with replication paused: it must answer 500/50002 once `acks`' bound ran out
/// (not before; the upper bound only tells a bounded wait from an endless one on a loaded
/// machine) and count one more timeout.
async fn refused(app: &axum::Router, acks: &AckReplicas, method: Method, path: &str, body: Option<Value>) {
    let timeouts = acks.timeouts();
    let started = Instant::now();
    let answer = call(app, method.clone(), path, body).await;
    let waited = started.elapsed();
    assert_eq!(
        code(&answer),
        (StatusCode::INTERNAL_SERVER_ERROR, Some(50002)),
        "{method} {path} acknowledged without the replica: {answer:?}"
    );
    assert!(waited >= QUICK && waited < QUICK + Duration::from_secs(60), "{method} {path} waited {waited:?}");
    assert_eq!(acks.timeouts(), timeouts + 1, "{method} {path}: the timeout is counted");
}

/// A task replicating home → read every 20 ms with `replicator` until [`Running::stop`] (or until
/// dropped: a failed test's sites are deleted under it).
struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl Running {
    fn start(replicator: &Arc<Replicator>, home: &Site, read: &Site) -> Running {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (replicator, from, to) = (replicator.clone(), home.clone(), read.clone());
        let task = tokio::spawn(async move {
            loop {
                replicator.replicate(&from, &to).await;
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                }
            }
        });
        Running { stop: Some(stop), task: Some(task) }
    }

    /// Stops the task; nothing is replicated after this returns.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Sends an acknowledged write (replication running): success, no wait ran out, and each poll of
/// the replica the same calls (a BatchGetItem per 100 items; a registration's body a GetObject more
/// at each poll that found its items); prints them.
async fn acknowledged(
    app: &axum::Router,
    acks: &AckReplicas,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Value {
    let (timeouts, calls, polls) = (acks.timeouts(), acks.calls(), acks.polls());
    let answer = call(app, method.clone(), path, body).await;
    assert!(answer.0.is_success(), "{method} {path}: {answer:?}");
    assert_eq!(acks.timeouts(), timeouts, "{method} {path}: no wait ran out while the replica followed");
    let (calls, polls) = (acks.calls() - calls, acks.polls() - polls);
    // A registration's body: one GetObject at each poll that found the items (at least the last).
    let registration = method == Method::POST && path.starts_with("/subjects/");
    match registration {
        true => assert!(calls > polls && calls <= 2 * polls, "{method} {path}: {calls} calls in {polls} polls"),
        false => assert!(polls > 0 && calls % polls == 0, "{method} {path}: {calls} calls in {polls} polls"),
    }
    eprintln!("{method} {path}: acknowledged after {calls} replica calls in {polls} polls");
    answer.1
}

/// The replica's answer to `GET path` (an application over the read region's table and bucket
/// alone: the read region's own application asks the home again after a 404, so a "not found" is
/// checked here).
async fn on_replica(read: &Site, path: &str) -> (StatusCode, Value) {
    call(&app(read.store()), Method::GET, path, None).await
}

/// Reads `path` in the read region (a found answer): the answer, asserted to be the replica's alone.
async fn read_locally(app: &axum::Router, reads: &RegionalStore, path: &str) -> (StatusCode, Value) {
    let before = reads.home().calls().get();
    let answer = call(app, Method::GET, path, None).await;
    assert_eq!(reads.home().calls().get() - before, 0, "GET {path} asked the home region: {answer:?}");
    answer
}

#[tokio::test]
async fn a_soft_delete_is_acknowledged_only_once_the_read_replica_shows_it() {
    support::with_regions("ack-soft", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain = app(home.store().fenced_by(HOME));
        for tag in ["A", "B"] {
            register(&plain, "orders-value", tag).await;
        }
        register(&plain, "refunds-value", "A").await;
        replicator.replicate(&home, &read).await;
        let (read_app, reads) = read_app(&home, &read);

        // Paused: refused after the bound; the replica still shows the version live.
        let (home_quick, quick) = home_app(&home, &read, QUICK);
        refused(&home_quick, &quick, Method::DELETE, "/subjects/orders-value/versions/1", None).await;
        let (status, _) = on_replica(&read, "/subjects/orders-value/versions/1").await;
        assert_eq!(status, StatusCode::OK, "replication is paused");
        // Sent again: committed at home already, so 40406, nothing written and no wait.
        let again = call(&home_quick, Method::DELETE, "/subjects/orders-value/versions/1", None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40406)), "{again:?}");
        assert_eq!(quick.timeouts(), 1);
        let versions = call(&plain, Method::GET, "/subjects/orders-value/versions?deleted=true", None).await;
        assert_eq!(versions.1, json!([1, 2]), "deleted once, nothing lost");

        // Running: acknowledged, then the read region answers the deletes from its replica.
        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        acknowledged(&home_patient, &patient, Method::DELETE, "/subjects/refunds-value", None).await;
        let again = call(&home_patient, Method::DELETE, "/subjects/refunds-value", None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40404)), "sent again: {again:?}");
        acknowledged(&home_patient, &patient, Method::DELETE, "/subjects/orders-value/versions/2", None).await;
        running.stop().await;
        let (_, subjects) = read_locally(&read_app, &reads, "/subjects").await;
        assert_eq!(subjects, json!([]), "soft-deleted subjects are not listed");
        let (status, _) = on_replica(&read, "/subjects/orders-value/versions").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, listed) = read_locally(&read_app, &reads, "/subjects?deleted=true").await;
        assert_eq!(listed, json!(["orders-value", "refunds-value"]));
    })
    .await;
}

#[tokio::test]
async fn a_hard_delete_is_acknowledged_only_once_the_read_replica_shows_it_gone() {
    support::with_regions("ack-hard", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain = app(home.store().fenced_by(HOME));
        for subject in ["orders-value", "refunds-value"] {
            register(&plain, subject, "A").await;
            register(&plain, subject, "B").await;
            let config = json!({"compatibility": "NONE"});
            assert_eq!(call(&plain, Method::PUT, &format!("/config/{subject}"), Some(config)).await.0, StatusCode::OK);
            assert_eq!(call(&plain, Method::DELETE, &format!("/subjects/{subject}"), None).await.0, StatusCode::OK);
        }
        replicator.replicate(&home, &read).await;
        let (read_app, reads) = read_app(&home, &read);

        let (home_quick, quick) = home_app(&home, &read, QUICK);
        refused(&home_quick, &quick, Method::DELETE, "/subjects/orders-value?permanent=true", None).await;
        let (status, _) = on_replica(&read, "/subjects/orders-value/versions?deleted=true").await;
        assert_eq!(status, StatusCode::OK, "replication is paused");
        // Sent again: gone at home already, so 40401, and no wait.
        let again = call(&home_quick, Method::DELETE, "/subjects/orders-value?permanent=true", None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40401)), "{again:?}");
        let again = call(&home_quick, Method::DELETE, "/subjects/orders-value/versions/1?permanent=true", None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40401)), "{again:?}");
        assert_eq!(quick.timeouts(), 1);

        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        let path = "/subjects/refunds-value/versions/1?permanent=true";
        acknowledged(&home_patient, &patient, Method::DELETE, path, None).await;
        let again = call(&home_patient, Method::DELETE, path, None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40402)), "sent again: {again:?}");
        acknowledged(&home_patient, &patient, Method::DELETE, "/subjects/refunds-value?permanent=true", None).await;
        running.stop().await;
        for subject in ["orders-value", "refunds-value"] {
            let answer = on_replica(&read, &format!("/subjects/{subject}/versions?deleted=true")).await;
            assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40401)), "{answer:?}");
            let answer = on_replica(&read, &format!("/config/{subject}")).await;
            assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40408)), "settings removed: {answer:?}");
        }
        let (_, listed) = read_locally(&read_app, &reads, "/subjects?deleted=true").await;
        assert_eq!(listed, json!([]));
    })
    .await;
}

#[tokio::test]
async fn a_hard_delete_of_more_items_than_one_batch_get_holds_is_acknowledged() {
    support::with_regions("ack-many", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain = app(home.store().fenced_by(HOME));
        // 55 versions: their rows and rows-by-ID edges, the settings and the index are 113 items.
        const VERSIONS: u64 = 55;
        for version in 0..VERSIONS {
            register(&plain, "many-value", &format!("T{version}")).await;
        }
        assert_eq!(call(&plain, Method::DELETE, "/subjects/many-value", None).await.0, StatusCode::OK);
        replicator.replicate(&home, &read).await;
        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        let (calls, polls) = (patient.calls(), patient.polls());
        acknowledged(&home_patient, &patient, Method::DELETE, "/subjects/many-value?permanent=true", None).await;
        running.stop().await;
        let (calls, polls) = (patient.calls() - calls, patient.polls() - polls);
        assert_eq!(calls, 2 * polls, "two BatchGetItem per poll of 113 items");
        let answer = on_replica(&read, "/subjects/many-value/versions?deleted=true").await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40401)), "{answer:?}");
    })
    .await;
}

#[tokio::test]
async fn config_and_mode_writes_are_acknowledged_only_once_the_read_replica_shows_them() {
    support::with_regions("ack-settings", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain = app(home.store().fenced_by(HOME));
        register(&plain, "orders-value", "A").await;
        replicator.replicate(&home, &read).await;
        let (read_app, reads) = read_app(&home, &read);

        let (home_quick, quick) = home_app(&home, &read, QUICK);
        let full = json!({"compatibility": "FULL"});
        refused(&home_quick, &quick, Method::PUT, "/config/orders-value", Some(full.clone())).await;
        refused(&home_quick, &quick, Method::PUT, "/mode/orders-value", Some(json!({"mode": "READONLY"}))).await;
        refused(&home_quick, &quick, Method::PUT, "/config", Some(json!({"compatibility": "NONE"}))).await;
        let answer = on_replica(&read, "/config/orders-value").await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40408)), "replication is paused: {answer:?}");

        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        // The mode written while paused reaches the replica first: a delete is acknowledged once
        // the replica shows the item absent, which an item it never received already is (the
        // edge docs/multi-region.md states), so the delete is sent once the replica has the mode.
        let arrived = Instant::now();
        while code(&on_replica(&read, "/mode/orders-value").await) != (StatusCode::OK, None) {
            assert!(arrived.elapsed() < PATIENT, "the mode written at home never reached the replica");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        acknowledged(&home_patient, &patient, Method::DELETE, "/mode/orders-value", None).await;
        // Sent again: the same value written again, acknowledged once the replica shows it.
        acknowledged(&home_patient, &patient, Method::PUT, "/config/orders-value", Some(full)).await;
        acknowledged(&home_patient, &patient, Method::PUT, "/config", Some(json!({"compatibility": "NONE"}))).await;
        running.stop().await;
        let (_, config) = read_locally(&read_app, &reads, "/config/orders-value").await;
        assert_eq!(config["compatibilityLevel"], "FULL", "{config}");
        let (_, global) = read_locally(&read_app, &reads, "/config").await;
        assert_eq!(global["compatibilityLevel"], "NONE", "{global}");
        let answer = on_replica(&read, "/mode/orders-value").await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40409)), "mode deleted: {answer:?}");

        // A delete that timed out, sent again: deleted again and waited for again (paused: refused
        // again; running: 40401, the answer to a subject without a config of its own, once the
        // replica shows none).
        refused(&home_quick, &quick, Method::DELETE, "/config/orders-value", None).await;
        refused(&home_quick, &quick, Method::DELETE, "/config/orders-value", None).await;
        let running = Running::start(&replicator, &home, &read);
        let again = call(&home_patient, Method::DELETE, "/config/orders-value", None).await;
        running.stop().await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40401)), "{again:?}");
        assert_eq!(patient.timeouts(), 0);
        let answer = on_replica(&read, "/config/orders-value").await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40408)), "config deleted: {answer:?}");
    })
    .await;
}

#[tokio::test]
async fn kek_and_dek_writes_are_acknowledged_only_once_the_read_replica_shows_them() {
    support::with_regions("ack-keys", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let (read_app, reads) = read_app(&home, &read);
        let keks = "/dek-registry/v1/keks";
        let kek = |name: &str| json!({"name": name, "kmsType": "aws-kms", "kmsKeyId": "arn:aws:kms:us-east-1:000000000000:key/k", "shared": false});
        let dek = json!({"subject": "orders-value", "encryptedKeyMaterial": "AAAA"});

        let (home_quick, quick) = home_app(&home, &read, QUICK);
        refused(&home_quick, &quick, Method::POST, keks, Some(kek("k1"))).await;
        let answer = on_replica(&read, &format!("{keks}/k1")).await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40470)), "replication is paused: {answer:?}");
        // Sent again: the KEK exists at home, so 40971 with no wait.
        let again = call(&home_quick, Method::POST, keks, Some(kek("k1"))).await;
        assert_eq!(code(&again), (StatusCode::CONFLICT, Some(40971)), "{again:?}");
        refused(&home_quick, &quick, Method::POST, &format!("{keks}/k1/deks/orders-value"), Some(dek.clone())).await;
        let again = call(&home_quick, Method::POST, &format!("{keks}/k1/deks/orders-value"), Some(dek.clone())).await;
        assert_eq!(code(&again), (StatusCode::CONFLICT, Some(40971)), "{again:?}");
        assert_eq!(quick.timeouts(), 2);

        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        acknowledged(&home_patient, &patient, Method::POST, keks, Some(kek("k2"))).await;
        let path = format!("{keks}/k2/deks/orders-value");
        acknowledged(&home_patient, &patient, Method::POST, &path, Some(dek.clone())).await;
        let path = format!("{keks}/k1/deks/orders-value");
        acknowledged(&home_patient, &patient, Method::DELETE, &path, None).await;
        let again = call(&home_patient, Method::DELETE, &path, None).await;
        assert_eq!(again.0, StatusCode::NO_CONTENT, "soft-deleted already: {again:?}");
        let path = format!("{keks}/k1/deks/orders-value?permanent=true");
        acknowledged(&home_patient, &patient, Method::DELETE, &path, None).await;
        let again = call(&home_patient, Method::DELETE, &path, None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40470)), "gone already: {again:?}");
        let doc = json!({"doc": "orders"});
        acknowledged(&home_patient, &patient, Method::PUT, &format!("{keks}/k2"), Some(doc)).await;
        acknowledged(&home_patient, &patient, Method::DELETE, &format!("{keks}/k1"), None).await;
        let path = format!("{keks}/k1?permanent=true");
        acknowledged(&home_patient, &patient, Method::DELETE, &path, None).await;
        let again = call(&home_patient, Method::DELETE, &path, None).await;
        assert_eq!(code(&again), (StatusCode::NOT_FOUND, Some(40470)), "gone already: {again:?}");
        running.stop().await;
        let (_, k2) = read_locally(&read_app, &reads, &format!("{keks}/k2")).await;
        assert_eq!(k2["doc"], "orders", "{k2}");
        let (status, answer) = read_locally(&read_app, &reads, &format!("{keks}/k2/deks/orders-value")).await;
        assert_eq!((status, &answer["encryptedKeyMaterial"]), (StatusCode::OK, &json!("AAAA")), "{answer}");
        let path = format!("{keks}/k1/deks/orders-value?deleted=true");
        let answer = on_replica(&read, &path).await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40470)), "removed: {answer:?}");
        let (_, names) = read_locally(&read_app, &reads, &format!("{keks}?deleted=true")).await;
        assert_eq!(names, json!(["k2"]), "{names}");
    })
    .await;
}

#[tokio::test]
async fn an_import_is_acknowledged_only_once_the_read_replica_binds_its_id() {
    support::with_regions("ack-import", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain = app(home.store().fenced_by(HOME));
        let import = Some(json!({"mode": "IMPORT"}));
        assert_eq!(call(&plain, Method::PUT, "/mode/imports-value", import).await.0, StatusCode::OK);
        replicator.replicate(&home, &read).await;
        let (read_app, reads) = read_app(&home, &read);
        let imported = |tag: &str, id: i64| Some(json!({"schema": schema(tag), "id": id}));

        let (home_quick, quick) = home_app(&home, &read, QUICK);
        refused(&home_quick, &quick, Method::POST, "/subjects/imports-value/versions", imported("A", 100)).await;
        let answer = on_replica(&read, "/schemas/ids/100").await;
        assert_eq!(code(&answer), (StatusCode::NOT_FOUND, Some(40403)), "replication is paused: {answer:?}");

        let (home_patient, patient) = home_app(&home, &read, PATIENT);
        let running = Running::start(&replicator, &home, &read);
        // Sent again: the same ID, answered at once (the version exists).
        let again = call(&home_patient, Method::POST, "/subjects/imports-value/versions", imported("A", 100)).await;
        assert_eq!((again.0, again.1["id"].as_i64()), (StatusCode::OK, Some(100)), "{again:?}");
        let path = "/subjects/imports-value/versions";
        acknowledged(&home_patient, &patient, Method::POST, path, imported("B", 200)).await;
        running.stop().await;
        for (id, tag) in [(100, "A"), (200, "B")] {
            let (status, answer) = read_locally(&read_app, &reads, &format!("/schemas/ids/{id}")).await;
            assert_eq!((status, &answer["schema"]), (StatusCode::OK, &json!(schema(tag))), "{answer}");
        }
    })
    .await;
}

#[tokio::test]
async fn each_acknowledgement_costs_one_batch_get_per_poll_and_a_subject_write_one_home_read() {
    support::with_regions("ack-calls", HOME, READ, |home, read| async move {
        let replicator = Arc::new(Replicator::default());
        let plain_store = home.store().fenced_by(HOME);
        let plain = app(plain_store.clone());
        for subject in ["acked-value", "plain-value"] {
            register(&plain, subject, "A").await;
            register(&plain, subject, "B").await;
        }
        replicator.replicate(&home, &read).await;
        let (acked_store, patient) = support::acknowledging_home(&home, &read, PATIENT);
        let acked = app(acked_store.clone());
        let running = Running::start(&replicator, &home, &read);
        // The same write through a store without and with acknowledging replicas: the home calls
        // they cost, and the replica calls and polls of the acknowledgement.
        let mut figures = Vec::new();
        for (method, path, body) in [
            (Method::POST, "/subjects/{s}/versions", None),
            (Method::DELETE, "/subjects/{s}/versions/1", None),
            (Method::DELETE, "/subjects/{s}/versions/1?permanent=true", None),
            (Method::PUT, "/config/{s}", Some(json!({"compatibility": "FULL"}))),
            (Method::PUT, "/mode/{s}", Some(json!({"mode": "READWRITE"}))),
        ] {
            let before = plain_store.calls().get();
            // A registration of a new schema each (both allocate an ID).
            let body =
                |tag: &str| body.clone().or_else(|| (method == Method::POST).then(|| json!({"schema": schema(tag)})));
            let answer = call(&plain, method.clone(), &path.replace("{s}", "plain-value"), body("C")).await;
            assert!(answer.0.is_success(), "{answer:?}");
            let plain_calls = plain_store.calls().get() - before;
            let (before, calls, polls) = (acked_store.calls().get(), patient.calls(), patient.polls());
            acknowledged(&acked, &patient, method.clone(), &path.replace("{s}", "acked-value"), body("D")).await;
            let home_calls = acked_store.calls().get() - before;
            let (calls, polls) = (patient.calls() - calls, patient.polls() - polls);
            figures
                .push(format!("{method} {path}: home {plain_calls} → {home_calls}, replica {calls} in {polls} polls"));
            // Each poll of these few items is one BatchGetItem (a registration's body aside).
            if method != Method::POST {
                assert_eq!(calls, polls, "{method} {path}: one BatchGetItem per poll");
            }
            let subject_write = method == Method::DELETE || method == Method::POST;
            // A registration or a delete reads the subject's revision at home once (the index item
            // the replica must show at it or later); no other write asks the home more.
            assert_eq!(home_calls, plain_calls + u64::from(subject_write), "{method} {path}");
        }
        // A registration sent again finds its schema: the same ID, no write and so no wait.
        let polls = patient.polls();
        let path = "/subjects/acked-value/versions";
        let again = call(&acked, Method::POST, path, Some(json!({"schema": schema("D")}))).await;
        assert_eq!((again.0, patient.polls() - polls), (StatusCode::OK, 0), "{again:?}");
        running.stop().await;
        eprintln!("calls per acknowledgement:\n  {}", figures.join("\n  "));
    })
    .await;
}
