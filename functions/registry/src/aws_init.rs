//! `registry aws-init`: creates the table and bucket the AWS backend expects, if missing.

use registry_store_aws::{AwsEnv, provision};

/// Creates `REGISTRY_TABLE` and `REGISTRY_BUCKET` at the configured endpoint (idempotent).
pub async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let env = AwsEnv::from_env().await?;
    provision::create_resources(&env.sdk, &env.store, env.s3_path_style).await?;
    tracing::info!(table = %env.store.table, bucket = %env.store.bucket, "table and bucket ready");
    Ok(())
}
