//! Creating (and, for tests, deleting) the table and bucket. The table definition here is the
//! one source of truth: `localstack/init/ready.d/create-resources.sh` and the Terraform module
//! must declare the same key schema (a test checks the script).

use crate::config::AwsStoreConfig;
use crate::errors::{AwsError, classify};
use crate::ids::build_error;
use crate::keys::{PK, SK};
use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType, TableStatus,
};
use registry_core::StoreError;
use std::time::Duration;

/// The table's key schema: (attribute, key type). Both attributes are strings; no indexes.
pub const TABLE_KEYS: [(&str, &str); 2] = [(PK, "HASH"), (SK, "RANGE")];

/// Creates the table (on-demand billing, [`TABLE_KEYS`]) and the bucket unless they exist,
/// and waits until the table is active. Idempotent.
pub async fn create_resources(sdk: &SdkConfig, config: &AwsStoreConfig, s3_path_style: bool) -> Result<(), StoreError> {
    create_table(&aws_sdk_dynamodb::Client::new(sdk), &config.table).await?;
    create_bucket(&crate::s3_client(sdk, s3_path_style, None), &config.bucket).await?;
    Ok(())
}

/// Deletes every object in the bucket, the bucket and the table. For tests; missing ones are fine.
pub async fn delete_resources(sdk: &SdkConfig, config: &AwsStoreConfig, s3_path_style: bool) -> Result<(), StoreError> {
    let s3 = crate::s3_client(sdk, s3_path_style, None);
    let mut token: Option<String> = None;
    loop {
        let listed = s3.list_objects_v2().bucket(&config.bucket).set_continuation_token(token.take()).send().await;
        let Ok(listed) = listed else { break };
        for object in listed.contents() {
            if let Some(key) = object.key() {
                s3.delete_object()
                    .bucket(&config.bucket)
                    .key(key)
                    .send()
                    .await
                    .map_err(|e| classify("DeleteObject", e))?;
            }
        }
        match listed.next_continuation_token() {
            Some(next) if listed.is_truncated() == Some(true) => token = Some(next.to_string()),
            _ => break,
        }
    }
    let _ = s3.delete_bucket().bucket(&config.bucket).send().await;
    let _ = aws_sdk_dynamodb::Client::new(sdk).delete_table().table_name(&config.table).send().await;
    Ok(())
}

async fn create_table(dynamo: &aws_sdk_dynamodb::Client, table: &str) -> Result<(), AwsError> {
    if dynamo.describe_table().table_name(table).send().await.is_err() {
        let mut request = dynamo.create_table().table_name(table).billing_mode(BillingMode::PayPerRequest);
        for (name, key_type) in TABLE_KEYS {
            let key_type = if key_type == "HASH" { KeyType::Hash } else { KeyType::Range };
            request = request
                .attribute_definitions(
                    AttributeDefinition::builder()
                        .attribute_name(name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()
                        .map_err(|e| build_error("CreateTable", e))?,
                )
                .key_schema(
                    KeySchemaElement::builder()
                        .attribute_name(name)
                        .key_type(key_type)
                        .build()
                        .map_err(|e| build_error("CreateTable", e))?,
                );
        }
        if let Err(error) = request.send().await {
            let error = classify("CreateTable", error);
            if !error.to_string().contains("ResourceInUse") {
                return Err(error);
            }
        }
    }
    for _ in 0..120 {
        let described =
            dynamo.describe_table().table_name(table).send().await.map_err(|e| classify("DescribeTable", e))?;
        if described.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(AwsError::Unavailable { op: "CreateTable", detail: format!("table {table} did not become active") })
}

async fn create_bucket(s3: &aws_sdk_s3::Client, bucket: &str) -> Result<(), AwsError> {
    if s3.head_bucket().bucket(bucket).send().await.is_ok() {
        return Ok(());
    }
    let region = s3.config().region().map(|r| r.to_string()).unwrap_or_default();
    let mut request = s3.create_bucket().bucket(bucket);
    if !region.is_empty() && region != "us-east-1" {
        let location = aws_sdk_s3::types::CreateBucketConfiguration::builder()
            .location_constraint(aws_sdk_s3::types::BucketLocationConstraint::from(region.as_str()))
            .build();
        request = request.create_bucket_configuration(location);
    }
    match request.send().await {
        Ok(_) => Ok(()),
        Err(error) => {
            let error = classify("CreateBucket", error);
            let text = error.to_string();
            if text.contains("BucketAlreadyOwnedByYou") { Ok(()) } else { Err(error) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn repo_file(path: &str) -> String {
        let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    #[test]
    fn table_keys_agree_with_the_terraform_table_definition() {
        let definition: Value = serde_json::from_str(&repo_file("infra/modules/schema-registry/table.json"))
            .unwrap_or_else(|e| panic!("table.json: {e}"));
        let keys: Vec<(String, String)> = definition["KeySchema"]
            .as_array()
            .map(|keys| keys.iter().map(|k| (k["AttributeName"].to_string(), k["KeyType"].to_string())).collect())
            .unwrap_or_default();
        let ours: Vec<(String, String)> =
            TABLE_KEYS.iter().map(|(name, kind)| (format!("\"{name}\""), format!("\"{kind}\""))).collect();
        assert_eq!(keys, ours);
        let attributes = definition["AttributeDefinitions"].as_array().map_or(0, Vec::len);
        assert_eq!(attributes, TABLE_KEYS.len(), "only key attributes are declared");
        assert!(definition["AttributeDefinitions"].as_array().into_iter().flatten().all(|a| a["AttributeType"] == "S"));
        assert_eq!(definition["BillingMode"], "PAY_PER_REQUEST");
        assert!(definition.get("GlobalSecondaryIndexes").is_none(), "the store uses no GSI");
    }

    #[test]
    fn localstack_creates_the_table_from_the_same_definition() {
        let compose = repo_file("localstack/docker-compose.yml");
        let script = repo_file("localstack/init/ready.d/create-resources.sh");
        assert!(compose.contains("infra/modules/schema-registry/table.json:/etc/localstack/registry/table.json"));
        assert!(script.contains("/etc/localstack/registry/table.json") && script.contains("--cli-input-json"));
    }
}
