//! Multi-region on the emulator: a home region (us-east-1) and a read region (eu-west-1) over one
//! table name and a bucket each, with the test-only [`Replicator`] standing in for global tables and
//! S3 replication, run when the test says (a lag of zero at each `sync`, paused between). The
//! applications are the ones the function serves: `registry_http::app` at home, and in the read
//! region `registry_http::regional::app` over the local replica's registry and the home's.

mod support;

use support::calls_of;
use support::http::{app, call, register, registry, schema};

use axum::http::{Method, StatusCode};
use registry_core::Store;
use registry_http::AppOptions;
use registry_store_aws::AwsStore;
use registry_store_aws::regions::RegionalStore;
use registry_store_aws::testing::replicator::{Replicator, Site, item_key};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";

/// The read region's application: local reads over `reads`, writes through `writes` (the home's).
fn read_region_app(reads: RegionalStore, writes: AwsStore) -> axum::Router {
    registry_http::regional::app(app(Arc::new(reads)), app(Arc::new(writes)))
}

async fn schema_by_id(app: &axum::Router, id: i64) -> (StatusCode, Value) {
    call(app, Method::GET, &format!("/schemas/ids/{id}"), None).await
}

/// The two sites on the emulator (one table name, a bucket each), deleted after `test`.
async fn with_regions<F, Fut>(test: F)
where
    F: FnOnce(Site, Site) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    support::with_regions("regions", HOME, READ, test).await
}

/// The read region's stores: the local replica, and the home's fenced on `HOME` (a second client).
fn read_region(home: &Site, read: &Site) -> (RegionalStore, AwsStore) {
    let writes = home.store().fenced_by(HOME);
    (RegionalStore::new(read.store(), writes.clone()), writes)
}

#[tokio::test]
async fn reads_in_the_read_region_fall_back_to_home_before_replication_and_are_local_after() {
    with_regions(|home, read| async move {
        let home_store = home.store().fenced_by(HOME);
        let home_app = app(Arc::new(home_store.clone()));
        let (reads, writes) = read_region(&home, &read);
        let read_app = read_region_app(reads.clone(), writes.clone());
        let text = schema("Order");
        let id = register(&home_app, "orders-value", &text).await.unwrap_or_else(|e| panic!("{e:?}"));

        // At home: the calls one by-ID read costs.
        let before = home_store.calls().get();
        let (status, at_home) = schema_by_id(&home_app, id).await;
        assert_eq!(status, StatusCode::OK, "{at_home}");
        let home_calls = home_store.calls().get() - before;

        // Not replicated yet: the read region answers from the home region, never 40403.
        let (local_before, home_before) = (reads.local().calls().get(), reads.home().calls().get());
        let (status, fallback) = schema_by_id(&read_app, id).await;
        assert_eq!(status, StatusCode::OK, "{fallback}");
        assert_eq!(fallback["schema"], at_home["schema"]);
        let fallback_local = reads.local().calls().get() - local_before;
        let fallback_home = reads.home().calls().get() - home_before;
        let (status, version) = call(&read_app, Method::GET, "/subjects/orders-value/versions/1", None).await;
        assert_eq!((status, version["id"].as_i64()), (StatusCode::OK, Some(id)), "{version}");

        // Replicated: answered locally with the calls a home read costs, none of them at home. Read by
        // a fresh instance of the region, which remembers and keeps rendered nothing yet, as the
        // home's first read above (an instance that has answered the ID reads less: its body is
        // kept rendered by its fingerprint).
        let replicator = Replicator::default();
        assert!(replicator.replicate(&home, &read).await > 0);
        let fresh_instance = read_region_app(reads.clone(), writes.clone());
        let (local_before, home_before) = (reads.local().calls().get(), reads.home().calls().get());
        let (status, replicated) = schema_by_id(&fresh_instance, id).await;
        assert_eq!(status, StatusCode::OK, "{replicated}");
        assert_eq!(replicated["schema"], at_home["schema"]);
        let replicated_local = reads.local().calls().get() - local_before;
        assert_eq!(reads.home().calls().get() - home_before, 0, "a replicated read asks nothing of the home region");
        assert_eq!(replicated_local, home_calls, "a replicated read costs what it costs at home");
        // Asked of the home once, by the application: the local ID's read (a miss), then exactly
        // the home's own read; nothing read twice.
        assert_eq!((fallback_local, fallback_home), (1, home_calls), "before replication: [local, home]");
        eprintln!(
            "GET /schemas/ids/{{id}} calls: home {home_calls}; read region replicated {replicated_local} local + 0 home; \
             before replication {fallback_local} local + {fallback_home} home"
        );

        // An ID nobody issued is still 40403, after asking the home region.
        let (status, missing) = schema_by_id(&read_app, id + 1000).await;
        assert_eq!((status, missing["error_code"].as_i64()), (StatusCode::NOT_FOUND, Some(40403)), "{missing}");

        // The ID's row here but its body not in the local bucket yet (the bucket's replication
        // behind the table's): not "corrupt", answered by the home region.
        for key in Replicator::object_keys(&read).await {
            let delete = read.s3().delete_object().bucket(&read.config.bucket).key(key);
            delete.send().await.unwrap_or_else(|e| panic!("delete: {e:?}"));
        }
        let home_before = reads.home().calls().get();
        let (status, lagging) = schema_by_id(&read_region_app(reads.clone(), writes), id).await;
        assert_eq!(status, StatusCode::OK, "{lagging}");
        assert_eq!(lagging["schema"], at_home["schema"]);
        assert_eq!(reads.home().calls().get() - home_before, home_calls, "the home answers, as at home");
    })
    .await;
}

