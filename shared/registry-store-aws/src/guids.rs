//! The guid index: `GUID#<md5 hex>/FP {fingerprint, id?, id:<context>?...}`, one item per guid,
//! created once and never rebound or deleted (see [`registry_core::Store::bind_guid`]); its `id`
//! is the carried ID of its fingerprint in the default context and each `id:<context>` the one in
//! a named context ([`keys::guid_id_attribute`]), kept by the row writes (see `assign`).

use crate::AwsStore;
use crate::errors::AwsError;
use crate::fence::OneWrite;
use crate::items::{Item, ItemExt, attr, fingerprint_of, key, s};
use crate::keys::{self, PK};
use registry_core::{Context, Fingerprint, Guid, GuidCarried, SchemaId};

impl AwsStore {
    /// Binds `guid` to `fingerprint` as [`AwsStore::put_fingerprint_binding`] does.
    pub(crate) async fn put_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> Result<(), AwsError> {
        let item = key(keys::guid_pk(guid), keys::GUID_BINDING_SK);
        self.put_fingerprint_binding("PutItem(guid)", item, fingerprint).await
    }

    /// One PutItem of `item` (a key) naming `fingerprint`, conditioned on
    /// `attribute_not_exists(pk) OR fingerprint = :fp`: creates the binding, or rewrites the same
    /// value on a retry; a binding to another fingerprint fails the condition (`ConditionFailed`,
    /// i.e. `Conflict`) and is left as it is. The guid and the ID → fingerprint bindings. On a
    /// fenced store, one TransactWriteItems of the put and the fence (see `fence`).
    pub(crate) async fn put_fingerprint_binding(
        &self,
        op: &'static str,
        mut item: Item,
        fingerprint: &Fingerprint,
    ) -> Result<(), AwsError> {
        item.insert(attr::FINGERPRINT.into(), s(fingerprint.to_hex()));
        let put = self
            .dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk) OR #fp = :fp")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_values(":fp", s(fingerprint.to_hex()));
        // Fenced on a home-region store (see `fence`): an old home binds nothing.
        self.write_one(op, OneWrite::Put(put)).await
    }

    /// One strongly consistent GetItem of `GUID#<hex>/FP` and the ID it carries (see `assign`):
    /// the default context's `id`, else the `id:<context>` of the first named context by name.
    /// An item carrying none (written before guid items carried IDs, by `bind_guid`, or whose
    /// carriers' deletes removed them) is looked up the longer way by the caller
    /// ([`registry_core::carried_in_contexts`]). So a default-context carrier registered before
    /// guid items carried its ID, and not registered again since, is found only while no named
    /// context's ID is on the item.
    /// `None` when the guid is unbound; else its fingerprint with the carried ID the item names,
    /// if it names one.
    pub(crate) async fn read_guid_item(
        &self,
        guid: &Guid,
    ) -> Result<Option<(Fingerprint, Option<GuidCarried>)>, AwsError> {
        let Some(item) = self.get_item("GetItem(guid)", key(keys::guid_pk(guid), keys::GUID_BINDING_SK)).await? else {
            return Ok(None);
        };
        let fingerprint = fingerprint_of(&item)?;
        if let Some(id) = item.optional_number(attr::ID)? {
            let carried = GuidCarried { fingerprint, context: Context::DEFAULT, id: SchemaId(id) };
            return Ok(Some((fingerprint, Some(carried))));
        }
        let mut named: Option<(Context, SchemaId)> = None;
        for (name, value) in &item {
            let Some(context) = keys::context_of_guid_id_attribute(name) else { continue };
            let context =
                Context::parse(context).map_err(|_| AwsError::Corrupt(format!("guid item attribute {name}")))?;
            if named.as_ref().is_some_and(|(first, _)| *first <= context) {
                continue;
            }
            let id = value.as_n().ok().and_then(|n| n.parse().ok());
            let id = id.ok_or_else(|| AwsError::Corrupt(format!("guid item attribute {name} is no ID")))?;
            named = Some((context, SchemaId(id)));
        }
        Ok(Some((fingerprint, named.map(|(context, id)| GuidCarried { fingerprint, context, id }))))
    }

    /// One strongly consistent GetItem of `GUID#<hex>/FP`.
    pub(crate) async fn read_fingerprint_for_guid(&self, guid: &Guid) -> Result<Option<Fingerprint>, AwsError> {
        match self.get_item("GetItem(guid)", key(keys::guid_pk(guid), keys::GUID_BINDING_SK)).await? {
            Some(item) => Ok(Some(fingerprint_of(&item)?)),
            None => Ok(None),
        }
    }
}
