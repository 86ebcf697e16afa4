//! [`registry_core::Store::create_version_assigning_id`]: a new version row with its ID and guid
//! bindings in one strongly consistent BatchGetItem, at most one ledger claim and one transaction.
//!
//! The BatchGetItem reads the fingerprint's binding `FP#<hex>/ID`, the guid item and the ID counter
//! (with the home marker, whose floor bounds an allocation from below, on a fenced store).
//! The registry usually has them already: `layered_write_context` reads the same items in the write
//! context's BatchGetItem, and [`registry_core::CommitHints::bindings_seen`] hands them over; the
//! transaction below is conditioned on what they say either way, so an older read only conflicts.
//! - Bound: the row takes that ID, and the transaction conditions the binding on still naming it
//!   (`ADD uses 1`, as every reuse; see `conditions.rs`).
//! - Unbound: the next ID after the counter value read is claimed in the ledger (before anything
//!   in the table names it, as [`crate::ledger`] requires) and the transaction also holds the
//!   allocation ([`AwsStore::allocation_items`]: the counter update conditioned on the value read,
//!   both bindings created if absent). A counter moved or a fingerprint bound meanwhile cancels the
//!   whole transaction (`Conflict`: the registry reads again); the claimed ID is then an unused gap.
//!
//! The guid item: unless it is bound to another fingerprint (then it is left as it is), the same
//! transaction binds it to the fingerprint and sets its ID attribute of the row's context (`id`
//! for the default context, `id:<context>` for a named one: [`keys::guid_id_attribute`]) to the
//! row's ID (conditioned on being absent or bound to this fingerprint), and records the guid on
//! the context's fingerprint binding. So each of a guid item's ID attributes names the ID its
//! fingerprint is bound to in that context while a row of it carries it: it is set only with a
//! carrier, and every write that removes the binding or may remove the last carrier removes it
//! in the same transaction (`batch.rs`, `rows.rs`, found through the binding's `guid`). `GET
//! /schemas/guids/{guid}` then reads the guid item alone ([`AwsStore::read_guid_item`]); items
//! without any (written before, or by `bind_guid`) take the point reads they always took.
//!
//! A crash before the transaction leaves at most a ledger claim; the transaction commits the row
//! and every binding it needs together, or nothing.

use crate::AwsStore;
use crate::errors::AwsError;
use crate::ids::{FirstCarrier, allocation_error};
use crate::items::{Item, ItemExt, attr, fingerprint_of, item_at, key, n, s};
use crate::keys::{self, PK};
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::TransactWriteItem;
use registry_core::{BindingsSeen, CommitHints, Context, Fingerprint, Guid, NewVersion, Preconditions, SchemaId};

/// What the BatchGetItem before the transaction found.
struct Bindings {
    /// The ID the fingerprint is bound to.
    id: Option<SchemaId>,
    /// The fingerprint the guid item is bound to, if any.
    guid_bound_to: Option<Fingerprint>,
    /// What an allocation starts after: the ID counter, or the home marker's floor above it.
    max_id: Option<i32>,
}

impl AwsStore {
    pub(crate) async fn create_row_assigning_id(&self, version: NewVersion<'_>) -> Result<(SchemaId, bool), AwsError> {
        let NewVersion { row, guid, preconditions, hints } = version;
        let fingerprint = &row.fingerprint;
        let seen = hinted_bindings(hints, fingerprint, guid);
        // The binding's condition is this write's own (one item of a transaction takes one action).
        let preconditions = &Preconditions { binding: None, ..preconditions.clone() };
        let found = match seen {
            Some(found) => found,
            None => self.read_bindings(&row.subject.context(), fingerprint, guid).await?,
        };
        let context = &row.subject.context();
        // One guid across contexts: its item carries each context's ID under its own attribute.
        let carries = found.guid_bound_to.is_none_or(|b| b == *fingerprint).then_some(guid);
        let guid_write = |id: SchemaId| carries.map(|guid| self.guid_item(guid, fingerprint, context, id)).transpose();
        if let Some(id) = found.id {
            let mut items = vec![self.binding_use(context, fingerprint, id, carries)?];
            items.extend(guid_write(id)?);
            let items = self.row_items(&row.with_id(id), preconditions, hints, items)?;
            self.transact("TransactWriteItems(create_version, bound id)", items).await?;
            return Ok((id, false));
        }
        let next = self.claim_next(context, found.max_id, fingerprint).await?;
        // The allocation first: allocation_error reads its cancellation reasons by position.
        let first_carrier = Some(FirstCarrier { guid: carries });
        let mut items = self.allocation_items(context, found.max_id, next, fingerprint, first_carrier)?;
        items.extend(guid_write(SchemaId(next))?);
        let items = self.row_items(&row.with_id(SchemaId(next)), preconditions, hints, items)?;
        let result = self.dynamo.transact_write_items().set_transact_items(Some(self.fenced(items)?)).send().await;
        let op = "TransactWriteItems(create_version, new id)";
        match result {
            Ok(_) => Ok((SchemaId(next), true)),
            Err(error) => Err(self.fence_refusal(op, &error).unwrap_or_else(|| allocation_error(op, next, error))),
        }
    }