#[tokio::test]
async fn a_write_through_the_read_region_commits_at_home_and_reads_its_own_id() {
    with_regions(|home, read| async move {
        let home_app = app(Arc::new(home.store().fenced_by(HOME)));
        let (reads, writes) = read_region(&home, &read);
        let read_app = read_region_app(reads.clone(), writes);
        let text = schema("Payment");
        let (local_before, home_before) = (reads.local().calls().get(), reads.home().calls().get());
        let id = register(&read_app, "payments-value", &text).await.unwrap_or_else(|e| panic!("{e:?}"));
        let new_local = reads.local().calls().get() - local_before;
        let new_home = reads.home().calls().get() - home_before;
        assert_eq!(new_local, 0, "a write through the read region reads nothing of the local replica");
        // Committed at home, where the same registration answers the same ID.
        assert_eq!(register(&home_app, "payments-value", &text).await.ok(), Some(id));
        let (status, at_home) = schema_by_id(&home_app, id).await;
        assert_eq!(status, StatusCode::OK, "{at_home}");
        // Nothing replicated: the local replica holds none of it.
        assert_eq!(
            reads
                .local()
                .fingerprint_for_id_in(&registry_core::Context::DEFAULT, registry_core::SchemaId(id as i32))
                .await
                .ok()
                .flatten(),
            None
        );
        // Read-your-writes: its ID, its subject's version and a lookup in the region that wrote it.
        let (status, mine) = schema_by_id(&read_app, id).await;
        assert_eq!((status, &mine["schema"]), (StatusCode::OK, &at_home["schema"]), "{mine}");
        let (status, latest) = call(&read_app, Method::GET, "/subjects/payments-value/versions/latest", None).await;
        assert_eq!((status, latest["id"].as_i64()), (StatusCode::OK, Some(id)), "{latest}");
        let (status, lookup) =
            call(&read_app, Method::POST, "/subjects/payments-value", Some(json!({"schema": text}))).await;
        assert_eq!((status, lookup["id"].as_i64()), (StatusCode::OK, Some(id)), "{lookup}");
        // Registering again through the read region is idempotent.
        let home_before = reads.home().calls().get();
        assert_eq!(register(&read_app, "payments-value", &text).await.ok(), Some(id));
        let again_home = reads.home().calls().get() - home_before;
        eprintln!("registration through the read region: new schema {new_home} home calls, again {again_home}");
    })
    .await;
}

