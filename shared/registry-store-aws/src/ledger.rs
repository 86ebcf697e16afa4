//! The ID ledger: one object `ids/<id:010>` in the bucket per schema ID ever issued, holding the
//! fingerprint it was issued to, written create-if-absent (`If-None-Match: *`) *before* the
//! counter in the table commits the ID.
//!
//! Why outside the table: a DynamoDB point-in-time restore rewinds `COUNTER/ID`, and IDs issued
//! after the restore point may already sit in Kafka messages. Were they issued again, consumers
//! would decode those messages with another schema. The bucket is versioned and the function's
//! role cannot delete objects, so the ledger only grows, whatever happens to the table. An
//! allocation claims `ids/<counter + 1>`; finding it taken by another fingerprint means a
//! concurrent allocation or a restored table, and the allocation moves past the highest ID in the
//! ledger (one `ListObjectsV2` after the counter), so the first allocation after a restore raises
//! the counter past every ID ever issued. A claim found holding the same fingerprint is the
//! allocation's own (retried after a crash, or the same schema registered again after a restore)
//! and is kept: an allocation never changes an ID's meaning. Only IMPORT of an ID no row carries any
//! more (its schema hard-deleted, see `rebind`) writes the entry again, naming the new schema (the
//! versioned bucket keeps the old one). `registry restore-check` ([`AwsStore::restore_check`])
//! raises the counter right after a restore, before any allocation.
//!
//! The ledger doubles as an audit trail: list `ids/` to see which fingerprint every ID was issued
//! to. IDs issued before the ledger existed have no objects; they are protected from a restore to
//! a point after the upgrade (the counter then already covers them).
//!
//! Each context has its own ledger, as its own counter: the default context's is `ids/<id:010>`, a
//! named context's `ids/<context>:<id:010>` (under the same prefix, which the function's role may
//! write and list; a context name starts with `.` and never holds `:`, so every named key sorts
//! before every default key and one context's keys never share a prefix with another's).

use crate::AwsStore;
use crate::errors::{AwsError, classify};
use aws_sdk_s3::operation::list_objects_v2::builders::ListObjectsV2FluentBuilder;
use registry_core::{Context, Fingerprint, SchemaId};
use serde::{Deserialize, Serialize};

/// Key prefix of the ledger objects.
pub const LEDGER_PREFIX: &str = "ids/";

/// Separates a named context from the ID in its ledger keys.
const CONTEXT_SEPARATOR: char = ':';

/// The prefix of `context`'s ledger keys: `ids/` or `ids/<context>:`.
pub fn ledger_prefix(context: &Context) -> String {
    match context.is_default() {
        true => LEDGER_PREFIX.to_string(),
        false => format!("{LEDGER_PREFIX}{}{CONTEXT_SEPARATOR}", context.name()),
    }
}

/// The ledger key of `id` in `context`: zero-padded, so keys list in ID order.
pub fn ledger_key(context: &Context, id: SchemaId) -> String {
    format!("{}{:010}", ledger_prefix(context), id.0)
}

/// The ID of the ledger key `key` listed under `prefix`.
fn ledger_id(prefix: &str, key: &str) -> Result<SchemaId, AwsError> {
    let id = key.strip_prefix(prefix).and_then(|n| n.parse::<i32>().ok());
    id.map(SchemaId).ok_or_else(|| AwsError::Corrupt(format!("ledger key {key}")))
}

/// One ledger object.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    id: i32,
    fingerprint: String,
}

/// Who holds an ID in the ledger.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Written now, or already held by the same fingerprint.
    Ours,
    /// Issued to another fingerprint, the one named (`None`: an entry that names none).
    Taken(Option<Fingerprint>),
}

/// What [`AwsStore::restore_check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreCheck {
    /// The table's ID counter before the check.
    pub counter: Option<SchemaId>,
    /// The highest ID in the ledger above the counter (`None`: the ledger holds nothing above it).
    pub ledger_max: Option<SchemaId>,
    /// Whether the counter was raised to `ledger_max`.
    pub raised: bool,
}

