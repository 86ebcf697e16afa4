//! A test-only stand-in for global-table and S3 replication between two regions of the emulator
//! (which keeps regions apart and replicates nothing itself), run when a test says: a lag of zero
//! at each [`Replicator::replicate`], replication paused in between; or in the background with a
//! lag the test controls ([`Replicator::run_with_lag`]: zero, seconds, paused).

use crate::{AwsStore, AwsStoreConfig};
use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// One region's table and bucket.
#[derive(Debug, Clone)]
pub struct Site {
    /// The SDK configuration in the site's region.
    pub sdk: SdkConfig,
    /// The site's table (the global table's name, the same in every region) and bucket.
    pub config: AwsStoreConfig,
}

impl Site {
    /// One registry's sites on the emulator, one per `(region, bucket suffix)`: one table name
    /// (`prefix`, made unique) and a bucket each; nothing is created yet ([`Site::create`]).
    /// `None` when the tests skip (no emulator).
    pub async fn of_regions<const N: usize>(prefix: &str, regions: [(&str, &str); N]) -> Option<[Site; N]> {
        let sdk = super::emulator_sdk().await?;
        let names = super::unique_names(prefix);
        Some(regions.map(|(region, suffix)| Site {
            sdk: crate::regions::in_region(&sdk, region),
            config: AwsStoreConfig { table: names.table.clone(), bucket: format!("{}-{suffix}", names.bucket) },
        }))
    }

    /// Creates the site's table and bucket. Panics on an emulator error.
    pub async fn create(&self) {
        let created = crate::provision::create_resources(&self.sdk, &self.config, true).await;
        created.unwrap_or_else(|e| panic!("creating {}: {e}", self.config.bucket));
    }

    /// Deletes the site's table and bucket. Panics on an emulator error.
    pub async fn delete(&self) {
        let deleted = crate::provision::delete_resources(&self.sdk, &self.config, true).await;
        deleted.unwrap_or_else(|e| panic!("deleting {}: {e}", self.config.bucket));
    }

    /// Turns on the stream of the site's table with `view` and answers its ARN. Panics on an
    /// emulator error.
    pub async fn enable_stream(&self, view: aws_sdk_dynamodb::types::StreamViewType) -> String {
        use aws_sdk_dynamodb::types::StreamSpecification;
        let specification = StreamSpecification::builder().stream_enabled(true).stream_view_type(view).build();
        let specification = specification.unwrap_or_else(|e| panic!("stream specification: {e}"));
        let update = self.dynamo().update_table().table_name(&self.config.table).stream_specification(specification);
        let table = &self.config.table;
        let updated = update.send().await.unwrap_or_else(|e| panic!("turning on the stream of {table}: {e:?}"));
        let arn = updated.table_description.and_then(|description| description.latest_stream_arn);
        arn.unwrap_or_else(|| panic!("no stream ARN for {table}"))
    }

    /// A store over the site's table and bucket (path-style S3, as on the emulator).
    pub fn store(&self) -> AwsStore {
        AwsStore::with_path_style(&self.sdk, self.config.clone(), true)
    }

    /// A DynamoDB client in the site's region.
    pub fn dynamo(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.sdk)
    }

    /// An S3 client in the site's region (path-style).
    pub fn s3(&self) -> aws_sdk_s3::Client {
        let config = aws_sdk_s3::config::Builder::from(&self.sdk).force_path_style(true).build();
        aws_sdk_s3::Client::from_conf(config)
    }
}

/// A table item.
pub type Item = HashMap<String, AttributeValue>;

/// A site's items by key.
type Items = HashMap<(String, String), Item>;

/// Stands in for global-table and S3 replication: each call of [`Replicator::replicate`] applies
/// the changes a site's table made since the last call that read it, as a stream delivers them:
/// an item is sent only when its own site wrote it (so a stale copy never travels back), and an
/// item the site deleted is deleted in the other. It copies the bucket objects the other site
/// lacks (object deletes are not replicated, as S3 replication with a filter does not).
#[derive(Debug, Default)]
pub struct Replicator {
    /// Per site (its bucket name), each item as the replicator last saw or wrote it.
    seen: Mutex<HashMap<String, Items>>,
    /// Per site (its bucket name), the object keys known to be in its bucket, so that each pass
    /// looks up only the objects it has not copied or found before.
    objects: Mutex<HashMap<String, HashSet<String>>>,
}

/// One change of a site's table, as a stream record carries it.
#[derive(Debug, Clone)]
enum Change {
    /// The item as written.
    Put(Item),
    /// The key of an item deleted.
    Delete((String, String)),
}