#[tokio::test]
async fn rpo_zero_acknowledges_only_what_the_read_replica_shows() {
    with_regions(|home, read| async move {
        let timeout = Duration::from_millis(400);
        let (home_app, acks) = support::acknowledging_home_app(&home, &read, timeout);
        let text = schema("Shipment");

        // Replication paused: a bounded wait, then a retryable answer, counted.
        let started = Instant::now();
        let refused = register(&home_app, "shipments-value", &text).await;
        let waited = started.elapsed();
        let Err((status, body)) = refused else { panic!("acknowledged without the replica: {refused:?}") };
        assert_eq!((status, body["error_code"].as_i64()), (StatusCode::INTERNAL_SERVER_ERROR, Some(50002)), "{body}");
        // Bounded: the wait ended at the timeout, not with the replica. The upper bound only tells
        // a bounded wait from an endless one, so it leaves room for a loaded machine's emulator
        // (the registration's own calls queue behind other tests' requests there).
        assert!(waited >= timeout && waited < timeout + Duration::from_secs(120), "waited {waited:?}");
        assert_eq!(acks.timeouts(), 1);

        // Replication running: the retry is acknowledged, with the ID the first attempt committed.
        // Its bound is sized for a loaded machine (a replication pass scans both regions on the
        // emulator), so only a replica that never shows the write fails this part.
        let (home_app, patient) = support::acknowledging_home_app(&home, &read, Duration::from_secs(120));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (from, to) = (home.clone(), read.clone());
        let replicator = tokio::spawn(async move {
            let replicator = Replicator::default();
            loop {
                replicator.replicate(&from, &to).await;
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                }
            }
        });
        let retried = register(&home_app, "shipments-value", &text).await;
        let other = register(&home_app, "shipments-value", &schema("Shipment2")).await;
        let _ = stop.send(());
        replicator.await.unwrap_or_else(|e| panic!("{e}"));
        let id = retried.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(other.is_ok(), "{other:?}");
        assert_eq!(patient.timeouts(), 0, "no wait ran out while the replica followed");
        let (reads, writes) = read_region(&home, &read);
        let read_app = read_region_app(reads.clone(), writes);
        let (status, _) = schema_by_id(&read_app, id).await;
        assert_eq!(status, StatusCode::OK);
        let before = reads.home().calls().get();
        let (status, _) = schema_by_id(&read_app, id).await;
        assert_eq!(
            (status, reads.home().calls().get() - before),
            (StatusCode::OK, 0),
            "acknowledged: readable locally"
        );
    })
    .await;
}

/// Every (ID → schema) any client was answered, checked to name one schema each and answered so
/// by both regions.
#[derive(Default)]
struct Seen(BTreeMap<i64, String>);

impl Seen {
    /// Registers the schema named `name` under `subject` through `app` and records the ID given.
    async fn register(&mut self, app: &axum::Router, subject: &str, name: &str) -> i64 {
        let text = schema(name);
        let id = register(app, subject, &text).await.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        self.record(id, &text);
        id
    }

    fn record(&mut self, id: i64, schema: &str) {
        let known = self.0.entry(id).or_insert_with(|| schema.to_string());
        assert_eq!(known, schema, "ID {id} was given to two schemas");
    }

    async fn check(&self, apps: &[&axum::Router]) {
        for (id, schema) in &self.0 {
            for app in apps {
                let (status, answer) = schema_by_id(app, *id).await;
                assert_eq!(status, StatusCode::OK, "ID {id}: {answer}");
                let answered: Value =
                    serde_json::from_str(answer["schema"].as_str().unwrap_or_default()).unwrap_or_default();
                let registered: Value = serde_json::from_str(schema).unwrap_or_default();
                assert_eq!(answered, registered, "ID {id} names another schema");
            }
        }
    }
}

