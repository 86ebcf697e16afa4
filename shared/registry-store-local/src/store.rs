//! `impl Store for LocalStore`: each trait call is one blocking SQLite transaction in `ops`.

use crate::codec::scope_key;
use crate::{LocalStore, conditions, ops};
use async_trait::async_trait;
use registry_core::{
    CommitHints, ConfigRecord, ConfiguredPage, Context, Fingerprint, Guid, HardDeletion, IdRowsPage, LayeredContext,
    Preconditions, SchemaBody, SchemaId, Scope, SettingChange, SettingWrite, SoftDeletion, Store, StoreResult, Subject,
    SubjectsPage, Version, VersionRow, VersionsPage,
};

#[async_trait]
impl Store for LocalStore {
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()> {
        let (fingerprint, body) = (*fingerprint, body.clone());
        self.write(move |conn| ops::put_body(conn, &fingerprint, &body)).await
    }

    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        let fingerprint = *fingerprint;
        self.read(move |conn| ops::get_body(conn, &fingerprint)).await
    }

    async fn id_for_fingerprint_in(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> StoreResult<Option<SchemaId>> {
        let (context, fingerprint) = (context.clone(), *fingerprint);
        self.read(move |conn| ops::id_for_fingerprint(conn, &context, &fingerprint)).await
    }

    async fn fingerprint_for_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        let context = context.clone();
        self.read(move |conn| ops::fingerprint_for_id(conn, &context, id)).await
    }

    async fn fingerprint_for_carried_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        let context = context.clone();
        self.read(move |conn| ops::fingerprint_for_carried_id(conn, &context, id)).await
    }

    async fn allocate_id_in(&self, context: &Context, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        let (context, fingerprint) = (context.clone(), *fingerprint);
        self.write(move |conn| ops::allocate_id(conn, &context, &fingerprint)).await
    }

    async fn bind_id_in(&self, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        let (context, fingerprint) = (context.clone(), *fingerprint);
        self.write(move |conn| ops::bind_id(conn, &context, id, &fingerprint)).await
    }

    async fn max_id_in(&self, context: &Context) -> StoreResult<Option<SchemaId>> {
        let context = context.clone();
        self.read(move |conn| ops::max_id(conn, &context)).await
    }

    async fn list_contexts(&self) -> StoreResult<Vec<Context>> {
        self.read_blocking(ops::list_contexts).await
    }

    async fn unlist_context(&self, context: &Context) -> StoreResult<()> {
        let context = context.clone();
        self.write(move |conn| ops::unlist_context(conn, &context)).await
    }

    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        let (guid, fingerprint) = (*guid, *fingerprint);
        self.write(move |conn| ops::bind_guid(conn, &guid, &fingerprint)).await
    }

    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        let guid = *guid;
        self.read(move |conn| ops::fingerprint_for_guid(conn, &guid)).await
    }

    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        self.versions_bounded(subject).await
    }

    async fn versions_page(&self, page: VersionsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        let (subject, after, limit) = (page.subject.clone(), page.after, page.limit);
        self.read_sized(limit, move |conn| ops::versions_page(conn, &subject, after, limit)).await
    }

    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>> {
        let subject = subject.clone();
        self.read(move |conn| ops::get_version(conn, &subject, version)).await
    }

    async fn layered_write_context(
        &self,
        scope: &Scope,
        _schemas: &[(Fingerprint, Guid)],
    ) -> StoreResult<LayeredContext> {
        let scope = scope.clone();
        self.read(move |conn| conditions::layered_write_context(conn, &scope)).await
    }

    /// No hint is used: the bindings are read in the same transaction anyway.
    async fn create_version(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        _: &CommitHints,
    ) -> StoreResult<()> {
        let (row, preconditions) = (row.clone(), preconditions.clone());
        self.write(move |conn| {
            // The row there must be the one the write replaces, as read (none without one).
            let replaces = preconditions
                .replaces
                .as_ref()
                .filter(|old| (&old.subject, old.version) == (&row.subject, row.version));
            if ops::get_version(conn, &row.subject, row.version)?.as_ref() != replaces {
                return Err(crate::LocalError::Conflict(format!("{} version {} changed", row.subject, row.version)));
            }
            conditions::check(conn, &row.subject, &preconditions)?;
            let replaced = match replaces {
                Some(_) => ops::remove_row(conn, &row.subject, row.version)?,
                None => None,
            };
            if !ops::insert_row(conn, &row)? {
                return Err(crate::LocalError::Conflict(format!("{} version {} exists", row.subject, row.version)));
            }
            if let Some((id, fingerprint)) = replaced {
                conditions::unbind_if_orphaned(conn, &row.subject.context(), id, &fingerprint)?;
            }
            for raised in &preconditions.raises {
                conditions::bump(conn, raised.as_str())?;
                ops::list_context(conn, &raised.context())?;
            }
            conditions::bump_referenced(conn, &row.subject, &preconditions)
        })
        .await
    }

    async fn soft_delete_versions(&self, deletion: SoftDeletion<'_>) -> StoreResult<()> {
        let SoftDeletion { subject, versions, preconditions } = deletion;
        let (subject, versions, preconditions) = (subject.clone(), versions.to_vec(), preconditions.clone());
        self.write(move |conn| {
            conditions::check(conn, &subject, &preconditions)?;
            for version in versions {
                ops::set_version_deleted(conn, &subject, version, true)?;
            }
            Ok(())
        })
        .await
    }

    async fn hard_delete_versions(&self, deletion: HardDeletion<'_>) -> StoreResult<()> {
        let HardDeletion { subject, versions, remove_subject_settings, preconditions } = deletion;
        let (subject, versions, preconditions) = (subject.clone(), versions.to_vec(), preconditions.clone());
        self.write(move |conn| {
            conditions::check(conn, &subject, &preconditions)?;
            let mut removed = Vec::new();
            for version in versions {
                removed.extend(ops::remove_row(conn, &subject, version)?);
            }
            let context = subject.context();
            for (id, fingerprint) in &removed {
                conditions::unbind_if_orphaned(conn, &context, *id, fingerprint)?;
            }
            if remove_subject_settings {
                ops::delete_config(conn, subject.as_str())?;
                ops::delete_mode(conn, subject.as_str())?;
            }
            Ok(())
        })
        .await
    }

    async fn rows_with_id_page_in(&self, context: &Context, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        let IdRowsPage { id, prefix, after, limit } = page;
        let (prefix, after) = (prefix.to_string(), after.map(|(subject, version)| (subject.clone(), version)));
        let context = context.clone();
        self.read_sized(limit, move |conn| ops::rows_with_id_page(conn, &context, id, &prefix, after.as_ref(), limit))
            .await
    }

    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>> {
        let subject = subject.clone();
        self.read_blocking(move |conn| ops::referrers(conn, &subject, version)).await
    }

    async fn list_subjects(&self, page: SubjectsPage<'_>) -> StoreResult<Vec<Subject>> {
        let SubjectsPage { prefix, filter, after, limit } = page;
        let (prefix, after) = (prefix.to_string(), after.cloned());
        self.read_blocking(move |conn| ops::list_subjects(conn, &prefix, filter, after.as_ref(), limit)).await
    }

    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        let scope = scope_key(scope).to_string();
        self.read(move |conn| ops::get_config(conn, &scope)).await
    }

    async fn subjects_with_config(&self, page: ConfiguredPage<'_>) -> StoreResult<Vec<Subject>> {
        let ConfiguredPage { prefix, after, limit } = page;
        let (prefix, after) = (prefix.to_string(), after.cloned());
        self.read_blocking(move |conn| ops::subjects_with_config(conn, &prefix, after.as_ref(), limit)).await
    }

    async fn write_setting(&self, write: SettingWrite<'_>) -> StoreResult<()> {
        let (scope, change, preconditions) = (write.scope.clone(), write.change.clone(), write.preconditions.clone());
        self.write(move |conn| {
            match &scope {
                Scope::Subject(subject) => conditions::check(conn, subject, &preconditions)?,
                Scope::Global => conditions::check_settings(conn, &preconditions)?,
            }
            let key = scope_key(&scope);
            match &change {
                SettingChange::Config(Some(config)) => ops::put_config(conn, key, config),
                SettingChange::Config(None) => ops::delete_config(conn, key).map(drop),
                SettingChange::Mode(Some(mode)) => ops::put_mode(conn, key, *mode),
                SettingChange::Mode(None) => ops::delete_mode(conn, key).map(drop),
            }
        })
        .await
    }

    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>> {
        let subject = subject.clone();
        self.read(move |conn| ops::last_used(conn, &subject)).await
    }

    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()> {
        let subject = subject.clone();
        self.write(move |conn| ops::mark_used(conn, &subject, day)).await
    }
}
