//! [`Commit`]: every TransactWriteItems the store sends is built here, so the rules of a subject
//! write (docs/dynamodb.md, "Rules every subject transaction keeps") hold by construction:
//!
//! - a subject commit always carries the update (or check) of the subject's revision `rev` on
//!   `SUBJECTS/<subject>`, conditioned on the revision its decision read, with the step its caller
//!   chose explicitly ([`RevisionStep`]), and with the row count changes of what it writes;
//! - it always carries every guard of its [`Preconditions`]: the settings items read (except one it
//!   writes, which carries its own condition), the referenced rows (and the keeping bump of their
//!   subjects' revisions), the use stamps of the bindings its row's ID was read from;
//! - it never deletes a subject index item (nothing here can);
//! - above DynamoDB's 100 items it is split into several transactions when its caller allows it
//!   ([`Commit::commit`]), else refused ([`Commit::transaction`], `Limit`): the first carries the
//!   guards (the commit point), each conditions the revision on the one before left (`r + step`),
//!   and a group of items that must share a transaction stays in one.
//!
//! Writes that touch no subject (an allocation, a rebind, a DEK under a live KEK) are commits too
//! ([`Commit::unsubjected`]), so one place sends every transaction and the interception test
//! (`tests/writes.rs`) sees them all through one shape.

use crate::AwsStore;
use crate::errors::AwsError;
use crate::ids::build_error;
use crate::live_versions::KEEPING_STEP;
use aws_sdk_dynamodb::types::TransactWriteItem;
use registry_core::{Preconditions, Revision, Scope, SettingKind, SettingSeen, Subject, VersionRow};
use std::borrow::Cow;

/// DynamoDB's limit on items in one transaction.
pub(crate) const MAX_ITEMS: usize = 100;

/// How a subject commit changes the subject's revision `rev` (see `live_versions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RevisionStep {
    /// Raised by 1: the write may make a record of the subject's live versions false (it changes
    /// rows without having read them all at the revision it is conditioned on).
    Changing,
    /// Raised by 2^32: every record of the subject stays true (its low 32 bits do not move).
    Keeping,
    /// Checked, not raised: the write changes no row of the subject but decided on them.
    Unchanged,
}

impl RevisionStep {
    /// What the step adds to `rev`.
    pub(crate) fn amount(self) -> u64 {
        match self {
            RevisionStep::Changing => 1,
            RevisionStep::Keeping => KEEPING_STEP,
            RevisionStep::Unchanged => 0,
        }
    }
}

/// Items that must share a transaction, with the subject's row count changes they make.
struct Group {
    items: Vec<TransactWriteItem>,
    total: i64,
    live: i64,
}

/// Whose revision a commit moves.
enum Target<'a> {
    /// A subject's (or a context's pseudo-subject's, for a settings write at it).
    Subject { subject: &'a Subject, step: RevisionStep },
    /// None: the global scope's settings, or items of no subject.
    Nobody,
}

/// One write, as one transaction or a chain of them (see the module docs).
pub(crate) struct Commit<'a> {
    store: &'a AwsStore,
    op: &'static str,
    target: Target<'a>,
    preconditions: Cow<'a, Preconditions>,
    /// Items that come first, in order (an allocation's, whose cancellation reasons are read by
    /// position).
    lead: Vec<TransactWriteItem>,
    groups: Vec<Group>,
    /// The live-version record written with the revision condition (a keeping or unchanged step).
    record: Option<&'a VersionRow>,
    /// Settings items this commit writes: their checks are left out (the write carries them).
    written_settings: Vec<(SettingKind, Scope)>,
}