#[tokio::test]
async fn failover_never_reissues_an_id_fences_the_old_home_and_fails_back() {
    with_regions(|us, eu| async move {
        let mut seen = Seen::default();
        let replicator = Replicator::default();
        let us_home = app(Arc::new(us.store().fenced_by(HOME)));
        for n in 0..3 {
            seen.register(&us_home, "s", &format!("Replicated{n}")).await;
        }
        replicator.replicate(&us, &eu).await;
        // Allocations in flight: committed at home, replication paused before they arrive.
        let mut unreplicated = Vec::new();
        for n in 0..3 {
            unreplicated.push(seen.register(&us_home, "s", &format!("InFlight{n}")).await);
        }

        // Fail over to eu-west-1 (run against its replica), then point its functions at it.
        let gap = 100;
        let failover = eu.store().fail_over(READ, gap).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((failover.after.region.as_str(), failover.after.epoch), (READ, 1));
        let eu_home = app(Arc::new(eu.store().fenced_by(READ)));
        // A function still fenced on the old home cannot write through eu-west-1's replica.
        let stale = app(Arc::new(eu.store().fenced_by(HOME)));
        let refused = register(&stale, "s", &schema("Stale")).await;
        assert!(matches!(&refused, Err((StatusCode::INTERNAL_SERVER_ERROR, _))), "{refused:?}");
        let mut new_ids = Vec::new();
        for n in 0..3 {
            new_ids.push(seen.register(&eu_home, "t", &format!("AfterFailover{n}")).await);
        }
        // The residual window: the old home has not received the marker yet and still commits.
        unreplicated.push(seen.register(&us_home, "s", "InTheWindow").await);
        let highest_old = unreplicated.iter().max().copied().unwrap_or_default();
        assert!(new_ids.iter().all(|id| *id > highest_old), "new home issued {new_ids:?} after {unreplicated:?}");

        // Once the marker is replicated the old home refuses every write.
        replicator.replicate(&eu, &us).await;
        let refused = register(&us_home, "s", &schema("OldHome")).await;
        let Err((status, body)) = &refused else { panic!("the old home wrote after the marker: {refused:?}") };
        assert_eq!((*status, body["error_code"].as_i64()), (StatusCode::INTERNAL_SERVER_ERROR, Some(50002)), "{body}");

        // The old home's in-flight registrations arrive late; every ID still names one schema.
        replicator.replicate(&us, &eu).await;
        seen.check(&[&us_home, &eu_home]).await;

        // Failback: the same command, run against us-east-1's replica.
        replicator.replicate(&eu, &us).await;
        let failback = us.store().fail_over(HOME, gap).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((failback.after.region.as_str(), failback.after.epoch), (HOME, 2));
        let id = seen.register(&us_home, "u", "AfterFailback").await;
        assert!(new_ids.iter().all(|new| id > *new), "failback issued {id} after {new_ids:?}");
        replicator.replicate(&us, &eu).await;
        let refused = register(&eu_home, "t", &schema("Fenced")).await;
        assert!(matches!(&refused, Err((StatusCode::INTERNAL_SERVER_ERROR, _))), "{refused:?}");
        seen.check(&[&us_home, &eu_home]).await;
        eprintln!("IDs checked across failover and failback: {:?}", seen.0.keys().collect::<Vec<_>>());
    })
    .await;
}

/// Whether `result` is the refusal of a write fenced on a home marker naming another region: the
/// retryable 500 / 50002 the transactions answer (`Unavailable`, naming the marker).
fn fenced<T: std::fmt::Debug>(what: &str, result: Result<T, registry_core::StoreError>) {
    match &result {
        Err(registry_core::StoreError::Unavailable(message)) if message.contains("home marker") => {}
        _ => panic!("{what}: the old home did not refuse it: {result:?}"),
    }
}

