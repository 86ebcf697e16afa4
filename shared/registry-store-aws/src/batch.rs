//! Deleting several versions of one subject in one TransactWriteItems (all or nothing).
//!
//! Bound: a transaction holds at most 100 items. A soft delete costs one item per version plus
//! one for the subject counts, so up to 99 versions are atomic. A hard delete costs, per version,
//! the row, its rows-by-id edge and one edge per referenced version, plus the counts and the two
//! settings items; above 100 items the delete is split into several transactions, each atomic,
//! with the settings removed in the last one.

use crate::AwsStore;
use crate::errors::{AwsError, classify_transaction};
use crate::ids::build_error;
use crate::items::{attr, key};
use crate::keys::{self, PK};
use aws_sdk_dynamodb::types::{AttributeValue, Delete, TransactWriteItem, Update};
use registry_core::{Scope, Subject, Version, VersionRow};
use std::collections::BTreeSet;

/// DynamoDB's limit on items in one transaction.
const MAX_ITEMS: usize = 100;
/// How often a hard delete re-reads rows that changed under it.
const ATTEMPTS: usize = 5;

impl AwsStore {
    pub(crate) async fn soft_delete_all(&self, subject: &Subject, versions: &[Version]) -> Result<(), AwsError> {
        let versions: Vec<Version> = versions.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
        for chunk in versions.chunks(MAX_ITEMS - 1) {
            let mut items = Vec::with_capacity(chunk.len() + 1);
            for version in chunk {
                let flag = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(key(keys::subject_pk(subject), keys::version_sk(*version))))
                    .update_expression("SET #deleted = :to")
                    .condition_expression("attribute_exists(#pk) AND #deleted = :from")
                    .expression_attribute_names("#pk", PK)
                    .expression_attribute_names("#deleted", attr::DELETED)
                    .expression_attribute_values(":to", AttributeValue::Bool(true))
                    .expression_attribute_values(":from", AttributeValue::Bool(false))
                    .build()
                    .map_err(|e| build_error("soft_delete_versions", e))?;
                items.push(TransactWriteItem::builder().update(flag).build());
            }
            let live = -i64::try_from(chunk.len()).unwrap_or(i64::MAX);
            items.push(TransactWriteItem::builder().update(self.count_update(subject, 0, live)?).build());
            self.dynamo
                .transact_write_items()
                .set_transact_items(Some(items))
                .send()
                .await
                .map_err(|e| classify_transaction("TransactWriteItems(soft_delete_versions)", e).0)?;
        }
        Ok(())
    }

    pub(crate) async fn hard_delete_all(
        &self,
        subject: &Subject,
        versions: &[Version],
        remove_settings: bool,
    ) -> Result<(), AwsError> {
        let wanted: BTreeSet<Version> = versions.iter().copied().collect();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let rows: Vec<VersionRow> =
                self.read_versions(subject).await?.into_iter().filter(|r| wanted.contains(&r.version)).collect();
            match self.hard_delete_rows(subject, &rows, remove_settings).await {
                Err(AwsError::ConditionFailed { .. }) if attempt < ATTEMPTS => continue,
                other => return other,
            }
        }
    }

    async fn hard_delete_rows(
        &self,
        subject: &Subject,
        rows: &[VersionRow],
        remove_settings: bool,
    ) -> Result<(), AwsError> {
        let mut transactions: Vec<Vec<TransactWriteItem>> = Vec::new();
        let mut current: Vec<TransactWriteItem> = Vec::new();
        let (mut total, mut live) = (0i64, 0i64);
        for row in rows {
            let items = self.row_removal(subject, row)?;
            if current.len() + items.len() + 1 > MAX_ITEMS && !current.is_empty() {
                current.push(TransactWriteItem::builder().update(self.count_update(subject, total, live)?).build());
                transactions.push(std::mem::take(&mut current));
                (total, live) = (0, 0);
            }
            current.extend(items);
            total -= 1;
            live -= i64::from(!row.deleted);
        }
        let settings = if remove_settings { 2 } else { 0 };
        if current.len() + 1 + settings > MAX_ITEMS {
            current.push(TransactWriteItem::builder().update(self.count_update(subject, total, live)?).build());
            transactions.push(std::mem::take(&mut current));
            (total, live) = (0, 0);
        }
        if total != 0 {
            current.push(TransactWriteItem::builder().update(self.count_update(subject, total, live)?).build());
        }
        if remove_settings {
            let scope = Scope::Subject(subject.clone());
            for kind in ["CONFIG", "MODE"] {
                let (pk, sk) = keys::scoped(kind, &scope);
                let delete = Delete::builder()
                    .table_name(&self.table)
                    .set_key(Some(key(pk, sk)))
                    .build()
                    .map_err(|e| build_error("hard_delete_versions", e))?;
                current.push(TransactWriteItem::builder().delete(delete).build());
            }
        }
        if !current.is_empty() {
            transactions.push(current);
        }
        for items in transactions {
            self.dynamo
                .transact_write_items()
                .set_transact_items(Some(items))
                .send()
                .await
                .map_err(|e| classify_transaction("TransactWriteItems(hard_delete_versions)", e).0)?;
        }
        Ok(())
    }

    /// The row delete (conditioned on the row being as read) and its edge deletes.
    fn row_removal(&self, subject: &Subject, row: &VersionRow) -> Result<Vec<TransactWriteItem>, AwsError> {
        let row_delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(keys::subject_pk(subject), keys::version_sk(row.version))))
            .condition_expression("attribute_exists(#pk) AND #deleted = :seen")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#deleted", attr::DELETED)
            .expression_attribute_values(":seen", AttributeValue::Bool(row.deleted))
            .build()
            .map_err(|e| build_error("hard_delete_versions", e))?;
        let mut items =
            vec![TransactWriteItem::builder().delete(row_delete).build(), self.delete_edge(keys::id_pk(row.id), row)?];
        let referenced: BTreeSet<(&str, i32)> =
            row.references.iter().map(|r| (r.subject.as_str(), r.version)).collect();
        for (ref_subject, ref_version) in referenced {
            items.push(self.delete_edge(keys::referenced_pk(ref_subject, ref_version), row)?);
        }
        Ok(items)
    }
}