impl<'a> Commit<'a> {
    /// A write of `subject`'s items, conditioned on `preconditions` (the revision and every guard
    /// they hold), raising its revision by `step`. `op` names the transaction in errors.
    pub(crate) fn subject(
        store: &'a AwsStore,
        op: &'static str,
        subject: &'a Subject,
        step: RevisionStep,
        preconditions: &'a Preconditions,
    ) -> Commit<'a> {
        Commit::new(store, op, Target::Subject { subject, step }, Cow::Borrowed(preconditions))
    }

    /// A write at `scope` changing no row: a subject's (or a context's) revision is checked, the
    /// global scope has none.
    pub(crate) fn at_scope(
        store: &'a AwsStore,
        op: &'static str,
        scope: &'a Scope,
        preconditions: &'a Preconditions,
    ) -> Commit<'a> {
        let target = match scope {
            Scope::Subject(subject) => Target::Subject { subject, step: RevisionStep::Unchanged },
            Scope::Global => Target::Nobody,
        };
        Commit::new(store, op, target, Cow::Borrowed(preconditions))
    }

    /// A write of items of no subject (bindings, the counter, key records): no revision, no guard
    /// but those its items carry.
    pub(crate) fn unsubjected(store: &'a AwsStore, op: &'static str) -> Commit<'a> {
        Commit::new(store, op, Target::Nobody, Cow::Owned(Preconditions::default()))
    }

    fn new(store: &'a AwsStore, op: &'static str, target: Target<'a>, preconditions: Cow<'a, Preconditions>) -> Self {
        Commit {
            store,
            op,
            target,
            preconditions,
            lead: Vec::new(),
            groups: Vec::new(),
            record: None,
            written_settings: Vec::new(),
        }
    }

    /// `items` first in the (single) transaction, in this order.
    pub(crate) fn lead(mut self, items: impl IntoIterator<Item = TransactWriteItem>) -> Self {
        self.lead.extend(items);
        self
    }

    /// One item.
    pub(crate) fn write(self, item: TransactWriteItem) -> Self {
        self.group(vec![item])
    }

    /// Items that must share a transaction.
    pub(crate) fn group(self, items: Vec<TransactWriteItem>) -> Self {
        self.rows(items, 0, 0)
    }

    /// Items that must share a transaction and change the subject's row counts by `total` rows
    /// and `live` live rows.
    pub(crate) fn rows(mut self, items: Vec<TransactWriteItem>, total: i64, live: i64) -> Self {
        if !items.is_empty() || total != 0 || live != 0 {
            self.groups.push(Group { items, total, live });
        }
        self
    }

    /// A write of the `kind` item at `scope`, which carries its own condition (the check of that
    /// item is left out: one transaction cannot hold two actions on one item).
    pub(crate) fn setting(mut self, kind: SettingKind, scope: &Scope, item: TransactWriteItem) -> Self {
        self.written_settings.push((kind, scope.clone()));
        self.write(item)
    }

    /// The subject's record of `row` as its live version of its fingerprint, in the epoch of the
    /// revision the commit is conditioned on (a keeping or unchanged step only).
    pub(crate) fn record(mut self, row: &'a VersionRow) -> Self {
        self.record = Some(row);
        self
    }

    /// The commit as one transaction; `Limit` (with `too_many`'s text, given the item count) when
    /// it needs more than DynamoDB's 100 items.
    pub(crate) fn transaction(
        self,
        too_many: impl FnOnce(usize) -> String,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let op = self.op;
        // A multi-region store's fence takes one item of each transaction (see `fence`).
        let capacity = MAX_ITEMS - self.store.fence_items();
        let mut transactions = self.transactions(usize::MAX)?;
        match transactions.len() {
            0 => Ok(Vec::new()),
            1 if transactions[0].len() <= capacity => Ok(transactions.remove(0)),
            _ => {
                let items = transactions.iter().map(Vec::len).sum();
                Err(AwsError::Limit { op, detail: too_many(items) })
            }
        }
    }

    /// Sends the commit: one transaction, or a chain of them when it needs more than 100 items.
    /// Nothing is sent when it writes nothing.
    pub(crate) async fn commit(self) -> Result<(), AwsError> {
        let (store, op) = (self.store, self.op);
        for items in self.transactions(MAX_ITEMS - store.fence_items())? {
            store.transact(op, items).await?;
        }
        Ok(())
    }

    /// The transactions, each of at most `capacity` items (a group larger than that is `Limit`).
    fn transactions(mut self, capacity: usize) -> Result<Vec<Vec<TransactWriteItem>>, AwsError> {
        if self.lead.is_empty() && self.groups.is_empty() && self.record.is_none() {
            return Ok(Vec::new());
        }
        let guards = self.guards()?;
        let revised = matches!(self.target, Target::Subject { .. });
        let mut record = match self.record {
            Some(row) => Some(self.record_put(row)?),
            None => None,
        };
        // Each chunk: (items, total, live); the first holds the lead, the record and the guards.
        let mut chunks: Vec<(Vec<TransactWriteItem>, i64, i64)> = Vec::new();
        let mut current: Vec<TransactWriteItem> = std::mem::take(&mut self.lead);
        current.extend(record.take());
        let mut reserved = guards.len() + usize::from(revised);
        let (mut total, mut live, mut holds_group) = (0i64, 0i64, false);
        for group in std::mem::take(&mut self.groups) {
            if current.len() + group.items.len() + reserved > capacity && holds_group {
                chunks.push((std::mem::take(&mut current), total, live));
                (total, live) = (0, 0);
                reserved = usize::from(revised);
            }
            if current.len() + group.items.len() + reserved > capacity {
                let detail = format!("{} items that must share one transaction, above its limit", group.items.len());
                return Err(AwsError::Limit { op: self.op, detail });
            }
            current.extend(group.items);
            total += group.total;
            live += group.live;
            holds_group = true;
        }
        chunks.push((current, total, live));
        let mut guards = Some(guards);
        let mut transactions = Vec::with_capacity(chunks.len());
        for (position, (mut items, total, live)) in chunks.into_iter().enumerate() {
            if let Target::Subject { subject, step } = self.target {
                items.extend(self.revision_item(subject, step, position, total, live)?);
            }
            items.extend(guards.take().unwrap_or_default());
            transactions.push(items);
        }
        Ok(transactions)
    }

    /// The update (or check) of the subject's revision in the `position`th transaction of the
    /// chain: conditioned on the revision read plus the steps of the transactions before. An
    /// unchanged revision that was not read has nothing to check.
    fn revision_item(
        &self,
        subject: &Subject,
        step: RevisionStep,
        position: usize,
        total: i64,
        live: i64,
    ) -> Result<Option<TransactWriteItem>, AwsError> {
        let before = step.amount().saturating_mul(position as u64);
        let revision = self.preconditions.revision.map(|Revision(r)| Revision(r + before));
        match step {
            RevisionStep::Unchanged => {
                if total != 0 || live != 0 {
                    return Err(build_error(self.op, "a write that changes rows must raise the revision"));
                }
                revision.map(|revision| self.store.revision_check(subject, revision)).transpose()
            }
            RevisionStep::Changing | RevisionStep::Keeping => {
                Ok(Some(self.store.subject_update_by(subject, total, live, revision, step.amount())?))
            }
        }
    }

    /// The record's Put: only under a revision condition, and only when the step keeps records.
    fn record_put(&self, row: &VersionRow) -> Result<TransactWriteItem, AwsError> {
        let keeps = matches!(
            self.target,
            Target::Subject { step: RevisionStep::Keeping | RevisionStep::Unchanged, subject } if *subject == row.subject
        );
        match self.preconditions.revision {
            Some(revision) if keeps => self.store.record_put(row, revision),
            _ => Err(build_error(self.op, "a live-version record needs a keeping step under a revision condition")),
        }
    }

    /// Every guard of the preconditions: settings checks (but of items written here), referenced
    /// rows and their subjects' bumps, binding use stamps.
    fn guards(&self) -> Result<Vec<TransactWriteItem>, AwsError> {
        let preconditions = self.preconditions.as_ref();
        let written =
            |seen: &SettingSeen| self.written_settings.iter().any(|(k, s)| *k == seen.kind && *s == seen.scope);
        let mut items = self.store.settings_checks(preconditions, written)?;
        let has_rows = !preconditions.live_rows.is_empty();
        let has_bindings = preconditions.binding.is_some() || preconditions.id_binding.is_some();
        if !has_rows && !has_bindings {
            return Ok(items);
        }
        let Target::Subject { subject, .. } = self.target else {
            return Err(build_error(self.op, "row guards without a subject"));
        };
        items.extend(self.store.referenced_items(subject, preconditions)?);
        let context = subject.context();
        if let Some((fingerprint, id)) = &preconditions.binding {
            items.push(self.store.binding_use(&context, fingerprint, *id, None)?);
        }
        if let Some((id, fingerprint)) = &preconditions.id_binding {
            items.push(self.store.id_binding_use(&context, *id, fingerprint)?);
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AwsStoreConfig;
    use aws_config::{BehaviorVersion, Region, SdkConfig};
    use aws_sdk_dynamodb::types::Put;
    use registry_core::testkit::subject;

    /// A store whose requests are only built here, never sent.
    fn store() -> AwsStore {
        let sdk =
            SdkConfig::builder().behavior_version(BehaviorVersion::latest()).region(Region::new("us-east-1")).build();
        AwsStore::with_path_style(&sdk, AwsStoreConfig { table: "t".into(), bucket: "b".into() }, true)
    }

    fn put(n: usize) -> TransactWriteItem {
        let item = crate::items::key(format!("S#s{n}"), "V#0000000001");
        TransactWriteItem::builder()
            .put(Put::builder().table_name("t").set_item(Some(item)).build().unwrap_or_else(|e| panic!("{e}")))
            .build()
    }

    fn decided(revision: u64) -> Preconditions {
        let seen = |kind| SettingSeen { kind, scope: Scope::Global, stored: None };
        Preconditions {
            revision: Some(Revision(revision)),
            settings: vec![seen(SettingKind::Config), seen(SettingKind::Mode)],
            ..Preconditions::default()
        }
    }

    /// The revision update of a transaction: (step, revision conditioned on, total, live).
    fn revision_update(items: &[TransactWriteItem]) -> (u64, Option<u64>, i64, i64) {
        let updates: Vec<_> = items
            .iter()
            .filter_map(TransactWriteItem::update)
            .filter(|u| {
                u.key()
                    .get(crate::keys::PK)
                    .and_then(|v| v.as_s().ok())
                    .is_some_and(|pk| pk == crate::keys::SUBJECTS_PK)
            })
            .collect();
        let [update] = updates.as_slice() else { panic!("one revision update per transaction: {items:?}") };
        let values = update.expression_attribute_values().cloned().unwrap_or_default();
        let number = |name: &str| values.get(name).and_then(|v| v.as_n().ok()).map(|n| n.to_string());
        let parse = |name: &str| number(name).and_then(|n| n.parse::<i64>().ok());
        let step = number(":step").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no step: {update:?}"));
        let seen = number(":seen_rev").and_then(|n| n.parse().ok());
        (step, seen, parse(":total").unwrap_or(0), parse(":live").unwrap_or(0))
    }

    fn checks(items: &[TransactWriteItem]) -> usize {
        items.iter().filter(|item| item.condition_check().is_some()).count()
    }

    #[test]
    fn a_long_write_is_a_chain_conditioned_on_the_revision_each_link_leaves_with_the_guards_first() {
        let (store, preconditions, s) = (store(), decided(7), subject("s"));
        for (step, amount) in [(RevisionStep::Changing, 1), (RevisionStep::Keeping, KEEPING_STEP)] {
            let mut commit = Commit::subject(&store, "test", &s, step, &preconditions);
            for n in 0..250 {
                commit = commit.rows(vec![put(n)], -1, 0);
            }
            let transactions = commit.transactions(MAX_ITEMS).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(transactions.len(), 3);
            let mut total = 0;
            for (position, items) in transactions.iter().enumerate() {
                assert!(items.len() <= MAX_ITEMS);
                assert_eq!(checks(items), if position == 0 { 2 } else { 0 }, "the guards go with the first");
                let (raised, seen, rows, _) = revision_update(items);
                assert_eq!((raised, seen), (amount, Some(7 + amount * position as u64)));
                total += rows;
            }
            assert_eq!(total, -250, "every row counted once");
        }
    }

    #[test]
    fn groups_stay_in_one_transaction_and_one_larger_than_a_transaction_is_refused() {
        let (store, preconditions, s) = (store(), decided(1), subject("s"));
        let mut commit = Commit::subject(&store, "test", &s, RevisionStep::Changing, &preconditions);
        for n in 0..30 {
            commit = commit.group((0..4).map(|i| put(n * 4 + i)).collect());
        }
        for items in commit.transactions(MAX_ITEMS).unwrap_or_else(|e| panic!("{e}")) {
            assert_eq!((items.len() - 1 - checks(&items)) % 4, 0, "a group split: {} items", items.len());
        }
        let huge = Commit::subject(&store, "test", &s, RevisionStep::Changing, &preconditions);
        let refused = huge.group((0..MAX_ITEMS).map(put).collect()).transactions(MAX_ITEMS);
        assert!(matches!(refused, Err(AwsError::Limit { .. })), "{refused:?}");
    }

    #[test]
    fn a_single_transaction_over_the_limit_is_refused_with_the_callers_text() {
        let (store, preconditions, s) = (store(), decided(1), subject("s"));
        let commit = Commit::subject(&store, "test", &s, RevisionStep::Changing, &preconditions);
        let refused = commit.rows((0..99).map(put).collect(), 1, 1).transaction(|n| format!("{n} items"));
        assert!(matches!(&refused, Err(AwsError::Limit { detail, .. }) if detail == "102 items"), "{refused:?}");
    }

    #[test]
    fn a_record_is_written_only_under_a_revision_condition_with_a_step_that_keeps_records() {
        let store = store();
        let s = subject("s");
        let row = VersionRow {
            subject: s.clone(),
            version: registry_core::Version(1),
            id: registry_core::SchemaId(1),
            fingerprint: registry_core::Fingerprint([1; 32]),
            deleted: false,
            references: Vec::new(),
            registered_at_ms: 0,
        };
        let decided = decided(3);
        for (step, preconditions, allowed) in [
            (RevisionStep::Keeping, &decided, true),
            (RevisionStep::Unchanged, &decided, true),
            (RevisionStep::Changing, &decided, false),
            (RevisionStep::Keeping, &Preconditions::default(), false),
        ] {
            let commit = Commit::subject(&store, "test", &s, step, preconditions).record(&row);
            assert_eq!(commit.transactions(MAX_ITEMS).is_ok(), allowed, "{step:?}");
        }
        let changed = Commit::subject(&store, "test", &s, RevisionStep::Unchanged, &decided).rows(vec![put(1)], 1, 1);
        assert!(changed.transactions(MAX_ITEMS).is_err(), "rows changed under an unchanged revision");
    }
}
