//! `impl Store for AwsStore`: each trait method delegates to one module and maps its private
//! error into [`StoreError`].

use crate::AwsStore;
use crate::acks::Shown;
use crate::blobs;
use async_trait::async_trait;
use registry_core::{
    CommitHints, ConfigRecord, ConfiguredPage, Context, Fingerprint, Guid, GuidCarried, HardDeletion, IdRowsPage,
    LayeredContext, NewVersion, Preconditions, Revision, SchemaBody, SchemaId, Scope, SettingWrite, SoftDeletion,
    Store, StoreResult, Subject, SubjectsPage, Version, VersionRow, VersionsPage,
};

#[async_trait]
impl Store for AwsStore {
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()> {
        Ok(blobs::put(&self.s3, &self.bucket, fingerprint, body).await?)
    }

    /// From this store's bucket, else from the first other region's bucket that has it (a body
    /// written elsewhere that S3 replication has not brought here yet; an unreachable region is an
    /// error, retryable, not a missing body).
    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        if let Some(body) = blobs::get(&self.s3, &self.bucket, fingerprint).await? {
            return Ok(Some(body));
        }
        for (s3, bucket) in &self.body_mirrors {
            if let Some(body) = blobs::get(s3, bucket, fingerprint).await? {
                tracing::info!(%fingerprint, from = %bucket, "a body not yet replicated here was read from another region");
                return Ok(Some(body));
            }
        }
        Ok(None)
    }

    async fn id_for_fingerprint_in(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> StoreResult<Option<SchemaId>> {
        Ok(self.read_id_for_fingerprint(context, fingerprint).await?)
    }

    async fn fingerprint_for_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        Ok(self.read_fingerprint_for_id(context, id).await?)
    }

    async fn fingerprint_for_carried_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        Ok(self.read_carried_fingerprint(context, id).await?)
    }

    async fn allocate_id_in(&self, context: &Context, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        Ok(self.allocate(context, fingerprint).await?)
    }

    /// Not waited for on its own: IMPORT's `create_version` that follows waits for the binding to
    /// name its fingerprint (see `acks`).
    async fn bind_id_in(&self, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        Ok(self.bind(context, id, fingerprint).await?)
    }

    async fn max_id_in(&self, context: &Context) -> StoreResult<Option<SchemaId>> {
        Ok(self.read_max_id(context).await?.map(SchemaId))
    }

    async fn list_contexts(&self) -> StoreResult<Vec<Context>> {
        Ok(self.listed_contexts().await?)
    }

    /// Acknowledged once the replicas waited for show the counter without its `listed` flag.
    async fn unlist_context(&self, context: &Context) -> StoreResult<()> {
        self.unlist_if_empty(context).await?;
        Ok(self.acknowledge(|| Shown::unlisting(context)).await?)
    }

    /// Not waited for on its own: a by-guid read that misses a replica asks the home (see `acks`).
    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        Ok(self.put_guid(guid, fingerprint).await?)
    }

    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        Ok(self.read_fingerprint_for_guid(guid).await?)
    }

    async fn carried_id_for_guid(&self, guid: &Guid) -> StoreResult<Option<GuidCarried>> {
        match self.read_guid_item(guid).await? {
            None => Ok(None),
            Some((_, Some(carried))) => Ok(Some(carried)),
            Some((fingerprint, None)) => registry_core::carried_in_contexts(self, fingerprint).await,
        }
    }

    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        Ok(self.read_versions(subject).await?)
    }

    async fn versions_page(&self, page: VersionsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        Ok(self.read_versions_page(page.subject, page.after, page.limit).await?)
    }

    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>> {
        Ok(self.read_version(subject, version).await?)
    }

    async fn layered_write_context(
        &self,
        scope: &Scope,
        schemas: &[(Fingerprint, Guid)],
    ) -> StoreResult<LayeredContext> {
        Ok(self.read_layered_context(scope, schemas).await?)
    }

    /// Not waited for by acknowledging replicas: an optimization of the home's registrations.
    async fn record_live_version(&self, row: &VersionRow, revision: Revision) -> StoreResult<()> {
        Ok(self.write_live_version(row, revision).await?)
    }

    async fn create_version(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
    ) -> StoreResult<()> {
        self.create_row(row, preconditions, hints).await?;
        let revision = self.revision_for_acks(&row.subject).await?;
        Ok(self.acknowledge(|| Shown::registration(row, revision)).await?)
    }

    async fn create_version_assigning_id(&self, version: NewVersion<'_>) -> StoreResult<(SchemaId, bool)> {
        let (id, allocated) = self.create_row_assigning_id(version).await?;
        let revision = self.revision_for_acks(&version.row.subject).await?;
        self.acknowledge(|| Shown::registration(&version.row.with_id(id), revision)).await?;
        Ok((id, allocated))
    }

    async fn soft_delete_versions(&self, deletion: SoftDeletion<'_>) -> StoreResult<()> {
        let SoftDeletion { subject, versions, preconditions } = deletion;
        self.soft_delete_all(subject, versions, preconditions).await?;
        let revision = self.revision_for_acks(subject).await?;
        Ok(self.acknowledge(|| Shown::soft_deletion(subject, versions, revision)).await?)
    }

    async fn hard_delete_versions(&self, deletion: HardDeletion<'_>) -> StoreResult<()> {
        let HardDeletion { subject, versions, remove_subject_settings, preconditions } = deletion;
        let removed = self.hard_delete_all(subject, versions, remove_subject_settings, preconditions).await?;
        let revision = self.revision_for_acks(subject).await?;
        let shown = || Shown::hard_deletion(subject, versions, &removed, remove_subject_settings, revision);
        Ok(self.acknowledge(shown).await?)
    }

    async fn rows_with_id_page_in(&self, context: &Context, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        Ok(self.rows_for_id_page(context, page).await?)
    }

    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>> {
        Ok(self.rows_referencing(subject, version).await?)
    }

    async fn list_subjects(&self, page: SubjectsPage<'_>) -> StoreResult<Vec<Subject>> {
        Ok(self.subjects_page(page.prefix, page.filter, page.after, page.limit).await?)
    }

    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        Ok(self.read_config(scope).await?)
    }

    async fn subjects_with_config(&self, page: ConfiguredPage<'_>) -> StoreResult<Vec<Subject>> {
        Ok(self.configured_subjects_page(page.prefix, page.after, page.limit).await?)
    }

    async fn write_setting(&self, write: SettingWrite<'_>) -> StoreResult<()> {
        let value = self.write_setting_if(write.scope, write.change, write.preconditions).await?;
        Ok(self.acknowledge(|| Shown::setting(write.change.kind(), write.scope, value.as_deref())).await?)
    }

    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>> {
        Ok(self.read_last_used(subject).await?)
    }

    /// Not waited for by acknowledging replicas: no endpoint answers the marker (see `acks`).
    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()> {
        Ok(self.write_mark_used(subject, day).await?)
    }
}

/// Single-row writes outside the port, kept for this crate's tests of what one AWS call does
/// (`tests/calls.rs`); the registry soft- and hard-deletes through the batch writes above.
impl AwsStore {
    /// Sets the row's `deleted` flag to `deleted` if it is `!deleted` (one transaction); `Conflict`
    /// if the row is missing or already in that state.
    pub async fn set_version_deleted(&self, subject: &Subject, version: Version, deleted: bool) -> StoreResult<()> {
        Ok(self.set_deleted(subject, version, deleted).await?)
    }

    /// Removes the row with its index items; succeeds if it was already gone.
    pub async fn delete_version(&self, subject: &Subject, version: Version) -> StoreResult<()> {
        Ok(self.remove_row(subject, version).await?)
    }
}
