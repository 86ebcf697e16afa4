//! The DEK registry's [`KeyStore`] in the registry's table, beside the schema items, no Scan:
//!
//! ```text
//!  pk            sk                                   attributes
//!  KEK           <kek name>                           value (Kek JSON), rev, deleted
//!  DEK#<kek>     <subject>␁<algorithm>␁<ver:010>      value (Dek JSON), rev, deleted, subject
//! ```
//!
//! KEK names are listed by one Query of the `KEK` partition in name order; a KEK's DEKs sit in its
//! own partition in (subject, algorithm, version) order (`␁` is U+0001, below every character a
//! subject may hold), so a subject's versions are one key range and its latest the range read
//! backwards. `rev` is the record's revision: every write is conditioned on it (or on the item's
//! absence) and raises it by one. A DEK write under [`KekGuard::Live`] is one TransactWriteItems
//! of the DEK put and an update of the KEK item conditioned on the KEK being there and not
//! deleted, raising its revision: a KEK delete conditioned on the revision it read cannot commit
//! after a DEK was created under the KEK, and no DEK is created under a KEK deleted before it.
//! Under [`KekGuard::Present`] (a DEK created deleted) the KEK update is conditioned on the item
//! only existing, deleted or not: a permanent KEK delete that read no DEK cannot commit after it.
//!
//! On a fenced home-region store every write is fenced on the home marker (see `fence`): the
//! transactions carry the check, and a write of one record (a KEK put or delete, a DEK put under
//! [`KekGuard::Unchecked`], a DEK delete) is sent as a TransactWriteItems of the write and the check.
//! With acknowledging replicas (see `acks`) each write answers once they show the record as
//! written (or gone).

use crate::AwsStore;
use crate::acks::Shown;
use crate::commit::Commit;
use crate::errors::AwsError;
use crate::fence::OneWrite;
use crate::items::{Item, ItemExt, key, n, s};
use crate::keys::{EDGE_SEPARATOR, PK, SK};
use crate::listing::SortRange;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use registry_core::{StoreError, StoreResult};
use registry_dek::store::prefix_end;
use registry_dek::{Dek, DekAlgorithm, DekId, DekSeries, Expect, Kek, KekGuard, KeyStore, Stored, SubjectPage};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;

/// Partition of the KEKs (sort key: the KEK's name).
const KEK_PK: &str = "KEK";
/// Attribute names of KEK and DEK items.
const VALUE: &str = "value";
const REVISION: &str = "rev";
const DELETED: &str = "deleted";
const SUBJECT: &str = "subject";
/// Items read per Query page of a listing.
const PAGE_ITEMS: i32 = 500;
/// Versions read per Query page when looking for the latest live DEK: deleted latest versions
/// are rare, so one small page almost always holds the answer.
const LATEST_PAGE_ITEMS: i32 = 8;

/// Partition of the DEKs under KEK `kek_name`.
fn dek_pk(kek_name: &str) -> String {
    format!("DEK#{kek_name}")
}

/// Sort-key prefix of the versions of (`subject`, `algorithm`).
fn versions_prefix(subject: &str, algorithm: DekAlgorithm) -> StoreResult<String> {
    if subject.contains(EDGE_SEPARATOR) {
        return Err(StoreError::Corrupt(format!("DEK subject {subject:?} holds a control character")));
    }
    Ok(format!("{subject}{EDGE_SEPARATOR}{algorithm}{EDGE_SEPARATOR}"))
}

/// Sort key of one DEK version.
fn dek_sk(id: &DekId) -> StoreResult<String> {
    let version = u32::try_from(id.version)
        .map_err(|_| StoreError::Corrupt(format!("DEK version {} of {} is negative", id.version, id.subject)))?;
    Ok(format!("{}{}", versions_prefix(&id.subject, id.algorithm)?, padded_u32(version)))
}

fn padded_u32(version: u32) -> String {
    format!("{version:010}")
}

fn dek_key(id: &DekId) -> StoreResult<Item> {
    Ok(key(dek_pk(&id.kek_name), dek_sk(id)?))
}

/// A record's item: its key, its JSON, its revision and deleted flag (conditions read those two).
fn record_item<T: Serialize>(mut item: Item, value: &T, revision: u64, deleted: bool) -> StoreResult<Item> {
    let json = serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("encoding a key record: {e}")))?;
    item.insert(VALUE.into(), s(json));
    item.insert(REVISION.into(), n(revision));
    item.insert(DELETED.into(), AttributeValue::Bool(deleted));
    Ok(item)
}