impl AwsStore {
    /// Claims `id` for `fingerprint` in the ledger (one conditional PutObject; one GetObject more
    /// when the key exists).
    pub(crate) async fn claim_id(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<Claim, AwsError> {
        let key = ledger_key(context, id);
        let entry = Entry { id: id.0, fingerprint: fingerprint.to_hex() };
        let bytes = serde_json::to_vec(&entry).map_err(|e| AwsError::Corrupt(format!("{key}: {e}")))?;
        if crate::blobs::put_if_absent(&self.s3, &self.bucket, &key, bytes, "PutObject(ledger)").await? {
            return Ok(Claim::Ours);
        }
        match self.ledger_entry(&key).await? {
            Some(holder) if holder.fingerprint == fingerprint.to_hex() => Ok(Claim::Ours),
            Some(holder) => Ok(Claim::Taken(holder.fingerprint.parse().ok())),
            None => Ok(Claim::Taken(None)),
        }
    }

    /// Records that `id` was given to `fingerprint` again (IMPORT rebound it after its schema was
    /// hard-deleted; see `rebind`): an unconditional PutObject, a new version of the object in the
    /// versioned bucket, which keeps the earlier one as the audit trail.
    pub(crate) async fn reissue_claim(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<(), AwsError> {
        let key = ledger_key(context, id);
        let entry = Entry { id: id.0, fingerprint: fingerprint.to_hex() };
        let bytes = serde_json::to_vec(&entry).map_err(|e| AwsError::Corrupt(format!("{key}: {e}")))?;
        self.s3
            .put_object()
            .bucket(&self.bucket)
            .key(&key)
            .content_type("application/json")
            .body(aws_sdk_s3::primitives::ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| classify("PutObject(ledger reissue)", e))?;
        Ok(())
    }

    /// The entry the ledger object `key` holds.
    async fn ledger_entry(&self, key: &str) -> Result<Option<Entry>, AwsError> {
        let Some(bytes) = crate::blobs::get_bytes(&self.s3, &self.bucket, key, "GetObject(ledger)").await? else {
            return Ok(None);
        };
        let entry: Entry = serde_json::from_slice(&bytes).map_err(|e| AwsError::Corrupt(format!("{key}: {e}")))?;
        Ok(Some(entry))
    }

    /// A ListObjectsV2 request for the ledger keys under `prefix`, to be given its start.
    fn list_ledger(&self, prefix: &str) -> ListObjectsV2FluentBuilder {
        self.s3.list_objects_v2().bucket(&self.bucket).prefix(prefix)
    }

    /// The highest ID in `context`'s ledger above `after` (listing pages of 1000 keys from
    /// `after` on; the default context's listing starts past every named context's keys).
    pub(crate) async fn ledger_max_after(
        &self,
        context: &Context,
        after: SchemaId,
    ) -> Result<Option<SchemaId>, AwsError> {
        let mut highest = None;
        self.ledger_ids_after(context, after, |id| {
            highest = highest.max(Some(id));
            true
        })
        .await?;
        Ok(highest)
    }

    /// Where a counter an import pushed to the top restarts: the greatest ID at or below
    /// [`SchemaId::MAX_IMPORTED`] in `context`'s ledger ([`registry_core::id_rules::lowering_floor`]
    /// over the ledger, as a binary search of one-key listings, at most 31), then past the IDs the
    /// ledger holds consecutively after it (allocations made after an import near the bound; one
    /// listing per 1000), which [`registry_core::id_rules::counter_after_lowering`] allows. `None`
    /// when the ledger holds no ID up to the bound.
    pub(crate) async fn ledger_floor(&self, context: &Context) -> Result<Option<SchemaId>, AwsError> {
        let bound = SchemaId::MAX_IMPORTED;
        let Some(mut found) = self.ledger_first_after(context, SchemaId(0)).await?.filter(|id| *id <= bound) else {
            return Ok(None);
        };
        // Invariant: `found` is in the ledger and no ID in (high, bound] is.
        let mut high = bound;
        while found < high {
            let mid = SchemaId(found.0 + (high.0 - found.0 + 1) / 2);
            match self.ledger_first_after(context, SchemaId(mid.0 - 1)).await? {
                Some(id) if id <= high => found = id,
                _ => high = SchemaId(mid.0 - 1),
            }
        }
        self.ledger_run_end(context, found).await.map(Some)
    }

    /// The lowest ID above `after` in `context`'s ledger (one ListObjectsV2 of one key).
    async fn ledger_first_after(&self, context: &Context, after: SchemaId) -> Result<Option<SchemaId>, AwsError> {
        let prefix = ledger_prefix(context);
        let listing = self.list_ledger(&prefix).start_after(ledger_key(context, after)).max_keys(1).send().await;
        let page = listing.map_err(|e| classify("ListObjectsV2(ledger)", e))?;
        page.contents().first().and_then(|object| object.key()).map(|key| ledger_id(&prefix, key)).transpose()
    }

    /// The last ID of the run of consecutive IDs in `context`'s ledger that starts at `from`.
    async fn ledger_run_end(&self, context: &Context, from: SchemaId) -> Result<SchemaId, AwsError> {
        let mut end = from;
        self.ledger_ids_after(context, from, |id| {
            let next = Some(id.0) == end.0.checked_add(1);
            if next {
                end = id;
            }
            next
        })
        .await?;
        Ok(end)
    }

    /// Hands the IDs in `context`'s ledger above `after` to `take`, ascending, until it answers
    /// false or the ledger ends: one ListObjectsV2 per 1000 keys read.
    async fn ledger_ids_after(
        &self,
        context: &Context,
        after: SchemaId,
        mut take: impl FnMut(SchemaId) -> bool,
    ) -> Result<(), AwsError> {
        let prefix = ledger_prefix(context);
        let mut start_after = ledger_key(context, after);
        loop {
            let listing = self.list_ledger(&prefix).start_after(&start_after).send().await;
            let page = listing.map_err(|e| classify("ListObjectsV2(ledger)", e))?;
            for key in page.contents().iter().filter_map(|object| object.key()) {
                if !take(ledger_id(&prefix, key)?) {
                    return Ok(());
                }
            }
            match page.contents().last().and_then(|object| object.key()) {
                Some(last) if page.is_truncated() == Some(true) => start_after = last.to_string(),
                _ => return Ok(()),
            }
        }
    }

    /// After a restore of the table: compares the default context's ID counter with the ledger
    /// and, with `apply`, raises the counter to the highest ID the ledger holds above it (a
    /// conditional update that never lowers it), so no ID issued before the restore is issued
    /// again. Idempotent; reads only the counter and the ledger keys above it.
    pub async fn restore_check(&self, apply: bool) -> Result<RestoreCheck, registry_core::StoreError> {
        self.restore_check_in(&Context::DEFAULT, apply).await
    }

    /// [`AwsStore::restore_check`] for every context: the default one, then each named context
    /// the ledger holds IDs of (found by listing the ledger's named prefixes, one ListObjectsV2
    /// per 1000 contexts), even one the restored table no longer knows.
    pub async fn restore_check_contexts(
        &self,
        apply: bool,
    ) -> Result<Vec<(Context, RestoreCheck)>, registry_core::StoreError> {
        let mut checks = vec![(Context::DEFAULT, self.restore_check(apply).await?)];
        for context in self.ledger_contexts().await? {
            let check = self.restore_check_in(&context, apply).await?;
            checks.push((context, check));
        }
        Ok(checks)
    }

    /// The named contexts with ledger entries: the common prefixes `ids/<context>:` under `ids/.`.
    pub(crate) async fn ledger_contexts(&self) -> Result<Vec<Context>, AwsError> {
        let named = format!("{LEDGER_PREFIX}.");
        let mut contexts = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let listing = self.list_ledger(&named).delimiter(CONTEXT_SEPARATOR).set_continuation_token(token.take());
            let page = listing.send().await.map_err(|e| classify("ListObjectsV2(ledger contexts)", e))?;
            for prefix in page.common_prefixes().iter().filter_map(|p| p.prefix()) {
                let name = prefix.strip_prefix(LEDGER_PREFIX).and_then(|p| p.strip_suffix(CONTEXT_SEPARATOR));
                let context = name.and_then(|name| Context::parse(name).ok());
                contexts.push(context.ok_or_else(|| AwsError::Corrupt(format!("ledger prefix {prefix}")))?);
            }
            match page.next_continuation_token() {
                Some(next) if page.is_truncated() == Some(true) => token = Some(next.to_string()),
                _ => return Ok(contexts),
            }
        }
    }

    /// [`AwsStore::restore_check`] for `context`.
    async fn restore_check_in(
        &self,
        context: &Context,
        apply: bool,
    ) -> Result<RestoreCheck, registry_core::StoreError> {
        let counter = self.read_max_id(context).await?.map(SchemaId);
        let ledger_max = self.ledger_max_after(context, counter.unwrap_or(SchemaId(0))).await?;
        let raised = match ledger_max {
            Some(max) if apply => {
                self.raise_counter(context, max, false).await?;
                true
            }
            _ => false,
        };
        Ok(RestoreCheck { counter, ledger_max, raised })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::testkit::context;

    #[test]
    fn ledger_keys_list_in_id_order() {
        let default = &Context::DEFAULT;
        assert_eq!(ledger_key(default, SchemaId(7)), "ids/0000000007");
        assert!(ledger_key(default, SchemaId(9)) < ledger_key(default, SchemaId(10)));
        assert_eq!(ledger_key(default, SchemaId(i32::MAX)).len(), LEDGER_PREFIX.len() + 10);
        let team = &context(".team");
        assert_eq!(ledger_key(team, SchemaId(7)), "ids/.team:0000000007");
        assert!(ledger_key(team, SchemaId(9)) < ledger_key(team, SchemaId(10)));
    }

    #[test]
    fn named_ledgers_sort_before_the_default_one_and_apart_from_each_other() {
        let highest = ledger_key(&context(&format!(".{}", "\u{10FFFF}".repeat(3))), SchemaId(i32::MAX));
        assert!(highest < ledger_key(&Context::DEFAULT, SchemaId(0)), "the default listing starts past them");
        let (team, nested) = (ledger_prefix(&context(".team")), ledger_prefix(&context(".team/x")));
        assert!(!nested.starts_with(&team) && !team.starts_with(&nested));
        let longest = context(&format!(".{}", "x".repeat(Context::MAX_BYTES - 1)));
        assert!(ledger_key(&longest, SchemaId(i32::MAX)).len() <= 1024, "S3 keys hold at most 1024 bytes");
    }
}
