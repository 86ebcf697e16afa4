//! [`registry_core::Store::create_version_assigning_id`]: a new version row with its ID and guid
//! bindings in one strongly consistent BatchGetItem, at most one ledger claim and one transaction.
//!
//! The BatchGetItem reads the fingerprint's binding `FP#<hex>/ID`, the guid item and the ID counter.
//! - Bound: the row takes that ID, and the transaction conditions the binding on still naming it
//!   (`ADD uses 1`, as every reuse; see `conditions.rs`).
//! - Unbound: the next ID after the counter value read is claimed in the ledger (before anything
//!   in the table names it, as [`crate::ledger`] requires) and the transaction also holds the
//!   allocation ([`AwsStore::allocation_items`]: the counter update conditioned on the value read,
//!   both bindings created if absent). A counter moved or a fingerprint bound meanwhile cancels the
//!   whole transaction (`Conflict`: the registry reads again); the claimed ID is then an unused gap.
//! - A guid found unbound is bound in the same transaction by `SET fingerprint =
//!   if_not_exists(fingerprint, :fp)`: a concurrent first binding wins and nothing conflicts.
//!
//! A crash before the transaction leaves at most a ledger claim; the transaction commits the row
//! and every binding it needs together, or nothing.

use crate::AwsStore;
use crate::errors::{AwsError, classify_transaction};
use crate::ids::{allocation_error, build_error};
use crate::items::{Item, ItemExt, attr, key, s};
use crate::keys::{self, PK};
use aws_sdk_dynamodb::types::{TransactWriteItem, Update};
use registry_core::{Fingerprint, Guid, Preconditions, SchemaId, UnassignedRow};

/// What the BatchGetItem before the transaction found.
struct Bindings {
    /// The ID the fingerprint is bound to.
    id: Option<SchemaId>,
    /// Whether the guid is bound (to any fingerprint).
    guid_bound: bool,
    /// The ID counter.
    max_id: Option<i32>,
}

impl AwsStore {
    pub(crate) async fn create_row_assigning_id(
        &self,
        row: &UnassignedRow,
        guid: &Guid,
        preconditions: &Preconditions,
    ) -> Result<(SchemaId, bool), AwsError> {
        let fingerprint = &row.fingerprint;
        let found = self.read_bindings(fingerprint, guid).await?;
        let guid_binding = match found.guid_bound {
            true => Vec::new(),
            false => vec![self.guid_binding(guid, fingerprint)?],
        };
        if let Some(id) = found.id {
            let preconditions = Preconditions { binding: Some((*fingerprint, id)), ..preconditions.clone() };
            let items = self.row_items(&row.with_id(id), &preconditions, guid_binding)?;
            self.dynamo
                .transact_write_items()
                .set_transact_items(Some(items))
                .send()
                .await
                .map_err(|e| classify_transaction("TransactWriteItems(create_version, bound id)", e).0)?;
            return Ok((id, false));
        }
        let next = self.claim_next(found.max_id, fingerprint).await?;
        // The allocation first (allocation_error reads its cancellation reasons by position), and
        // the binding created with the one use this row makes of it.
        let mut items = self.allocation_items(found.max_id, next, fingerprint, Some(1))?;
        items.extend(guid_binding);
        let items = self.row_items(&row.with_id(SchemaId(next)), preconditions, items)?;
        let result = self.dynamo.transact_write_items().set_transact_items(Some(items)).send().await;
        match result {
            Ok(_) => Ok((SchemaId(next), true)),
            Err(error) => Err(allocation_error("TransactWriteItems(create_version, new id)", next, error)),
        }
    }

    /// The fingerprint's binding, whether the guid is bound, and the counter: one BatchGetItem.
    async fn read_bindings(&self, fingerprint: &Fingerprint, guid: &Guid) -> Result<Bindings, AwsError> {
        let wanted = vec![
            key(keys::fingerprint_pk(fingerprint), keys::FP_BINDING_SK),
            key(keys::guid_pk(guid), keys::GUID_BINDING_SK),
            key(keys::COUNTER.0, keys::COUNTER.1),
        ];
        let items = self.batch_get("BatchGetItem(fingerprint, guid, counter)", wanted).await?;
        let partition = |item: &Item| item.get(PK).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
        let mut found = Bindings { id: None, guid_bound: false, max_id: None };
        for item in &items {
            let pk = partition(item);
            if pk == keys::COUNTER.0 {
                found.max_id = item.optional_number(attr::MAX_ID)?;
            } else if pk == keys::guid_pk(guid) {
                found.guid_bound = true;
            } else {
                found.id = Some(SchemaId(item.number(attr::ID)?));
            }
        }
        Ok(found)
    }

    /// Binds `guid` to `fingerprint` unless it is bound already (then leaves it): never fails.
    fn guid_binding(&self, guid: &Guid, fingerprint: &Fingerprint) -> Result<TransactWriteItem, AwsError> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(keys::guid_pk(guid), keys::GUID_BINDING_SK)))
            .update_expression("SET #fp = if_not_exists(#fp, :fp)")
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_values(":fp", s(fingerprint.to_hex()))
            .build()
            .map_err(|e| build_error("Update(guid)", e))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