fn record_of<T: DeserializeOwned>(item: &Item) -> Result<Stored<T>, AwsError> {
    let value = serde_json::from_str(item.string(VALUE)?)
        .map_err(|e| AwsError::Corrupt(format!("key record {:?}: {e}", item.get(SK))))?;
    Ok(Stored { value, revision: item.number(REVISION)? })
}

/// A conditional write's condition, its expression's names and values, and the revision the
/// write gives the record: absent (revision 1), or at the revision read (one more).
struct Condition {
    expression: &'static str,
    names: HashMap<String, String>,
    values: Option<HashMap<String, AttributeValue>>,
    revision: u64,
}

fn condition(expect: Expect) -> Condition {
    match expect {
        Expect::Absent => Condition {
            expression: "attribute_not_exists(#pk)",
            names: HashMap::from([("#pk".to_string(), PK.to_string())]),
            values: None,
            revision: 1,
        },
        Expect::Revision(revision) => Condition {
            expression: "#rev = :expected",
            names: HashMap::from([("#rev".to_string(), REVISION.to_string())]),
            values: Some(HashMap::from([(":expected".to_string(), n(revision))])),
            revision: revision + 1,
        },
    }
}

/// `$request` with the expression, names and values of the [`Condition`] `$condition`: the same
/// three setters on the builders of a PutItem, a DeleteItem and a transaction's Put, which share
/// no trait.
macro_rules! conditioned {
    ($request:expr, $condition:ident) => {
        $request
            .condition_expression($condition.expression)
            .set_expression_attribute_names(Some($condition.names))
            .set_expression_attribute_values($condition.values)
    };
}

impl AwsStore {
    /// A conditional PutItem of `item` under `expect` (fenced on a home-region store: one
    /// TransactWriteItems with the fence, see `fence`); answers the new revision.
    async fn put_record(&self, op: &'static str, item: Item, expect: Expect) -> StoreResult<u64> {
        let condition = condition(expect);
        let revision = condition.revision;
        let put = self.dynamo.put_item().table_name(&self.table).set_item(Some(item));
        self.write_one(op, OneWrite::Put(conditioned!(put, condition))).await?;
        Ok(revision)
    }

    /// A DeleteItem of `item_key` conditioned on the record being at `revision` (fenced as
    /// [`AwsStore::put_record`] is).
    async fn remove_record(&self, op: &'static str, item_key: Item, revision: u64) -> StoreResult<()> {
        let condition = condition(Expect::Revision(revision));
        let delete = self.dynamo.delete_item().table_name(&self.table).set_key(Some(item_key));
        self.write_one(op, OneWrite::Delete(conditioned!(delete, condition))).await?;
        Ok(())
    }

    /// The KEK item's update that a guarded DEK write carries: the KEK is there and not deleted,
    /// and its revision rises by one.
    fn kek_guard(&self, kek_name: &str, guard: KekGuard) -> Result<TransactWriteItem, AwsError> {
        let update = self
            .update_of(key(KEK_PK, kek_name))
            .update_expression("SET #rev = #rev + :one")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#rev", REVISION)
            .expression_attribute_values(":one", n(1));
        // Present: the KEK item exists, deleted or not (a deleted DEK's creation).
        let update = match guard {
            KekGuard::Present => update.condition_expression("attribute_exists(#pk)"),
            KekGuard::Live | KekGuard::Unchecked => update
                .condition_expression("attribute_exists(#pk) AND #deleted = :false")
                .expression_attribute_names("#deleted", DELETED)
                .expression_attribute_values(":false", AttributeValue::Bool(false)),
        };
        transact_item("Update(KEK guard)", Part::Update(update))
    }
}

