//! [`DynamoExporterStore`]: the exporters' records (definition, offset, state) as items of the
//! registry's own table, one per exporter:
//!
//! ```text
//! pk         sk       attributes
//! EXPORTER   <name>   value (the ExporterRecord JSON, credentials sealed), rev (1 when created, +1 per write)
//! ```
//!
//! Every write is conditioned on the revision its writer read (`attribute_not_exists(pk)` to
//! create), so the API and the exporter function never overwrite each other's changes. The one
//! partition is what the exporter function's role may write (`exporter.tf`: `dynamodb:LeadingKeys`
//! `EXPORTER`), and what its stream filters leave out, so its own writes never invoke it again.
//! The API (the Lambda function's `/exporters`, `registry serve` on this backend) and the exporter
//! function share these records; credentials in them are sealed by [`crate::exporter_secrets`].
//! Exporters are few (the service bounds them at 100): listing is one consistent Query.
//!
//! In a multi-region registry the API's store is fenced on the home marker
//! ([`DynamoExporterStore::fenced_by`]): each write is one TransactWriteItems of the put or delete
//! and the marker's check (see `fence`), so an old home refuses it. The exporter function keeps
//! its offsets and state in the same place, through the same fenced store
//! ([`exporter_function_service`]), whichever region it runs in.

use crate::exporter_secrets::KmsSealer;
use crate::fence::OneWrite;
use crate::keys::{PK, SK};
use crate::regions::{Deployment, in_region};
use crate::{AwsEnv, AwsStore};
use async_trait::async_trait;
use aws_config::SdkConfig;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use registry_exporter::store::{Expect, ExporterStore, StoreError, StoreResult, Stored, next_revision};
use registry_exporter::{ExporterRecord, ExporterService};
use std::collections::HashMap;
use std::sync::Arc;

/// The partition of exporter records.
pub const EXPORTER_PK: &str = "EXPORTER";
/// The record's JSON.
const VALUE: &str = "value";
/// The record's revision.
const REVISION: &str = "rev";

type Item = HashMap<String, AttributeValue>;

/// Exporter records in the registry's DynamoDB table.
#[derive(Clone, Debug)]
pub struct DynamoExporterStore {
    client: aws_sdk_dynamodb::Client,
    table: String,
    /// Multi-region: the home region every write is conditioned on (see `fence`).
    fence: Option<String>,
}

impl DynamoExporterStore {
    /// The records in `table`, through `client`.
    pub fn new(client: aws_sdk_dynamodb::Client, table: impl Into<String>) -> Self {
        Self { client, table: table.into(), fence: None }
    }

    /// This store with every write conditioned on the table's home marker naming `home_region`
    /// (or being absent), as [`crate::AwsStore::fenced_by`] does for the registry's writes.
    pub fn fenced_by(mut self, home_region: &str) -> Self {
        self.fence = Some(home_region.to_string());
        self
    }

    /// The region this store's writes are fenced on, if any.
    pub fn fence(&self) -> Option<&str> {
        self.fence.as_deref()
    }

    /// Sends `write` fenced as this store is (see `fence`).
    async fn send_one(&self, op: &'static str, write: OneWrite) -> StoreResult<()> {
        Ok(crate::fence::send_one(&self.client, &self.table, self.fence.as_deref(), op, write).await?)
    }

    fn key(name: &str) -> Item {
        HashMap::from([
            (PK.to_owned(), AttributeValue::S(EXPORTER_PK.to_owned())),
            (SK.to_owned(), AttributeValue::S(name.to_owned())),
        ])
    }
}

/// The exporters API on this backend: records in `env`'s table, credentials sealed with the KMS
/// key `env` names ([`KmsSealer`]).
pub fn exporter_service(env: &AwsEnv) -> ExporterService {
    let records = DynamoExporterStore::new(aws_sdk_dynamodb::Client::new(&env.sdk), env.store.table.clone());
    ExporterService::new(Arc::new(records), Arc::new(KmsSealer::new(&env.sdk, env.exporter_kms_key.clone())))
}

/// The exporters API over `store`'s table, through its client, fenced as `store` is (see `fence`),
/// credentials sealed by `sealer_sdk`'s KMS with the key `kms_key`.
pub fn exporter_service_over(store: &AwsStore, sealer_sdk: &SdkConfig, kms_key: Option<String>) -> ExporterService {
    ExporterService::new(Arc::new(fenced_as(store)), Arc::new(KmsSealer::new(sealer_sdk, kms_key)))
}

/// The exporters API of `deployment`: in a single-region registry [`exporter_service`]; in a
/// multi-region one the records in the home region's table, every write fenced on the home marker,
/// credentials sealed by the home region's KMS (the key `REGISTRY_EXPORTER_KMS_KEY` names there),
/// whichever region serves the request. A read region's `/exporters` writes and reads are both
/// answered from the home region's table: the exporter function writes its state there too
/// ([`exporter_function_service`]), so the local replica would only show it later.
pub fn deployment_exporter_service(env: &AwsEnv, deployment: &Deployment) -> ExporterService {
    let (records, kms) = home_records(env, deployment);
    ExporterService::new(Arc::new(records), Arc::new(KmsSealer::new(&kms, env.exporter_kms_key.clone())))
}