    /// The fingerprint's binding, the guid item's fingerprint and the counter: one BatchGetItem.
    async fn read_bindings(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
        guid: &Guid,
    ) -> Result<Bindings, AwsError> {
        let wanted = self.binding_keys(context, fingerprint, guid);
        let items = self.batch_get("BatchGetItem(fingerprint, guid, counter)", wanted).await?;
        Ok(bindings_seen(&items, context, fingerprint, guid)?.into())
    }

    /// Binds `guid` to `fingerprint` and gives it `id` as `context`'s ID, conditioned on the guid
    /// being unbound or bound to `fingerprint` already (a concurrent binding to another one conflicts).
    fn guid_item(
        &self,
        guid: &Guid,
        fingerprint: &Fingerprint,
        context: &Context,
        id: SchemaId,
    ) -> Result<TransactWriteItem, AwsError> {
        let update = self
            .update_of(key(keys::guid_pk(guid), keys::GUID_BINDING_SK))
            .condition_expression("attribute_not_exists(#pk) OR #fp = :fp")
            .update_expression("SET #fp = :fp, #id = :id")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_names("#id", keys::guid_id_attribute(context))
            .expression_attribute_values(":fp", s(fingerprint.to_hex()))
            .expression_attribute_values(":id", n(id.0));
        transact_item("Update(guid)", Part::Update(update))
    }

    /// Removes `context`'s ID from the guid item whose hex the fingerprint binding `binding` (of
    /// that context) names, if it names one: never fails (removing it only sends `GET
    /// /schemas/guids` the longer way).
    pub(crate) fn guid_id_removal(
        &self,
        context: &Context,
        binding: &Item,
    ) -> Result<Option<TransactWriteItem>, AwsError> {
        let Some(hex) = binding.get(attr::GUID).and_then(|v| v.as_s().ok()) else { return Ok(None) };
        let update = self
            .update_of(key(keys::guid_pk_of_hex(hex), keys::GUID_BINDING_SK))
            .update_expression("REMOVE #id")
            .expression_attribute_names("#id", keys::guid_id_attribute(context));
        transact_item("Update(guid id)", Part::Update(update)).map(Some)
    }
}

impl AwsStore {
    /// The keys of a schema's bindings in `context` (the subject's): its fingerprint binding, its
    /// guid item and what an allocation starts after ([`AwsStore::counter_keys`]: the context's ID
    /// counter, and the home marker on a fenced store).
    pub(crate) fn binding_keys(&self, context: &Context, fingerprint: &Fingerprint, guid: &Guid) -> Vec<Item> {
        let mut keys = vec![
            crate::ids::fingerprint_binding_key(context, fingerprint),
            key(keys::guid_pk(guid), keys::GUID_BINDING_SK),
        ];
        keys.extend(self.counter_keys(context));
        keys
    }
}

/// The bindings of (`fingerprint`, `guid`) among `items` (read by [`AwsStore::binding_keys`], possibly with
/// other items): absent items are unbound.
pub(crate) fn bindings_seen(
    items: &[Item],
    context: &Context,
    fingerprint: &Fingerprint,
    guid: &Guid,
) -> Result<BindingsSeen, AwsError> {
    let binding_sk = keys::fingerprint_binding_sk(context);
    let id = item_at(items, &keys::fingerprint_pk(fingerprint), &binding_sk).map(|item| item.number(attr::ID));
    let id = id.transpose()?;
    let guid_bound_to = item_at(items, &keys::guid_pk(guid), keys::GUID_BINDING_SK).map(fingerprint_of).transpose()?;
    let max_id = crate::fence::allocation_base(items, context)?;
    Ok(BindingsSeen {
        fingerprint: *fingerprint,
        guid: *guid,
        id: id.map(SchemaId),
        guid_bound_to,
        max_id: max_id.map(SchemaId),
        live_version: None,
    })
}

/// The bindings the registry read with the write context, when they are this row's.
fn hinted_bindings(hints: &CommitHints, fingerprint: &Fingerprint, guid: &Guid) -> Option<Bindings> {
    let seen = hints.bindings_seen.as_ref()?;
    (seen.fingerprint == *fingerprint && seen.guid == *guid).then(|| seen.clone().into())
}

impl From<BindingsSeen> for Bindings {
    fn from(seen: BindingsSeen) -> Self {
        Bindings { id: seen.id, guid_bound_to: seen.guid_bound_to, max_id: seen.max_id.map(|id| id.0) }
    }
}