impl Change {
    fn key(&self) -> (String, String) {
        match self {
            Change::Put(item) => item_key(item),
            Change::Delete(key) => key.clone(),
        }
    }
}

/// An item's key: its `pk` and `sk`.
pub fn item_key(item: &Item) -> (String, String) {
    let part = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
    (part("pk"), part("sk"))
}

/// Locks `mutex`; a panic while holding one leaves plain data, so poison is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Replicator {
    /// Every item of `site`'s table (strongly consistent). Panics on an emulator error.
    pub async fn scan(site: &Site) -> Vec<Item> {
        let scan = site.dynamo().scan().table_name(&site.config.table).consistent_read(true);
        scan.into_paginator().items().send().try_collect().await.unwrap_or_else(|e| panic!("scan: {e:?}"))
    }

    /// Every object key of `site`'s bucket, ascending. Panics on an emulator error.
    pub async fn object_keys(site: &Site) -> Vec<String> {
        let listing = site.s3().list_objects_v2().bucket(&site.config.bucket).into_paginator().send();
        let pages = listing.try_collect().await.unwrap_or_else(|e| panic!("list: {e:?}"));
        pages.iter().flat_map(|page| page.contents()).filter_map(|object| object.key()).map(str::to_owned).collect()
    }

    /// Applies `from`'s changes to `to`; the number of items (written or deleted) and objects
    /// copied. Panics on an emulator error.
    pub async fn replicate(&self, from: &Site, to: &Site) -> usize {
        let changes = self.changes(from).await;
        for change in &changes {
            self.apply(change, to).await;
        }
        changes.len() + self.copy_objects(from, to).await
    }

    /// What `from`'s table changed since the last look at it (written items, then deleted keys),
    /// now counted as seen there. Panics on an emulator error.
    async fn changes(&self, from: &Site) -> Vec<Change> {
        let current = Self::scan(from).await;
        let mut seen = lock(&self.seen);
        let before = seen.entry(from.config.bucket.clone()).or_default();
        let mut changes: Vec<Change> = current
            .iter()
            .filter(|item| before.get(&item_key(item)) != Some(*item))
            .cloned()
            .map(Change::Put)
            .collect();
        let now: HashSet<(String, String)> = current.iter().map(item_key).collect();
        changes.extend(before.keys().filter(|key| !now.contains(*key)).cloned().map(Change::Delete));
        *before = current.into_iter().map(|item| (item_key(&item), item)).collect();
        changes
    }

    /// Writes or deletes `change`'s item in `to`, and counts it as seen there (so it never travels
    /// back as `to`'s own change). Panics on an emulator error.
    async fn apply(&self, change: &Change, to: &Site) {
        match change {
            Change::Put(item) => {
                let put = to.dynamo().put_item().table_name(&to.config.table).set_item(Some(item.clone()));
                put.send().await.unwrap_or_else(|e| panic!("put: {e:?}"));
                lock(&self.seen).entry(to.config.bucket.clone()).or_default().insert(item_key(item), item.clone());
            }
            Change::Delete((pk, sk)) => {
                let delete = to
                    .dynamo()
                    .delete_item()
                    .table_name(&to.config.table)
                    .key("pk", AttributeValue::S(pk.clone()))
                    .key("sk", AttributeValue::S(sk.clone()));
                delete.send().await.unwrap_or_else(|e| panic!("delete: {e:?}"));
                lock(&self.seen).entry(to.config.bucket.clone()).or_default().remove(&(pk.clone(), sk.clone()));
            }
        }
    }

    /// Whether `to`'s item of `change` is still what the replicator last saw or wrote there (one
    /// strongly consistent GetItem): otherwise `to` wrote it since, later than `change`.
    async fn unchanged_in(&self, change: &Change, to: &Site) -> bool {
        let (pk, sk) = change.key();
        let got = to
            .dynamo()
            .get_item()
            .table_name(&to.config.table)
            .key("pk", AttributeValue::S(pk.clone()))
            .key("sk", AttributeValue::S(sk.clone()))
            .consistent_read(true)
            .send()
            .await
            .unwrap_or_else(|e| panic!("get: {e:?}"));
        let seen = lock(&self.seen);
        got.item() == seen.get(&to.config.bucket).and_then(|items| items.get(&(pk, sk)))
    }

    /// Copies the objects of `from`'s bucket that `to`'s lacks (looking up only keys not copied or
    /// found before); how many. Panics on an emulator error.
    pub async fn copy_objects(&self, from: &Site, to: &Site) -> usize {
        let mut copied = 0;
        for key in self.new_objects(from, to).await {
            copied += usize::from(self.copy_object(from, to, &key).await);
        }
        copied
    }

    /// The keys of `from`'s bucket not copied to or found in `to`'s before. Panics on an emulator
    /// error.
    async fn new_objects(&self, from: &Site, to: &Site) -> Vec<String> {
        let mut keys = Replicator::object_keys(from).await;
        let objects = lock(&self.objects);
        let known = objects.get(&to.config.bucket);
        keys.retain(|key| !known.is_some_and(|known| known.contains(key)));
        keys
    }

    /// Copies `key` from `from`'s bucket to `to`'s unless `to`'s has it; whether it copied. Panics
    /// on an emulator error.
    async fn copy_object(&self, from: &Site, to: &Site, key: &str) -> bool {
        let (source, target) = (from.s3(), to.s3());
        let missing = target.head_object().bucket(&to.config.bucket).key(key).send().await.is_err();
        if missing {
            let object = source.get_object().bucket(&from.config.bucket).key(key).send().await;
            let bytes = object.unwrap_or_else(|e| panic!("get {key}: {e:?}")).body.collect().await;
            let bytes = bytes.unwrap_or_else(|e| panic!("read {key}: {e}")).into_bytes();
            let put = target.put_object().bucket(&to.config.bucket).key(key).body(bytes.into()).send().await;
            put.unwrap_or_else(|e| panic!("put {key}: {e:?}"));
        }
        let mut objects = lock(&self.objects);
        objects.entry(to.config.bucket.clone()).or_default().insert(key.to_owned());
        objects.entry(from.config.bucket.clone()).or_default().insert(key.to_owned());
        missing
    }
}

