//! Multi-region under a replication lag the test controls: us-east-1 home, eu-west-1 read, and the
//! test-only [`Replicator`] running in the background ([`Replicator::run_with_lag`]), each change
//! applied once it is at least the lag old. What a read region answers while a write is in flight
//! (and how long until it answers locally), what RPO 0 costs per second of lag, and a failover
//! taken while writers allocate in both regions. Figures are printed (`--nocapture`); what is
//! asserted holds at any speed (nothing current before the lag, acknowledgements never before the
//! replica shows the write), and the only upper bound is [`HANG_GUARD`].

mod support;

use support::http::{app, call, register, same_schema, schema};

use axum::http::{Method, StatusCode};
use registry_core::Store;
use registry_store_aws::regions::RegionalStore;
use registry_store_aws::testing::replicator::{LaggedReplication, Replicator, Site};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

const HOME: &str = "us-east-1";
const READ: &str = "eu-west-1";

/// How often the background replication looks at the home region.
const POLL: Duration = Duration::from_millis(100);

/// A hang guard, never a speed check: a read region still stale this long after a write, or a
/// write still unanswered, never catches up (the emulator serves one request at a time, and on a
/// busy machine queues them behind other tests' requests: the figures printed grow, the test holds).
const HANG_GUARD: Duration = Duration::from_secs(600);

/// The read region's application, as the function serves it, and its regional store (whose
/// `home()` counts every call made to the home region, fallbacks and re-asked 404s alike).
fn read_region(home: &Site, read: &Site) -> (axum::Router, RegionalStore) {
    let writes = home.store().fenced_by(HOME);
    let reads = RegionalStore::new(read.store(), writes.clone());
    (registry_http::regional::app(app(Arc::new(reads.clone())), app(Arc::new(writes))), reads)
}

async fn with_regions<F, Fut>(test: F)
where
    F: FnOnce(Site, Site) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    support::with_regions("lag", HOME, READ, test).await
}

/// Waits for `replication` to apply what was written before ([`HANG_GUARD`] only tells a slow
/// catch-up from none).
async fn caught_up(replication: &LaggedReplication) {
    let waited = tokio::time::timeout(HANG_GUARD, replication.caught_up()).await;
    waited.unwrap_or_else(|_| panic!("replication did not catch up in {HANG_GUARD:?}"));
}

