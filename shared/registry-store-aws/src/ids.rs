//! Schema IDs: the counter item and the two binding items, written in one transaction.
//!
//! `COUNTER/ID {max_id}` is the greatest ID ever allocated or bound. `allocate_id` reads it
//! (strongly consistent), claims the next ID in the ledger outside the table ([`crate::ledger`]:
//! past every ID ever issued, even when the table was restored to an earlier state) and commits it
//! with a transaction that is conditioned on the value it read and creates `FP#<hex>/ID` and
//! `ID#<id>/FP` with `attribute_not_exists`, so two writers can never commit the same ID and a
//! fingerprint is never bound twice by allocation.

use crate::AwsStore;
use crate::conditions::USES;
use crate::errors::{AwsError, classify, classify_transaction};
use crate::items::{Item, ItemExt, attr, fingerprint_of, key, n, s};
use crate::keys::{self, PK};
use crate::ledger::Claim;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
use registry_core::{Fingerprint, Guid, SchemaId};

/// An allocation committed with the ID's first carrier: the binding starts with that one use,
/// and names the guid whose item the same write gives the ID, if any (see `assign`).
pub(crate) struct FirstCarrier<'a> {
    pub guid: Option<&'a Guid>,
}

/// What a failed TransactWriteItems call returns.
pub(crate) type TransactionError = aws_sdk_dynamodb::error::SdkError<
    aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
    aws_sdk_dynamodb::config::http::HttpResponse,
>;

impl AwsStore {
    pub(crate) async fn get_item(&self, op: &'static str, item_key: Item) -> Result<Option<Item>, AwsError> {
        let output = self
            .dynamo
            .get_item()
            .table_name(&self.table)
            .set_key(Some(item_key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify(op, e))?;
        Ok(output.item)
    }

    pub(crate) async fn read_max_id(&self) -> Result<Option<i32>, AwsError> {
        let item = self.get_item("GetItem(counter)", key(keys::COUNTER.0, keys::COUNTER.1)).await?;
        match item {
            Some(item) => item.optional_number(attr::MAX_ID),
            None => Ok(None),
        }
    }

    pub(crate) async fn read_id_for_fingerprint(
        &self,
        fingerprint: &Fingerprint,
    ) -> Result<Option<SchemaId>, AwsError> {
        let item = self.get_item("GetItem(fingerprint)", key(keys::fingerprint_pk(fingerprint), keys::FP_BINDING_SK));
        match item.await? {
            Some(item) => Ok(Some(SchemaId(item.number(attr::ID)?))),
            None => Ok(None),
        }
    }

    pub(crate) async fn read_fingerprint_for_id(&self, id: SchemaId) -> Result<Option<Fingerprint>, AwsError> {
        match self.get_item("GetItem(id)", key(keys::id_pk(id), keys::ID_BINDING_SK)).await? {
            Some(item) => Ok(Some(fingerprint_of(&item)?)),
            None => Ok(None),
        }
    }

    pub(crate) async fn allocate(&self, fingerprint: &Fingerprint) -> Result<SchemaId, AwsError> {
        let read = self.read_max_id().await?;
        let next = self.claim_next(read, fingerprint).await?;
        let items = self.allocation_items(read, next, fingerprint, None)?;
        let result = self.dynamo.transact_write_items().set_transact_items(Some(items)).send().await;
        match result {
            Ok(_) => Ok(SchemaId(next)),
            Err(error) => Err(allocation_error("TransactWriteItems(allocate_id)", next, error)),
        }
    }

    /// The three items that commit `next` (claimed in the ledger after counter value `read`) for
    /// `fingerprint`, in this order: the counter update conditioned on `read`, `FP#…` and `ID#…`
    /// created if absent (the fingerprint binding as `first_carrier` says when the same write commits
    /// the ID's first carrier). [`allocation_error`] reads a cancellation by this order.
    pub(crate) fn allocation_items(
        &self,
        read: Option<i32>,
        next: i32,
        fingerprint: &Fingerprint,
        first_carrier: Option<FirstCarrier<'_>>,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let counter = match read {
            Some(max) => {
                Update::builder().condition_expression("#max = :read").expression_attribute_values(":read", n(max))
            }
            None => Update::builder().condition_expression("attribute_not_exists(#max)"),
        }
        .table_name(&self.table)
        .set_key(Some(key(keys::COUNTER.0, keys::COUNTER.1)))
        .update_expression("SET #max = :next")
        .expression_attribute_names("#max", attr::MAX_ID)
        .expression_attribute_values(":next", n(next))
        .build()
        .map_err(|e| build_error("allocate_id", e))?;
        let mut by_fingerprint = key(keys::fingerprint_pk(fingerprint), keys::FP_BINDING_SK);
        by_fingerprint.insert(attr::ID.into(), n(next));
        if let Some(carrier) = first_carrier {
            by_fingerprint.insert(USES.into(), n(1));
            if let Some(guid) = carrier.guid {
                by_fingerprint.insert(attr::GUID.into(), s(guid.to_hex()));
            }
        }
        let mut by_id = key(keys::id_pk(SchemaId(next)), keys::ID_BINDING_SK);
        by_id.insert(attr::FINGERPRINT.into(), s(fingerprint.to_hex()));
        Ok(vec![
            TransactWriteItem::builder().update(counter).build(),
            TransactWriteItem::builder().put(self.put_if_absent(by_fingerprint)?).build(),
            TransactWriteItem::builder().put(self.put_if_absent(by_id)?).build(),
        ])
    }

