//! RPO 0 on request ([`AckReplicas`]): a write the home region committed is acknowledged only once
//! each named read region's replica shows it. Each write kind builds what a replica must show
//! ([`Shown`]: items present, absent, or holding an attribute's value, from what the write wrote);
//! one loop ([`AckReplicas::wait_until`]) polls each replica for it with one strongly consistent
//! BatchGetItem per poll (per 100 items; plus the body's GetObject, for a registration in a region whose bucket
//! is named, once the items show), at most the configured time in all. Past it the write answers a
//! retryable error (the write stays committed at home) and counts `replication_ack_timeout_total`.
//!
//! What is waited for is what a read in the read region answers from; items that concurrent
//! writers keep changing are never compared for equality (a context's ID counter is not read at
//! all; a subject's index item only for a revision at least the one the home holds after the
//! write, which later writes only raise), so a busy subject cannot make a wait run out. A setting
//! or a key record is compared with the value written: another client's write of the same item
//! right after it may make the first wait run out (its write stands; sending it again is safe).
//!
//! Not waited for (each write's effect is not answered from the replica, or the item is hot):
//! - the usage marker (`mark_used`) and the live-version record (`record_live_version`): no
//!   endpoint answers them, and a read region records nothing on them;
//! - a guid binding on its own (`bind_guid`) and an ID binding on its own (`bind_id_in`, before
//!   IMPORT's `create_version`): a by-guid or by-ID read that misses the replica asks the home
//!   region, so they cannot be answered wrong; IMPORT's row then waits for the ID binding to name
//!   its fingerprint (a rebinding included);
//! - the bindings a hard delete orphans: they sit on the fingerprint's binding, which
//!   registrations keep changing, and are read by registrations, which commit at home.
//!
//! A context's unlisting is waited for as its counter without the `listed` flag (not the counter's
//! value, which allocations keep changing).

use crate::AwsStore;
use crate::blobs;
use crate::conditions::REVISION;
use crate::errors::AwsError;
use crate::items::{Item, ItemExt, attr, key, s};
use crate::keys;
use crate::regions::{AckRegion, in_region};
use crate::{AwsStoreConfig, conditions::kind_pk};
use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use registry_core::{Fingerprint, Scope, SettingKind, Subject, Version, VersionRow};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a replica is asked again while a write waits for it.
const ACK_POLL: Duration = Duration::from_millis(50);

/// DynamoDB's limit on the keys of one BatchGetItem: a write of more items (a hard delete of a
/// subject's many versions) polls with one call per this many.
const BATCH_KEYS: usize = 100;

