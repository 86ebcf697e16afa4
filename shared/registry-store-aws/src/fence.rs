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
//!
//! A condition expression cannot read another item, so a fenced store sends each write of one
//! item (the guid binding, the usage marker, the listing flag, IMPORT's binding puts, KEK and DEK
//! records, the exporters' records) as a TransactWriteItems of that write and the marker's check
//! ([`send_fenced`]): still one call, twice the write units (transactional) and the marker's read;
//! it answers as the single-item call would, and `Fenced` when the marker names another region.
//! A store without a fence sends the same PutItem, UpdateItem or DeleteItem as before.

use crate::AwsStore;
use crate::errors::{AwsError, classify, classify_transaction};
use crate::ids::TransactionError;
use crate::items::{ItemExt, item_at, key, n, s};
use crate::keys::PK;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{ConditionCheck, Delete, Put, TransactWriteItem, Update};
use std::time::Duration;

/// Partition key of the home marker.
pub const HOME_PK: &str = "HOME";
/// Sort key of the home marker.
pub const HOME_SK: &str = "MARKER";
/// The marker's region attribute.
const REGION: &str = "region";
/// The marker's epoch attribute: raised by one by every failover.
const EPOCH: &str = "epoch";
/// The marker's floor attribute: every ID the home it names allocates lies above it.
const FLOOR: &str = "floor";

/// What the home marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeMarker {
    /// The region that commits writes.
    pub region: String,
    /// How many failovers wrote the marker (1 after the first).
    pub epoch: u64,
    /// The failover's allocation floor: every ID the home the marker names allocates, in every
    /// context, lies above it. At least the highest counter the failover jumped to and the floor
    /// of the marker before plus the gap, so the IDs an old home may still issue within the gap
    /// lie below it whatever replication later does to a counter item: an old home's late write
    /// of a counter that wins over the new home's (last writer wins, per item) cannot take the new
    /// home's allocations back below it, and a context the failover did not know starts above it.
    /// A fenced store reads the marker in the same BatchGetItem as the counter
    /// ([`AwsStore::counter_keys`]) and allocates above the greater of the two. `None` on a marker
    /// written before the floor existed.
    pub floor: Option<registry_core::SchemaId>,
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
            items.push(fence_check(&self.table, home)?);
        }
        Ok(items)
    }

    /// `Fenced` when `error` cancelled a fenced transaction because of its fence (the last item).
    pub(crate) fn fence_refusal(&self, op: &'static str, error: &TransactionError) -> Option<AwsError> {
        refusal(self.fence.as_deref()?, op, error)
    }

    /// Sends `write` as this store writes one item: as it is on a store without a fence; beside
    /// the fence in one TransactWriteItems on a fenced store ([`send_fenced`]).
    pub(crate) async fn write_one(&self, op: &'static str, write: OneWrite) -> Result<(), AwsError> {
        send_one(&self.dynamo, &self.table, self.fence.as_deref(), op, write).await
    }

    /// The keys an allocation in `context` reads to find the ID it starts after: the context's
    /// counter, and on a fenced store the home marker (its floor bounds the allocation from below:
    /// [`allocation_base`]). Read in one BatchGetItem with the allocation's other items.
    pub(crate) fn counter_keys(&self, context: &registry_core::Context) -> Vec<crate::items::Item> {
        let mut keys = vec![key(crate::keys::COUNTER_PK, crate::keys::counter_sk(context))];
        if self.fence.is_some() {
            keys.push(key(HOME_PK, HOME_SK));
        }
        keys
    }

    /// The home marker as this region's replica holds it (one strongly consistent GetItem).
    pub async fn home_marker(&self) -> Result<Option<HomeMarker>, registry_core::StoreError> {
        Ok(self.read_home_marker().await?)
    }

    /// [`AwsStore::home_marker`] as the store's own error.
    pub(crate) async fn read_home_marker(&self) -> Result<Option<HomeMarker>, AwsError> {
        let Some(item) = self.get_item("GetItem(home marker)", key(HOME_PK, HOME_SK)).await? else {
            return Ok(None);
        };
        let region = item.string(REGION)?.to_string();
        let epoch = item.number::<u64>(EPOCH)?;
        let floor = item.optional_number(FLOOR)?.map(registry_core::SchemaId);
        Ok(Some(HomeMarker { region, epoch, floor }))
    }

    /// Writes the marker naming `region` with the epoch after `read`'s and `floor` (conditioned on
    /// the marker still being `read`: two failovers at once cannot both win).
    pub(crate) async fn write_home_marker(
        &self,
        region: &str,
        read: Option<&HomeMarker>,
        floor: registry_core::SchemaId,
    ) -> Result<u64, AwsError> {
        let epoch = read.map_or(1, |marker| marker.epoch + 1);
        let mut item = key(HOME_PK, HOME_SK);
        item.insert(REGION.into(), s(region));
        item.insert(EPOCH.into(), n(epoch));
        item.insert(FLOOR.into(), n(floor.0));
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

/// The ID an allocation in `context` starts after, from `items` read by
/// [`AwsStore::counter_keys`] (possibly among others): the greater of the context's counter and the
/// home marker's floor (`None` when neither is there).
pub(crate) fn allocation_base(
    items: &[crate::items::Item],
    context: &registry_core::Context,
) -> Result<Option<i32>, AwsError> {
    let counter = match item_at(items, crate::keys::COUNTER_PK, &crate::keys::counter_sk(context)) {
        Some(item) => item.optional_number::<i32>(crate::items::attr::MAX_ID)?,
        None => None,
    };
    let floor = match item_at(items, HOME_PK, HOME_SK) {
        Some(item) => item.optional_number::<i32>(FLOOR)?,
        None => None,
    };
    Ok(counter.max(floor))
}

/// The fence: a ConditionCheck that `table`'s home marker is absent or names `home`.
pub(crate) fn fence_check(table: &str, home: &str) -> Result<TransactWriteItem, AwsError> {
    let check = ConditionCheck::builder()
        .table_name(table)
        .set_key(Some(key(HOME_PK, HOME_SK)))
        .condition_expression("attribute_not_exists(#pk) OR #region = :home")
        .expression_attribute_names("#pk", PK)
        .expression_attribute_names("#region", REGION)
        .expression_attribute_values(":home", s(home));
    transact_item("ConditionCheck(home marker)", Part::Check(check))
}

/// `Fenced` when `error` cancelled a transaction fenced on `home` because of its fence (the last
/// item).
pub(crate) fn refusal(home: &str, op: &'static str, error: &TransactionError) -> Option<AwsError> {
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
    let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) = error.as_service_error() else {
        return None;
    };
    let last = cancelled.cancellation_reasons().last()?;
    (last.code() == Some("ConditionalCheckFailed")).then(|| AwsError::Fenced {
        op,
        detail: format!("the table's home marker no longer names {home}: this region is not home"),
    })
}

