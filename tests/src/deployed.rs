//! A registry deployed by Terraform on the emulator (`scripts/terraform-emulator.sh`): with
//! `API_DEPLOYED_STACK` naming the file that script writes, every `lambda::<case>` runs the real
//! `registry-lambda` with the function environment exactly as Terraform wrote it (read back from the
//! emulator's Lambda API), over the table and bucket Terraform created, instead of a table, bucket
//! and read region of the case's own.
//!
//! The cases share that one table and bucket, so they run one at a time (`--test-threads 1`), and
//! each starts on an empty registry: every item and every object version is deleted before the case
//! and after it (the resources themselves stay Terraform's). The module turns authentication on
//! (`auth_enabled`, a users secret it creates empty): as the README's operator step says, the users
//! file is written into that secret ([`crate::users::users_file`]), and a case served open sends the
//! `admin` user's credentials by default (a case's own `Authorization` header wins).

use aws_config::SdkConfig;
use registry_store_aws::AwsStoreConfig;
use std::collections::BTreeMap;

/// The variable naming the stack file.
pub const STACK_VAR: &str = "API_DEPLOYED_STACK";

/// What `scripts/terraform-emulator.sh` read back from what Terraform created.
#[derive(Debug, Clone)]
pub struct DeployedStack {
    /// The function's environment as the emulator's `GetFunctionConfiguration` answers it.
    pub function_env: Vec<(String, String)>,
    /// `REGISTRY_TABLE` and `REGISTRY_BUCKET` of that environment.
    pub names: AwsStoreConfig,
}

/// The stack named by `API_DEPLOYED_STACK`, or `None` when it is unset. Panics on a file that is
/// missing, not JSON, or lacks the table or bucket (a harness error, never a skip).
pub fn deployed_stack() -> Option<DeployedStack> {
    let path = std::env::var_os(STACK_VAR)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => panic!("{STACK_VAR}={}: {error}", path.to_string_lossy()),
    };
    let parsed: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => panic!("{STACK_VAR}: not JSON: {error}"),
    };
    let Some(variables) = parsed.pointer("/Environment/Variables").and_then(|v| v.as_object()) else {
        panic!("{STACK_VAR}: no Environment.Variables in the function configuration");
    };
    let function_env: BTreeMap<String, String> =
        variables.iter().map(|(name, value)| (name.clone(), value.as_str().unwrap_or_default().to_string())).collect();
    let named = |name: &str| match function_env.get(name) {
        Some(value) if !value.is_empty() => value.clone(),
        _ => panic!("{STACK_VAR}: the function's environment has no {name}"),
    };
    let names = AwsStoreConfig { table: named("REGISTRY_TABLE"), bucket: named("REGISTRY_BUCKET") };
    Some(DeployedStack { function_env: function_env.into_iter().collect(), names })
}

impl DeployedStack {
    /// The users secret the module created (`REGISTRY_USERS_SECRET`), if authentication is on.
    pub fn users_secret(&self) -> Option<&str> {
        self.function_env.iter().find(|(name, _)| name == "REGISTRY_USERS_SECRET").map(|(_, value)| value.as_str())
    }

    /// Writes the test users file into the users secret (the operator's `put-secret-value`), then
    /// empties the table and bucket. Panics if either fails.
    pub async fn prepare(&self, sdk: &SdkConfig) {
        if let Some(secret) = self.users_secret() {
            let put = aws_sdk_secretsmanager::Client::new(sdk)
                .put_secret_value()
                .secret_id(secret)
                .secret_string(crate::users::users_file())
                .send()
                .await;
            if let Err(error) = put {
                panic!("PutSecretValue {secret}: {}", aws_sdk_secretsmanager::error::DisplayErrorContext(&error));
            }
        }
        if let Err(error) = self.empty(sdk).await {
            panic!("emptying {} and {}: {error}", self.names.table, self.names.bucket);
        }
    }

    /// Deletes every item of the table and every object version and delete marker of the bucket.
    pub async fn empty(&self, sdk: &SdkConfig) -> Result<(), String> {
        let dynamo = aws_sdk_dynamodb::Client::new(sdk);
        let described = dynamo.describe_table().table_name(&self.names.table).send().await;
        let described =
            described.map_err(|e| format!("DescribeTable: {}", aws_sdk_dynamodb::error::DisplayErrorContext(&e)))?;
        let keys: Vec<String> = described
            .table()
            .map(|table| table.key_schema().iter().map(|key| key.attribute_name().to_string()).collect())
            .unwrap_or_default();
        let mut start = None;
        loop {
            let page = dynamo.scan().table_name(&self.names.table).set_exclusive_start_key(start.take()).send().await;
            let page = page.map_err(|e| format!("Scan: {}", aws_sdk_dynamodb::error::DisplayErrorContext(&e)))?;
            for item in page.items() {
                let key = keys.iter().filter_map(|name| item.get(name).map(|value| (name.clone(), value.clone())));
                let deleted =
                    dynamo.delete_item().table_name(&self.names.table).set_key(Some(key.collect())).send().await;
                deleted.map_err(|e| format!("DeleteItem: {}", aws_sdk_dynamodb::error::DisplayErrorContext(&e)))?;
            }
            match page.last_evaluated_key() {
                Some(last) if !last.is_empty() => start = Some(last.clone()),
                _ => break,
            }
        }
        let s3 = aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(sdk).force_path_style(true).build());
        loop {
            let listed = s3.list_object_versions().bucket(&self.names.bucket).send().await;
            let listed =
                listed.map_err(|e| format!("ListObjectVersions: {}", aws_sdk_s3::error::DisplayErrorContext(&e)))?;
            let versions = listed.versions().iter().map(|v| (v.key(), v.version_id()));
            let markers = listed.delete_markers().iter().map(|m| (m.key(), m.version_id()));
            let all: Vec<(String, Option<String>)> = versions
                .chain(markers)
                .filter_map(|(key, id)| Some((key?.to_string(), id.map(str::to_string))))
                .collect();
            if all.is_empty() {
                return Ok(());
            }
            for (key, version) in all {
                let deleted =
                    s3.delete_object().bucket(&self.names.bucket).key(&key).set_version_id(version).send().await;
                deleted.map_err(|e| format!("DeleteObject {key}: {}", aws_sdk_s3::error::DisplayErrorContext(&e)))?;
            }
        }
    }
}
