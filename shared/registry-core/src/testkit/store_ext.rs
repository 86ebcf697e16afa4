//! [`StoreTestExt`]: operations tests use that the registry does not, written once over the
//! [`Store`] port for every store (so no backend implements them, and no wrapper forwards them).

use crate::model::{ConfigRecord, Context, Mode, SchemaId, Scope, Subject, Version, VersionRow};
use crate::store::{
    HardDeletion, IdRowsPage, LayeredContext, Preconditions, SettingChange, SettingWrite, SoftDeletion, Store,
    StoreError, StoreResult,
};
use async_trait::async_trait;
use registry_schema::Fingerprint;

/// Rows carried per page when [`StoreTestExt::rows_with_id_in`] reads them all.
const ROWS_PAGE: usize = 100;

/// Test helpers over any [`Store`]: the default-context forms of the `_in` methods, single-row
/// writes, unconditioned settings writes and full listings. Each is made of port calls with
/// `Preconditions::default()` (nothing decided, nothing to condition on).
#[async_trait]
pub trait StoreTestExt: Store {
    /// [`Store::id_for_fingerprint_in`] the default context.
    async fn id_for_fingerprint(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaId>> {
        self.id_for_fingerprint_in(&Context::DEFAULT, fingerprint).await
    }

    /// [`Store::fingerprint_for_id_in`] the default context.
    async fn fingerprint_for_id(&self, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.fingerprint_for_id_in(&Context::DEFAULT, id).await
    }

    /// [`Store::fingerprint_for_carried_id_in`] the default context.
    async fn fingerprint_for_carried_id(&self, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.fingerprint_for_carried_id_in(&Context::DEFAULT, id).await
    }

    /// [`Store::allocate_id_in`] the default context.
    async fn allocate_id(&self, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        self.allocate_id_in(&Context::DEFAULT, fingerprint).await
    }

    /// [`Store::bind_id_in`] the default context.
    async fn bind_id(&self, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.bind_id_in(&Context::DEFAULT, id, fingerprint).await
    }

    /// [`Store::max_id_in`] the default context.
    async fn max_id(&self) -> StoreResult<Option<SchemaId>> {
        self.max_id_in(&Context::DEFAULT).await
    }

    /// [`Store::rows_with_id_page_in`] the default context.
    async fn rows_with_id_page(&self, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        self.rows_with_id_page_in(&Context::DEFAULT, page).await
    }

    /// Every row of `context` that carries `id`, sorted by (subject, version): every page of
    /// [`Store::rows_with_id_page_in`].
    async fn rows_with_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Vec<VersionRow>> {
        let mut rows: Vec<VersionRow> = Vec::new();
        loop {
            let after = rows.last().map(|row| (&row.subject, row.version));
            let page =
                self.rows_with_id_page_in(context, IdRowsPage { id, prefix: "", after, limit: ROWS_PAGE }).await?;
            let done = page.len() < ROWS_PAGE;
            rows.extend(page);
            if done {
                return Ok(rows);
            }
        }
    }

    /// [`StoreTestExt::rows_with_id_in`] the default context.
    async fn rows_with_id(&self, id: SchemaId) -> StoreResult<Vec<VersionRow>> {
        self.rows_with_id_in(&Context::DEFAULT, id).await
    }

    /// [`Store::create_version`] of `row`, conditioned on nothing and with no commit hints:
    /// `Conflict` if the version is already there.
    async fn add_version(&self, row: &VersionRow) -> StoreResult<()> {
        self.create_version(row, &Preconditions::default(), &crate::CommitHints::default()).await
    }

    /// Sets the row's `deleted` flag to `deleted` if it is currently `!deleted`; `Conflict` if the
    /// row is missing or already in that state. A soft delete is [`Store::soft_delete_versions`] of
    /// the one version. The registry never undeletes: an undelete removes the row
    /// ([`Store::hard_delete_versions`]), binds its ID to its fingerprint again where that removal
    /// unbound it, and creates it live.
    async fn set_version_deleted(&self, subject: &Subject, version: Version, deleted: bool) -> StoreResult<()> {
        let preconditions = Preconditions::default();
        if deleted {
            let versions = [version];
            return self
                .soft_delete_versions(SoftDeletion { subject, versions: &versions, preconditions: &preconditions })
                .await;
        }
        let Some(row) = self.get_version(subject, version).await?.filter(|row| row.deleted) else {
            return Err(StoreError::Conflict(format!("undelete of {subject} version {version}: no soft-deleted row")));
        };
        self.delete_version(subject, version).await?;
        self.bind_id_in(&subject.context(), row.id, &row.fingerprint).await?;
        self.create_version(&VersionRow { deleted: false, ..row }, &preconditions, &crate::CommitHints::default()).await
    }

    /// Removes the row (hard delete, [`Store::hard_delete_versions`] of the one version, which also
    /// unbinds its schema's ID where no row carries it any more). Succeeds if it was already gone.
    async fn delete_version(&self, subject: &Subject, version: Version) -> StoreResult<()> {
        let (versions, preconditions) = ([version], Preconditions::default());
        let deletion = HardDeletion {
            subject,
            versions: &versions,
            remove_subject_settings: false,
            preconditions: &preconditions,
        };
        self.hard_delete_versions(deletion).await
    }

    /// The settings at every scope a write at `scope` reads ([`Store::layered_write_context`]).
    async fn settings_at(&self, scope: &Scope) -> StoreResult<LayeredContext> {
        self.layered_write_context(scope, &[]).await
    }

    /// Replaces the config at `scope`.
    async fn put_config(&self, scope: &Scope, config: &ConfigRecord) -> StoreResult<()> {
        self.change_setting(scope, SettingChange::Config(Some(Box::new(config.clone())))).await
    }

    /// Removes the config at `scope`, returning what was there.
    async fn delete_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        let before = self.get_config(scope).await?;
        self.change_setting(scope, SettingChange::Config(None)).await?;
        Ok(before)
    }

    /// The mode stored at `scope`, if any.
    async fn get_mode(&self, scope: &Scope) -> StoreResult<Option<Mode>> {
        Ok(self.settings_at(scope).await?.own_mode())
    }

    /// Replaces the mode at `scope`.
    async fn put_mode(&self, scope: &Scope, mode: Mode) -> StoreResult<()> {
        self.change_setting(scope, SettingChange::Mode(Some(mode))).await
    }

    /// Removes the mode at `scope`, returning what was there.
    async fn delete_mode(&self, scope: &Scope) -> StoreResult<Option<Mode>> {
        let before = self.get_mode(scope).await?;
        self.change_setting(scope, SettingChange::Mode(None)).await?;
        Ok(before)
    }

    /// [`Store::write_setting`] of `change` at `scope`, conditioned on nothing.
    async fn change_setting(&self, scope: &Scope, change: SettingChange) -> StoreResult<()> {
        let preconditions = Preconditions::default();
        self.write_setting(SettingWrite { scope, change: &change, preconditions: &preconditions }).await
    }
}

impl<S: Store + ?Sized> StoreTestExt for S {}