/// An exporter record named `name`.
fn exporter_record(name: &str) -> registry_exporter::ExporterRecord {
    use registry_exporter::model::{ContextType, Exporter, ExporterState, ExporterStatus};
    registry_exporter::ExporterRecord {
        exporter: Exporter {
            name: name.to_owned(),
            context_type: ContextType::Auto,
            context: None,
            subjects: vec!["*".to_owned()],
            subject_rename_format: "${subject}".to_owned(),
            config: std::collections::BTreeMap::new(),
        },
        status: ExporterStatus { state: ExporterState::Paused, offset: 0, ts: 1, trace: None },
        configured: std::collections::BTreeSet::new(),
    }
}

/// The table's items in key order (what "nothing was written" compares).
async fn table_items(site: &Site) -> Vec<((String, String), String)> {
    let mut items: Vec<_> = Replicator::scan(site)
        .await
        .iter()
        .map(|item| (item_key(item), format!("{:?}", BTreeMap::from_iter(item))))
        .collect();
    items.sort();
    items
}

#[tokio::test]
async fn after_a_failover_the_old_home_refuses_every_single_item_write() {
    use registry_core::{Context, Fingerprint, Guid, Revision, SchemaId, Subject, Version, VersionRow};
    use registry_dek::testkit::{dek, kek};
    use registry_dek::{DekAlgorithm, Expect, KekGuard, KeyStore};
    use registry_exporter::store::ExporterStore;
    use registry_store_aws::exporter_store::DynamoExporterStore;
    with_regions(|us, eu| async move {
        let replicator = Replicator::default();
        let old_home = us.store().fenced_by(HOME);
        let old_exporters = DynamoExporterStore::new(us.dynamo(), us.config.table.clone()).fenced_by(HOME);
        let imported = Context::parse(".imported").unwrap_or_else(|e| panic!("{e}"));
        let (first, second) = (Fingerprint([1; 32]), Fingerprint([2; 32]));

        // While us-east-1 is home: what the refused writes below would change, and the calls a
        // fenced single-item write costs when the marker lets it through.
        let (guid_calls, bound) = calls_of(&old_home, old_home.bind_guid(&Guid([1; 16]), &first)).await;
        bound.unwrap_or_else(|e| panic!("{e}"));
        let (usage_calls, marked) =
            calls_of(&old_home, old_home.mark_used(&Subject::new("s").unwrap_or_else(|e| panic!("{e}")), 1)).await;
        marked.unwrap_or_else(|e| panic!("{e}"));
        let (kek_calls, put) = calls_of(&old_home, old_home.put_kek(&kek("kept"), Expect::Absent)).await;
        put.unwrap_or_else(|e| panic!("{e}"));
        let kept_dek = dek("kept", "orders-value", DekAlgorithm::Aes256Gcm, 1);
        let (dek_calls, put) =
            calls_of(&old_home, old_home.put_dek(&kept_dek, Expect::Absent, KekGuard::Unchecked)).await;
        put.unwrap_or_else(|e| panic!("{e}"));
        old_exporters.put_exporter(&exporter_record("kept"), Expect::Absent).await.unwrap_or_else(|e| panic!("{e}"));
        let no_preconditions = registry_core::Preconditions::default();
        let mode = |mode| registry_core::SettingChange::Mode(mode);
        let plain = |change| registry_core::SettingWrite {
            scope: &registry_core::Scope::Global,
            change,
            preconditions: &no_preconditions,
        };
        let read_only = mode(Some(registry_core::Mode::ReadOnly));
        old_home.write_setting(plain(&read_only)).await.unwrap_or_else(|e| panic!("{e}"));
        old_home.bind_id_in(&imported, SchemaId(5), &first).await.unwrap_or_else(|e| panic!("{e}"));
        old_home.unlist_context(&imported).await.unwrap_or_else(|e| panic!("{e}"));
        // The same conditions hold through the fence: a second create is a conflict, not a refusal.
        let twice = old_home.put_kek(&kek("kept"), Expect::Absent).await;
        assert!(matches!(twice, Err(registry_core::StoreError::Conflict(_))), "{twice:?}");
        let twice = old_exporters.put_exporter(&exporter_record("kept"), Expect::Absent).await;
        assert!(matches!(twice, Err(registry_core::StoreError::Conflict(_))), "{twice:?}");
        let other = old_home.bind_guid(&Guid([1; 16]), &second).await;
        assert!(matches!(other, Err(registry_core::StoreError::Conflict(_))), "{other:?}");
        eprintln!(
            "fenced single-item writes: bind_guid {guid_calls} call, mark_used {usage_calls}, KEK put {kek_calls}, \
             DEK put {dek_calls}"
        );
        assert_eq!((guid_calls, usage_calls, kek_calls, dek_calls), (1, 1, 1, 1), "one TransactWriteItems each");

        // Fail over to eu-west-1; the marker reaches us-east-1's replica.
        replicator.replicate(&us, &eu).await;
        eu.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        replicator.replicate(&eu, &us).await;
        let before = table_items(&us).await;

        // Every kind of write the old home's stores send: each refused.
        fenced("bind_guid", old_home.bind_guid(&Guid([2; 16]), &second).await);
        let subject = Subject::new("s").unwrap_or_else(|e| panic!("{e}"));
        fenced("mark_used", old_home.mark_used(&subject, 2).await);
        let row = VersionRow {
            subject: subject.clone(),
            version: Version(1),
            id: SchemaId(1),
            fingerprint: second,
            deleted: false,
            references: Vec::new(),
            registered_at_ms: 1,
        };
        fenced("record_live_version", old_home.record_live_version(&row, Revision(0)).await);
        fenced("IMPORT bind (listing its context again)", old_home.bind_id_in(&imported, SchemaId(3), &second).await);
        fenced("IMPORT bind above the counter", old_home.bind_id_in(&Context::DEFAULT, SchemaId(9), &second).await);
        fenced("KEK create", old_home.put_kek(&kek("new"), Expect::Absent).await);
        fenced("KEK update", old_home.put_kek(&kek("kept"), Expect::Revision(1)).await);
        fenced("KEK delete", old_home.remove_kek("kept", 1).await);
        let next = dek("kept", "orders-value", DekAlgorithm::Aes256Gcm, 2);
        fenced("DEK create, unchecked", old_home.put_dek(&next, Expect::Absent, KekGuard::Unchecked).await);
        fenced("DEK create under a live KEK", old_home.put_dek(&next, Expect::Absent, KekGuard::Live).await);
        fenced("DEK delete", old_home.remove_dek(&kept_dek.id(), 1).await);
        fenced("exporter create", old_exporters.put_exporter(&exporter_record("new"), Expect::Absent).await);
        fenced("exporter update", old_exporters.put_exporter(&exporter_record("kept"), Expect::Revision(1)).await);
        fenced("exporter delete", old_exporters.remove_exporter("kept", 1).await);
        let read_write = mode(Some(registry_core::Mode::ReadWrite));
        fenced("setting put without preconditions", old_home.write_setting(plain(&read_write)).await);
        fenced("setting removal without preconditions", old_home.write_setting(plain(&mode(None))).await);

        // Nothing was written: the old home's replica holds what it held.
        assert_eq!(table_items(&us).await, before, "a refused write changed the old home's table");
        assert!(!old_home.list_contexts().await.unwrap_or_else(|e| panic!("{e}")).contains(&imported));

        // The new home's fenced stores write (the marker names it).
        let new_home = eu.store().fenced_by(READ);
        new_home.bind_guid(&Guid([2; 16]), &second).await.unwrap_or_else(|e| panic!("{e}"));
        new_home.remove_kek("kept", 1).await.unwrap_or_else(|e| panic!("{e}"));
        let new_exporters = DynamoExporterStore::new(eu.dynamo(), eu.config.table.clone()).fenced_by(READ);
        new_exporters.remove_exporter("kept", 1).await.unwrap_or_else(|e| panic!("{e}"));
    })
    .await;
}

