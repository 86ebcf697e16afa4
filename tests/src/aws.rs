//! The AWS backend fixture: emulator gating, a unique table and bucket per case, and cleanup that
//! runs whether the case passed or panicked.
//!
//! Gating matches the `registry-store-aws` tests: without `AWS_ENDPOINT_URL` a case skips (and says
//! why) unless `CI` is set, in which case it fails so a green CI run cannot hide the backend.

use crate::regions::ReadRegion;
use crate::{Backend, Harness, Serving, lambda};
use aws_config::SdkConfig;
use futures::FutureExt;
use registry_core::{CachedStore, RegistrySettings, Store};
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::{AwsStore, AwsStoreConfig};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Where an `AwsStore` lives: the emulator's SDK configuration and the table and bucket names.
#[derive(Debug, Clone)]
pub struct AwsTarget {
    /// Region, credentials and endpoint of the emulator.
    pub sdk: SdkConfig,
    /// Table and bucket, created by [`AwsTarget::create`] and deleted by [`AwsCase::finish`].
    pub names: AwsStoreConfig,
    /// The KMS key exporter credentials are sealed with (`REGISTRY_EXPORTER_KMS_KEY`), created
    /// with the table (the emulator keeps keys until it stops); `None`: a registry deployed
    /// without one ([`AwsCase::start_without_exporter_key`]).
    pub exporter_kms_key: Option<String>,
}

pub use registry_store_aws::testing::{create_kms_key, emulator_sdk};

impl AwsTarget {
    /// A uniquely named table and bucket, created on the emulator; `None` when the emulator is not
    /// configured (see [`emulator_sdk`]). Panics if they cannot be created.
    pub async fn create() -> Option<AwsTarget> {
        let sdk = emulator_sdk().await?;
        let names = registry_store_aws::testing::unique_names("api-test");
        if let Err(error) = create_resources(&sdk, &names, true).await {
            // A half-created pair (table made, bucket refused) must not outlive the failure.
            let _ = delete_resources(&sdk, &names, true).await;
            panic!("creating table and bucket {}: {error}", names.table);
        }
        let exporter_kms_key = create_kms_key(&sdk, "exporter credentials of an API test").await;
        Some(AwsTarget { sdk, names, exporter_kms_key: Some(exporter_kms_key) })
    }

    /// The AWS environment of a registry on this target (what `AwsEnv::from_env` would read).
    pub fn env(&self) -> registry_store_aws::AwsEnv {
        registry_store_aws::AwsEnv {
            sdk: self.sdk.clone(),
            store: self.names.clone(),
            s3_path_style: true,
            kms_key_arns: Vec::new(),
            exporter_kms_key: self.exporter_kms_key.clone(),
        }
    }

    /// The environment a function needs to serve this table and bucket: `REGISTRY_TABLE`,
    /// `REGISTRY_BUCKET`, and the emulator's endpoint, region and (dummy) credentials.
    pub fn function_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("REGISTRY_TABLE".to_string(), self.names.table.clone()),
            ("REGISTRY_BUCKET".to_string(), self.names.bucket.clone()),
            ("REGISTRY_LOCAL_KMS_SECRET".to_string(), crate::LOCAL_KMS_SECRET.to_string()),
        ];
        if let Some(key) = &self.exporter_kms_key {
            env.push((registry_store_aws::exporter_secrets::KEY_VAR.to_string(), key.clone()));
        }
        if let Some(endpoint) = self.sdk.endpoint_url() {
            env.push(("AWS_ENDPOINT_URL".to_string(), endpoint.to_string()));
        }
        if let Some(region) = self.sdk.region() {
            env.push(("AWS_REGION".to_string(), region.to_string()));
        }
        for (name, dummy) in [("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")] {
            if std::env::var_os(name).is_none() {
                env.push((name.to_string(), dummy.to_string()));
            }
        }
        env
    }
}

