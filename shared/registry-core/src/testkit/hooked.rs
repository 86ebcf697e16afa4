//! [`HookedStore`]: a store that asks a [`StoreHook`] before forwarding each call to an inner store.
//! The one place tests inject faults or count calls, so a new [`Store`] method is forwarded once.

use crate::model::{
    ConfigRecord, DeletedFilter, Guid, Mode, SchemaBody, SchemaId, Scope, Subject, Version, VersionRow,
};
use crate::store::{Store, StoreResult};
use async_trait::async_trait;
use registry_schema::Fingerprint;
use std::fmt;
use std::sync::Arc;

/// Which [`Store`] method is being called, with the arguments hooks look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreCall {
    PutBody,
    GetBody,
    IdForFingerprint,
    FingerprintForId,
    AllocateId,
    BindId,
    UnbindFingerprint,
    MaxId,
    BindGuid,
    FingerprintForGuid,
    Versions,
    VersionsPage { limit: usize },
    GetVersion,
    CreateVersion,
    SetVersionDeleted,
    DeleteVersion,
    SoftDeleteVersions,
    HardDeleteVersions,
    RowsWithId,
    RowsWithIdPage { limit: usize },
    Referrers,
    ListSubjects { limit: usize },
    GetConfig,
    PutConfig,
    DeleteConfig,
    GetMode,
    PutMode,
    DeleteMode,
    LastUsed,
    MarkUsed,
}

impl StoreCall {
    /// Whether the call changes stored state.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Self::PutBody
                | Self::AllocateId
                | Self::BindId
                | Self::UnbindFingerprint
                | Self::BindGuid
                | Self::CreateVersion
                | Self::SetVersionDeleted
                | Self::DeleteVersion
                | Self::SoftDeleteVersions
                | Self::HardDeleteVersions
                | Self::PutConfig
                | Self::DeleteConfig
                | Self::PutMode
                | Self::DeleteMode
                | Self::MarkUsed
        )
    }
}

/// Decides, before each call, whether it reaches the inner store. Closures are hooks.
pub trait StoreHook: Send + Sync {
    /// Called before `call` is forwarded; an `Err` is returned to the caller instead, and the
    /// inner store is not called.
    fn before(&self, call: StoreCall) -> StoreResult<()>;
}

impl<F: Fn(StoreCall) -> StoreResult<()> + Send + Sync> StoreHook for F {
    fn before(&self, call: StoreCall) -> StoreResult<()> {
        self(call)
    }
}

/// Forwards every [`Store`] call to `inner` after [`StoreHook::before`] allowed it. Batch writes
/// are forwarded as one call, so a hook sees them as the single atomic write they are.
pub struct HookedStore<H> {
    inner: Arc<dyn Store>,
    hook: H,
}

impl<H: StoreHook> HookedStore<H> {
    /// Wraps `inner`; keep a clone of `inner` to inspect the state behind the hook.
    pub fn new(inner: Arc<dyn Store>, hook: H) -> Self {
        Self { inner, hook }
    }

    /// The wrapped store (calls on it bypass the hook).
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// The hook, for the counts it keeps.
    pub fn hook(&self) -> &H {
        &self.hook
    }
}

impl<H> fmt::Debug for HookedStore<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookedStore").field("inner", &self.inner).finish_non_exhaustive()
    }
}

