//! The guid index: `GUID#<md5 hex>/FP {fingerprint, id?}`, one item per guid, created once and
//! never rebound or deleted (see [`registry_core::Store::bind_guid`]); its `id` is the carried ID of
//! its fingerprint in the default context, kept by the row writes (see `assign`).

use crate::AwsStore;
use crate::errors::{AwsError, classify};
use crate::items::{ItemExt, attr, fingerprint_of, key, s};
use crate::keys::{self, PK};
use registry_core::{Context, Fingerprint, Guid, SchemaId};

impl AwsStore {
    /// One PutItem conditioned on `attribute_not_exists(pk) OR fingerprint = :fp`: creates the
    /// binding, or rewrites the same value on a retry; a binding to another fingerprint fails the
    /// condition (`ConditionFailed`, i.e. `Conflict`) and is left as it is.
    pub(crate) async fn put_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> Result<(), AwsError> {
        let mut item = key(keys::guid_pk(guid), keys::GUID_BINDING_SK);
        item.insert(attr::FINGERPRINT.into(), s(fingerprint.to_hex()));
        self.dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk) OR #fp = :fp")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#fp", attr::FINGERPRINT)
            .expression_attribute_values(":fp", s(fingerprint.to_hex()))
            .send()
            .await
            .map_err(|e| classify("PutItem(guid)", e))?;
        Ok(())
    }

    /// One strongly consistent GetItem of `GUID#<hex>/FP` when it carries the ID (see `assign`);
    /// else, for items written without it, the fingerprint's binding and the ID's partition too.
    /// The default context's ID: the registry looks for the others in each listed context.
    pub(crate) async fn read_carried_id_for_guid(
        &self,
        guid: &Guid,
    ) -> Result<Option<(Fingerprint, SchemaId)>, AwsError> {
        let Some(item) = self.get_item("GetItem(guid)", key(keys::guid_pk(guid), keys::GUID_BINDING_SK)).await? else {
            return Ok(None);
        };
        let fingerprint = fingerprint_of(&item)?;
        if let Some(id) = item.optional_number(attr::ID)? {
            return Ok(Some((fingerprint, SchemaId(id))));
        }
        let context = &Context::DEFAULT;
        let Some(id) = self.read_id_for_fingerprint(context, &fingerprint).await? else { return Ok(None) };
        Ok(self.read_carried_fingerprint(context, id).await?.map(|_| (fingerprint, id)))
    }

    /// One strongly consistent GetItem of `GUID#<hex>/FP`.
    pub(crate) async fn read_fingerprint_for_guid(&self, guid: &Guid) -> Result<Option<Fingerprint>, AwsError> {
        match self.get_item("GetItem(guid)", key(keys::guid_pk(guid), keys::GUID_BINDING_SK)).await? {
            Some(item) => Ok(Some(fingerprint_of(&item)?)),
            None => Ok(None),
        }
    }
}
