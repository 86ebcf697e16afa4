//! Emulator fixtures shared by this crate's tests and the API tests (feature `testing`): the
//! gating rule, unique table/bucket names, KMS keys, and the replicator standing in for global
//! tables and S3 replication between two regions ([`replicator`]), and the randomized one that explores
//! the orders replication may take among any number ([`adversary`]).
//!
//! Gating: without `AWS_ENDPOINT_URL` a test skips (and says why), unless `CI` is set, in which
//! case it fails, so a green CI run cannot hide the AWS backend.

pub mod adversary;
pub mod replicator;

use crate::AwsStoreConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};
use std::sync::atomic::{AtomicU32, Ordering};

/// The item the exporter `name`'s record is stored as in `table`, read strongly consistent (to
/// check what it holds, e.g. only sealed credentials). Panics on an emulator error or when there is
/// none.
pub async fn exporter_item(
    sdk: &SdkConfig,
    table: &str,
    name: &str,
) -> std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> {
    use aws_sdk_dynamodb::types::AttributeValue;
    let read = aws_sdk_dynamodb::Client::new(sdk)
        .get_item()
        .table_name(table)
        .key(crate::keys::PK, AttributeValue::S(crate::exporter_store::EXPORTER_PK.to_owned()))
        .key(crate::keys::SK, AttributeValue::S(name.to_owned()))
        .consistent_read(true)
        .send()
        .await;
    let item = read.unwrap_or_else(|error| panic!("GetItem of exporter {name}: {error}")).item;
    item.unwrap_or_else(|| panic!("no item for exporter {name}"))
}

/// One call of the emulator's DynamoDB or DynamoDB Streams JSON API at `endpoint` in `region`,
/// named by its `X-Amz-Target` (`DynamoDBStreams_20120810.GetRecords`): what the tests read as
/// Lambda's event source mapping reads it, which the SDK this crate uses does not cover. The
/// emulator reads the region from the credential scope and checks no signature. Panics unless it
/// answers 2xx with JSON.
pub async fn emulator_json_call(
    http: &reqwest::Client,
    endpoint: &str,
    region: &str,
    target: &str,
    body: &serde_json::Value,
) -> serde_json::Value {
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential=test/20260101/{region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
    );
    let response = http
        .post(endpoint)
        .header("X-Amz-Target", target)
        .header("Content-Type", "application/x-amz-json-1.0")
        .header("Authorization", authorization)
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let status = response.status();
    let text = response.text().await.unwrap_or_else(|e| panic!("{target}: {e}"));
    assert!(status.is_success(), "{target}: {status} {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{target}: {e}: {text}"))
}

/// The SDK configuration for the emulator at `AWS_ENDPOINT_URL` (region `us-east-1` and dummy
/// credentials unless set), or `None` to skip. Panics when `CI` is set and no endpoint is.
pub async fn emulator_sdk() -> Option<SdkConfig> {
    let endpoint = std::env::var("AWS_ENDPOINT_URL").ok().filter(|value| !value.is_empty());
    if endpoint.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI is set but AWS_ENDPOINT_URL is not: start the emulator");
        eprintln!("skipping the AWS backend: AWS_ENDPOINT_URL is unset (run scripts/emulator-start.sh)");
        return None;
    }
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
        loader = loader.region(Region::new("us-east-1"));
    }
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        let dummy = Credentials::new("test", "test", None, None, "emulator");
        loader = loader.credentials_provider(SharedCredentialsProvider::new(dummy));
    }
    Some(loader.load().await)
}

/// A table and bucket name no other test, run or process uses: `<prefix>-<pid>-<nanos>-<n>`
/// (valid for both DynamoDB and S3: lower-case letters, digits and dashes).
pub fn unique_names(prefix: &str) -> AwsStoreConfig {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let name = format!("{prefix}-{}-{nanos}-{n}", std::process::id());
    AwsStoreConfig { table: name.clone(), bucket: name }
}

/// A new symmetric KMS key on the emulator: its ARN. Panics if it cannot be created.
pub async fn create_kms_key(sdk: &SdkConfig, description: &str) -> String {
    let created = aws_sdk_kms::Client::new(sdk).create_key().description(description).send().await;
    match created.map(|output| output.key_metadata.and_then(|metadata| metadata.arn)) {
        Ok(Some(arn)) => arn,
        Ok(None) => panic!("CreateKey answered no key ARN"),
        Err(error) => panic!("CreateKey: {}", aws_sdk_kms::error::DisplayErrorContext(&error)),
    }
}

/// An SDK configuration whose every call fails to connect (a closed port on loopback, one attempt):
/// a region that cannot be reached.
pub async fn unreachable_sdk() -> SdkConfig {
    let dummy = Credentials::new("test", "test", None, None, "unreachable");
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("eu-west-1"))
        .endpoint_url("http://127.0.0.1:9")
        .credentials_provider(SharedCredentialsProvider::new(dummy))
        .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(1))
        .load()
        .await
}