#[tokio::test]
async fn a_fenced_exporter_store_conforms() {
    with_regions(|us, _eu| async move {
        let exporters =
            registry_store_aws::exporter_store::DynamoExporterStore::new(us.dynamo(), us.config.table.clone())
                .fenced_by(HOME);
        registry_exporter::testkit::exporter_store_conformance(&exporters).await;
    })
    .await;
}

#[tokio::test]
async fn exporters_through_the_read_region_are_kept_in_the_home_region() {
    use registry_exporter::store::ExporterStore;
    use registry_store_aws::exporter_store::{DynamoExporterStore, exporter_service_over};
    with_regions(|home, read| async move {
        let (reads, writes) = read_region(&home, &read);
        // As the function serves a read region: both applications manage exporters at home.
        let service = Arc::new(exporter_service_over(&writes, &home.sdk, None));
        let options = AppOptions { exporters: Some(service), ..AppOptions::default() };
        let read_app = registry_http::regional::app(
            registry_http::app(registry(Arc::new(reads)), options.clone()),
            registry_http::app(registry(Arc::new(writes)), options),
        );
        let exporter = json!({
            "name": "to-dr",
            "contextType": "AUTO",
            "subjects": ["*"],
            "config": {"schema.registry.url": "http://dest:8081"}
        });
        let (status, created) = call(&read_app, Method::POST, "/exporters", Some(exporter)).await;
        assert_eq!(status, StatusCode::OK, "{created}");

        // Committed in the home region's table; the local replica has nothing before replication.
        let at_home = DynamoExporterStore::new(home.dynamo(), home.config.table.clone());
        let local = DynamoExporterStore::new(read.dynamo(), read.config.table.clone());
        assert!(at_home.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}")).is_some());
        assert!(local.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}")).is_none());

        // Read through the read region at once: answered from the home region's records.
        let (status, listed) = call(&read_app, Method::GET, "/exporters", None).await;
        assert_eq!((status, listed), (StatusCode::OK, json!(["to-dr"])));
        let (status, one) = call(&read_app, Method::GET, "/exporters/to-dr", None).await;
        assert_eq!((status, &one["name"]), (StatusCode::OK, &json!("to-dr")), "{one}");
        let (status, paused) = call(&read_app, Method::PUT, "/exporters/to-dr/pause", None).await;
        assert_eq!(status, StatusCode::OK, "{paused}");
        let (status, state) = call(&read_app, Method::GET, "/exporters/to-dr/status", None).await;
        assert_eq!((status, &state["state"]), (StatusCode::OK, &json!("PAUSED")), "{state}");

        // Once a failover moved the home away and its marker reached us-east-1, a function still
        // pointed at us-east-1 is refused there, as every other write is.
        let replicator = Replicator::default();
        replicator.replicate(&home, &read).await;
        read.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        replicator.replicate(&read, &home).await;
        let (status, refused) = call(&read_app, Method::PUT, "/exporters/to-dr/resume", None).await;
        assert_eq!(
            (status, refused["error_code"].as_i64()),
            (StatusCode::INTERNAL_SERVER_ERROR, Some(50002)),
            "{refused}"
        );
        let kept = at_home.exporter("to-dr").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(kept.map(|record| record.value.status.state), Some(registry_exporter::ExporterState::Paused));
    })
    .await;
}

