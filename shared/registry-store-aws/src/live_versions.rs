//! A subject's live version of a fingerprint, recorded beside its rows, so the write context's
//! BatchGetItem alone answers a re-registration ([`registry_core::BindingsSeen::live_version`]):
//! item `S#<subject>` / `FP#<hex>` with the version, its ID, its registration time and an epoch.
//!
//! Trust. Every write that changes a subject's rows raises its revision (`rev` on the index item
//! `SUBJECTS/<subject>`). A write that keeps every record of the subject true raises it by
//! [`KEEPING_STEP`] (2^32): a registration that read every row under the revision condition and
//! records its new row in the same transaction (`CommitHints::sole_live_fingerprint`), and the
//! bump a registration gives the subjects it references (their rows do not change). Every other
//! write raises it by 1: soft and hard deletes, IMPORT, the admin tools, and code written before
//! records existed. A record holds the revision modulo 2^32 at its write (its epoch) and is
//! trusted while the subject's revision modulo 2^32 is still that, so no write since could have
//! made it false; the low part never goes back (the index item is never deleted), so an untrusted
//! record stays untrusted until rewritten. The BatchGetItem reads the record and the index item
//! without one snapshot, but a record trusted against the revision read was true at one of the two
//! reads, inside the request: the answer is linearizable.
//!
//! Upgrade. Tables written before records existed have none (and small revisions): a
//! re-registration there reads the rows as before, and then records what they said (one
//! TransactWriteItems: the record, conditioned on the revision read before the rows), so the next
//! one needs no rows. Records are never deleted: a hard-deleted subject's stay, untrusted.

use crate::AwsStore;
use crate::commit::{Commit, RevisionStep};
use crate::errors::AwsError;
use crate::items::{Item, ItemExt, attr, item_at, key, n};
use crate::keys;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::TransactWriteItem;
use registry_core::{Fingerprint, Preconditions, Revision, SchemaId, Subject, Version, VersionRow};

/// How much a write that keeps the subject's records true raises its revision; other writes
/// raise it by 1, so the revision modulo this counts them.
pub(crate) const KEEPING_STEP: u64 = 1 << 32;
/// Attribute of a record: the subject's revision modulo [`KEEPING_STEP`] when it was written.
const EPOCH: &str = "epoch";

/// The epoch of `revision`.
fn epoch(revision: Revision) -> u64 {
    revision.0 % KEEPING_STEP
}

/// The key of `subject`'s record of `fingerprint` (outside the `V#` version range).
pub(crate) fn record_key(subject: &Subject, fingerprint: &Fingerprint) -> Item {
    key(keys::subject_pk(subject), keys::fingerprint_pk(fingerprint))
}

/// The row `subject`'s record of `fingerprint` among `items` names, if it is there and trusted at
/// `revision` (the subject's revision read with it).
pub(crate) fn trusted_record(
    items: &[Item],
    subject: &Subject,
    fingerprint: &Fingerprint,
    revision: Revision,
) -> Result<Option<VersionRow>, AwsError> {
    let (pk, sk) = (keys::subject_pk(subject), keys::fingerprint_pk(fingerprint));
    let Some(record) = item_at(items, &pk, &sk) else { return Ok(None) };
    if record.number::<u64>(EPOCH)? != epoch(revision) {
        return Ok(None);
    }
    Ok(Some(VersionRow {
        subject: subject.clone(),
        version: Version(record.number(attr::VERSION)?),
        id: SchemaId(record.number(attr::ID)?),
        fingerprint: *fingerprint,
        deleted: false,
        // Left out: a row's references are its body's, which the caller has (same fingerprint).
        references: Vec::new(),
        registered_at_ms: record.number(attr::REGISTERED_AT)?,
    }))
}

impl AwsStore {
    /// A Put of `row`'s record, in epoch `revision` (a keeping write's epoch is the revision's it
    /// was conditioned on: it raises the revision by [`KEEPING_STEP`]).
    pub(crate) fn record_put(&self, row: &VersionRow, revision: Revision) -> Result<TransactWriteItem, AwsError> {
        let mut item = record_key(&row.subject, &row.fingerprint);
        item.insert(attr::VERSION.into(), n(row.version.0));
        item.insert(attr::ID.into(), n(row.id.0));
        item.insert(attr::REGISTERED_AT.into(), n(row.registered_at_ms));
        item.insert(EPOCH.into(), n(epoch(revision)));
        transact_item("Put(live version)", Part::Put(self.put_of(item)))
    }

    /// [`registry_core::Store::record_live_version`]: the record, and a ConditionCheck that the
    /// subject's revision is still `revision`, in one TransactWriteItems.
    pub(crate) async fn write_live_version(&self, row: &VersionRow, revision: Revision) -> Result<(), AwsError> {
        let preconditions = Preconditions { revision: Some(revision), ..Preconditions::default() };
        let op = "TransactWriteItems(live version)";
        Commit::subject(self, op, &row.subject, RevisionStep::Unchanged, &preconditions).record(row).commit().await
    }
}