/// When each read first answered current, measured from the start of the write.
#[derive(Debug, Default)]
struct Current(BTreeMap<&'static str, Duration>);

impl Current {
    /// Records `what` as current at `since` (the first time only); before the lag it must not be:
    /// nothing can be applied in the read region before the write is `lag` old.
    fn saw(&mut self, what: &'static str, current: bool, since: Duration, lag: Duration) {
        if current {
            assert!(since >= lag, "{what} was current {since:?} after the write began, before the lag {lag:?}");
            self.0.entry(what).or_insert(since);
        }
    }
}

/// A lag of 1 s: after a registration at home, the read region answers its ID at once (through the
/// home region), `latest`, the versions and the subjects as before it for about the lag, then all
/// locally; a config change likewise.
#[tokio::test]
async fn under_a_lag_of_a_second_reads_by_id_never_miss_and_the_rest_is_stale_for_about_the_lag() {
    with_regions(|home, read| async move {
        let lag = Duration::from_secs(1);
        let replication = Replicator::run_with_lag(vec![(home.clone(), read.clone())], lag, POLL);
        let home_app = app(Arc::new(home.store().fenced_by(HOME)));
        let (read_app, reads) = read_region(&home, &read);
        let first = register(&home_app, "orders-value", &schema("Order")).await.unwrap_or_else(|e| panic!("{e:?}"));
        caught_up(&replication).await;

        // A second version and a new subject at home; the read region polled until all is local.
        let started = Instant::now();
        let second = schema("Order2");
        let id = register(&home_app, "orders-value", &second).await.unwrap_or_else(|e| panic!("{e:?}"));
        register(&home_app, "payments-value", &schema("Payment")).await.unwrap_or_else(|e| panic!("{e:?}"));
        let written = started.elapsed();
        let mut current = Current::default();
        let (mut polls, mut stale_polls) = (0, 0);
        while current.0.len() < 4 {
            assert!(started.elapsed() < HANG_GUARD, "not all current after {:?}: {current:?}", started.elapsed());
            let home_before = reads.home().calls().get();
            let (status, by_id) = call(&read_app, Method::GET, &format!("/schemas/ids/{id}"), None).await;
            let since = started.elapsed();
            // By ID: answered at once, through the home region until the replica has it.
            assert_eq!(status, StatusCode::OK, "by ID after {since:?}: {by_id}");
            assert!(same_schema(&by_id, &second), "by ID answered another schema: {by_id}");
            current.saw("by ID, no home call", reads.home().calls().get() == home_before, since, lag);
            let (status, latest) = call(&read_app, Method::GET, "/subjects/orders-value/versions/latest", None).await;
            assert_eq!(status, StatusCode::OK, "{latest}");
            let latest = latest["id"].as_i64();
            assert!(latest == Some(first) || latest == Some(id), "latest is neither version: {latest:?}");
            current.saw("latest", latest == Some(id), started.elapsed(), lag);
            let (status, versions) = call(&read_app, Method::GET, "/subjects/orders-value/versions", None).await;
            assert_eq!(status, StatusCode::OK, "{versions}");
            current.saw("versions", versions == json!([1, 2]), started.elapsed(), lag);
            let (status, subjects) = call(&read_app, Method::GET, "/subjects", None).await;
            assert_eq!(status, StatusCode::OK, "{subjects}");
            current.saw("subjects", subjects == json!(["orders-value", "payments-value"]), started.elapsed(), lag);
            polls += 1;
            stale_polls += usize::from(current.0.is_empty());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!(
            "lag {lag:?}, writes took {written:?}; first current (from the write's start), {polls} polls, \
             {stale_polls} all stale: {:?}",
            current.0
        );

        // A config change: the read region answers the old level for about the lag.
        let started = Instant::now();
        let (status, _) = call(&home_app, Method::PUT, "/config", Some(json!({"compatibility": "NONE"}))).await;
        assert_eq!(status, StatusCode::OK);
        let written = started.elapsed();
        let mut config = Current::default();
        while config.0.is_empty() {
            assert!(started.elapsed() < HANG_GUARD, "config still stale after {:?}", started.elapsed());
            let (status, level) = call(&read_app, Method::GET, "/config", None).await;
            assert_eq!(status, StatusCode::OK, "{level}");
            let level = level["compatibilityLevel"].as_str().map(str::to_owned);
            assert!(matches!(level.as_deref(), Some("NONE" | "BACKWARD")), "{level:?}");
            config.saw("config", level.as_deref() == Some("NONE"), started.elapsed(), lag);
            if config.0.is_empty() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        eprintln!("config change (written in {written:?}) current in the read region {:?}", config.0["config"]);
        replication.stop().await;
    })
    .await;
}

/// RPO 0 (the read region in `ack_regions`, timeout 5 s) under lags of 0, 1 and 2 s: acknowledged
/// after about the lag; under 6 s, refused at the timeout, and acknowledged once the replica shows
/// it with the ID the first attempt committed.
#[tokio::test]
async fn rpo_zero_acknowledges_after_the_lag_and_refuses_past_the_timeout() {
    with_regions(|home, read| async move {
        let timeout = Duration::from_secs(5);
        let (acking, acks) = support::acknowledging_home_app(&home, &read, timeout);
        let replication = Replicator::run_with_lag(vec![(home.clone(), read.clone())], Duration::ZERO, POLL);
        let mut figures = Vec::new();
        for seconds in [0, 1, 2] {
            let lag = Duration::from_secs(seconds);
            replication.set_lag(lag);
            let started = Instant::now();
            let text = schema(&format!("Lag{seconds}"));
            // A client's view: on a loaded machine the replicator's pass can take the rest of the
            // timeout, and the client sends the registration again (idempotent) after a 50002.
            let mut attempts = 0;
            loop {
                attempts += 1;
                match register(&acking, "acks-value", &text).await {
                    Ok(_) => break,
                    Err((status, body)) if body["error_code"].as_i64() == Some(50002) => {
                        assert!(started.elapsed() < HANG_GUARD, "lag {lag:?}: {status} {body}");
                    }
                    Err(other) => panic!("lag {lag:?}: {other:?}"),
                }
            }
            let took = started.elapsed();
            // Never before the replica can show it (how long after is a figure, printed below).
            assert!(took >= lag, "lag {lag:?}: acknowledged after {took:?}");
            figures.push((lag, took, attempts));
        }
        let timeouts_before = acks.timeouts();

        // A lag longer than the timeout: a retryable refusal after the timeout, the registration
        // committed at home; registering again once the replica shows it answers its ID.
        let lag = Duration::from_secs(6);
        replication.set_lag(lag);
        let text = schema("Lag6");
        let started = Instant::now();
        let refused = register(&acking, "acks-value", &text).await;
        let waited = started.elapsed();
        let Err((status, body)) = refused else { panic!("acknowledged before the lag: {refused:?}") };
        assert_eq!((status, body["error_code"].as_i64()), (StatusCode::INTERNAL_SERVER_ERROR, Some(50002)), "{body}");
        // Not before the timeout ran out; the upper bound is the hang guard only.
        assert!(waited >= timeout && waited < HANG_GUARD, "refused after {waited:?}");
        assert_eq!(acks.timeouts(), timeouts_before + 1);
        let home_app = app(Arc::new(home.store().fenced_by(HOME)));
        let (status, committed) =
            call(&home_app, Method::POST, "/subjects/acks-value", Some(json!({"schema": text}))).await;
        assert_eq!(status, StatusCode::OK, "committed at home: {committed}");
        caught_up(&replication).await;
        let retried = Instant::now();
        let id = register(&acking, "acks-value", &text).await.unwrap_or_else(|e| panic!("retry: {e:?}"));
        assert_eq!(Some(id), committed["id"].as_i64(), "the retry answers the ID the first attempt committed");
        assert_eq!(acks.timeouts(), timeouts_before + 1);
        eprintln!(
            "RPO 0, timeout {timeout:?}, poll {POLL:?}: acknowledged after (lag, latency, attempts) {figures:?} \
             ({timeouts_before} waits ran out); lag {lag:?}: 500/50002 after {waited:?}, the retry {:?} after the \
             refusal acknowledged in {:?} with ID {id}",
            retried - started - waited,
            retried.elapsed()
        );
        replication.stop().await;
    })
    .await;
}

/// An ID a client was given: where it was issued, when, and for which schema.
#[derive(Debug, Clone)]
struct Given {
    context: &'static str,
    id: i64,
    schema: String,
    by: &'static str,
    at: Instant,
}

/// What the clients were answered: the IDs given, and per region the error codes (and how many).
/// Read-your-writes in a read region: its writes are acknowledged once its own replica shows them
/// (as the function's stores are built, `Deployment::open_with_mirrors`), so under a lag of a
/// second a new version registered through the read region is answered by every read through it
/// at once (`versions`, `latest`, the subject listing), and the acknowledgement comes no earlier
/// than the lag. Without that wait (the wiring before), the same reads answer the old state.
#[tokio::test]
async fn a_write_through_a_read_region_is_read_back_there_at_once() {
    with_regions(|home, read| async move {
        let lag = Duration::from_secs(1);
        let own = registry_store_aws::regions::AckRegion { region: READ.to_string(), bucket: None };
        let acks = registry_store_aws::regions::AckReplicas::new(
            &home.sdk,
            &home.config.table,
            &home.config.bucket,
            &[own],
            HANG_GUARD,
        );
        let waiting = home.store().fenced_by(HOME).with_acks(Arc::new(acks));
        let region_app = |writes: registry_store_aws::AwsStore| {
            let reads = RegionalStore::new(read.store(), writes.clone());
            registry_http::regional::app(app(Arc::new(reads)), app(Arc::new(writes)))
        };
        let (reading_its_writes, before) = (region_app(waiting), region_app(home.store().fenced_by(HOME)));
        let replication = Replicator::run_with_lag(vec![(home.clone(), read.clone())], lag, POLL);
        let versions = |app: axum::Router, subject: &'static str| async move {
            let (status, listed) = call(&app, Method::GET, &format!("/subjects/{subject}/versions"), None).await;
            (status, listed)
        };
        let mut took = Vec::new();
        for (n, subject) in [(0, "ryw-value"), (1, "ryw-value"), (2, "ryw-value")] {
            let started = Instant::now();
            let id = register(&reading_its_writes, subject, &schema(&format!("Ryw{n}"))).await;
            let id = id.unwrap_or_else(|e| panic!("{e:?}"));
            took.push(started.elapsed());
            assert!(started.elapsed() >= lag, "acknowledged after {:?}, before the replica could show it", took[n]);
            let (status, listed) = versions(reading_its_writes.clone(), subject).await;
            let expected: Vec<i64> = (1..=n as i64 + 1).collect();
            assert_eq!((status, listed), (StatusCode::OK, json!(expected)), "version {} read back at once", n + 1);
            let (_, latest) = call(&reading_its_writes, Method::GET, "/subjects/ryw-value/versions/latest", None).await;
            assert_eq!(latest["id"], json!(id), "latest read back at once");
            let (_, subjects) = call(&reading_its_writes, Method::GET, "/subjects", None).await;
            assert_eq!(subjects, json!(["ryw-value"]));
        }
        // The wiring before: acknowledged at the home's commit, read back stale for the lag (made
        // longer than any read here can take, so the read surely comes before it).
        replication.set_lag(HANG_GUARD);
        let started = Instant::now();
        register(&before, "ryw-value", &schema("Ryw3")).await.unwrap_or_else(|e| panic!("{e:?}"));
        let quick = started.elapsed();
        let (_, listed) = versions(before.clone(), "ryw-value").await;
        assert_eq!(listed, json!([1, 2, 3]), "without the wait a read right after misses version 4");
        replication.set_lag(Duration::ZERO);
        caught_up(&replication).await;
        replication.stop().await;
        eprintln!(
            "read-your-writes in a read region, lag {lag:?}: registrations acknowledged after {took:?} (a new \
             subject, then two new versions); without the wait {quick:?}"
        );
    })
    .await;
}

#[derive(Debug, Default)]
struct Answers {
    given: Vec<Given>,
    errors: BTreeMap<(&'static str, i64), usize>,
}

type Log = Arc<Mutex<Answers>>;

fn log(answers: &Log) -> MutexGuard<'_, Answers> {
    answers.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers distinct schemas under `subject` at the home `by` until `stop` is set, or (when
/// `fenced_stops`) the home refuses three times in a row (the old home, once the marker reached it),
/// logging each answer in `answers`.
async fn writer(
    home: axum::Router,
    by: &'static str,
    k: usize,
    stop: Arc<AtomicBool>,
    fenced_stops: bool,
    answers: Log,
) {
    let subject = if k < 6 { format!("w{k}-value") } else { ":.team:orders".to_string() };
    let context = if k < 6 { "." } else { ".team" };
    let mut refused_in_a_row = 0;
    for n in 0.. {
        if stop.load(Ordering::SeqCst) || (fenced_stops && refused_in_a_row == 3) {
            break;
        }
        let text = schema(&format!("{}W{k}N{n}", by.replace('-', "_")));
        match register(&home, &subject, &text).await {
            Ok(id) => {
                log(&answers).given.push(Given { context, id, schema: text, by, at: Instant::now() });
                refused_in_a_row = 0;
            }
            Err((_, body)) => {
                let code = body["error_code"].as_i64().unwrap_or_default();
                *log(&answers).errors.entry((by, code)).or_default() += 1;
                refused_in_a_row = if code == 50002 { refused_in_a_row + 1 } else { 0 };
            }
        }
        // A client's pace, not the emulator's (which serves one request at a time).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Eight writers at the home `by`: six in the default context (a subject each), two sharing
/// `:.team:orders`.
fn writers(
    home: &axum::Router,
    by: &'static str,
    stop: &Arc<AtomicBool>,
    fenced_stops: bool,
    answers: &Log,
) -> Vec<JoinHandle<()>> {
    (0..8).map(|k| tokio::spawn(writer(home.clone(), by, k, stop.clone(), fenced_stops, answers.clone()))).collect()
}

async fn joined(writers: Vec<JoinHandle<()>>) {
    for writer in writers {
        writer.await.unwrap_or_else(|e| panic!("writer: {e}"));
    }
}

/// Eight writers allocate at the home while replication runs with a lag; replication pauses (the
/// home cut off) and the read region is failed over to (gap 1000) while they go on; eight writers
/// start at the new home; replication resumes both ways, and the old home's writers go on until the
/// marker reaches it (the residual window). Every ID any client was given, in the default context
/// and in `.team`, names one schema, in both regions once replication caught up.
#[tokio::test]
async fn a_failover_with_allocations_in_flight_never_gives_an_id_two_schemas() {
    with_regions(|us, eu| async move {
        let lag = Duration::from_millis(500);
        let routes = vec![(us.clone(), eu.clone()), (eu.clone(), us.clone())];
        let replication = Replicator::run_with_lag(routes, lag, POLL);
        let answers = Log::default();
        let old_home = app(Arc::new(us.store().fenced_by(HOME)));
        let stop = Arc::new(AtomicBool::new(false));
        let old_writers = writers(&old_home, HOME, &stop, true, &answers);
        tokio::time::sleep(Duration::from_secs(2)).await;

        // Replication stops (the home region is cut off); the writers keep allocating there.
        replication.pause();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let gap = 1000;
        let failover_at = Instant::now();
        let failover = eu.store().fail_over(READ, gap).await.unwrap_or_else(|e| panic!("{e}"));
        // The new home as a function opens it (`Deployment::open_with_mirrors`): a body its bucket
        // does not have yet (S3 replication lags the rows) is read from the old home's bucket.
        let buckets = BTreeMap::from([
            (HOME.to_string(), us.config.bucket.clone()),
            (READ.to_string(), eu.config.bucket.clone()),
        ]);
        let new_home = app(Arc::new(eu.store().with_body_mirrors(&eu.sdk, true, &buckets).fenced_by(READ)));
        let new_writers = writers(&new_home, READ, &stop, false, &answers);
        tokio::time::sleep(Duration::from_millis(300)).await;

        // Replication resumes both ways: the marker reaches the old home, whose writers are then
        // refused (the residual window ends); the new home's go on until they have IDs in both
        // contexts.
        replication.resume();
        let resumed = Instant::now();
        let old_done = tokio::time::timeout(HANG_GUARD, joined(old_writers)).await;
        old_done.unwrap_or_else(|_| panic!("the old home was not refused within {HANG_GUARD:?}"));
        let fenced_after = resumed.elapsed();
        let new_in =
            |context: &str| log(&answers).given.iter().filter(|g| g.by == READ && g.context == context).count();
        while new_in(".") == 0 || new_in(".team") == 0 {
            assert!(
                resumed.elapsed() < HANG_GUARD,
                "the new home issued no ID in a context: {:?}",
                log(&answers).errors
            );
            tokio::time::sleep(POLL).await;
        }
        stop.store(true, Ordering::SeqCst);
        joined(new_writers).await;
        caught_up(&replication).await;
        let (applied, superseded) = replication.counts();
        let late = replication.latest();
        replication.stop().await;
        let Answers { given, errors } = std::mem::take(&mut *log(&answers));
        // Without the mirrors the new home answered 50001 ("schema body ... is missing") to
        // registrations under subjects whose rows had replicated before their bodies.
        let missing = errors.get(&(READ, 50001)).copied().unwrap_or_default();
        assert_eq!(missing, 0, "the new home lacked bodies the old home wrote: {errors:?}");
        let (old, new): (Vec<Given>, Vec<Given>) = given.into_iter().partition(|g| g.by == HOME);

        // Every ID any client was given names one schema, and each region answers it so.
        let mut seen = BTreeMap::<(&str, i64), &Given>::new();
        for given in old.iter().chain(&new) {
            if let Some(other) = seen.insert((given.context, given.id), given) {
                let (id, context) = (given.id, given.context);
                assert_eq!(other.schema, given.schema, "ID {id} in '{context}' given by {} and {}", other.by, given.by);
            }
        }
        for region in [&us, &eu] {
            let local = app(Arc::new(region.store()));
            for ((context, id), given) in &seen {
                let path = match *context {
                    "." => format!("/schemas/ids/{id}"),
                    named => format!("/contexts/{named}/schemas/ids/{id}"),
                };
                let (status, answer) = call(&local, Method::GET, &path, None).await;
                assert_eq!(status, StatusCode::OK, "{path} in {:?}: {answer}", region.sdk.region());
                let region = region.sdk.region();
                assert!(same_schema(&answer, &given.schema), "{path} in {region:?} names another schema: {answer}");
            }
        }
        // Each region's counters once replication caught up (printed: an item written in both
        // regions keeps the later write).
        let mut counters = Vec::new();
        let team = registry_core::Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        for context in [registry_core::Context::DEFAULT, team] {
            let us_max = us.store().max_id_in(&context).await.unwrap_or_else(|e| panic!("{e}"));
            let eu_max = eu.store().max_id_in(&context).await.unwrap_or_else(|e| panic!("{e}"));
            counters.push((context.to_string(), us_max, eu_max));
        }
        let in_window = old.iter().filter(|g| g.at > failover_at).count();
        let jumps: Vec<_> =
            failover.counters.iter().map(|(c, seen, to)| (c.to_string(), seen.map(|s| s.0), i64::from(to.0))).collect();
        // The new home allocates only above its jump, in each context; in a context none of whose
        // items had arrived (unknown to the jump: on a loaded machine `.team` may be), above the
        // marker's floor.
        let floor = failover.after.floor.map(|floor| i64::from(floor.0)).unwrap_or_else(|| panic!("no floor"));
        for given in &new {
            let jumped = jumps.iter().find(|(context, _, _)| context == given.context);
            let jumped = jumped.map_or(floor, |(_, _, to)| *to);
            assert!(
                given.id > jumped,
                "the new home issued {} in '{}', at or below its jump {jumped}",
                given.id,
                given.context
            );
        }
        let range = |by: &[Given], context: &str| {
            let ids: Vec<i64> = by.iter().filter(|g| g.context == context).map(|g| g.id).collect();
            (ids.len(), ids.iter().min().copied(), ids.iter().max().copied())
        };
        eprintln!(
            "failover with allocations in flight, lag {lag:?}, gap {gap}: old home issued {} IDs ({in_window} after \
             the failover began; refused {fenced_after:?} after replication resumed), new home {}; error answers \
             (region, code): count {errors:?}; default context old/new (count, min, max) {:?} / {:?}, .team {:?} / \
             {:?}; jumps (context, highest seen, counter) {jumps:?}; replicated items {applied}, superseded \
             {superseded}, applied at most {late:?} after first seen; counters after (context, us, eu) \
             {counters:?}; {} IDs checked in both regions",
            old.len(),
            new.len(),
            range(&old, "."),
            range(&new, "."),
            range(&old, ".team"),
            range(&new, ".team"),
            seen.len()
        );
        assert!(in_window > 0, "no allocation in flight at the old home after the failover began");
    })
    .await;
}
