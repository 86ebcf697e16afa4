//! A test-only replicator that explores the orders replication may take, chosen by a draw: for
//! global tables and S3 replication between any number of regions of the emulator, it delivers
//! each change along each route (a pair of regions, one direction) when the draw says, in any
//! order, with routes paused and resumed at random, and resolves an item or object written in two
//! regions as DynamoDB and S3 do: the later write wins, by the write's time.
//!
//! It is driven step by step, never in the background, so a draw replays the same run: the test
//! calls [`Adversary::observe`] after each request it makes (so each change's time is the order of
//! the requests), [`Adversary::step`] wherever replication may move, and [`Adversary::converge`]
//! to deliver everything. A change's time is the logical clock of the observation that saw it
//! (ticking once per site looked at), so two regions never write one item at the same time.

use super::replicator::{Item, Replicator, Site, item_key};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{BTreeMap, BTreeSet};

/// A table item's key, or `("s3", object key)` for a bucket object.
type Key = (String, String);

/// One site's item or object as last written there, and when.
#[derive(Debug, Clone, PartialEq)]
struct Versioned {
    at: u64,
    value: Value,
}

/// What a change writes.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Item(Item),
    /// A deleted item (a tombstone: its time still orders later writes).
    Deleted,
    Object(Vec<u8>),
}

/// A change waiting on a route.
#[derive(Debug, Clone)]
struct Change {
    key: Key,
    version: Versioned,
}

/// A small deterministic generator (the schema-linking workloads' splitmix64, in sizes and
/// chances): the draw is the whole run's randomness.
#[derive(Debug, Clone)]
pub struct Rng(registry_exporter::testkit::linking::Rng);

impl Rng {
    /// The generator for `draw`.
    pub fn new(draw: u64) -> Rng {
        Rng(registry_exporter::testkit::linking::Rng(draw))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.draw()
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { usize::try_from(self.next_u64() % n as u64).unwrap_or(0) }
    }

    /// `true` with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: usize, denominator: usize) -> bool {
        self.below(denominator) < numerator
    }
}

/// Randomized, adversarial replication among `sites` (see the module's text).
#[derive(Debug)]
pub struct Adversary {
    sites: Vec<Site>,
    rng: Rng,
    clock: u64,
    /// Per site, each item and object as last written there (by its clients or by a delivery).
    state: Vec<BTreeMap<Key, Versioned>>,
    /// Per route `(from, to)`, the changes waiting.
    queues: BTreeMap<(usize, usize), Vec<Change>>,
    /// Routes paused by the test (cut) or by the draw.
    cut: BTreeSet<(usize, usize)>,
    paused: BTreeSet<(usize, usize)>,
    /// Deliveries applied and dropped as older than the destination's own write.
    pub applied: usize,
    pub superseded: usize,
}

impl Adversary {
    /// Replication among `sites`, choices drawn from `draw`.
    pub fn new(sites: Vec<Site>, draw: u64) -> Adversary {
        let state = sites.iter().map(|_| BTreeMap::new()).collect();
        Adversary {
            sites,
            rng: Rng::new(draw),
            clock: 0,
            state,
            queues: BTreeMap::new(),
            cut: BTreeSet::new(),
            paused: BTreeSet::new(),
            applied: 0,
            superseded: 0,
        }
    }

    /// The generator, for the test's own choices (one stream: the draw replays the whole run).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Stops delivering from site `from` to site `to` until [`Adversary::heal`].
    pub fn cut(&mut self, from: usize, to: usize) {
        self.cut.insert((from, to));
    }

    /// Delivers from `from` to `to` again (when the draw does not pause it).
    pub fn heal(&mut self, from: usize, to: usize) {
        self.cut.remove(&(from, to));
    }

    /// Looks at every site: each item or object that changed since the last look is a change of
    /// that site, timed now, queued on every route from it. Panics on an emulator error.
    pub async fn observe(&mut self) {
        for site in 0..self.sites.len() {
            self.clock += 1;
            let now = self.current(site).await;
            let known = &mut self.state[site];
            let mut changes = Vec::new();
            for (key, value) in &now {
                if known.get(key).map(|v| &v.value) != Some(value) {
                    changes
                        .push(Change { key: key.clone(), version: Versioned { at: self.clock, value: value.clone() } });
                }
            }
            for (key, version) in known.iter() {
                let deleted = matches!(version.value, Value::Item(_)) && !now.contains_key(key);
                if deleted {
                    let version = Versioned { at: self.clock, value: Value::Deleted };
                    changes.push(Change { key: key.clone(), version });
                }
            }
            for change in changes {
                known.insert(change.key.clone(), change.version.clone());
                for to in (0..self.sites.len()).filter(|to| *to != site) {
                    self.queues.entry((site, to)).or_default().push(change.clone());
                }
            }
        }
    }