/// A harness on `AwsStore` over a table and bucket of its own. Call [`AwsCase::finish`] with the
/// case's outcome (see [`catch`]): it stops the server, deletes the resources and re-raises a panic.
#[derive(Debug)]
pub struct AwsCase {
    harness: Harness,
    target: AwsTarget,
    /// The Lambda function's output, for [`AwsCase::start_lambda`] cases (shown when one fails).
    function_log: Option<tempfile::TempDir>,
    /// The read region the function of an [`AwsCase::start_lambda`] case serves.
    read_region: Option<Arc<ReadRegion>>,
    /// The Terraform-deployed registry the case runs on ([`crate::deployed`]): its table and bucket
    /// are emptied after the case, never deleted.
    deployed: Option<crate::deployed::DeployedStack>,
}

impl AwsCase {
    /// Creates a uniquely named table and bucket and serves the registry over them; `None` when
    /// the emulator is not configured and the case may skip (see [`emulator_sdk`]). Panics if the
    /// resources cannot be created.
    pub async fn start() -> Option<AwsCase> {
        Self::start_as(Serving::Open).await
    }

    /// As [`AwsCase::start`], with authentication as `serving` says.
    pub async fn start_as(serving: Serving) -> Option<AwsCase> {
        let target = AwsTarget::create().await?;
        let backend = Backend::Aws(Box::new(target.clone()));
        let store = crate::open_store(&backend);
        let harness = Harness::serve_as(backend, store, RegistrySettings::default(), serving).await;
        Some(AwsCase { harness, target, function_log: None, read_region: None, deployed: None })
    }

    /// As [`AwsCase::start`], for a registry deployed without `REGISTRY_EXPORTER_KMS_KEY`.
    pub async fn start_without_exporter_key() -> Option<AwsCase> {
        let target = AwsTarget { exporter_kms_key: None, ..AwsTarget::create().await? };
        let backend = Backend::Aws(Box::new(target.clone()));
        let store = crate::open_store(&backend);
        let harness = Harness::serve(backend, store, RegistrySettings::default()).await;
        Some(AwsCase { harness, target, function_log: None, read_region: None, deployed: None })
    }

    /// As [`AwsCase::start`], but the registry is the real `registry-lambda` binary
    /// ([`lambda::function_binary`]) under the Runtime API emulator with at most `max_instances`
    /// instances, reached through Function URL requests, run as a read region's function: the
    /// table and bucket are the home region's, the function serves a replica of them in
    /// [`regions::READ_REGION`](crate::regions::READ_REGION), replicated into under a lag of
    /// [`regions::REPLICATION_LAG`](crate::regions::REPLICATION_LAG) ([`ReadRegion`]). [`Harness::store`] is the home region's. Panics if the function
    /// cannot start.
    pub async fn start_lambda(max_instances: usize) -> Option<AwsCase> {
        Self::start_lambda_as(max_instances, Serving::Open).await
    }

    /// Runs `test` on an [`AwsCase::start_lambda`] case and finishes it ([`AwsCase::finish`]: the
    /// case is torn down before a panic of `test` fails the test); nothing when the tests skip.
    pub async fn with_lambda(max_instances: usize, test: impl AsyncFnOnce(&AwsCase)) {
        let Some(case) = Self::start_lambda(max_instances).await else { return };
        let outcome = catch(test(&case)).await;
        case.finish(outcome).await;
    }

