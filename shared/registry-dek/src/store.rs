//! The key store port: the only place the DEK registry touches persistent state.
//!
//! Storage-shaped like registry-core's `Store`: reads by KEK name or subject, pages in key order,
//! and conditional writes. No call may need a scan of the table: everything is addressed by a KEK
//! name (its DEKs sit under it, in subject, algorithm, version order).
//!
//! Every record carries a `revision`, set by the store: 1 when created, +1 on every write to it.
//! Writes state what they expect ([`Expect`]) and fail with [`StoreError::Conflict`] when the
//! record changed; the service then re-reads and decides again.
//!
//! The KEK/DEK race: a write that makes a DEK live passes [`KekGuard::Live`], which makes the same
//! atomic write require the KEK record present and not deleted and raise its revision by one.
//! KEK writes (delete, update) are conditional on the revision they read, so a KEK delete that
//! checked "no DEKs" cannot commit after a DEK was created under it, and a DEK cannot be created
//! under a KEK deleted before it. Backends do this atomically: a DynamoDB `TransactWriteItems` of
//! the DEK put and the KEK update, one SQLite transaction, one lock in memory.

use crate::model::{Dek, DekId, DekSeries, Kek};
use async_trait::async_trait;
pub use registry_core::revision::{Expect, Stored};
pub use registry_core::{StoreError, StoreResult};
use std::fmt::Debug;

/// What a DEK write requires of the DEK's KEK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KekGuard {
    /// Nothing (writes that make a DEK deleted: they cannot break the invariant).
    Unchecked,
    /// The KEK record exists and is not deleted; its revision rises by one in the same write.
    Live,
    /// The KEK record exists, deleted or not; its revision rises by one in the same write (a DEK
    /// created deleted: a permanent KEK delete that read no DEK under it cannot commit after it).
    Present,
}

/// A page of the subjects with a DEK under one KEK: the first `limit` after `after` that start
/// with `prefix` (empty: every subject), of subjects with a DEK of any algorithm; a subject whose
/// DEKs are all deleted counts only when `include_deleted`. A backend reads only the range of
/// subjects starting with `prefix` ([`prefix_end`]): one read answers whether a prefix has a
/// subject, however many others the KEK holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubjectPage<'a> {
    pub kek_name: &'a str,
    pub prefix: &'a str,
    pub after: Option<&'a str>,
    pub limit: usize,
    pub include_deleted: bool,
}

/// The least string above every string that starts with `prefix` (in code point order, which is
/// also UTF-8 byte order): `prefix` with its last character raised by one (dropping trailing
/// `char::MAX`s). `None` when no string bounds them (an empty prefix, or only `char::MAX`s).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Persistent KEKs and DEKs. Reads observe every write acknowledged before they started.
#[async_trait]
pub trait KeyStore: Send + Sync + Debug {
    // --- KEKs ------------------------------------------------------------------------------

    /// The KEK named `name`, deleted or not.
    async fn kek(&self, name: &str) -> StoreResult<Option<Stored<Kek>>>;

    /// KEKs (deleted ones too) in name order, the first `limit` whose name is after `after`.
    async fn keks(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<Stored<Kek>>>;

    /// Writes `kek` (its `name` is the key) if the record is as `expect` says; answers the new
    /// revision.
    async fn put_kek(&self, kek: &Kek, expect: Expect) -> StoreResult<u64>;

    /// Removes the KEK named `name` if it is at `revision`.
    async fn remove_kek(&self, name: &str, revision: u64) -> StoreResult<()>;

    // --- DEKs --------------------------------------------------------------------------------

    /// One DEK version, deleted or not.
    async fn dek(&self, id: &DekId) -> StoreResult<Option<Stored<Dek>>>;

    /// DEK versions of `series` (deleted ones too), ascending, the first `limit` with a version
    /// above `after_version`.
    async fn deks(&self, series: DekSeries<'_>, after_version: i32, limit: usize) -> StoreResult<Vec<Stored<Dek>>>;

    /// The highest DEK version of `series`; deleted versions count only when `include_deleted`.
    async fn latest_dek(&self, series: DekSeries<'_>, include_deleted: bool) -> StoreResult<Option<Stored<Dek>>>;

    /// Subjects with a DEK under the page's KEK (see [`SubjectPage`]), in order.
    async fn dek_subjects(&self, page: SubjectPage<'_>) -> StoreResult<Vec<String>>;

    /// Whether `kek_name` has a DEK (counting deleted ones when `include_deleted`).
    async fn has_deks(&self, kek_name: &str, include_deleted: bool) -> StoreResult<bool> {
        let page = SubjectPage { kek_name, prefix: "", after: None, limit: 1, include_deleted };
        Ok(!self.dek_subjects(page).await?.is_empty())
    }

    /// Writes `dek` (its id is the key) if the record is as `expect` says and the KEK as `kek`
    /// says, atomically; answers the DEK's new revision.
    async fn put_dek(&self, dek: &Dek, expect: Expect, kek: KekGuard) -> StoreResult<u64>;

    /// Removes one DEK version if it is at `revision`.
    async fn remove_dek(&self, id: &DekId, revision: u64) -> StoreResult<()>;
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_end_bounds_exactly_the_strings_with_the_prefix() {
        assert_eq!(prefix_end("team-a."), Some("team-a/".to_string()));
        assert_eq!(prefix_end("a\u{d7ff}"), Some("a\u{e000}".to_string()), "surrogates are no characters");
        assert_eq!(prefix_end("a\u{10ffff}"), Some("b".to_string()));
        assert_eq!(prefix_end(""), None);
        assert_eq!(prefix_end("\u{10ffff}"), None);
        let end = prefix_end("team-a.").unwrap_or_default();
        for inside in ["team-a.", "team-a.x", "team-a.\u{10ffff}"] {
            assert!(inside >= "team-a." && inside < end.as_str(), "{inside}");
        }
        for outside in ["team-a", "team-a/", "team-b", "team-a-"] {
            assert!(outside < "team-a." || outside >= end.as_str(), "{outside}");
        }
    }
}
