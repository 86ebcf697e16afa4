//! The home marker and the fence every commit carries in a multi-region registry.
//!
//! One item, `HOME/MARKER {region, epoch}`, names the region that commits writes. It lives in the
//! (global) table, so every region's replica receives it. A store built for writing in a
//! multi-region registry ([`AwsStore::fenced_by`]) adds to every TransactWriteItems it sends (every
//! subject commit, every ID allocation, every claim commit, every counter raise) a ConditionCheck
//! that the marker is absent or names the region the store was told is home. After
//! `registry failover --to R` wrote the marker in R's replica, an old home that has received the
//! replicated marker refuses every such write ([`AwsError::Fenced`], answered as a retryable 5xx),
//! and functions already pointed at R commit there. A single-region store carries no fence, so its
//! transactions are those it always sent.

use crate::AwsStore;
use crate::errors::AwsError;
use crate::ids::{TransactionError, build_error};
use crate::items::{ItemExt, key, n, s};
use crate::keys::PK;
use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};

/// Partition key of the home marker.
pub const HOME_PK: &str = "HOME";
/// Sort key of the home marker.
pub const HOME_SK: &str = "MARKER";
/// The marker's region attribute.
const REGION: &str = "region";
/// The marker's epoch attribute: raised by one by every failover.
const EPOCH: &str = "epoch";

/// What the home marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeMarker {
    /// The region that commits writes.
    pub region: String,
    /// How many failovers wrote the marker (1 after the first).
    pub epoch: u64,
}

impl AwsStore {
    /// This store with every transaction conditioned on the home marker naming `home_region` (or
    /// being absent: a table no failover has touched yet).
    pub fn fenced_by(mut self, home_region: &str) -> AwsStore {
        self.fence = Some(home_region.to_string());
        self
    }

    /// The region this store's writes are fenced on, if any.
    pub fn fence(&self) -> Option<&str> {
        self.fence.as_deref()
    }

    /// How many items the fence adds to a transaction (0 or 1).
    pub(crate) fn fence_items(&self) -> usize {
        usize::from(self.fence.is_some())
    }

    /// `items` with the fence check last (the position callers that read cancellation reasons by
    /// index do not look at).
    pub(crate) fn fenced(&self, mut items: Vec<TransactWriteItem>) -> Result<Vec<TransactWriteItem>, AwsError> {
        if let Some(home) = &self.fence {
            let check = ConditionCheck::builder()
                .table_name(&self.table)
                .set_key(Some(key(HOME_PK, HOME_SK)))
                .condition_expression("attribute_not_exists(#pk) OR #region = :home")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#region", REGION)
                .expression_attribute_values(":home", s(home.clone()))
                .build()
                .map_err(|e| build_error("ConditionCheck(home marker)", e))?;
            items.push(TransactWriteItem::builder().condition_check(check).build());
        }
        Ok(items)
    }

    /// `Fenced` when `error` cancelled a fenced transaction because of its fence (the last item).
    pub(crate) fn fence_refusal(&self, op: &'static str, error: &TransactionError) -> Option<AwsError> {
        use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
        let home = self.fence.as_ref()?;
        let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) = error.as_service_error() else {
            return None;
        };
        let last = cancelled.cancellation_reasons().last()?;
        (last.code() == Some("ConditionalCheckFailed")).then(|| AwsError::Fenced {
            op,
            detail: format!("the table's home marker no longer names {home}: this region is not home"),
        })
    }

    /// The home marker as this region's replica holds it (one strongly consistent GetItem).
    pub async fn home_marker(&self) -> Result<Option<HomeMarker>, registry_core::StoreError> {
        let Some(item) = self.get_item("GetItem(home marker)", key(HOME_PK, HOME_SK)).await? else {
            return Ok(None);
        };
        let region = item.string(REGION)?.to_string();
        let epoch = item.number::<u64>(EPOCH)?;
        Ok(Some(HomeMarker { region, epoch }))
    }

    /// Writes the marker naming `region` with the epoch after `read`'s (conditioned on the marker
    /// still being `read`: two failovers at once cannot both win).
    pub(crate) async fn write_home_marker(&self, region: &str, read: Option<&HomeMarker>) -> Result<u64, AwsError> {
        let epoch = read.map_or(1, |marker| marker.epoch + 1);
        let mut item = key(HOME_PK, HOME_SK);
        item.insert(REGION.into(), s(region));
        item.insert(EPOCH.into(), n(epoch));
        let put = self.dynamo.put_item().table_name(&self.table).set_item(Some(item));
        let put = match read {
            Some(marker) => put
                .condition_expression("#epoch = :read")
                .expression_attribute_names("#epoch", EPOCH)
                .expression_attribute_values(":read", n(marker.epoch)),
            None => put.condition_expression("attribute_not_exists(#pk)").expression_attribute_names("#pk", PK),
        };
        put.send().await.map_err(|e| crate::errors::classify("PutItem(home marker)", e))?;
        Ok(epoch)
    }
}
