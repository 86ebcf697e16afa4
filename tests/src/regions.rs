//! The `lambda` backend as a two-region deployment: the case's table and bucket in the home
//! region (its [`AwsTarget`]) and again in a read region on the same emulator, the function run as
//! the read region's (`AWS_REGION` the read region, `REGISTRY_HOME_REGION` the home), and the read
//! region replicated into by passes before every request reaches the function and every 20 ms while
//! the function serves it, each applying the changes seen at least [`REPLICATION_LAG`] ago: the
//! suite runs against a read region under a replication lag, and its reads after its own writes
//! hold because a write through the read region is acknowledged only once the replica shows it
//! (read-your-writes). Longer lags are the regions tests' subject in `registry-store-aws`.
//!
//! How a pass replicates, and why not by scanning the table as the regions tests'
//! [`Replicator::replicate`] does: a scan per request would grow with the table (a case of
//! hundreds of versions would scan thousands of items before each of its hundreds of requests).
//! Instead the home table's stream (keys only) says which items changed since the last pass; a pass
//! that finds no record costs one emulator call (GetRecords) and nothing else.
//! Changed items are then read from the home table as they are now (a strongly consistent
//! BatchGetItem) and written to, or deleted from, the read region (BatchWriteItem), rather than
//! replayed from the records: the emulator undoes a cancelled transaction by writing the items back
//! without a stream record for every item, so the last record of an item may show a write that was
//! rolled back. Bodies and ledger entries are copied with [`Replicator::copy_objects`] in passes
//! that found new items (a request writes its objects before the items that refer to them; a body
//! still missing would be read from the home bucket anyway).

use crate::aws::AwsTarget;
use registry_store_aws::AwsStoreConfig;
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::regions::in_region;
use registry_store_aws::testing::replicator::{Replicator, Site};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The region the `lambda` backend's function runs in (the home is the emulator's default).
pub const READ_REGION: &str = "eu-west-1";

/// Items one BatchGetItem reads, and one BatchWriteItem writes, at most.
const BATCH_GET: usize = 100;
const BATCH_WRITE: usize = 25;

/// A read region of a case's home table and bucket, and its replication.
#[derive(Debug)]
pub struct ReadRegion {
    home: Site,
    read: Site,
    home_region: String,
    /// The emulator's endpoint, for the DynamoDB and DynamoDB Streams JSON calls of a pass.
    endpoint: String,
    http: reqwest::Client,
    /// The home table's stream and its shard (the emulator's streams have one).
    stream_arn: String,
    shard: Value,
    replicator: Replicator,
    /// Where the next pass reads the stream, and what it read that waits to be applied. One pass
    /// at a time.
    stream: tokio::sync::Mutex<Stream>,
    /// While set, passes replicate nothing (a test's replication lag).
    paused: AtomicBool,
}

impl ReadRegion {
    /// Turns on the stream of `home`'s table and creates the read region's replica of it (same
    /// name) and a bucket of its own. Panics if they cannot be created (after deleting what was).
    pub async fn create(home: &AwsTarget) -> ReadRegion {
        let home_region =
            home.sdk.region().map_or_else(|| "us-east-1".to_string(), |region| region.as_ref().to_string());
        assert_ne!(home_region, READ_REGION, "the emulator's region is the read region's");
        let endpoint = home.sdk.endpoint_url().unwrap_or_else(|| panic!("no emulator endpoint")).to_string();
        let read = Site {
            sdk: in_region(&home.sdk, READ_REGION),
            config: AwsStoreConfig { table: home.names.table.clone(), bucket: format!("{}-read", home.names.bucket) },
        };
        let home = Site { sdk: home.sdk.clone(), config: home.names.clone() };
        let stream_arn = home.enable_stream(aws_sdk_dynamodb::types::StreamViewType::KeysOnly).await;
        if let Err(error) = create_resources(&read.sdk, &read.config, true).await {
            let _ = delete_resources(&read.sdk, &read.config, true).await;
            panic!("creating the read region's table and bucket {}: {error}", read.config.bucket);
        }
        let mut region = ReadRegion {
            home,
            read,
            home_region,
            endpoint,
            http: reqwest::Client::builder().no_proxy().build().unwrap_or_else(|e| panic!("HTTP client: {e}")),
            stream_arn,
            shard: Value::Null,
            replicator: Replicator::default(),
            stream: tokio::sync::Mutex::new(Stream::default()),
            paused: AtomicBool::new(false),
        };
        let request = json!({ "StreamArn": &region.stream_arn });
        let description =
            region.dynamodb(&region.home_region, "DynamoDBStreams_20120810.DescribeStream", request).await;
        region.shard = description["StreamDescription"]["Shards"][0]["ShardId"].clone();
        assert!(region.shard.is_string(), "the home table's stream has no shard: {description}");
        region
    }

