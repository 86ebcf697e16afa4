//! Where the store lives: table and bucket names and the SDK configuration. The only place this
//! crate reads the environment.

use aws_config::SdkConfig;

/// Names of the DynamoDB table and S3 bucket the store uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsStoreConfig {
    /// DynamoDB table (`REGISTRY_TABLE`). Key schema: see [`crate::provision`].
    pub table: String,
    /// S3 bucket holding schema bodies (`REGISTRY_BUCKET`).
    pub bucket: String,
}

/// A required variable is missing or empty.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {0} must be set to a non-empty value")]
pub struct ConfigError(pub &'static str);

/// Everything [`crate::AwsStore::from_env`] reads from the environment.
#[derive(Debug, Clone)]
pub struct AwsEnv {
    /// The SDK configuration from the standard AWS variables (`AWS_REGION`, credentials,
    /// `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3`, profiles, ...).
    pub sdk: SdkConfig,
    /// Table and bucket names.
    pub store: AwsStoreConfig,
    /// True when an emulator-style endpoint is configured for S3 (`AWS_ENDPOINT_URL` or
    /// `AWS_ENDPOINT_URL_S3`): such endpoints need path-style bucket addressing.
    pub s3_path_style: bool,
    /// KMS key ARNs `aws-kms` KEKs may name (`REGISTRY_KMS_KEY_ARNS`, comma-separated); empty:
    /// any key the process's credentials may use.
    pub kms_key_arns: Vec<String>,
    /// The KMS key (ID, ARN or alias) exporter credentials are sealed with
    /// (`REGISTRY_EXPORTER_KMS_KEY`, [`crate::exporter_secrets`]); unset: credentials are refused.
    pub exporter_kms_key: Option<String>,
}

impl AwsEnv {
    /// Reads `REGISTRY_TABLE`, `REGISTRY_BUCKET` and the standard AWS variables.
    pub async fn from_env() -> Result<AwsEnv, ConfigError> {
        let table = required("REGISTRY_TABLE")?;
        let bucket = required("REGISTRY_BUCKET")?;
        let s3_path_style = ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"].iter().any(|name| required(name).is_ok());
        let kms_key_arns = std::env::var("REGISTRY_KMS_KEY_ARNS").map(|list| key_arns(&list)).unwrap_or_default();
        let exporter_kms_key = required(crate::exporter_secrets::KEY_VAR).ok().map(|key| key.trim().to_owned());
        let sdk = aws_config::load_from_env().await;
        Ok(AwsEnv { sdk, store: AwsStoreConfig { table, bucket }, s3_path_style, kms_key_arns, exporter_kms_key })
    }
}

/// The ARNs of a comma- or whitespace-separated list.
fn key_arns(list: &str) -> Vec<String> {
    list.split(|c: char| c == ',' || c.is_whitespace()).filter(|arn| !arn.is_empty()).map(str::to_string).collect()
}

fn required(name: &'static str) -> Result<String, ConfigError> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(value),
        _ => Err(ConfigError(name)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_list_takes_commas_and_spaces() {
        assert_eq!(super::key_arns(" arn:a , arn:b\narn:c,,"), ["arn:a", "arn:b", "arn:c"]);
        assert!(super::key_arns("").is_empty());
    }
}
