//! Version rows and the items that index them, always written in one transaction with the row:
//!
//! - `SUBJECTS/<subject> {total, live}`: how many rows and live rows the subject has (listing);
//! - `ID#<id>/R#<version>#<subject>`: the row carries schema `id` (rows by id);
//! - `REF#<version>#<subject>/R#<version>#<subject>`: the row references (subject, version).
//!
//! Readers of edges resolve them with a strongly consistent BatchGetItem of the rows.

use crate::AwsStore;
use crate::commit::{Commit, RevisionStep};
use crate::errors::{AwsError, classify};
use crate::ids::fingerprint_binding_key;
use crate::items::{Item, ItemExt, attr, edge_item, edge_target, fingerprint_of, key, row_from_item, row_item};
use crate::keys::{self, PK, SK};
use crate::requests::MAX_BATCH_KEYS;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use registry_core::{
    CommitHints, Context, Fingerprint, IdRowsPage, Preconditions, SchemaId, Subject, Version, VersionRow,
};
use std::collections::BTreeSet;

/// DynamoDB's limit on items in one transaction.
const MAX_TRANSACTION_ITEMS: usize = 100;
/// How often a hard delete re-reads a row that changed under it.
const DELETE_ATTEMPTS: usize = 5;

/// What a row replacing another at its version removes in its transaction ([`AwsStore::create_row`]).
struct Replacement {
    /// The replaced row's `deleted` flag as read.
    deleted: bool,
    /// Its edges the new row does not rewrite.
    items: Vec<TransactWriteItem>,
    /// Its ID's fingerprint binding (with its guid item's `id`) when no other row carries the ID.
    orphans: Vec<Vec<TransactWriteItem>>,
}

/// Which sort keys of a partition a `Query` reads.
#[derive(Debug, Clone, Copy)]
enum SortKeys<'a> {
    /// Those starting with this prefix.
    Prefix(&'a str),
    /// Those between these two, inclusive.
    Between(&'a str, &'a str),
}