/// What one item of a replica must show.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Want {
    /// There, whatever it holds.
    Present,
    /// Gone.
    Absent,
    /// There, with the attribute equal to the value.
    Equals(&'static str, AttributeValue),
    /// Gone, or there with the attribute equal to the value (a soft-deleted row, which a later
    /// hard delete may have removed).
    AbsentOr(&'static str, AttributeValue),
    /// There, with the number attribute at least this (a revision, which every write raises).
    AtLeast(&'static str, u64),
    /// Gone, or there without the attribute (a flag removed).
    Lacks(&'static str),
}

impl Want {
    fn holds(&self, item: Option<&Item>) -> bool {
        match (self, item) {
            (Want::Present, found) => found.is_some(),
            (Want::Absent, found) => found.is_none(),
            (Want::AbsentOr(..) | Want::Lacks(_), None) => true,
            (Want::Lacks(name), Some(item)) => !item.contains_key(*name),
            (Want::Equals(name, value) | Want::AbsentOr(name, value), Some(item)) => item.get(*name) == Some(value),
            (Want::AtLeast(name, least), Some(item)) => {
                item.optional_number::<u64>(name).ok().flatten().is_some_and(|n| n >= *least)
            }
            (Want::Equals(..) | Want::AtLeast(..), None) => false,
        }
    }
}

/// What a replica must show for a write to be acknowledged.
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    /// The write, for the log and the error.
    what: String,
    /// What the client gets when it sends the write again after a timeout.
    retry: &'static str,
    /// Each item's key and what it must show (one entry per key).
    items: Vec<(Item, Want)>,
    /// The body, in a replica whose bucket is named.
    body: Option<Fingerprint>,
}

impl Shown {
    fn new(what: String, retry: &'static str) -> Shown {
        Shown { what, retry, items: Vec::new(), body: None }
    }

    /// `want` of the item at (`pk`, `sk`); a key named twice keeps its first want (BatchGetItem
    /// refuses a key twice).
    fn item(mut self, pk: impl Into<String>, sk: impl Into<String>, want: Want) -> Shown {
        let item_key = key(pk, sk);
        if !self.items.iter().any(|(known, _)| known == &item_key) {
            self.items.push((item_key, want));
        }
        self
    }

    /// A registration (or IMPORT) of `row`: its row, its ID binding naming its fingerprint (so an
    /// IMPORT that rebinds the ID waits for the new binding), its body, and the subject's index
    /// item at `revision` (the one the home holds after the write) or later: its counts, which
    /// listings filter on, include the new version (present, when no revision was read).
    pub(crate) fn registration(row: &VersionRow, revision: Option<u64>) -> Shown {
        let what = format!("registration of {} version {} (id {})", row.subject, row.version.0, row.id.0);
        let index = match revision {
            Some(revision) => Want::AtLeast(REVISION, revision),
            None => Want::Present,
        };
        let mut shown = Shown::new(what, "registering again is idempotent")
            .item(keys::subject_pk(&row.subject), keys::version_sk(row.version), Want::Present)
            .item(keys::SUBJECTS_PK, row.subject.as_str(), index)
            .item(
                keys::id_pk(&row.subject.context(), row.id),
                keys::ID_BINDING_SK,
                Want::Equals(attr::FINGERPRINT, s(row.fingerprint.to_hex())),
            );
        shown.body = Some(row.fingerprint);
        shown
    }

    /// A soft delete of `versions` of `subject`: each row flagged deleted (or gone), and the
    /// subject's index item (its row counts, which subject listings filter on) at `revision`, the
    /// one the home holds after the delete, or later.
    pub(crate) fn soft_deletion(subject: &Subject, versions: &[Version], revision: Option<u64>) -> Shown {
        let what = format!("soft delete of {} versions {versions:?}", subject);
        let retry = "the versions are soft-deleted already (40406 for a version, 40404 for the subject)";
        let mut shown = Shown::new(what, retry);
        for version in versions {
            let deleted = Want::AbsentOr(attr::DELETED, AttributeValue::Bool(true));
            shown = shown.item(keys::subject_pk(subject), keys::version_sk(*version), deleted);
        }
        shown.index_at(subject, revision)
    }

    /// A hard delete of `versions` of `subject` (`removed`: the rows it removed): each row gone
    /// with its rows-by-ID edge (by-ID reads) and its referrer edges (`referencedby`), the
    /// subject's settings gone when they were removed, and the index item as for a soft delete.
    pub(crate) fn hard_deletion(
        subject: &Subject,
        versions: &[Version],
        removed: &[VersionRow],
        settings_removed: bool,
        revision: Option<u64>,
    ) -> Shown {
        let what = format!("hard delete of {} versions {versions:?}", subject);
        let retry = "the versions are gone already (40402 for a version, 40401 for the subject)";
        let mut shown = Shown::new(what, retry);
        for version in versions {
            shown = shown.item(keys::subject_pk(subject), keys::version_sk(*version), Want::Absent);
        }
        for row in removed {
            let edge = keys::edge_sk(subject, row.version);
            shown = shown.item(keys::id_pk(&subject.context(), row.id), edge.clone(), Want::Absent);
            for reference in &row.references {
                shown =
                    shown.item(keys::referenced_pk(&reference.subject, reference.version), edge.clone(), Want::Absent);
            }
        }
        if settings_removed {
            let scope = Scope::Subject(subject.clone());
            for kind in [SettingKind::Config, SettingKind::Mode] {
                let (pk, sk) = keys::scoped(kind_pk(kind), &scope);
                shown = shown.item(pk, sk, Want::Absent);
            }
        }
        shown.index_at(subject, revision)
    }

    /// The subject's index item at `revision` or later (none: not waited for, the item is absent
    /// at home too).
    fn index_at(self, subject: &Subject, revision: Option<u64>) -> Shown {
        match revision {
            Some(revision) => self.item(keys::SUBJECTS_PK, subject.as_str(), Want::AtLeast(REVISION, revision)),
            None => self,
        }
    }

    /// A named context's unlisting: its counter without the `listed` flag (a registration in the
    /// context right after sets it again and may make the wait run out; the unlisting stands).
    pub(crate) fn unlisting(context: &registry_core::Context) -> Shown {
        let retry = "deleting the context again answers 204 while it stays empty";
        Shown::new(format!("unlisting of {context}"), retry).item(
            keys::COUNTER_PK,
            keys::counter_sk(context),
            Want::Lacks(attr::LISTED),
        )
    }

    /// A config or mode write at `scope`: the replica's item holds the `value` written (`None`:
    /// the item is gone, a delete).
    pub(crate) fn setting(kind: SettingKind, scope: &Scope, value: Option<&str>) -> Shown {
        let what = format!("{kind:?} write at {scope:?}");
        let (pk, sk) = keys::scoped(kind_pk(kind), scope);
        let want = match value {
            Some(value) => Want::Equals(attr::VALUE, s(value)),
            None => Want::Absent,
        };
        let retry = "writing or deleting the same setting again is idempotent (a subject's delete answers 40401 \
                     once nothing is left to delete)";
        Shown::new(what, retry).item(pk, sk, want)
    }

    /// A KEK or DEK record written as `item` (its key and its JSON `value`): the replica's record
    /// holds that JSON (its revision is not compared: DEK writes under a KEK raise the KEK's).
    pub(crate) fn key_record(what: &str, item: &Item) -> Shown {
        let (pk, sk) = (item.string(keys::PK).unwrap_or_default(), item.string(keys::SK).unwrap_or_default());
        let want = match item.get(attr::VALUE) {
            Some(value) => Want::Equals(attr::VALUE, value.clone()),
            None => Want::Present,
        };
        let retry = "the record is written at home: a create sent again answers 40971, a soft delete 204";
        Shown::new(format!("{what} {pk}/{sk}"), retry).item(pk.to_string(), sk.to_string(), want)
    }

    /// A KEK or DEK record removed at `item_key`: gone in the replica.
    pub(crate) fn key_record_removed(what: &str, item_key: &Item) -> Shown {
        let (pk, sk) = (item_key.string(keys::PK).unwrap_or_default(), item_key.string(keys::SK).unwrap_or_default());
        let retry = "the record is gone already (40470)";
        Shown::new(format!("{what} {pk}/{sk}"), retry).item(pk.to_string(), sk.to_string(), Want::Absent)
    }

    /// Whether `found` (the items a replica answered for this expectation's keys) shows it.
    fn shown_by(&self, found: &[Item]) -> bool {
        let by_key: HashMap<(&str, &str), &Item> =
            found.iter().filter_map(|item| Some((key_of(item)?, item))).collect();
        self.items.iter().all(|(item_key, want)| want.holds(key_of(item_key).and_then(|k| by_key.get(&k).copied())))
    }
}

/// An item's (`pk`, `sk`).
fn key_of(item: &Item) -> Option<(&str, &str)> {
    let part = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).map(String::as_str);
    Some((part(keys::PK)?, part(keys::SK)?))
}

/// The read replicas a write waits for, and how many waits ran out.
#[derive(Debug)]
pub struct AckReplicas {
    replicas: Vec<Replica>,
    timeout: Duration,
    timeouts: AtomicU64,
    polls: AtomicU64,
}

#[derive(Debug)]
struct Replica {
    region: String,
    /// A store over the replica's table (and its bucket, or the home's when not named: then the
    /// body is not waited for).
    store: AwsStore,
    body: bool,
}

impl AckReplicas {
    /// Waits run out after `timeout`.
    pub fn new(sdk: &SdkConfig, table: &str, home_bucket: &str, regions: &[AckRegion], timeout: Duration) -> Self {
        // An endpoint is set: an emulator, whose S3 needs path-style addressing.
        let path_style = sdk.endpoint_url().is_some();
        let replicas = regions
            .iter()
            .map(|ack| {
                let config = AwsStoreConfig {
                    table: table.to_string(),
                    bucket: ack.bucket.clone().unwrap_or_else(|| home_bucket.to_string()),
                };
                let store = AwsStore::with_path_style(&in_region(sdk, &ack.region), config, path_style);
                Replica { region: ack.region.clone(), store, body: ack.bucket.is_some() }
            })
            .collect();
        AckReplicas { replicas, timeout, timeouts: AtomicU64::new(0), polls: AtomicU64::new(0) }
    }

    /// The regions waited for, in order.
    pub fn regions(&self) -> Vec<&str> {
        self.replicas.iter().map(|replica| replica.region.as_str()).collect()
    }

    /// Waits that ran out since the process started (`replication_ack_timeout_total`).
    pub fn timeouts(&self) -> u64 {
        self.timeouts.load(Ordering::Relaxed)
    }

    /// Polls of a replica since the process started (each one BatchGetItem per 100 items).
    pub fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }

    /// AWS calls the replicas' stores have made (each poll: one BatchGetItem, and a GetObject
    /// for a registration's body where the bucket is named).
    pub fn calls(&self) -> u64 {
        self.replicas.iter().map(|replica| replica.store.calls().get()).sum()
    }

    /// Polls every replica until it shows `shown`, at most the timeout in all; `Fenced` (a
    /// retryable 5xx) naming the first region that did not, past it.
    pub(crate) async fn wait_until(&self, shown: &Shown) -> Result<(), AwsError> {
        let deadline = Instant::now() + self.timeout;
        let wanted: Vec<Item> = shown.items.iter().map(|(item_key, _)| item_key.clone()).collect();
        for replica in &self.replicas {
            loop {
                self.polls.fetch_add(1, Ordering::Relaxed);
                let mut found = Vec::new();
                for keys in wanted.chunks(BATCH_KEYS) {
                    found.extend(replica.store.batch_get("BatchGetItem(replica ack)", keys.to_vec()).await?);
                }
                let visible = match (shown.shown_by(&found), replica.body.then_some(shown.body).flatten()) {
                    (true, Some(fingerprint)) => {
                        let (s3, bucket, key) =
                            (&replica.store.s3, &replica.store.bucket, keys::body_key(&fingerprint));
                        blobs::get_bytes(s3, bucket, &key, "GetObject(replica ack)").await?.is_some()
                    }
                    (items, _) => items,
                };
                if visible {
                    break;
                }
                if Instant::now() >= deadline {
                    self.timeouts.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        metric = "replication_ack_timeout_total",
                        region = %replica.region,
                        write = %shown.what,
                        "a write committed in the home region is not yet visible in {} after {} ms",
                        replica.region,
                        self.timeout.as_millis()
                    );
                    let detail = format!(
                        "{} committed in the home region but not yet visible in {} after {} ms \
                         (REGISTRY_ACK_TIMEOUT_MS); retry: {}",
                        shown.what,
                        replica.region,
                        self.timeout.as_millis(),
                        shown.retry
                    );
                    return Err(AwsError::Fenced { op: "replication acknowledgement", detail });
                }
                tokio::time::sleep(ACK_POLL.min(deadline.saturating_duration_since(Instant::now()))).await;
            }
        }
        Ok(())
    }
}