/// The sort-key range of the subjects starting with `prefix` (empty: all) after `after`. The keys
/// of a subject `s` are `s␁…`: below `s` followed by U+0002 and above every subject below `s`
/// (subjects hold no control character), so the keys of the subjects after `after` are those
/// above `after␂`, and the keys of the subjects starting with `prefix` lie between `prefix`
/// and [`prefix_end`] (no key equals it). `None` when no subject can be in both.
fn subject_range(prefix: &str, after: Option<&str>) -> Option<SortRange> {
    let after = after.map(|after| format!("{after}\u{2}"));
    let Some(end) = prefix_end(prefix) else {
        return Some(after.map_or(SortRange::All, SortRange::After));
    };
    let start = match after {
        Some(after) if after.as_str() > prefix => after,
        _ => prefix.to_string(),
    };
    (start < end).then_some(SortRange::Between(start, end))
}

/// The sort-key range of the versions with `prefix`, from version `first` on.
fn version_range(prefix: &str, first: u32) -> SortRange {
    SortRange::Between(format!("{prefix}{}", padded_u32(first)), format!("{prefix}{}", padded_u32(u32::MAX)))
}

#[async_trait::async_trait]
impl KeyStore for AwsStore {
    async fn kek(&self, name: &str) -> StoreResult<Option<Stored<Kek>>> {
        let item = self.get_item("GetItem(KEK)", key(KEK_PK, name)).await?;
        Ok(item.as_ref().map(record_of).transpose()?)
    }

