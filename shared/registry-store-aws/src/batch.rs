//! Deleting several versions of one subject in one TransactWriteItems (all or nothing), under
//! the write's preconditions (see `conditions.rs`).
//!
//! Bound: a transaction holds at most 100 items. A soft delete costs one item per version plus
//! the subject's index item and the settings checks (up to eight), so about 90 versions are
//! atomic. A hard delete costs, per version, the row, its rows-by-id edge and one edge per
//! referenced version, plus the index item, the settings checks or deletes and one binding delete
//! per orphaned ID; above 100 items either is split into several transactions by [`Commit`], each
//! atomic: the first carries the settings checks (the commit point), each conditions the subject's
//! revision on the one before it, and the last ones remove the settings and the orphaned bindings
//! (as many transactions as they need: a subject of 100 distinct schemas orphans 100 bindings).

use crate::AwsStore;
use crate::commit::{Commit, RevisionStep};
use crate::conditions::{USES, kind_pk, setting_condition};
use crate::errors::AwsError;
use crate::ids::fingerprint_binding_key;
use crate::items::{ItemExt, attr, key, n};
use crate::keys;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::TransactWriteItem;
use registry_core::id_rules;
use registry_core::{
    Context, Fingerprint, IdRowsPage, Preconditions, SchemaId, Scope, SettingKind, Subject, Version, VersionRow,
};
use std::collections::BTreeSet;

/// How often a hard delete without a revision condition re-reads rows that changed under it.
const ATTEMPTS: usize = 5;

/// A fingerprint binding a hard delete removes: no row keeps its ID once the doomed rows are gone.
pub(crate) struct Orphan {
    fingerprint: Fingerprint,
    id: SchemaId,
    /// Its `uses` as read before the carriers.
    uses: Option<u64>,
    /// The removal of the `id` of the guid item the binding names, if it names one.
    guid_id_removal: Option<TransactWriteItem>,
}

impl AwsStore {
    pub(crate) async fn soft_delete_all(
        &self,
        subject: &Subject,
        versions: &[Version],
        preconditions: &Preconditions,
    ) -> Result<(), AwsError> {
        let versions: BTreeSet<Version> = versions.iter().copied().collect();
        let op = "TransactWriteItems(soft_delete_versions)";
        let mut commit = Commit::subject(self, op, subject, RevisionStep::Changing, preconditions);
        for version in versions {
            let flag = self.deleted_flag("soft_delete_versions", subject, version, true)?;
            commit = commit.rows(vec![flag], 0, -1);
        }
        commit.commit().await
    }