impl AwsStore {
    /// This store acknowledging a write only once `acks` show it.
    pub fn with_acks(mut self, acks: Arc<AckReplicas>) -> AwsStore {
        self.acks = Some(acks);
        self
    }

    /// The replicas this store waits for, if any.
    pub fn acks(&self) -> Option<&Arc<AckReplicas>> {
        self.acks.as_ref()
    }

    /// After a committed write: waits for the acknowledging replicas to show what `shown` builds
    /// (called only when there are replicas, so a store without them builds nothing).
    pub(crate) async fn acknowledge(&self, shown: impl FnOnce() -> Shown) -> Result<(), AwsError> {
        match &self.acks {
            Some(acks) => acks.wait_until(&shown()).await,
            None => Ok(()),
        }
    }

    /// The revision of `subject`'s index item at home, read after a delete when replicas wait
    /// (one GetItem; `None` without replicas or without the item).
    pub(crate) async fn revision_for_acks(&self, subject: &Subject) -> Result<Option<u64>, AwsError> {
        if self.acks.is_none() {
            return Ok(None);
        }
        let item = self.get_item("GetItem(subject index for ack)", key(keys::SUBJECTS_PK, subject.as_str())).await?;
        Ok(item.map(|item| item.optional_number::<u64>(REVISION)).transpose()?.flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::SchemaId;

    fn found(pk: &str, sk: &str, attributes: &[(&str, AttributeValue)]) -> Item {
        let mut item = key(pk, sk);
        item.extend(attributes.iter().map(|(name, value)| (name.to_string(), value.clone())));
        item
    }

    #[test]
    fn a_soft_deletion_is_shown_by_flagged_or_removed_rows_and_a_later_revision() {
        let subject = Subject::new("s").unwrap_or_else(|e| panic!("{e}"));
        let shown = Shown::soft_deletion(&subject, &[Version(1), Version(2)], Some(7));
        let (pk, index) = (keys::subject_pk(&subject), (keys::SUBJECTS_PK, subject.as_str()));
        let flagged = |v| found(&pk, &keys::version_sk(Version(v)), &[(attr::DELETED, AttributeValue::Bool(true))]);
        let live = found(&pk, &keys::version_sk(Version(2)), &[(attr::DELETED, AttributeValue::Bool(false))]);
        let at = |rev: &str| found(index.0, index.1, &[(REVISION, AttributeValue::N(rev.into()))]);
        assert!(shown.shown_by(&[flagged(1), flagged(2), at("7")]));
        assert!(shown.shown_by(&[flagged(1), at("9")]), "a removed row is deleted too; a later revision");
        assert!(!shown.shown_by(&[flagged(1), live, at("7")]), "a row still live");
        assert!(!shown.shown_by(&[flagged(1), flagged(2), at("6")]), "an index from before the delete");
        assert!(!shown.shown_by(&[flagged(1), flagged(2)]), "no index item");
    }

    #[test]
    fn a_hard_deletion_waits_for_rows_edges_and_settings_to_be_gone() {
        let subject = Subject::new("s").unwrap_or_else(|e| panic!("{e}"));
        let row = VersionRow {
            subject: subject.clone(),
            version: Version(3),
            id: SchemaId(12),
            fingerprint: Fingerprint([1; 32]),
            deleted: true,
            references: vec![],
            registered_at_ms: 0,
        };
        let shown = Shown::hard_deletion(&subject, &[Version(3)], &[row], true, None);
        // The row, its rows-by-ID edge, the config and the mode item; no index item without a revision.
        assert_eq!(shown.items.len(), 4, "{shown:?}");
        assert!(shown.shown_by(&[]));
        let edge = found(&keys::id_pk(&subject.context(), SchemaId(12)), &keys::edge_sk(&subject, Version(3)), &[]);
        assert!(!shown.shown_by(&[edge]));
    }

    /// A live row of `subject` at `version`, ID 7, fingerprint [2; 32].
    fn live_row(subject: &Subject, version: Version) -> VersionRow {
        VersionRow {
            subject: subject.clone(),
            version,
            id: SchemaId(7),
            fingerprint: Fingerprint([2; 32]),
            deleted: false,
            references: vec![],
            registered_at_ms: 0,
        }
    }

    #[test]
    fn a_registration_is_shown_by_an_id_binding_naming_its_fingerprint_only() {
        let subject = Subject::new("s").unwrap_or_else(|e| panic!("{e}"));
        let row = live_row(&subject, Version(1));
        let shown = Shown::registration(&row, None);
        let version = found(&keys::subject_pk(&subject), &keys::version_sk(Version(1)), &[]);
        let binding = |fingerprint: Fingerprint| {
            let (pk, sk) = (keys::id_pk(&subject.context(), SchemaId(7)), keys::ID_BINDING_SK);
            found(&pk, sk, &[(attr::FINGERPRINT, s(fingerprint.to_hex()))])
        };
        let index = found(keys::SUBJECTS_PK, subject.as_str(), &[]);
        assert!(shown.shown_by(&[version.clone(), index.clone(), binding(Fingerprint([2; 32]))]));
        assert!(!shown.shown_by(&[version.clone(), binding(Fingerprint([2; 32]))]), "a subject not listed yet");
        assert!(!shown.shown_by(&[version, index, binding(Fingerprint([1; 32]))]), "the binding before a rebinding");
    }

    #[test]
    fn a_setting_is_shown_by_the_value_written_only() {
        let shown = Shown::setting(SettingKind::Mode, &Scope::Global, Some("READONLY"));
        let (pk, sk) = keys::scoped(kind_pk(SettingKind::Mode), &Scope::Global);
        assert!(shown.shown_by(&[found(&pk, &sk, &[(attr::VALUE, s("READONLY"))])]));
        assert!(!shown.shown_by(&[found(&pk, &sk, &[(attr::VALUE, s("READWRITE"))])]));
        assert!(!shown.shown_by(&[]));
        assert!(Shown::setting(SettingKind::Mode, &Scope::Global, None).shown_by(&[]));
    }

    #[test]
    fn an_unlisting_is_shown_by_a_counter_without_the_flag_whatever_its_value() {
        let context = registry_core::Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        let shown = Shown::unlisting(&context);
        let counter =
            |attributes: &[(&str, AttributeValue)]| found(keys::COUNTER_PK, &keys::counter_sk(&context), attributes);
        assert!(shown.shown_by(&[counter(&[(attr::MAX_ID, AttributeValue::N("7".into()))])]));
        assert!(shown.shown_by(&[counter(&[(attr::MAX_ID, AttributeValue::N("9".into()))])]), "another allocation");
        assert!(shown.shown_by(&[]), "a context that never took an ID");
        let listed =
            counter(&[(attr::MAX_ID, AttributeValue::N("7".into())), (attr::LISTED, AttributeValue::Bool(true))]);
        assert!(!shown.shown_by(&[listed]), "still listed");
    }

    #[test]
    fn a_registration_waits_for_the_subject_index_at_the_home_revision_or_later() {
        let subject = Subject::new("s").unwrap_or_else(|e| panic!("{e}"));
        let row = live_row(&subject, Version(2));
        let shown = Shown::registration(&row, Some(4));
        let version = found(&keys::subject_pk(&subject), &keys::version_sk(Version(2)), &[]);
        let (pk, sk) = (keys::id_pk(&subject.context(), SchemaId(7)), keys::ID_BINDING_SK);
        let binding = found(&pk, sk, &[(attr::FINGERPRINT, s(Fingerprint([2; 32]).to_hex()))]);
        let index = |revision: &str| {
            found(keys::SUBJECTS_PK, subject.as_str(), &[(REVISION, AttributeValue::N(revision.into()))])
        };
        assert!(!shown.shown_by(&[version.clone(), binding.clone(), index("3")]), "the index before the write");
        assert!(shown.shown_by(&[version.clone(), binding.clone(), index("4")]));
        assert!(shown.shown_by(&[version, binding, index("6")]), "a later write raised it");
    }
}
