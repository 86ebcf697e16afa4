//! The registry table's stream as the exporter tests read it: turned on (NEW_AND_OLD_IMAGES), then
//! read through the DynamoDB Streams JSON API of the emulator, as Lambda's event source mapping
//! reads it.

use registry_store_aws::AwsStoreConfig;
use registry_store_aws::testing::replicator::Site;
use serde_json::{Value, json};

/// The table's stream read as Lambda's event source mapping reads it, through the DynamoDB
/// Streams JSON API of the emulator.
pub struct StreamReader {
    http: reqwest::Client,
    endpoint: String,
    region: String,
    arn: String,
}

impl StreamReader {
    async fn call(&self, action: &str, body: Value) -> Value {
        let target = format!("DynamoDBStreams_20120810.{action}");
        registry_store_aws::testing::emulator_json_call(&self.http, &self.endpoint, &self.region, &target, &body).await
    }

    /// Every record the stream holds, oldest first, from every shard.
    pub async fn records(&self) -> Vec<Value> {
        let description = self.call("DescribeStream", json!({ "StreamArn": self.arn })).await;
        let shards = description["StreamDescription"]["Shards"].as_array().cloned().unwrap_or_default();
        assert!(!shards.is_empty(), "the stream has no shard: {description}");
        let mut records = Vec::new();
        for shard in shards {
            let iterator = self
                .call(
                    "GetShardIterator",
                    json!({ "StreamArn": self.arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON" }),
                )
                .await;
            let mut iterator = iterator["ShardIterator"].as_str().map(str::to_owned);
            while let Some(current) = iterator {
                let page = self.call("GetRecords", json!({ "ShardIterator": current, "Limit": 1000 })).await;
                let batch = page["Records"].as_array().cloned().unwrap_or_default();
                if batch.is_empty() {
                    break;
                }
                records.extend(batch);
                iterator = page["NextShardIterator"].as_str().map(str::to_owned);
            }
        }
        records
    }
}

/// Turns the stream of `names`' table on and answers its reader.
pub async fn enable(sdk: &aws_config::SdkConfig, names: &AwsStoreConfig) -> StreamReader {
    let site = Site { sdk: sdk.clone(), config: names.clone() };
    let arn = site.enable_stream(aws_sdk_dynamodb::types::StreamViewType::NewAndOldImages).await;
    StreamReader {
        http: reqwest::Client::new(),
        endpoint: sdk.endpoint_url().unwrap_or_default().to_owned(),
        region: sdk.region().map_or_else(|| "us-east-1".to_owned(), ToString::to_string),
        arn,
    }
}

/// The sequence numbers a batch answer reports as failed (`batchItemFailures`).
pub fn failures(answer: &Value) -> Vec<String> {
    answer["batchItemFailures"]
        .as_array()
        .map(|items| items.iter().filter_map(|item| item["itemIdentifier"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}