#[async_trait]
impl<H: StoreHook> Store for HookedStore<H> {
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()> {
        self.hook.before(StoreCall::PutBody)?;
        self.inner.put_body(fingerprint, body).await
    }

    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        self.hook.before(StoreCall::GetBody)?;
        self.inner.get_body(fingerprint).await
    }

    async fn id_for_fingerprint(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaId>> {
        self.hook.before(StoreCall::IdForFingerprint)?;
        self.inner.id_for_fingerprint(fingerprint).await
    }

    async fn fingerprint_for_id(&self, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.hook.before(StoreCall::FingerprintForId)?;
        self.inner.fingerprint_for_id(id).await
    }

    async fn allocate_id(&self, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        self.hook.before(StoreCall::AllocateId)?;
        self.inner.allocate_id(fingerprint).await
    }

    async fn bind_id(&self, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.hook.before(StoreCall::BindId)?;
        self.inner.bind_id(id, fingerprint).await
    }

    async fn unbind_fingerprint(&self, fingerprint: &Fingerprint, id: SchemaId) -> StoreResult<()> {
        self.hook.before(StoreCall::UnbindFingerprint)?;
        self.inner.unbind_fingerprint(fingerprint, id).await
    }

    async fn max_id(&self) -> StoreResult<Option<SchemaId>> {
        self.hook.before(StoreCall::MaxId)?;
        self.inner.max_id().await
    }

    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.hook.before(StoreCall::BindGuid)?;
        self.inner.bind_guid(guid, fingerprint).await
    }

    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        self.hook.before(StoreCall::FingerprintForGuid)?;
        self.inner.fingerprint_for_guid(guid).await
    }

    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        self.hook.before(StoreCall::Versions)?;
        self.inner.versions(subject).await
    }

    async fn versions_page(
        &self,
        subject: &Subject,
        after: Option<Version>,
        limit: usize,
    ) -> StoreResult<Vec<VersionRow>> {
        self.hook.before(StoreCall::VersionsPage { limit })?;
        self.inner.versions_page(subject, after, limit).await
    }

    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>> {
        self.hook.before(StoreCall::GetVersion)?;
        self.inner.get_version(subject, version).await
    }

    async fn create_version(&self, row: &VersionRow) -> StoreResult<()> {
        self.hook.before(StoreCall::CreateVersion)?;
        self.inner.create_version(row).await
    }

    async fn set_version_deleted(&self, subject: &Subject, version: Version, deleted: bool) -> StoreResult<()> {
        self.hook.before(StoreCall::SetVersionDeleted)?;
        self.inner.set_version_deleted(subject, version, deleted).await
    }

    async fn delete_version(&self, subject: &Subject, version: Version) -> StoreResult<()> {
        self.hook.before(StoreCall::DeleteVersion)?;
        self.inner.delete_version(subject, version).await
    }

    async fn soft_delete_versions(&self, subject: &Subject, versions: &[Version]) -> StoreResult<()> {
        self.hook.before(StoreCall::SoftDeleteVersions)?;
        self.inner.soft_delete_versions(subject, versions).await
    }

    async fn hard_delete_versions(
        &self,
        subject: &Subject,
        versions: &[Version],
        remove_subject_settings: bool,
    ) -> StoreResult<()> {
        self.hook.before(StoreCall::HardDeleteVersions)?;
        self.inner.hard_delete_versions(subject, versions, remove_subject_settings).await
    }

    async fn rows_with_id(&self, id: SchemaId) -> StoreResult<Vec<VersionRow>> {
        self.hook.before(StoreCall::RowsWithId)?;
        self.inner.rows_with_id(id).await
    }

    async fn rows_with_id_page(
        &self,
        id: SchemaId,
        after: Option<(&Subject, Version)>,
        limit: usize,
    ) -> StoreResult<Vec<VersionRow>> {
        self.hook.before(StoreCall::RowsWithIdPage { limit })?;
        self.inner.rows_with_id_page(id, after, limit).await
    }

    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>> {
        self.hook.before(StoreCall::Referrers)?;
        self.inner.referrers(subject, version).await
    }

    async fn list_subjects(
        &self,
        prefix: &str,
        filter: DeletedFilter,
        after: Option<&Subject>,
        limit: usize,
    ) -> StoreResult<Vec<Subject>> {
        self.hook.before(StoreCall::ListSubjects { limit })?;
        self.inner.list_subjects(prefix, filter, after, limit).await
    }

    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        self.hook.before(StoreCall::GetConfig)?;
        self.inner.get_config(scope).await
    }

    async fn put_config(&self, scope: &Scope, config: &ConfigRecord) -> StoreResult<()> {
        self.hook.before(StoreCall::PutConfig)?;
        self.inner.put_config(scope, config).await
    }

    async fn delete_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        self.hook.before(StoreCall::DeleteConfig)?;
        self.inner.delete_config(scope).await
    }

    async fn get_mode(&self, scope: &Scope) -> StoreResult<Option<Mode>> {
        self.hook.before(StoreCall::GetMode)?;
        self.inner.get_mode(scope).await
    }

    async fn put_mode(&self, scope: &Scope, mode: Mode) -> StoreResult<()> {
        self.hook.before(StoreCall::PutMode)?;
        self.inner.put_mode(scope, mode).await
    }

    async fn delete_mode(&self, scope: &Scope) -> StoreResult<Option<Mode>> {
        self.hook.before(StoreCall::DeleteMode)?;
        self.inner.delete_mode(scope).await
    }

    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>> {
        self.hook.before(StoreCall::LastUsed)?;
        self.inner.last_used(subject).await
    }

    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()> {
        self.hook.before(StoreCall::MarkUsed)?;
        self.inner.mark_used(subject, day).await
    }

    fn cache_stats(&self) -> Option<crate::CacheStats> {
        self.inner.cache_stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryStore;
    use crate::store::StoreError;
    use crate::testkit::{record_body, unique_subject};

    #[tokio::test]
    async fn a_refused_call_never_reaches_the_inner_store() {
        let inner: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let store = HookedStore::new(inner.clone(), |call: StoreCall| {
            if call == StoreCall::PutBody { Err(StoreError::Unavailable("refused".into())) } else { Ok(()) }
        });
        let body = record_body("hooked");
        let fingerprint = body.fingerprint();
        assert!(matches!(store.put_body(&fingerprint, &body).await, Err(StoreError::Unavailable(_))));
        assert_eq!(inner.get_body(&fingerprint).await.unwrap(), None);
        assert_eq!(store.get_body(&fingerprint).await.unwrap(), None, "other calls pass");
    }

    #[tokio::test]
    async fn the_hook_sees_each_call_and_its_page_limit() {
        #[derive(Default)]
        struct Seen(std::sync::Mutex<Vec<StoreCall>>);
        impl StoreHook for Seen {
            fn before(&self, call: StoreCall) -> StoreResult<()> {
                self.0.lock().unwrap().push(call);
                Ok(())
            }
        }
        let store = HookedStore::new(Arc::new(MemoryStore::new()), Seen::default());
        let subject = unique_subject("hooked");
        store.list_subjects("", DeletedFilter::LiveOnly, None, 7).await.unwrap();
        store.mark_used(&subject, 3).await.unwrap();
        store.soft_delete_versions(&subject, &[]).await.unwrap();
        let seen = store.hook().0.lock().unwrap().clone();
        assert_eq!(seen, [StoreCall::ListSubjects { limit: 7 }, StoreCall::MarkUsed, StoreCall::SoftDeleteVersions]);
        assert!(seen.iter().skip(1).all(|call| call.is_write()) && !seen[0].is_write());
    }
}