#[tokio::test]
async fn failover_jumps_a_context_the_new_home_knows_only_by_a_subject() {
    with_regions(|us, eu| async move {
        let us_home = app(Arc::new(us.store().fenced_by(HOME)));
        let text = schema("Late");
        let old_id = register(&us_home, ":.late:s", &text).await.unwrap_or_else(|e| panic!("{e:?}"));
        // Of that first registration in `.late`, only the subject index items have reached
        // eu-west-1 (a transaction's items replicate one by one): neither the context's counter nor
        // its ledger entry.
        let mut copied = 0;
        for item in Replicator::scan(&us).await {
            if item_key(&item).0 == "SUBJECTS" {
                let put = eu.dynamo().put_item().table_name(&eu.config.table).set_item(Some(item));
                put.send().await.unwrap_or_else(|e| panic!("put: {e:?}"));
                copied += 1;
            }
        }
        assert!(copied >= 1);
        let late = registry_core::Context::parse(".late").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(eu.store().max_id_in(&late).await.unwrap_or_else(|e| panic!("{e}")), None);

        let failover = eu.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        let jumped = failover.counters.iter().find(|(context, _, _)| *context == late).map(|(_, _, to)| to.0);
        assert_eq!(jumped, Some(100), "{:?}", failover.counters);
        let eu_home = app(Arc::new(eu.store().fenced_by(READ)));
        let other = schema("Other");
        let new_id = register(&eu_home, ":.late:t", &other).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(new_id > old_id, "the new home issued {new_id} in .late, where the old home issued {old_id}");

        // The old home's rows arrive: each ID of `.late` still names one schema.
        Replicator::default().replicate(&us, &eu).await;
        let (status, first) = call(&eu_home, Method::GET, &format!("/contexts/.late/schemas/ids/{old_id}"), None).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let (status, second) =
            call(&eu_home, Method::GET, &format!("/contexts/.late/schemas/ids/{new_id}"), None).await;
        assert_eq!(status, StatusCode::OK, "{second}");
        assert_ne!(first["schema"], second["schema"]);
    })
    .await;
}

