//! A test-only stand-in for global-table and S3 replication between two regions of the emulator
//! (which keeps regions apart and replicates nothing itself), run when a test says: a lag of zero
//! at each [`Replicator::replicate`], replication paused in between.

use crate::{AwsStore, AwsStoreConfig};
use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One region's table and bucket.
#[derive(Debug, Clone)]
pub struct Site {
    /// The SDK configuration in the site's region.
    pub sdk: SdkConfig,
    /// The site's table (the global table's name, the same in every region) and bucket.
    pub config: AwsStoreConfig,
}

impl Site {
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
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let page = site
                .dynamo()
                .scan()
                .table_name(&site.config.table)
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .unwrap_or_else(|e| panic!("scan: {e:?}"));
            items.extend(page.items().iter().cloned());
            match page.last_evaluated_key() {
                Some(last) => start = Some(last.clone()),
                None => return items,
            }
        }
    }

    /// Applies `from`'s changes to `to`; the number of items (written or deleted) and objects
    /// copied. Panics on an emulator error.
    pub async fn replicate(&self, from: &Site, to: &Site) -> usize {
        let current = Self::scan(from).await;
        let (changed, deleted): (Vec<Item>, Vec<(String, String)>) = {
            let mut seen = lock(&self.seen);
            let before = seen.entry(from.config.bucket.clone()).or_default();
            let changed = current.iter().filter(|item| before.get(&item_key(item)) != Some(*item)).cloned().collect();
            let now: HashSet<(String, String)> = current.iter().map(item_key).collect();
            let deleted: Vec<(String, String)> = before.keys().filter(|key| !now.contains(*key)).cloned().collect();
            for key in &deleted {
                before.remove(key);
            }
            for item in &current {
                before.insert(item_key(item), item.clone());
            }
            (changed, deleted)
        };
        let mut copied = 0;
        for item in changed {
            let put = to.dynamo().put_item().table_name(&to.config.table).set_item(Some(item.clone()));
            put.send().await.unwrap_or_else(|e| panic!("put: {e:?}"));
            lock(&self.seen).entry(to.config.bucket.clone()).or_default().insert(item_key(&item), item);
            copied += 1;
        }
        for (pk, sk) in deleted {
            let delete = to
                .dynamo()
                .delete_item()
                .table_name(&to.config.table)
                .key("pk", AttributeValue::S(pk.clone()))
                .key("sk", AttributeValue::S(sk.clone()));
            delete.send().await.unwrap_or_else(|e| panic!("delete: {e:?}"));
            lock(&self.seen).entry(to.config.bucket.clone()).or_default().remove(&(pk, sk));
            copied += 1;
        }
        copied + self.copy_objects(from, to).await
    }

    /// Copies the objects of `from`'s bucket that `to`'s lacks (looking up only keys not copied or
    /// found before); how many. Panics on an emulator error.
    pub async fn copy_objects(&self, from: &Site, to: &Site) -> usize {
        let (source, target) = (from.s3(), to.s3());
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let listed = source
                .list_objects_v2()
                .bucket(&from.config.bucket)
                .set_continuation_token(token.take())
                .send()
                .await
                .unwrap_or_else(|e| panic!("list: {e:?}"));
            keys.extend(listed.contents().iter().filter_map(|o| o.key()).map(str::to_owned));
            match listed.next_continuation_token() {
                Some(next) => token = Some(next.to_owned()),
                None => break,
            }
        }
        let known = lock(&self.objects).get(&to.config.bucket).cloned().unwrap_or_default();
        let mut copied = 0;
        for key in keys.into_iter().filter(|key| !known.contains(key)) {
            if target.head_object().bucket(&to.config.bucket).key(&key).send().await.is_err() {
                let object = source.get_object().bucket(&from.config.bucket).key(&key).send().await;
                let bytes = object.unwrap_or_else(|e| panic!("get {key}: {e:?}")).body.collect().await;
                let bytes = bytes.unwrap_or_else(|e| panic!("read {key}: {e}")).into_bytes();
                let put = target.put_object().bucket(&to.config.bucket).key(&key).body(bytes.into()).send().await;
                put.unwrap_or_else(|e| panic!("put {key}: {e:?}"));
                copied += 1;
            }
            let mut objects = lock(&self.objects);
            objects.entry(to.config.bucket.clone()).or_default().insert(key.clone());
            objects.entry(from.config.bucket.clone()).or_default().insert(key);
        }
        copied
    }
}