    /// One step of replication as the draw chooses: each route may be paused or resumed, and each
    /// route not paused or cut delivers a random part of what waits, in random order.
    pub async fn step(&mut self) {
        let routes: Vec<(usize, usize)> = self.queues.keys().copied().collect();
        for route in routes {
            if self.rng.chance(1, 5) && !self.paused.remove(&route) {
                self.paused.insert(route);
            }
            if self.paused.contains(&route) || self.cut.contains(&route) {
                continue;
            }
            let waiting = self.queues.remove(&route).unwrap_or_default();
            let (mut now, later): (Vec<Change>, Vec<Change>) = waiting.into_iter().partition(|_| self.rng.chance(1, 2));
            self.shuffle(&mut now);
            for change in now {
                self.deliver(route.1, change).await;
            }
            self.queues.insert(route, later);
        }
    }

    /// Resumes every route the draw paused and delivers everything that waits on routes not cut,
    /// in random order, until nothing does. Panics on an emulator error.
    pub async fn converge(&mut self) {
        self.paused.clear();
        loop {
            self.observe().await;
            let routes: Vec<(usize, usize)> = self
                .queues
                .iter()
                .filter(|(route, q)| !q.is_empty() && !self.cut.contains(route))
                .map(|(r, _)| *r)
                .collect();
            if routes.is_empty() {
                return;
            }
            for route in routes {
                let mut waiting = self.queues.remove(&route).unwrap_or_default();
                self.shuffle(&mut waiting);
                for change in waiting {
                    self.deliver(route.1, change).await;
                }
            }
        }
    }

    /// Whether every site holds the same items and objects (after [`Adversary::converge`] with no
    /// route cut, replication's promise). Panics on an emulator error.
    pub async fn converged(&mut self) -> bool {
        let mut first = None;
        for site in 0..self.sites.len() {
            let now = self.current(site).await;
            match &first {
                None => first = Some(now),
                Some(first) if *first != now => return false,
                Some(_) => {}
            }
        }
        true
    }

    fn shuffle(&mut self, changes: &mut [Change]) {
        for i in (1..changes.len()).rev() {
            let j = self.rng.below(i + 1);
            changes.swap(i, j);
        }
    }

    /// Applies `change` at site `to` unless `to`'s own version of it is later (last writer wins).
    async fn deliver(&mut self, to: usize, change: Change) {
        let own = self.state[to].get(&change.key);
        if own.is_some_and(|own| own.at >= change.version.at) {
            self.superseded += 1;
            return;
        }
        let site = &self.sites[to];
        let (pk, sk) = change.key.clone();
        match &change.version.value {
            Value::Item(item) => {
                let put = site.dynamo().put_item().table_name(&site.config.table).set_item(Some(item.clone()));
                put.send().await.unwrap_or_else(|e| panic!("put: {e:?}"));
            }
            Value::Deleted => {
                let delete = site
                    .dynamo()
                    .delete_item()
                    .table_name(&site.config.table)
                    .key("pk", AttributeValue::S(pk))
                    .key("sk", AttributeValue::S(sk));
                delete.send().await.unwrap_or_else(|e| panic!("delete: {e:?}"));
            }
            Value::Object(bytes) => {
                let put = site.s3().put_object().bucket(&site.config.bucket).key(&sk).body(bytes.clone().into());
                put.send().await.unwrap_or_else(|e| panic!("put {sk}: {e:?}"));
            }
        }
        self.state[to].insert(change.key, change.version);
        self.applied += 1;
    }

    /// Every item of site `site`'s table and every object of its bucket, as they are now.
    async fn current(&self, site: usize) -> BTreeMap<Key, Value> {
        let site_ref = &self.sites[site];
        let mut now: BTreeMap<Key, Value> =
            Replicator::scan(site_ref).await.into_iter().map(|item| (item_key(&item), Value::Item(item))).collect();
        let s3 = site_ref.s3();
        for key in Replicator::object_keys(site_ref).await {
            let object_key = ("s3".to_string(), key.clone());
            // Objects are written once (bodies are content-addressed, a ledger entry names its
            // ID's first schema; the workloads rebind no ID): one known here is not read again.
            let known = self.state[site].get(&object_key).and_then(|v| match &v.value {
                Value::Object(bytes) => Some(bytes.clone()),
                _ => None,
            });
            let bytes = match known {
                Some(bytes) => bytes,
                None => {
                    let got = s3.get_object().bucket(&site_ref.config.bucket).key(&key).send().await;
                    let body = got.unwrap_or_else(|e| panic!("get {key}: {e:?}")).body.collect().await;
                    body.unwrap_or_else(|e| panic!("read {key}: {e}")).into_bytes().to_vec()
                }
            };
            now.insert(object_key, Value::Object(bytes));
        }
        now
    }
}