    pub(crate) async fn hard_delete_all(
        &self,
        subject: &Subject,
        versions: &[Version],
        remove_settings: bool,
        preconditions: &Preconditions,
    ) -> Result<Vec<VersionRow>, AwsError> {
        let wanted: BTreeSet<Version> = versions.iter().copied().collect();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let rows: Vec<VersionRow> =
                self.read_versions(subject).await?.into_iter().filter(|r| wanted.contains(&r.version)).collect();
            let orphans = self.orphaned_bindings(subject, &rows).await?;
            match self.hard_delete_rows(subject, &rows, remove_settings, preconditions, orphans).await {
                // Without a revision condition nobody decided on these rows: read them again.
                Err(AwsError::ConditionFailed { .. }) if preconditions.revision.is_none() && attempt < ATTEMPTS => {
                    continue;
                }
                other => return other.map(|()| rows),
            }
        }
    }

    /// The bindings `FP#<hex>/ID` that name an ID no row keeps once `doomed` are gone, as
    /// [`id_rules::unbinds_on_removal`] decides, each with its `uses` as read. The binding is read
    /// before the ID's carriers, so a registration that commits a new carrier after the carriers
    /// were read has raised `uses` and fails the delete. One more carrier than the doomed rows of an
    /// ID is enough to know whether another row keeps it; a binding that would not be removed even
    /// without carriers spares their read.
    pub(crate) async fn orphaned_bindings(
        &self,
        subject: &Subject,
        doomed: &[VersionRow],
    ) -> Result<Vec<Orphan>, AwsError> {
        let context = &subject.context();
        let mut orphans = Vec::new();
        let mut seen: BTreeSet<SchemaId> = BTreeSet::new();
        for row in doomed.iter().filter(|row| seen.insert(row.id)) {
            let binding_key = fingerprint_binding_key(context, &row.fingerprint);
            let Some(binding) = self.get_item("GetItem(fingerprint)", binding_key).await? else { continue };
            let side = Some(SchemaId(binding.number::<i32>(attr::ID)?));
            if !id_rules::unbinds_on_removal(side, row.id, false) {
                continue;
            }
            let uses: Option<u64> = binding.optional_number(USES)?;
            let doomed_with_id = doomed.iter().filter(|d| d.id == row.id).count();
            let page = IdRowsPage { id: row.id, prefix: "", after: None, limit: doomed_with_id + 1 };
            let carriers = self.rows_for_id_page(context, page).await?;
            let kept = carriers.len() > doomed_with_id
                || carriers.iter().any(|c| &c.subject != subject || !doomed.iter().any(|d| d.version == c.version));
            if id_rules::unbinds_on_removal(side, row.id, kept) {
                let guid_id_removal = self.guid_id_removal(context, &binding)?;
                orphans.push(Orphan { fingerprint: row.fingerprint, id: row.id, uses, guid_id_removal });
            }
        }
        Ok(orphans)
    }

    async fn hard_delete_rows(
        &self,
        subject: &Subject,
        rows: &[VersionRow],
        remove_settings: bool,
        preconditions: &Preconditions,
        orphans: Vec<Orphan>,
    ) -> Result<(), AwsError> {
        let op = "TransactWriteItems(hard_delete_versions)";
        let mut commit = Commit::subject(self, op, subject, RevisionStep::Changing, preconditions);
        // Chunks of row removals, then the tail: the settings deletes, and each binding delete
        // with the removal of its guid item's `id` (which must never outlive the binding).
        for row in rows {
            let items = self.row_removal(subject, row, "hard_delete_versions")?;
            commit = commit.rows(items, -1, -i64::from(!row.deleted));
        }
        if remove_settings {
            let scope = Scope::Subject(subject.clone());
            for (kind, delete) in self.settings_deletes(subject, preconditions)? {
                commit = commit.setting(kind, &scope, delete);
            }
        }
        for orphan in orphans {
            commit = commit.group(self.orphan_removal(&subject.context(), orphan)?);
        }
        commit.commit().await
    }

    /// The delete of an orphaned binding with the removal of its guid item's `id`, which must share
    /// its transaction (the guid item's `id` never outlives the binding).
    pub(crate) fn orphan_removal(&self, context: &Context, orphan: Orphan) -> Result<Vec<TransactWriteItem>, AwsError> {
        let mut group = vec![self.binding_delete(context, &orphan.fingerprint, orphan.id, orphan.uses)?];
        group.extend(orphan.guid_id_removal);
        Ok(group)
    }

    /// Deletes of the subject's own config and mode items, each conditioned as it was read.
    fn settings_deletes(
        &self,
        subject: &Subject,
        preconditions: &Preconditions,
    ) -> Result<Vec<(SettingKind, TransactWriteItem)>, AwsError> {
        let scope = Scope::Subject(subject.clone());
        let mut items = Vec::new();
        for kind in [SettingKind::Config, SettingKind::Mode] {
            let (pk, sk) = keys::scoped(kind_pk(kind), &scope);
            let mut delete = self.delete_of(key(pk, sk));
            if let Some(seen) = preconditions.settings.iter().find(|seen| seen.kind == kind && seen.scope == scope) {
                let condition = setting_condition(seen);
                delete = delete
                    .condition_expression(condition.expression)
                    .set_expression_attribute_names(Some(condition.names))
                    .set_expression_attribute_values((!condition.values.is_empty()).then_some(condition.values));
            }
            items.push((kind, transact_item("hard_delete_versions", Part::Delete(delete))?));
        }
        Ok(items)
    }

    /// Deletes `FP#<hex>/ID[:<context>]` while it still names `id` with the `uses` read before the
    /// carriers.
    pub(crate) fn binding_delete(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
        id: SchemaId,
        uses: Option<u64>,
    ) -> Result<TransactWriteItem, AwsError> {
        let delete = self
            .delete_of(fingerprint_binding_key(context, fingerprint))
            .expression_attribute_names("#id", attr::ID)
            .expression_attribute_names("#uses", USES)
            .expression_attribute_values(":id", n(id.0));
        let delete = match uses {
            None => delete.condition_expression("#id = :id AND attribute_not_exists(#uses)"),
            Some(uses) => {
                delete.condition_expression("#id = :id AND #uses = :uses").expression_attribute_values(":uses", n(uses))
            }
        };
        transact_item("hard_delete_versions", Part::Delete(delete))
    }
}