    /// The ID an allocation after counter value `read` takes: the next one, claimed for
    /// `fingerprint` in the ledger; when another fingerprint holds it (a concurrent allocation, or
    /// a table restored to an earlier state), the one after the highest ID in the ledger.
    pub(crate) async fn claim_next(&self, read: Option<i32>, fingerprint: &Fingerprint) -> Result<i32, AwsError> {
        const MAX_CLAIMS: usize = 8;
        let mut next = successor(read)?;
        for _ in 0..MAX_CLAIMS {
            match self.claim_id(SchemaId(next), fingerprint).await? {
                Claim::Ours => return Ok(next),
                Claim::Taken => {
                    let highest = self.ledger_max_after(SchemaId(next)).await?.map_or(next, |id| id.0.max(next));
                    next = successor(Some(highest))?;
                }
            }
        }
        Err(AwsError::ConditionFailed { op: "allocate_id", detail: "every ledger claim met a concurrent one".into() })
    }

    /// Raises the counter to `id`; never lowers it (a counter already at or above `id` is left as it is).
    pub(crate) async fn raise_counter(&self, id: SchemaId) -> Result<(), AwsError> {
        let raised = self
            .dynamo
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(keys::COUNTER.0, keys::COUNTER.1)))
            .update_expression("SET #max = :id")
            .condition_expression("attribute_not_exists(#max) OR #max < :id")
            .expression_attribute_names("#max", attr::MAX_ID)
            .expression_attribute_values(":id", n(id.0))
            .send()
            .await;
        match raised.map_err(|e| classify("UpdateItem(counter)", e)) {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// Claims `id` for `fingerprint` in the ledger, raises the counter to `id` (never lowers it),
    /// then binds id → fingerprint (or accepts the same binding), then fingerprint → id if that
    /// side is free. Each step is idempotent, and a crash after any of them leaves at most an unused
    /// gap below the counter. An ID the table or the ledger gives another fingerprint is refused
    /// (`ConditionFailed`) before anything is written: the table is read first because IDs issued
    /// before the ledger existed have no ledger entry.
    pub(crate) async fn bind(&self, id: SchemaId, fingerprint: &Fingerprint) -> Result<(), AwsError> {
        let refused = |detail: &str| AwsError::ConditionFailed { op: "bind_id", detail: format!("id {id} {detail}") };
        if self.read_fingerprint_for_id(id).await?.is_some_and(|bound| bound != *fingerprint) {
            return Err(refused("is bound to another schema"));
        }
        if self.claim_id(id, fingerprint).await? == Claim::Taken {
            return Err(refused("was issued to another schema (ledger)"));
        }
        self.raise_counter(id).await?;
        let mut by_id = key(keys::id_pk(id), keys::ID_BINDING_SK);
        by_id.insert(attr::FINGERPRINT.into(), s(fingerprint.to_hex()));
        self.dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(by_id))
            .condition_expression("attribute_not_exists(#pk) OR #fp = :fp")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_values(":fp", s(fingerprint.to_hex()))
            .send()
            .await
            .map_err(|e| classify("PutItem(id)", e))?;
        let mut by_fingerprint = key(keys::fingerprint_pk(fingerprint), keys::FP_BINDING_SK);
        by_fingerprint.insert(attr::ID.into(), n(id.0));
        let bound = self
            .dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(by_fingerprint))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .send()
            .await;
        match bound.map_err(|e| classify("PutItem(fingerprint)", e)) {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    pub(crate) fn put_if_absent(&self, item: Item) -> Result<Put, AwsError> {
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .build()
            .map_err(|e| build_error("Put", e))
    }
}

/// A transaction that began with [`AwsStore::allocation_items`] for `next` failed: `Corrupt` when
/// only the ID binding's condition failed (the ID is bound but above the counter), else as classified.
pub(crate) fn allocation_error(op: &'static str, next: i32, error: TransactionError) -> AwsError {
    let (error, reasons) = classify_transaction(op, error);
    let failed = |i: usize| reasons.get(i).is_some_and(|r| r.as_deref() == Some("ConditionalCheckFailed"));
    if failed(2) && !failed(0) && !failed(1) {
        return AwsError::Corrupt(format!("id {next} is bound but above the counter"));
    }
    error
}

/// The ID after `current` (1 when there is none yet).
fn successor(current: Option<i32>) -> Result<i32, AwsError> {
    current
        .map_or(Some(1), |max| max.checked_add(1))
        .ok_or_else(|| AwsError::Service { op: "allocate_id", detail: "the schema ID space is exhausted".into() })
}

/// A request the SDK refused to build (a missing required field): a bug, reported as Other.
pub(crate) fn build_error(op: &'static str, error: impl std::fmt::Display) -> AwsError {
    AwsError::Service { op, detail: format!("invalid request: {error}") }
}