/// One item's write, as a PutItem, UpdateItem or DeleteItem call would send it.
pub(crate) enum OneWrite {
    Put(PutItemFluentBuilder),
    Update(UpdateItemFluentBuilder),
    Delete(DeleteItemFluentBuilder),
}

/// Sends `write` to `table` as a store fenced on `fence` writes one item: as it is without a
/// fence; beside the fence on `home` in one TransactWriteItems with one ([`send_fenced`]).
pub(crate) async fn send_one(
    dynamo: &aws_sdk_dynamodb::Client,
    table: &str,
    fence: Option<&str>,
    op: &'static str,
    write: OneWrite,
) -> Result<(), AwsError> {
    let Some(home) = fence else {
        return match write {
            OneWrite::Put(put) => put.send().await.map(drop).map_err(|e| classify(op, e)),
            OneWrite::Update(update) => update.send().await.map(drop).map_err(|e| classify(op, e)),
            OneWrite::Delete(delete) => delete.send().await.map(drop).map_err(|e| classify(op, e)),
        };
    };
    let item = transact_item(op, transaction_part(write))?;
    send_fenced(dynamo, table, home, op, item).await
}

/// How often a fenced single-item write is sent again after a transaction conflict (another
/// transaction in flight on its item or on the marker, which every home transaction checks).
const CONFLICT_RETRIES: u32 = 3;

/// One item's write (`write`, as PutItem, UpdateItem or DeleteItem would have sent it) sent as a
/// TransactWriteItems with the fence on `home` after it: 2 items, one call.
///
/// Answers as the single-item call would: `ConditionFailed` when the write's own condition failed
/// (callers that treat that as "already done" stay right), `Fenced` when the marker names another
/// region (nothing written), and for a transaction conflict, which a single-item call never meets,
/// the write again after a short pause, at most [`CONFLICT_RETRIES`] times, then `Unavailable`
/// (never `ConditionFailed`: the write's condition was not evaluated false).
pub(crate) async fn send_fenced(
    dynamo: &aws_sdk_dynamodb::Client,
    table: &str,
    home: &str,
    op: &'static str,
    write: TransactWriteItem,
) -> Result<(), AwsError> {
    let mut conflicts = 0;
    loop {
        let items = vec![write.clone(), fence_check(table, home)?];
        let Err(error) = dynamo.transact_write_items().set_transact_items(Some(items)).send().await else {
            return Ok(());
        };
        if let Some(fenced) = refusal(home, op, &error) {
            return Err(fenced);
        }
        let (classified, reasons) = classify_transaction(op, error);
        let code = |i: usize| reasons.get(i).and_then(|r| r.as_deref());
        if code(0) == Some("ConditionalCheckFailed") {
            return Err(AwsError::ConditionFailed { op, detail: "the write's condition failed".into() });
        }
        if !reasons.iter().flatten().any(|code| code == "TransactionConflict") {
            return Err(classified);
        }
        if conflicts == CONFLICT_RETRIES {
            let detail =
                format!("transaction conflict {} times in a row (cancellation reasons {reasons:?})", conflicts + 1);
            return Err(AwsError::Unavailable { op, detail });
        }
        conflicts += 1;
        tokio::time::sleep(Duration::from_millis(10 << conflicts)).await;
    }
}