    /// The environment of the read region's function: `home_env` (the home target's
    /// [`AwsTarget::function_env`]) with the read region, its bucket, and the home region and
    /// bucket its writes go to.
    pub fn function_env(&self, home_env: Vec<(String, String)>) -> Vec<(String, String)> {
        let replaced = ["AWS_REGION", "REGISTRY_BUCKET"];
        let mut env: Vec<(String, String)> =
            home_env.into_iter().filter(|(name, _)| !replaced.contains(&name.as_str())).collect();
        env.extend([
            ("AWS_REGION".to_string(), READ_REGION.to_string()),
            ("REGISTRY_BUCKET".to_string(), self.read.config.bucket.clone()),
            ("REGISTRY_HOME_REGION".to_string(), self.home_region.clone()),
            ("REGISTRY_HOME_BUCKET".to_string(), self.home.config.bucket.clone()),
            // A hang guard, not a speed check: a write waits for the replica until this harness
            // has replicated it, which on a loaded emulator takes as long as it takes.
            ("REGISTRY_ACK_TIMEOUT_MS".to_string(), ACK_HANG_GUARD_MS.to_string()),
        ]);
        env
    }

    /// Applies to the read region every change the home region made at least [`REPLICATION_LAG`]
    /// ago that no pass has applied yet (see the module documentation); the number of items written
    /// or deleted there. Panics on an emulator error.
    pub async fn sync(&self) -> usize {
        let mut stream = self.stream.lock().await;
        if self.paused.load(Ordering::SeqCst) {
            return 0;
        }
        // What the stream shows that is new joins the changes waiting, with the time it was first
        // seen; the iterator moves on with it (no await between), so a pass cut off anywhere (the
        // harness drops the one running when a request is answered) loses nothing.
        loop {
            let (records, next) = self.stream_records(stream.iterator.clone()).await;
            let seen_at = Instant::now();
            stream.iterator = Some(next);
            if records.is_empty() {
                break;
            }
            for record in &records {
                let keys = record["dynamodb"]["Keys"].clone();
                let inserted = record["eventName"] == "INSERT";
                stream.waiting.push(Waiting { seen_at, key: item_key(&keys), keys, inserted });
            }
        }
        let Some(ready_before) = Instant::now().checked_sub(REPLICATION_LAG) else { return 0 };
        let mut changed: BTreeMap<(String, String), Value> = BTreeMap::new();
        let mut inserted = false;
        for waiting in stream.waiting.iter().filter(|w| w.seen_at <= ready_before) {
            changed.insert(waiting.key.clone(), waiting.keys.clone());
            inserted |= waiting.inserted;
        }
        if changed.is_empty() {
            return 0;
        }
        let keys: Vec<Value> = changed.into_values().collect();
        let mut current: BTreeMap<(String, String), Value> = BTreeMap::new();
        for chunk in keys.chunks(BATCH_GET) {
            let table = &self.home.config.table;
            let request = json!({ "RequestItems": { table: { "Keys": chunk, "ConsistentRead": true } } });
            let answer = self.dynamodb(&self.home_region, "DynamoDB_20120810.BatchGetItem", request).await;
            let unprocessed = answer["UnprocessedKeys"].as_object().is_some_and(|keys| !keys.is_empty());
            assert!(!unprocessed, "the emulator left keys unread: {answer}");
            for item in answer["Responses"][table].as_array().into_iter().flatten() {
                current.insert(item_key(item), item.clone());
            }
        }
        let writes: Vec<Value> = keys
            .iter()
            .map(|keys| match current.get(&item_key(keys)) {
                Some(item) => json!({ "PutRequest": { "Item": item } }),
                None => json!({ "DeleteRequest": { "Key": keys } }),
            })
            .collect();
        // Objects first: a body or ledger entry is written before the items that name it.
        if inserted {
            self.replicator.copy_objects(&self.home, &self.read).await;
        }
        for chunk in writes.chunks(BATCH_WRITE) {
            let request = json!({ "RequestItems": { &self.read.config.table: chunk } });
            let answer = self.dynamodb(READ_REGION, "DynamoDB_20120810.BatchWriteItem", request).await;
            let unprocessed = answer["UnprocessedItems"].as_object().is_some_and(|items| !items.is_empty());
            assert!(!unprocessed, "the emulator left writes undone: {answer}");
        }
        // Applied: only now do they stop waiting (a pass cut off before this point is redone; the
        // items are read as they are then, so applying them again is harmless).
        stream.waiting.retain(|waiting| waiting.seen_at > ready_before);
        writes.len()
    }