/// A change waiting for its lag: what, and when the replicator first saw it at its source (its
/// commit time here).
#[derive(Debug)]
struct Pending {
    seen_at: Instant,
    what: Waiting,
}

#[derive(Debug)]
enum Waiting {
    Item(Change),
    Object(String),
}

/// What a test sets and reads while [`LaggedReplication`] runs.
#[derive(Debug, Default)]
struct Control {
    lag_ms: AtomicU64,
    paused: AtomicBool,
    stopped: AtomicBool,
    passes: AtomicU64,
    pending: AtomicUsize,
    applied: AtomicU64,
    superseded: AtomicU64,
    /// The longest any applied change waited since it was first seen, in milliseconds.
    latest_ms: AtomicU64,
}

/// Replication running in the background ([`Replicator::run_with_lag`]). Dropping it stops it.
#[derive(Debug)]
pub struct LaggedReplication {
    control: Arc<Control>,
    poll: Duration,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Replicator {
    /// Starts replicating along each `(from, to)` route in the background, every `poll`: each pass
    /// looks at every route's source (a scan of its table, a listing of its bucket), then applies, in
    /// the order seen, each change that is at least `lag` old, counting as its commit time the end of
    /// the first look that showed it (so a change is applied at least `lag` after its commit; about
    /// `lag` + `poll` after it while the emulator keeps up, later behind a backlog:
    /// [`LaggedReplication::latest`]). Items replicate one by one, as a global table's do: the items of
    /// one transaction seen by one look are applied in one pass, those seen by two looks in two. An
    /// item both regions wrote keeps the later write (last writer wins, by commit time, as a global
    /// table resolves it): a change older than the destination's own write of the item, or than a write
    /// it made since the last look, is dropped. Objects are copied when their lag is over, only to a
    /// bucket that lacks them.
    ///
    /// Give both directions of two sites to one call (not two): one task looks at and applies every
    /// route in turn (one ready change per route at a time, so no route waits behind another's
    /// backlog), and neither direction takes the other's writes for the destination's own. Explicit
    /// [`Replicator::replicate`] calls are not mixed with a running replication. Panics (in the task,
    /// seen at [`LaggedReplication::stop`]) on an emulator error.
    pub fn run_with_lag(routes: Vec<(Site, Site)>, lag: Duration, poll: Duration) -> LaggedReplication {
        let control = Arc::new(Control::default());
        let lag_ms = u64::try_from(lag.as_millis()).unwrap_or(u64::MAX);
        control.lag_ms.store(lag_ms, Ordering::SeqCst);
        let task = tokio::spawn(Self::run(routes, poll, control.clone()));
        LaggedReplication { control, poll, task: Some(task) }
    }

    async fn run(routes: Vec<(Site, Site)>, poll: Duration, control: Arc<Control>) {
        let replicator = Replicator::default();
        // Per route, what waits: routes deliver independently, as each pair of regions does.
        let mut queues: Vec<VecDeque<Pending>> = routes.iter().map(|_| VecDeque::new()).collect();
        // Per (site's bucket, item key): the commit time of the item's current value there.
        let mut written = HashMap::<(String, (String, String)), Instant>::new();
        // Per (destination's bucket, object key): queued already.
        let mut queued = HashSet::<(String, String)>::new();
        while !control.stopped.load(Ordering::SeqCst) {
            for ((from, to), queue) in routes.iter().zip(&mut queues) {
                let changes = replicator.changes(from).await;
                let seen_at = Instant::now();
                for change in changes {
                    written.insert((from.config.bucket.clone(), change.key()), seen_at);
                    queue.push_back(Pending { seen_at, what: Waiting::Item(change) });
                }
                for key in replicator.new_objects(from, to).await {
                    if queued.insert((to.config.bucket.clone(), key.clone())) {
                        queue.push_back(Pending { seen_at: Instant::now(), what: Waiting::Object(key) });
                    }
                }
            }
            let lag = Duration::from_millis(control.lag_ms.load(Ordering::SeqCst));
            // One ready change per route in turn, so that no route waits behind another's backlog.
            let mut ready = true;
            while ready && !control.paused.load(Ordering::SeqCst) {
                ready = false;
                for ((from, to), queue) in routes.iter().zip(&mut queues) {
                    let Some(Pending { seen_at, what }) = queue.pop_front_if(|p| p.seen_at.elapsed() >= lag) else {
                        continue;
                    };
                    ready = true;
                    match what {
                        Waiting::Item(change) => {
                            let at_destination = (to.config.bucket.clone(), change.key());
                            let later = written.get(&at_destination).is_some_and(|own| *own > seen_at);
                            // Only a destination that is a source too writes items of its own.
                            let writes = routes.iter().any(|(source, _)| source.config.bucket == to.config.bucket);
                            if later || (writes && !replicator.unchanged_in(&change, to).await) {
                                control.superseded.fetch_add(1, Ordering::SeqCst);
                                continue;
                            }
                            replicator.apply(&change, to).await;
                            written.insert(at_destination, seen_at);
                            control.applied.fetch_add(1, Ordering::SeqCst);
                            let waited = u64::try_from(seen_at.elapsed().as_millis()).unwrap_or(u64::MAX);
                            control.latest_ms.fetch_max(waited, Ordering::SeqCst);
                        }
                        Waiting::Object(key) => {
                            replicator.copy_object(from, to, &key).await;
                        }
                    }
                }
            }
            let pending = queues.iter().map(VecDeque::len).sum();
            control.pending.store(pending, Ordering::SeqCst);
            control.passes.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(poll).await;
        }
    }
}

impl LaggedReplication {
    /// From the next pass on, applies only changes at least `lag` old.
    pub fn set_lag(&self, lag: Duration) {
        self.control.lag_ms.store(u64::try_from(lag.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    /// Stops applying changes; they are still seen (their commit times kept) and wait.
    pub fn pause(&self) {
        self.control.paused.store(true, Ordering::SeqCst);
    }

    /// Applies again what waited, each change once it is `lag` old.
    pub fn resume(&self) {
        self.control.paused.store(false, Ordering::SeqCst);
    }

    /// Item changes applied and dropped as older than the destination's own write, so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.control.applied.load(Ordering::SeqCst), self.control.superseded.load(Ordering::SeqCst))
    }

    /// The longest an applied item change waited from first seen to applied, so far: the lag, plus
    /// up to a pass, plus whatever backlog the emulator's pace built.
    pub fn latest(&self) -> Duration {
        Duration::from_millis(self.control.latest_ms.load(Ordering::SeqCst))
    }

    /// Waits until a pass that started after this call left nothing waiting: every change made
    /// before the call is applied (or superseded). Never returns while paused.
    pub async fn caught_up(&self) {
        let after = self.control.passes.load(Ordering::SeqCst) + 2;
        while self.control.passes.load(Ordering::SeqCst) < after || self.control.pending.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(self.poll).await;
        }
    }

    /// Stops after the pass under way; panics if the task did (an emulator error).
    pub async fn stop(mut self) {
        self.control.stopped.store(true, Ordering::SeqCst);
        if let Some(task) = self.task.take() {
            task.await.unwrap_or_else(|e| panic!("replication: {e}"));
        }
    }
}

impl Drop for LaggedReplication {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