/// `$input` (a PutItem's, UpdateItem's or DeleteItem's input) copied onto `$builder` (a
/// transaction's item of the same kind): the table, the condition and the expression's names and
/// values, which every kind has, and each of the kind's own fields (`$set <- $get`). The builders
/// share no trait.
macro_rules! copied_onto {
    ($builder:expr, $input:expr $(, $set:ident <- $get:ident)*) => {{
        let input = $input;
        $builder
            .set_table_name(input.get_table_name().clone())
            .set_condition_expression(input.get_condition_expression().clone())
            .set_expression_attribute_names(input.get_expression_attribute_names().clone())
            .set_expression_attribute_values(input.get_expression_attribute_values().clone())
            $(.$set(input.$get().clone()))*
    }};
}

/// `write` as a transaction's item of the same kind.
fn transaction_part(write: OneWrite) -> Part {
    match write {
        OneWrite::Put(put) => Part::Put(copied_onto!(Put::builder(), put.as_input(), set_item <- get_item)),
        OneWrite::Update(update) => Part::Update(copied_onto!(
            Update::builder(),
            update.as_input(),
            set_key <- get_key,
            set_update_expression <- get_update_expression
        )),
        OneWrite::Delete(delete) => {
            Part::Delete(copied_onto!(Delete::builder(), delete.as_input(), set_key <- get_key))
        }
    }
}

/// What a failover found of the old home's replica of the table ([`AwsStore::reach_old_home`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OldHomeReplica {
    /// Reached: the marker it holds, if any.
    Reached(Option<HomeMarker>),
    /// The old home's region holds no replica of the table (a restored table adopted in place of
    /// the registry's): nothing there can commit a write of this table.
    Absent,
}

impl AwsStore {
    /// Reads the home marker in this store's replica (the old home's, during a failover): whether it
    /// can be reached at all, so that [`AwsStore::fence_old_home`] will. One GetItem.
    pub async fn reach_old_home(&self) -> Result<OldHomeReplica, registry_core::StoreError> {
        let read = self.dynamo.get_item().table_name(&self.table).set_key(Some(key(HOME_PK, HOME_SK)));
        match read.consistent_read(true).send().await {
            Ok(_) => Ok(OldHomeReplica::Reached(self.read_home_marker().await?)),
            Err(error) if is_resource_not_found(&error) => Ok(OldHomeReplica::Absent),
            Err(error) => Err(crate::errors::classify("GetItem(old home marker)", error).into()),
        }
    }

    /// Writes `marker` (the new home's, as the failover wrote it there) in this store's replica,
    /// the old home's: from then on every write the old home commits is refused by its fence, at
    /// once rather than after the marker's replication. Conditioned on the marker there being
    /// older (absent, or a lower epoch): `false` when a marker of this epoch or later is there
    /// already. Both replicas then hold the same marker, so replication's last writer wins changes
    /// nothing. One PutItem.
    pub async fn fence_old_home(&self, marker: &HomeMarker) -> Result<bool, registry_core::StoreError> {
        let mut item = key(HOME_PK, HOME_SK);
        item.insert(REGION.into(), s(&marker.region));
        item.insert(EPOCH.into(), n(marker.epoch));
        if let Some(floor) = marker.floor {
            item.insert(FLOOR.into(), n(floor.0));
        }
        let put = self
            .dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk) OR #epoch < :epoch")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#epoch", EPOCH)
            .expression_attribute_values(":epoch", n(marker.epoch));
        match put.send().await {
            Ok(_) => Ok(true),
            Err(error) => match crate::errors::classify("PutItem(old home marker)", error) {
                AwsError::ConditionFailed { .. } => Ok(false),
                other => Err(other.into()),
            },
        }
    }
}

/// Whether `error` says the table does not exist in the region asked.
fn is_resource_not_found<E: aws_sdk_dynamodb::error::ProvideErrorMetadata, R>(
    error: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> bool {
    error.as_service_error().and_then(|e| e.code()) == Some("ResourceNotFoundException")
}