#[tokio::test]
async fn a_context_none_of_whose_items_arrived_starts_past_the_failovers_gap() {
    with_regions(|us, eu| async move {
        let us_home = app(Arc::new(us.store().fenced_by(HOME)));
        // `.unseen` is created and used at the old home; nothing of it reaches eu-west-1 before the
        // failover (no counter, no ledger entry, no subject), so the jump cannot know it.
        let mut old_ids = Vec::new();
        for tag in ["UnseenA", "UnseenB"] {
            let id = register(&us_home, ":.unseen:s", &schema(tag)).await.unwrap_or_else(|e| panic!("{e:?}"));
            old_ids.push(id);
        }
        let unseen = registry_core::Context::parse(".unseen").unwrap_or_else(|e| panic!("{e}"));
        let failover = eu.store().fail_over(READ, 100).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(failover.counters.iter().all(|(context, _, _)| *context != unseen), "{:?}", failover.counters);
        assert_eq!(failover.after.floor, Some(registry_core::SchemaId(100)));

        // The new home's first allocation in `.unseen` starts above the floor, not at 1.
        let eu_home = app(Arc::new(eu.store().fenced_by(READ)));
        let new_id = register(&eu_home, ":.unseen:t", &schema("UnseenNew")).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(new_id, 101, "the old home issued {old_ids:?} in .unseen");

        // The old home's items arrive: each ID of `.unseen` names one schema.
        Replicator::default().replicate(&us, &eu).await;
        let mut schemas = Vec::new();
        for id in old_ids.iter().chain([&new_id]) {
            let path = format!("/contexts/.unseen/schemas/ids/{id}");
            let (status, found) = call(&eu_home, Method::GET, &path, None).await;
            assert_eq!(status, StatusCode::OK, "{found}");
            schemas.push(found["schema"].clone());
        }
        schemas.dedup();
        assert_eq!(schemas.len(), 3, "{schemas:?}");

        // A context new after the failover also starts above the floor (IDs may have gaps).
        let fresh = register(&eu_home, ":.fresh:s", &schema("Fresh")).await.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fresh, 101);
    })
    .await;
}