impl AwsStore {
    /// Every item of partition `pk` whose sort key starts with `prefix`, ascending, paginated.
    pub(crate) async fn query_prefix(&self, pk: String, prefix: &str) -> Result<Vec<Item>, AwsError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let (page, next) = self.query_page(&pk, SortKeys::Prefix(prefix), None, start.take()).await?;
            items.extend(page);
            match next {
                Some(next) => start = Some(next),
                None => return Ok(items),
            }
        }
    }

    /// One `Query` of the items in `pk` whose sort key is in `sort_keys`, ascending, at most
    /// `limit` of them (DynamoDB's 1 MB page otherwise), from `start`; with the key to continue
    /// from, if any.
    async fn query_page(
        &self,
        pk: &str,
        sort_keys: SortKeys<'_>,
        limit: Option<i32>,
        start: Option<Item>,
    ) -> Result<(Vec<Item>, Option<Item>), AwsError> {
        let query = self
            .dynamo
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", AttributeValue::S(pk.to_string()));
        let query = match sort_keys {
            SortKeys::Prefix(prefix) => query
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expression_attribute_values(":prefix", AttributeValue::S(prefix.to_string())),
            SortKeys::Between(from, to) => query
                .key_condition_expression("#pk = :pk AND #sk BETWEEN :from AND :to")
                .expression_attribute_values(":from", AttributeValue::S(from.to_string()))
                .expression_attribute_values(":to", AttributeValue::S(to.to_string())),
        };
        let output =
            query.set_limit(limit).set_exclusive_start_key(start).send().await.map_err(|e| classify("Query", e))?;
        let next = output.last_evaluated_key.filter(|last| !last.is_empty());
        Ok((output.items.unwrap_or_default(), next))
    }

    pub(crate) async fn read_versions(&self, subject: &Subject) -> Result<Vec<VersionRow>, AwsError> {
        let items = self.query_prefix(keys::subject_pk(subject), keys::VERSION_SK_PREFIX).await?;
        items.iter().map(row_from_item).collect()
    }

    /// Up to `limit` rows of `subject` with versions above `after`, ascending: one `Query` on the
    /// version range (more only when DynamoDB's 1 MB page ends first).
    pub(crate) async fn read_versions_page(
        &self,
        subject: &Subject,
        after: Option<Version>,
        limit: usize,
    ) -> Result<Vec<VersionRow>, AwsError> {
        let first = match after {
            None => Version(1),
            Some(Version(after)) => match after.checked_add(1) {
                Some(next) => Version(next.max(1)),
                None => return Ok(Vec::new()),
            },
        };
        let (pk, from, to) = (keys::subject_pk(subject), keys::version_sk(first), keys::version_sk(Version(i32::MAX)));
        let mut rows = Vec::new();
        let mut start: Option<Item> = None;
        while rows.len() < limit {
            let wanted = i32::try_from(limit - rows.len()).unwrap_or(i32::MAX);
            let (items, next) = self.query_page(&pk, SortKeys::Between(&from, &to), Some(wanted), start.take()).await?;
            for item in &items {
                rows.push(row_from_item(item)?);
            }
            match next {
                Some(next) => start = Some(next),
                None => break,
            }
        }
        rows.truncate(limit);
        Ok(rows)
    }

    pub(crate) async fn read_version(
        &self,
        subject: &Subject,
        version: Version,
    ) -> Result<Option<VersionRow>, AwsError> {
        let item = self.get_item("GetItem(version)", key(keys::subject_pk(subject), keys::version_sk(version))).await?;
        item.as_ref().map(row_from_item).transpose()
    }

    /// The rows the edges in partition `pk` point at (edges whose row is gone are skipped).
    pub(crate) async fn rows_by_edges(&self, pk: String) -> Result<Vec<VersionRow>, AwsError> {
        let edges = self.query_prefix(pk, keys::EDGE_SK_PREFIX).await?;
        self.rows_at_edges(&edges).await
    }

    /// Up to `limit` rows carrying `id` whose subject starts with `prefix`, after `after`, sorted
    /// by (subject, version): edges sort that way (see `keys::edge_sk`), so each `Query` reads the
    /// next edges in order, from max(`prefix`, `after`) on, and their rows are fetched by
    /// `BatchGetItem` and sorted within the page. The first edge past the prefix's run ends the read.
    pub(crate) async fn rows_for_id_page(
        &self,
        context: &Context,
        page: IdRowsPage<'_>,
    ) -> Result<Vec<VersionRow>, AwsError> {
        let IdRowsPage { id, prefix, after, limit } = page;
        let pk = keys::id_pk(context, id);
        let after_key = after.map(|(subject, version)| keys::edge_sk(subject, version));
        let run_start = format!("{}{prefix}", keys::EDGE_SK_PREFIX);
        let from = after_key.clone().filter(|after| *after > run_start).unwrap_or(run_start);
        let mut rows = Vec::new();
        let mut start: Option<Item> = None;
        while rows.len() < limit {
            // One more than needed: the first edge may be `after` itself (BETWEEN is inclusive).
            let wanted = i32::try_from(limit - rows.len() + 1).unwrap_or(i32::MAX).min(MAX_BATCH_KEYS as i32);
            let range = SortKeys::Between(&from, keys::EDGES_END);
            let (items, next) = self.query_page(&pk, range, Some(wanted), start.take()).await?;
            let mut edges: Vec<Item> = Vec::with_capacity(items.len());
            let mut past_the_run = false;
            for edge in items {
                if after_key.is_some() && edge.get(SK).and_then(|sk| sk.as_s().ok()) == after_key.as_ref() {
                    continue;
                }
                if !edge_target(&edge)?.0.as_str().starts_with(prefix) {
                    past_the_run = true;
                    break;
                }
                edges.push(edge);
            }
            let mut page = self.rows_at_edges(&edges).await?;
            page.retain(|row| row.id == id);
            page.sort_by(|a, b| (&a.subject, a.version).cmp(&(&b.subject, b.version)));
            rows.extend(page);
            match next {
                Some(next) if !past_the_run => start = Some(next),
                _ => break,
            }
        }
        rows.truncate(limit);
        Ok(rows)
    }

    /// The fingerprint bound to `id` if an edge says a row carries it: one `Query` of the ID's
    /// partition from its binding item `FP` on, at most two items (the binding sorts before every
    /// `R#` edge, and edges are written and removed in the same transaction as their rows).
    pub(crate) async fn read_carried_fingerprint(
        &self,
        context: &Context,
        id: SchemaId,
    ) -> Result<Option<Fingerprint>, AwsError> {
        let range = SortKeys::Between(keys::ID_BINDING_SK, keys::EDGES_END);
        let (items, _) = self.query_page(&keys::id_pk(context, id), range, Some(2), None).await?;
        let sort_key = |item: &Item| item.get(SK).and_then(|sk| sk.as_s().ok()).cloned().unwrap_or_default();
        let [binding, edge] = items.as_slice() else { return Ok(None) };
        if sort_key(binding) != keys::ID_BINDING_SK || !sort_key(edge).starts_with(keys::EDGE_SK_PREFIX) {
            return Ok(None);
        }
        Ok(Some(fingerprint_of(binding)?))
    }

    /// Whether some row of `context` carries `id`: one `Query` of the ID's partition for its first
    /// edge (edges are written and removed in the same transaction as their rows).
    pub(crate) async fn id_is_carried(&self, context: &Context, id: SchemaId) -> Result<bool, AwsError> {
        let range = SortKeys::Between(keys::EDGE_SK_PREFIX, keys::EDGES_END);
        let (items, _) = self.query_page(&keys::id_pk(context, id), range, Some(1), None).await?;
        Ok(!items.is_empty())
    }

    /// The rows `edges` point at, by `BatchGetItem` (edges whose row is gone are skipped).
    async fn rows_at_edges(&self, edges: &[Item]) -> Result<Vec<VersionRow>, AwsError> {
        let mut row_keys: Vec<Item> = Vec::with_capacity(edges.len());
        for edge in edges {
            let (subject, version) = edge_target(edge)?;
            row_keys.push(key(keys::subject_pk(&subject), keys::version_sk(version)));
        }
        let mut rows = Vec::with_capacity(row_keys.len());
        for chunk in row_keys.chunks(MAX_BATCH_KEYS) {
            for item in self.batch_get("BatchGetItem", chunk.to_vec()).await? {
                rows.push(row_from_item(&item)?);
            }
        }
        Ok(rows)
    }

    /// One transaction: the row (create-if-absent), the subject's counts and revision (conditioned
    /// on the revision read), the rows-by-ID and referrer edges, and the precondition items.
    /// With [`Preconditions::replaces`] (IMPORT over a taken version number) the same transaction
    /// removes the replaced row's index items and, when no other row of the context carries its
    /// ID, its fingerprint binding ([`AwsStore::replacement`]), so a failed import removes nothing.
    pub(crate) async fn create_row(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
    ) -> Result<(), AwsError> {
        let replaced = match preconditions.replaces.as_ref() {
            Some(old) if (&old.subject, old.version) == (&row.subject, row.version) => {
                Some(self.replacement(old, row, preconditions).await?)
            }
            _ => None,
        };
        let items = self.row_items_replacing(row, preconditions, hints, Vec::new(), replaced)?;
        self.transact("TransactWriteItems(create_version)", items).await
    }

    /// What replacing `old` by `new` (same subject and version) removes besides the row itself:
    /// the old row's edges the new one does not rewrite, and the fingerprint binding of its ID when
    /// no other row of the context carries it (read as a hard delete reads it: the binding's
    /// `uses` before the carriers, so a registration reusing the ID meanwhile fails the write).
    async fn replacement(
        &self,
        old: &VersionRow,
        new: &VersionRow,
        preconditions: &Preconditions,
    ) -> Result<Replacement, AwsError> {
        let context = old.subject.context();
        let mut items = Vec::new();
        if old.id != new.id {
            items.push(self.delete_edge(keys::id_pk(&context, old.id), old)?);
        }
        let kept: BTreeSet<(&str, i32)> = new.references.iter().map(|r| (r.subject.as_str(), r.version)).collect();
        let dropped: BTreeSet<(&str, i32)> = old
            .references
            .iter()
            .map(|r| (r.subject.as_str(), r.version))
            .filter(|reference| !kept.contains(reference))
            .collect();
        for (subject, version) in dropped {
            items.push(self.delete_edge(keys::referenced_pk(subject, version), old)?);
        }
        let mut orphans = Vec::new();
        // The binding a new row's ID was read from carries that write's own condition.
        let guarded = preconditions.binding.as_ref().is_some_and(|(fingerprint, _)| *fingerprint == old.fingerprint);
        if old.id != new.id && !guarded {
            for orphan in self.orphaned_bindings(&old.subject, std::slice::from_ref(old)).await? {
                orphans.push(self.orphan_removal(&context, orphan)?);
            }
        }
        Ok(Replacement { deleted: old.deleted, items, orphans })
    }

    /// `lead` followed by the items of [`AwsStore::create_row`]'s transaction; `Limit` when they
    /// are more than one transaction holds. The revision step keeps the subject's records when
    /// the decision read every row at the revision the write is conditioned on and the new live
    /// row is the only one of its fingerprint (its record is written with it); else it changes them.
    pub(crate) fn row_items(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
        lead: Vec<TransactWriteItem>,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        self.row_items_replacing(row, preconditions, hints, lead, None)
    }

    /// [`AwsStore::row_items`], the row replacing another at its version when `replaced` says so:
    /// the row's Put is then conditioned on the old row as read (and overwrites it), the counts
    /// change by the difference, the revision step changes records, and `replaced`'s removals
    /// join the transaction.
    fn row_items_replacing(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
        lead: Vec<TransactWriteItem>,
        replaced: Option<Replacement>,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let referenced: BTreeSet<(&str, i32)> =
            row.references.iter().map(|r| (r.subject.as_str(), r.version)).collect();
        let live = if row.deleted { 0 } else { 1 };
        let keeping =
            preconditions.revision.is_some() && hints.sole_live_fingerprint && !row.deleted && replaced.is_none();
        let step = if keeping { RevisionStep::Keeping } else { RevisionStep::Changing };
        let put = match &replaced {
            Some(replaced) => self.put_over(row, replaced.deleted)?,
            None => self.put_if_absent(row_item(row)?)?,
        };
        let mut items = vec![put, self.put_edge(keys::id_pk(&row.subject.context(), row.id), row)?];
        for (subject, version) in &referenced {
            items.push(self.put_edge(keys::referenced_pk(subject, *version), row)?);
        }
        let (total, live, orphans) = match replaced {
            Some(replaced) => {
                items.extend(replaced.items);
                (0, live - i64::from(!replaced.deleted), replaced.orphans)
            }
            None => (1, live, Vec::new()),
        };
        let raised = self.raised_items(preconditions, &lead)?;
        let op = "create_version";
        let mut commit =
            Commit::subject(self, op, &row.subject, step, preconditions).lead(lead).rows(items, total, live);
        for orphan in orphans {
            commit = commit.group(orphan);
        }
        for item in raised {
            commit = commit.write(item);
        }
        if keeping {
            commit = commit.record(row);
        }
        commit.transaction(|count| {
            let subjects: BTreeSet<&str> = referenced.iter().map(|(subject, _)| *subject).collect();
            format!(
                "Schema references {} versions of {} subjects; registering it needs {count} items in one \
                 DynamoDB transaction, above its limit of {MAX_TRANSACTION_ITEMS} (each referenced version \
                 costs an edge and a liveness check, each referenced subject a revision update)",
                referenced.len(),
                subjects.len(),
            )
        })
    }

    /// The items of [`Preconditions::raises`]: each raised subject's revision `+1` (unconditioned:
    /// the pseudo-subject of a named context, whose revision a context-level decision read), and
    /// the listing of its context, which a delete may have unlisted meanwhile (unless `lead`, an
    /// allocation, sets the counter already: one transaction takes one action per item).
    fn raised_items(
        &self,
        preconditions: &Preconditions,
        lead: &[TransactWriteItem],
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let mut items = Vec::new();
        for raised in &preconditions.raises {
            let raise = self
                .update_of(key(keys::SUBJECTS_PK, raised.as_str()))
                .update_expression("ADD #rev :one")
                .expression_attribute_names("#rev", crate::conditions::REVISION)
                .expression_attribute_values(":one", AttributeValue::N("1".to_string()));
            items.push(transact_item("Update(raised subject)", Part::Update(raise))?);
            let context = raised.context();
            let counter = key(keys::COUNTER_PK, keys::counter_sk(&context));
            let counter_in_lead = lead.iter().any(|item| item.update().is_some_and(|update| *update.key() == counter));
            if context.is_default() || counter_in_lead {
                continue;
            }
            let listing = self
                .update_of(counter)
                .update_expression("SET #listed = :listed")
                .expression_attribute_names("#listed", attr::LISTED)
                .expression_attribute_values(":listed", AttributeValue::Bool(true));
            items.push(transact_item("Update(counter listing)", Part::Update(listing))?);
        }
        Ok(items)
    }

    /// Stops listing the named `context` unless a subject of it has a row (`ConditionFailed`
    /// then). The context's revision (its pseudo-subject's, which a registration making a subject
    /// of it live raises: [`Preconditions::raises`]) is read before the subjects and the unlisting
    /// is conditioned on it, so a first registration committed after the subjects were read makes
    /// it fail; one committed after the unlisting lists the context again itself. A context that
    /// never took an ID has nothing to unlist.
    pub(crate) async fn unlist_if_empty(&self, context: &Context) -> Result<(), AwsError> {
        if context.is_default() {
            return Ok(());
        }
        let pseudo = context.subject_prefix();
        let index = self.get_item("GetItem(subject index)", key(keys::SUBJECTS_PK, pseudo.as_str())).await?;
        let revision = match &index {
            Some(item) => item.optional_number::<u64>(crate::conditions::REVISION)?.unwrap_or(0),
            None => 0,
        };
        let counter = key(keys::COUNTER_PK, keys::counter_sk(context));
        if self.get_item("GetItem(counter)", counter.clone()).await?.is_none() {
            return Ok(());
        }
        let left = self.subjects_page(&pseudo, registry_core::DeletedFilter::IncludeDeleted, None, 1).await?;
        if let Some(subject) = left.first() {
            let detail = format!("{subject} of {context} has versions");
            return Err(AwsError::ConditionFailed { op: "unlist_context", detail });
        }
        let unlisting = self
            .update_of(counter)
            .update_expression("REMOVE #listed")
            .expression_attribute_names("#listed", attr::LISTED);
        let unlisting = transact_item("unlist_context", Part::Update(unlisting))?;
        let scope = registry_core::Scope::of_context(context);
        let decided = Preconditions { revision: Some(registry_core::Revision(revision)), ..Preconditions::default() };
        let op = "TransactWriteItems(unlist_context)";
        Commit::at_scope(self, op, &scope, &decided).write(unlisting).commit().await
    }

    /// The update setting the `deleted` flag of `subject`'s row at `version` to `deleted`,
    /// conditioned on the row existing with the other flag; `op` names the store operation in errors.
    pub(crate) fn deleted_flag(
        &self,
        op: &'static str,
        subject: &Subject,
        version: Version,
        deleted: bool,
    ) -> Result<TransactWriteItem, AwsError> {
        let flag = self
            .update_of(key(keys::subject_pk(subject), keys::version_sk(version)))
            .update_expression("SET #deleted = :to")
            .condition_expression("attribute_exists(#pk) AND #deleted = :from")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#deleted", attr::DELETED)
            .expression_attribute_values(":to", AttributeValue::Bool(deleted))
            .expression_attribute_values(":from", AttributeValue::Bool(!deleted));
        transact_item(op, Part::Update(flag))
    }

    /// The Put of `row` over the row at its version, conditioned on that row existing with the
    /// `deleted` flag it was read with (the revision condition says it is otherwise unchanged).
    fn put_over(&self, row: &VersionRow, deleted: bool) -> Result<TransactWriteItem, AwsError> {
        let put = self
            .put_of(row_item(row)?)
            .condition_expression("attribute_exists(#pk) AND #deleted = :seen")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#deleted", attr::DELETED)
            .expression_attribute_values(":seen", AttributeValue::Bool(deleted));
        transact_item("create_version", Part::Put(put))
    }

    pub(crate) async fn set_deleted(&self, subject: &Subject, version: Version, deleted: bool) -> Result<(), AwsError> {
        let item = self.deleted_flag("set_version_deleted", subject, version, deleted)?;
        let nothing = Preconditions::default();
        let op = "TransactWriteItems(set_version_deleted)";
        let live = if deleted { -1 } else { 1 };
        Commit::subject(self, op, subject, RevisionStep::Changing, &nothing).rows(vec![item], 0, live).commit().await
    }

    /// Removes the row with its index items, conditioned on the row being as read, so the
    /// subject counts stay exact under concurrent soft deletes. The row may be its ID's last
    /// carrier, so the guid item its fingerprint binding names loses its `id` in the same
    /// transaction (see `assign`; when other rows still carry the ID, `GET /schemas/guids` only
    /// takes the longer way).
    pub(crate) async fn remove_row(&self, subject: &Subject, version: Version) -> Result<(), AwsError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let Some(row) = self.read_version(subject, version).await? else {
                return Ok(());
            };
            let live = if row.deleted { 0 } else { -1 };
            let mut items = self.row_removal(subject, &row, "delete_version")?;
            let context = subject.context();
            let binding_key = fingerprint_binding_key(&context, &row.fingerprint);
            if let Some(binding) = self.get_item("GetItem(fingerprint)", binding_key).await? {
                items.extend(self.guid_id_removal(&context, &binding)?);
            }
            let (nothing, op) = (Preconditions::default(), "TransactWriteItems(delete_version)");
            let commit = Commit::subject(self, op, subject, RevisionStep::Changing, &nothing).rows(items, -1, live);
            match commit.commit().await {
                Ok(_) => return Ok(()),
                Err(AwsError::ConditionFailed { .. }) if attempt < DELETE_ATTEMPTS => continue,
                Err(other) => return Err(other),
            }
        }
    }

    /// The row delete (conditioned on the row being as read) and its edge deletes; `op` names the
    /// store operation in errors.
    pub(crate) fn row_removal(
        &self,
        subject: &Subject,
        row: &VersionRow,
        op: &'static str,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let row_delete = self
            .delete_of(key(keys::subject_pk(subject), keys::version_sk(row.version)))
            .condition_expression("attribute_exists(#pk) AND #deleted = :seen")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#deleted", attr::DELETED)
            .expression_attribute_values(":seen", AttributeValue::Bool(row.deleted));
        let id_edge = self.delete_edge(keys::id_pk(&subject.context(), row.id), row)?;
        let mut items = vec![transact_item(op, Part::Delete(row_delete))?, id_edge];
        let referenced: BTreeSet<(&str, i32)> =
            row.references.iter().map(|r| (r.subject.as_str(), r.version)).collect();
        for (ref_subject, ref_version) in referenced {
            items.push(self.delete_edge(keys::referenced_pk(ref_subject, ref_version), row)?);
        }
        Ok(items)
    }

    pub(crate) async fn rows_referencing(
        &self,
        subject: &Subject,
        version: Version,
    ) -> Result<Vec<VersionRow>, AwsError> {
        let mut rows = self.rows_by_edges(keys::referenced_pk(subject.as_str(), version.0)).await?;
        rows.sort_by(|a, b| (a.id, &a.subject, a.version).cmp(&(b.id, &b.subject, b.version)));
        Ok(rows)
    }

    fn put_edge(&self, pk: String, row: &VersionRow) -> Result<TransactWriteItem, AwsError> {
        transact_item("edge", Part::Put(self.put_of(edge_item(pk, &row.subject, row.version))))
    }

    pub(crate) fn delete_edge(&self, pk: String, row: &VersionRow) -> Result<TransactWriteItem, AwsError> {
        transact_item("edge", Part::Delete(self.delete_of(key(pk, keys::edge_sk(&row.subject, row.version)))))
    }
}