    async fn keks(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<Stored<Kek>>> {
        let mut keks = Vec::new();
        if limit == 0 {
            return Ok(keks);
        }
        let range = after.map_or(SortRange::All, |after| SortRange::After(after.to_string()));
        let page = i32::try_from(limit).unwrap_or(PAGE_ITEMS).min(PAGE_ITEMS);
        self.query_range("Query(KEKs)", KEK_PK.into(), range, true, page, |item| {
            keks.push(record_of(item)?);
            Ok(keks.len() < limit)
        })
        .await?;
        Ok(keks)
    }

    async fn put_kek(&self, kek: &Kek, expect: Expect) -> StoreResult<u64> {
        let item = record_item(key(KEK_PK, &kek.name), kek, condition(expect).revision, kek.deleted)?;
        let revision = self.put_record("PutItem(KEK)", item.clone(), expect).await?;
        self.acknowledge(|| Shown::key_record("KEK write", &item)).await?;
        Ok(revision)
    }

    async fn remove_kek(&self, name: &str, revision: u64) -> StoreResult<()> {
        self.remove_record("DeleteItem(KEK)", key(KEK_PK, name), revision).await?;
        Ok(self.acknowledge(|| Shown::key_record_removed("KEK delete", &key(KEK_PK, name))).await?)
    }

    async fn dek(&self, id: &DekId) -> StoreResult<Option<Stored<Dek>>> {
        let item = self.get_item("GetItem(DEK)", dek_key(id)?).await?;
        Ok(item.as_ref().map(record_of).transpose()?)
    }

    async fn deks(&self, series: DekSeries<'_>, after_version: i32, limit: usize) -> StoreResult<Vec<Stored<Dek>>> {
        let mut deks = Vec::new();
        let first = u32::try_from(after_version.saturating_add(1)).unwrap_or(0);
        if limit == 0 || after_version == i32::MAX {
            return Ok(deks);
        }
        let range = version_range(&versions_prefix(series.subject, series.algorithm)?, first);
        let page = i32::try_from(limit).unwrap_or(PAGE_ITEMS).min(PAGE_ITEMS);
        self.query_range("Query(DEK versions)", dek_pk(series.kek_name), range, true, page, |item| {
            deks.push(record_of(item)?);
            Ok(deks.len() < limit)
        })
        .await?;
        Ok(deks)
    }

    async fn latest_dek(&self, series: DekSeries<'_>, include_deleted: bool) -> StoreResult<Option<Stored<Dek>>> {
        let mut latest = None;
        let range = version_range(&versions_prefix(series.subject, series.algorithm)?, 0);
        let page = if include_deleted { 1 } else { LATEST_PAGE_ITEMS };
        self.query_range("Query(latest DEK)", dek_pk(series.kek_name), range, false, page, |item| {
            if include_deleted || !item.flag(DELETED)? {
                latest = Some(record_of(item)?);
                return Ok(false);
            }
            Ok(true)
        })
        .await?;
        Ok(latest)
    }

    async fn dek_subjects(&self, page: SubjectPage<'_>) -> StoreResult<Vec<String>> {
        let SubjectPage { kek_name, prefix, after, limit, include_deleted } = page;
        let mut subjects: Vec<String> = Vec::new();
        if limit == 0 {
            return Ok(subjects);
        }
        let Some(range) = subject_range(prefix, after) else {
            return Ok(subjects);
        };
        self.query_range("Query(DEK subjects)", dek_pk(kek_name), range, true, PAGE_ITEMS, |item| {
            let subject = item.string(SUBJECT)?;
            let listed = subjects.last().is_some_and(|last| last == subject);
            if !listed && subject.starts_with(prefix) && (include_deleted || !item.flag(DELETED)?) {
                subjects.push(subject.to_string());
            }
            Ok(subjects.len() < limit)
        })
        .await?;
        Ok(subjects)
    }

    async fn put_dek(&self, dek: &Dek, expect: Expect, kek: KekGuard) -> StoreResult<u64> {
        let condition = condition(expect);
        let mut item = record_item(dek_key(&dek.id())?, dek, condition.revision, dek.deleted)?;
        item.insert(SUBJECT.into(), s(&dek.subject));
        let written = item.clone();
        let revision = if kek == KekGuard::Unchecked {
            self.put_record("PutItem(DEK)", item, expect).await?
        } else {
            let revision = condition.revision;
            let put = conditioned!(self.put_of(item), condition);
            let items = vec![transact_item("Put(DEK)", Part::Put(put))?, self.kek_guard(&dek.kek_name, kek)?];
            Commit::unsubjected(self, "TransactWriteItems(DEK under live KEK)").group(items).commit().await?;
            revision
        };
        // The DEK's record only: the KEK's revision this raised is no KEK's content (see `acks`).
        self.acknowledge(|| Shown::key_record("DEK write", &written)).await?;
        Ok(revision)
    }

    async fn remove_dek(&self, id: &DekId, revision: u64) -> StoreResult<()> {
        let item_key = dek_key(id)?;
        self.remove_record("DeleteItem(DEK)", item_key.clone(), revision).await?;
        Ok(self.acknowledge(|| Shown::key_record_removed("DEK delete", &item_key)).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(subject: &str, algorithm: DekAlgorithm, version: i32) -> DekId {
        DekId { kek_name: "k".into(), subject: subject.into(), algorithm, version }
    }

    #[test]
    fn dek_keys_sort_by_subject_algorithm_then_version() -> StoreResult<()> {
        let mut ids = vec![
            id("a", DekAlgorithm::Aes256Gcm, 10),
            id("a", DekAlgorithm::Aes256Gcm, 2),
            id("a", DekAlgorithm::Aes128Gcm, 7),
            id("a b", DekAlgorithm::Aes128Gcm, 1),
            id("a-b", DekAlgorithm::Aes256Siv, 1),
            id("ab", DekAlgorithm::Aes128Gcm, 1),
            id("é", DekAlgorithm::Aes128Gcm, 1),
        ];
        let mut by_key = ids.iter().map(|id| Ok((dek_sk(id)?, id.clone()))).collect::<StoreResult<Vec<_>>>()?;
        by_key.sort();
        ids.sort_by(|x, y| (&x.subject, x.algorithm, x.version).cmp(&(&y.subject, y.algorithm, y.version)));
        assert_eq!(by_key.into_iter().map(|(_, id)| id).collect::<Vec<_>>(), ids);
        Ok(())
    }

    #[test]
    fn a_subject_range_holds_only_that_subject_and_algorithm() -> StoreResult<()> {
        let SortRange::Between(from, to) = version_range(&versions_prefix("a", DekAlgorithm::Aes256Gcm)?, 0) else {
            panic!("a version range is bounded");
        };
        let inside = dek_sk(&id("a", DekAlgorithm::Aes256Gcm, i32::MAX))?;
        assert!(from <= inside && inside <= to);
        for outside in [id("ab", DekAlgorithm::Aes256Gcm, 1), id("a", DekAlgorithm::Aes256Siv, 1)] {
            let key = dek_sk(&outside)?;
            assert!(key < from || key > to, "{key:?}");
        }
        Ok(())
    }

    #[test]
    fn negative_versions_and_control_characters_are_refused_not_misplaced() {
        assert!(dek_sk(&id("a", DekAlgorithm::Aes256Gcm, -1)).is_err());
        assert!(dek_sk(&id("a\u{1}b", DekAlgorithm::Aes256Gcm, 1)).is_err());
    }
}