/// The exporter function's exporters: the records where [`deployment_exporter_service`] keeps
/// them (in a multi-region registry the home region's table, every write, the function's status
/// writes included, fenced on the home marker, so an old home refuses them after a failover
/// instead of racing the new home's API), credentials opened by the home region's KMS first and
/// then by each of `keys` (key ARNs, each in its own region: credentials sealed by an earlier home
/// before a failover), see [`KmsSealer::opening_also`]. The function never seals. In a
/// single-region registry with no `keys`, the calls [`exporter_service`] makes.
pub fn exporter_function_service(env: &AwsEnv, deployment: &Deployment, keys: &[String]) -> ExporterService {
    let (records, kms) = home_records(env, deployment);
    ExporterService::new(Arc::new(records), Arc::new(KmsSealer::new(&kms, None).opening_also(&env.sdk, keys)))
}

/// The exporters' records of `deployment` (the local table in a single-region registry, else the
/// home region's, fenced as its writes are) and the SDK configuration of the home region's KMS.
fn home_records(env: &AwsEnv, deployment: &Deployment) -> (DynamoExporterStore, SdkConfig) {
    match deployment {
        Deployment::Single(_) => (
            DynamoExporterStore::new(aws_sdk_dynamodb::Client::new(&env.sdk), env.store.table.clone()),
            env.sdk.clone(),
        ),
        Deployment::Home(store) => (fenced_as(store), env.sdk.clone()),
        Deployment::Read { writes, .. } => {
            let home = writes.fence().map_or_else(|| env.sdk.clone(), |home| in_region(&env.sdk, home));
            (fenced_as(writes), home)
        }
    }
}

/// The records in `store`'s table, through its client, fenced as `store` is.
fn fenced_as(store: &AwsStore) -> DynamoExporterStore {
    let records = DynamoExporterStore::new(store.dynamo.clone(), store.table.clone());
    match store.fence() {
        Some(home) => records.fenced_by(home),
        None => records,
    }
}

/// A record item as its record and revision.
fn stored(item: &Item) -> StoreResult<Stored<ExporterRecord>> {
    let name = item.get(SK).and_then(|v| v.as_s().ok()).map_or("?", String::as_str);
    let corrupt = |what: &str| StoreError::Corrupt(format!("exporter item {name}: {what}"));
    let value = item.get(VALUE).and_then(|v| v.as_s().ok()).ok_or_else(|| corrupt("no value"))?;
    let revision = item
        .get(REVISION)
        .and_then(|v| v.as_n().ok())
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| corrupt("no revision"))?;
    let value = serde_json::from_str(value).map_err(|error| corrupt(&error.to_string()))?;
    Ok(Stored { value, revision })
}

/// A failed call, classified as every call of this store is (a failed condition is `Conflict`,
/// throttling and transport trouble `Unavailable`).
fn classify<E, R>(op: &'static str, error: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    crate::errors::classify(op, error).into()
}

#[async_trait]
impl ExporterStore for DynamoExporterStore {
    async fn exporter(&self, name: &str) -> StoreResult<Option<Stored<ExporterRecord>>> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(Self::key(name)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|error| classify("GetItem(exporter)", error))?;
        output.item.as_ref().map(stored).transpose()
    }

    async fn exporters(&self) -> StoreResult<Vec<Stored<ExporterRecord>>> {
        let mut found = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_values(":pk", AttributeValue::S(EXPORTER_PK.to_owned()))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|error| classify("Query(exporters)", error))?;
            for item in output.items() {
                found.push(stored(item)?);
            }
            match output.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(found),
            }
        }
    }

    async fn put_exporter(&self, record: &ExporterRecord, expect: Expect) -> StoreResult<u64> {
        let revision = match expect {
            Expect::Absent => next_revision(None, expect)?,
            Expect::Revision(current) => next_revision(Some(current), expect)?,
        };
        let value = serde_json::to_string(record).map_err(|error| StoreError::Other(error.into()))?;
        let mut item = Self::key(&record.exporter.name);
        item.insert(VALUE.to_owned(), AttributeValue::S(value));
        item.insert(REVISION.to_owned(), AttributeValue::N(revision.to_string()));
        let request = self.client.put_item().table_name(&self.table).set_item(Some(item));
        let request = match expect {
            Expect::Absent => {
                request.condition_expression("attribute_not_exists(#pk)").expression_attribute_names("#pk", PK)
            }
            Expect::Revision(current) => request
                .condition_expression("#rev = :rev")
                .expression_attribute_names("#rev", REVISION)
                .expression_attribute_values(":rev", AttributeValue::N(current.to_string())),
        };
        self.send_one("PutItem(exporter)", OneWrite::Put(request)).await?;
        Ok(revision)
    }

    async fn remove_exporter(&self, name: &str, revision: u64) -> StoreResult<()> {
        let request = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(Self::key(name)))
            .condition_expression("#rev = :rev")
            .expression_attribute_names("#rev", REVISION)
            .expression_attribute_values(":rev", AttributeValue::N(revision.to_string()));
        self.send_one("DeleteItem(exporter)", OneWrite::Delete(request)).await?;
        Ok(())
    }
}
