//! IMPORT of an ID whose schema was hard-deleted: the ID is free again once no row of its context
//! carries it (Confluent keeps an ID only while a version holds it), and is rebound to the
//! imported schema in one transaction checked against every row that could commit it meanwhile.
//!
//! Who can commit a row carrying the ID, and what the rebind conditions on against each:
//! - a registration reusing the old schema's binding `FP#<old>/ID` (normal path): it adds to the
//!   binding's `uses`; the rebind deletes that binding conditioned on the `uses` it read before the
//!   carriers, so one of the two fails;
//! - an IMPORT naming the ID: it adds to `ID#<id>/FP`'s `carried`, conditioned on the binding
//!   naming its schema ([`registry_core::Preconditions::id_binding`]); the rebind rewrites that
//!   item conditioned on the fingerprint and `carried` it read before the carriers;
//! - an IMPORT of the old schema binding its side `FP#<old>/ID` back to the ID (`bind`), which a
//!   registration of the old schema would then reuse: that write is conditioned on the ID's side
//!   still naming the old schema, and the rebind on the old side being as it read it.
//!
//! The carriers are read after both bindings (one Query for the ID's first edge), so a row
//! committed after that read changed what the transaction is conditioned on. The ledger entry is
//! rewritten after the transaction; a crash between the two is completed by the retried IMPORT
//! (`bind` finds the table giving it the ID and rewrites the ledger).

use crate::AwsStore;
use crate::commit::Commit;
use crate::conditions::{CARRIED, USES};
use crate::errors::AwsError;
use crate::ids::{fingerprint_binding_key, id_binding_key};
use crate::items::{Item, ItemExt, attr, fingerprint_of, n, s};
use crate::keys::{PK, SK};
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::TransactWriteItem;
use registry_core::id_rules::{self, BindDecision, BindRead};
use registry_core::{Context, Fingerprint, SchemaId};

impl AwsStore {
    /// Rebinds `id` from `freed` to `fingerprint` in `context` as [`id_rules::bind_decision`] decides
    /// on what this reads (the binding still naming `freed`, the carriers, both fingerprints'
    /// sides), in one transaction conditioned on it; `ConditionFailed` when a row carries it or the
    /// binding changed meanwhile.
    pub(crate) async fn rebind(
        &self,
        context: &Context,
        id: SchemaId,
        freed: &Fingerprint,
        fingerprint: &Fingerprint,
    ) -> Result<(), AwsError> {
        let refused = |detail: &str| AwsError::ConditionFailed {
            op: "bind_id",
            detail: format!("id {id} in {context} {detail}"),
        };
        let id_key = id_binding_key(context, id);
        let (freed_key, new_key) =
            (fingerprint_binding_key(context, freed), fingerprint_binding_key(context, fingerprint));
        let found = self.batch_get("BatchGetItem(rebind)", vec![id_key.clone(), freed_key.clone(), new_key.clone()]);
        let found = found.await?;
        let item_at =
            |wanted: &Item| found.iter().find(|item| item.get(PK) == wanted.get(PK) && item.get(SK) == wanted.get(SK));
        let Some(binding) = item_at(&id_key) else { return Err(refused("lost its binding")) };
        if fingerprint_of(binding)? != *freed {
            return Err(refused("was rebound concurrently"));
        }
        let carried_count: Option<u64> = binding.optional_number(CARRIED)?;
        let side = |item: Option<&Item>| item.map(|item| item.number::<i32>(attr::ID).map(SchemaId)).transpose();
        let read = BindRead {
            id_bound_to: Some(*freed),
            carried: self.id_is_carried(context, id).await?,
            old_side: side(item_at(&freed_key))?,
            fingerprint_side: side(item_at(&new_key))?,
        };
        let (unbind_old, bind_reverse) = match id_rules::bind_decision(id, fingerprint, &read) {
            BindDecision::Rebind { unbind_old, bind_reverse, .. } => (unbind_old, bind_reverse),
            BindDecision::Conflict { .. } => return Err(refused("is bound to another schema a row carries")),
            // Not reached: the binding read names `freed`, another schema.
            BindDecision::AlreadyBound { .. } | BindDecision::Bind { .. } => {
                return Err(refused("was rebound concurrently"));
            }
        };
        let mut items = vec![self.id_binding_move(&id_key, freed, fingerprint, carried_count)?];
        match item_at(&freed_key).filter(|_| unbind_old) {
            Some(old) => {
                items.push(self.binding_delete(context, freed, id, old.optional_number(USES)?)?);
                items.extend(self.guid_id_removal(context, old)?);
            }
            // The old schema's side as read (absent, or naming another ID) is part of the decision:
            // one written meanwhile naming this ID would let a registration of the old schema reuse
            // the ID this rebinds.
            None => items.push(self.fingerprint_side_is(context, freed, read.old_side)?),
        }
        if bind_reverse {
            let mut by_fingerprint = new_key;
            by_fingerprint.insert(attr::ID.into(), n(id.0));
            items.push(self.put_if_absent(by_fingerprint)?);
        }
        Commit::unsubjected(self, "TransactWriteItems(rebind_id)").group(items).commit().await?;
        self.raise_counter(context, id, true).await?;
        self.reissue_claim(context, id, fingerprint).await
    }

    /// `ID#<id>/FP` moved from `freed` to `fingerprint`, conditioned on it naming `freed` with the
    /// `carried` count read.
    fn id_binding_move(
        &self,
        id_key: &Item,
        freed: &Fingerprint,
        fingerprint: &Fingerprint,
        carried: Option<u64>,
    ) -> Result<TransactWriteItem, AwsError> {
        let update = self
            .update_of(id_key.clone())
            .update_expression("SET #fp = :to ADD #carried :one")
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_names("#carried", CARRIED)
            .expression_attribute_values(":from", s(freed.to_hex()))
            .expression_attribute_values(":to", s(fingerprint.to_hex()))
            .expression_attribute_values(":one", n(1));
        let update = match carried {
            None => update.condition_expression("#fp = :from AND attribute_not_exists(#carried)"),
            Some(carried) => update
                .condition_expression("#fp = :from AND #carried = :carried")
                .expression_attribute_values(":carried", n(carried)),
        };
        transact_item("Update(id binding)", Part::Update(update))
    }
}