    /// The home stream's records from `iterator` (from the stream's start when `None`), at most a
    /// page, and the iterator to read on from. The iterator is kept from pass to pass (the
    /// emulator's stream shard stays the table's own: its patched transactions restore the items
    /// they cancel in place rather than replacing the table), so a pass with nothing new costs one
    /// call.
    async fn stream_records(&self, iterator: Option<Value>) -> (Vec<Value>, Value) {
        let iterator = match iterator {
            Some(iterator) => iterator,
            None => {
                let request = json!({
                    "StreamArn": &self.stream_arn, "ShardId": &self.shard, "ShardIteratorType": "TRIM_HORIZON"
                });
                let answer = self.dynamodb(&self.home_region, "DynamoDBStreams_20120810.GetShardIterator", request);
                answer.await["ShardIterator"].clone()
            }
        };
        let request = json!({ "ShardIterator": iterator, "Limit": 1000 });
        let page = self.dynamodb(&self.home_region, "DynamoDBStreams_20120810.GetRecords", request).await;
        let next = page["NextShardIterator"].clone();
        assert!(next.is_string(), "GetRecords answered no next iterator: {page}");
        (page["Records"].as_array().cloned().unwrap_or_default(), next)
    }

    /// One call of the emulator's DynamoDB (or DynamoDB Streams) JSON API in `region`, named by
    /// its `X-Amz-Target`. The emulator reads the region from the credential scope and checks no
    /// signature. Panics unless it answers 2xx with JSON.
    async fn dynamodb(&self, region: &str, target: &str, body: Value) -> Value {
        registry_store_aws::testing::emulator_json_call(&self.http, &self.endpoint, region, target, &body).await
    }

    /// Pauses replication (`true`) or lets the next pass catch up (`false`).
    pub fn pause(&self, paused: bool) {
        self.paused.store(paused, Ordering::SeqCst);
    }

    /// A store over the read region's replica and bucket (what the function reads locally).
    pub fn replica(&self) -> registry_store_aws::AwsStore {
        self.read.store()
    }

    /// Deletes the read region's table and bucket.
    pub async fn delete(&self) -> Result<(), String> {
        delete_resources(&self.read.sdk, &self.read.config, true).await.map_err(|error| error.to_string())
    }
}

/// The replication lag of the read region: a change of the home table is applied there once a pass
/// has seen it at least this long ago. Reads through the read region right after a write made
/// through it hold only because the write waits for its replica (read-your-writes).
pub const REPLICATION_LAG: Duration = Duration::from_millis(100);

/// How long the function waits for its replica to show a write (`REGISTRY_ACK_TIMEOUT_MS`): a hang
/// guard only.
const ACK_HANG_GUARD_MS: u64 = 300_000;

/// The home stream as the passes read it.
#[derive(Debug, Default)]
struct Stream {
    /// The iterator the last GetRecords answered (`None`: from the stream's start).
    iterator: Option<Value>,
    /// Changes seen and not yet applied.
    waiting: Vec<Waiting>,
}

/// A change of the home table waiting for [`REPLICATION_LAG`].
#[derive(Debug)]
struct Waiting {
    seen_at: Instant,
    key: (String, String),
    keys: Value,
    inserted: bool,
}

/// An item's (or its keys') `pk` and `sk`, as JSON of the DynamoDB API.
fn item_key(item: &Value) -> (String, String) {
    let part = |name: &str| item[name]["S"].as_str().unwrap_or_default().to_string();
    (part("pk"), part("sk"))
}