    /// As [`AwsCase::start_lambda`], with authentication as `serving` says.
    pub async fn start_lambda_as(max_instances: usize, serving: Serving) -> Option<AwsCase> {
        if let Some(stack) = crate::deployed::deployed_stack() {
            return Self::start_deployed(stack, max_instances, serving).await;
        }
        if lambda::cargo_lambda::selected() {
            return Self::start_cargo_lambda(serving).await;
        }
        let target = AwsTarget::create().await?;
        let read_region = Arc::new(ReadRegion::create(&target).await);
        let log_dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(error) => panic!("cannot create a temporary directory: {error}"),
        };
        let env = read_region.function_env(target.function_env()).into_iter().chain(serving.function_env()).collect();
        let mut config = lambda::FunctionConfig::new(lambda::function_binary(), env);
        config.max_instances = max_instances;
        config.log = Some(log_dir.path().join("function.log"));
        let replication = read_region.clone();
        config.before_invoke = Some(lambda::BeforeInvoke(Arc::new(move || {
            let replication = replication.clone();
            Box::pin(async move {
                replication.sync().await;
            })
        })));
        let replication = read_region.clone();
        config.while_invoking = Some(lambda::BeforeInvoke(Arc::new(move || {
            let replication = replication.clone();
            Box::pin(async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    replication.sync().await;
                }
            })
        })));
        let function = match lambda::LambdaEmulator::start(config, 0).await {
            Ok(function) => function,
            Err(error) => {
                let _ = delete_resources(&target.sdk, &target.names, true).await;
                let _ = read_region.delete().await;
                panic!("starting registry-lambda under the Runtime API emulator: {error}");
            }
        };
        let harness = Harness::of_function(target.clone(), function);
        Some(AwsCase { harness, target, function_log: Some(log_dir), read_region: Some(read_region), deployed: None })
    }

    /// [`AwsCase::start_lambda_as`] under `cargo lambda watch` ([`lambda::cargo_lambda`]): the
    /// function serves the case's table and bucket directly (cargo-lambda has no hook to bring a
    /// read region's replica up to date before a request), as one instance, its concurrency.
    async fn start_cargo_lambda(serving: Serving) -> Option<AwsCase> {
        let target = AwsTarget::create().await?;
        let log_dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(error) => panic!("cannot create a temporary directory: {error}"),
        };
        let env: Vec<(String, String)> = target.function_env().into_iter().chain(serving.function_env()).collect();
        let watch = match lambda::CargoLambdaWatch::start(&env, &log_dir.path().join("function.log")).await {
            Ok(watch) => watch,
            Err(error) => {
                let _ = delete_resources(&target.sdk, &target.names, true).await;
                panic!("starting registry-lambda under cargo lambda watch: {error}");
            }
        };
        let harness = Harness::of_cargo_lambda_as(target.clone(), watch, None);
        Some(AwsCase { harness, target, function_log: Some(log_dir), read_region: None, deployed: None })
    }

    /// [`AwsCase::start_lambda_as`] on the registry Terraform deployed ([`crate::deployed`]): the
    /// function's environment as Terraform wrote it, plus only what Lambda's runtime provides (region
    /// and credentials; here also the emulator's endpoint), over Terraform's table and bucket, emptied
    /// first. A case served open sends the `admin` user's credentials (the module turns auth on).
    async fn start_deployed(
        stack: crate::deployed::DeployedStack,
        max_instances: usize,
        serving: Serving,
    ) -> Option<AwsCase> {
        let sdk = emulator_sdk().await?;
        stack.prepare(&sdk).await;
        let exporter_kms_key = stack
            .function_env
            .iter()
            .find(|(name, _)| name == registry_store_aws::exporter_secrets::KEY_VAR)
            .map(|(_, key)| key.clone());
        let target = AwsTarget { sdk, names: stack.names.clone(), exporter_kms_key };
        // Lambda's runtime always gives a function its region and its role's credentials.
        let runtime = [
            ("AWS_ENDPOINT_URL", None),
            ("AWS_REGION", None),
            ("AWS_ACCESS_KEY_ID", Some("test")),
            ("AWS_SECRET_ACCESS_KEY", Some("test")),
        ]
        .into_iter()
        .filter_map(|(name, dummy)| {
            std::env::var(name).ok().or(dummy.map(str::to_string)).map(|value| (name.to_string(), value))
        });
        let env = stack.function_env.iter().cloned().chain(runtime).collect();
        let log_dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(error) => panic!("cannot create a temporary directory: {error}"),
        };
        let mut config = lambda::FunctionConfig::new(lambda::function_binary(), env);
        config.max_instances = max_instances;
        config.log = Some(log_dir.path().join("function.log"));
        let function = match lambda::LambdaEmulator::start(config, 0).await {
            Ok(function) => function,
            Err(error) => panic!("starting registry-lambda with Terraform's environment: {error}"),
        };
        let default_user = (serving == Serving::Open && stack.users_secret().is_some()).then_some("admin");
        let harness = Harness::of_function_as(target.clone(), function, default_user);
        Some(AwsCase { harness, target, function_log: Some(log_dir), read_region: None, deployed: Some(stack) })
    }

    /// The read region the function of an [`AwsCase::start_lambda`] case serves.
    pub fn read_region(&self) -> Option<&ReadRegion> {
        self.read_region.as_deref()
    }

    /// The harness serving this case.
    pub fn harness(&self) -> &Harness {
        &self.harness
    }

    /// Another server over the same table and bucket, as a second function instance would be: its
    /// own `Registry` over `CachedStore<AwsStore>` (the Lambda's wiring), sharing nothing in process.
    pub async fn instance(&self) -> Harness {
        let store = AwsStore::with_path_style(&self.target.sdk, self.target.names.clone(), true);
        let store: Arc<dyn Store> = Arc::new(CachedStore::new(store));
        Harness::serve(Backend::Aws(Box::new(self.target.clone())), store, RegistrySettings::default()).await
    }

    /// Stops the server, deletes the table and bucket, then re-raises the case's panic if it had one.
    /// Panics if the resources cannot be deleted after a passing case.
    pub async fn finish(self, outcome: Result<(), Box<dyn Any + Send>>) {
        let stopped = catch(self.harness.stop()).await;
        let mut deleted = match &self.deployed {
            Some(stack) => stack.empty(&self.target.sdk).await,
            None => delete_resources(&self.target.sdk, &self.target.names, true).await.map_err(|e| e.to_string()),
        };
        if let Some(read_region) = &self.read_region {
            deleted = deleted.and(read_region.delete().await);
        }
        if let (Err(_), Some(dir)) = (&outcome, &self.function_log) {
            let log = std::fs::read_to_string(dir.path().join("function.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("registry-lambda output (last {} lines):", tail.len());
            tail.iter().rev().for_each(|line| eprintln!("  {line}"));
        }
        if let Err(panic) = outcome.and(stopped) {
            if let Err(error) = deleted {
                eprintln!("also failed to delete {}: {error}", self.target.names.table);
            }
            std::panic::resume_unwind(panic);
        }
        if let Err(error) = deleted {
            panic!("deleting table and bucket {}: {error}", self.target.names.table);
        }
    }
}

/// Runs `case` to completion, turning a panic into `Err` so cleanup can run before it is re-raised.
pub async fn catch<F: Future<Output = ()>>(case: F) -> Result<(), Box<dyn Any + Send>> {
    AssertUnwindSafe(case).catch_unwind().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the table or the bucket named `names` still exists on the emulator.
    async fn any_left(sdk: &SdkConfig, names: &AwsStoreConfig) -> (bool, bool) {
        let dynamo = aws_sdk_dynamodb::Client::new(sdk);
        let table = dynamo.describe_table().table_name(&names.table).send().await.is_ok();
        let s3 = aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(sdk).force_path_style(true).build());
        let bucket = s3.head_bucket().bucket(&names.bucket).send().await.is_ok();
        (table, bucket)
    }

    async fn run_case(fail: bool) {
        let Some(case) = AwsCase::start().await else { return };
        let target = case.target.clone();
        assert_eq!(any_left(&target.sdk, &target.names).await, (true, true), "resources exist while the case runs");
        let id = case.harness().register("orders-value", r#""string""#).await;
        assert_eq!(id, 1, "each case starts on an empty registry");
        let outcome = catch(async move { assert!(!fail, "the case failed") }).await;
        let finished = catch(case.finish(outcome)).await;
        assert_eq!(finished.is_err(), fail, "finish re-raises exactly the case's panic");
        assert_eq!(any_left(&target.sdk, &target.names).await, (false, false), "table or bucket left behind");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_passing_case_deletes_its_table_and_bucket() {
        run_case(false).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_case_still_deletes_its_table_and_bucket() {
        run_case(true).await;
    }
}
