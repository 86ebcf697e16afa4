//! `CachedStore`: a [`Store`] wrapper that keeps the immutable answers (body by fingerprint,
//! fingerprint by guid) of a warm process in memory, within a byte bound.
//!
//! Why this is safe: bodies are content-addressed (a fingerprint names one text forever) and a
//! guid is bound to one fingerprint forever once bound (see [`Store::bind_guid`]); no store call
//! removes a body or a guid binding. ID bindings are not cached in either direction: a hard
//! delete of the last row carrying an ID unbinds its fingerprint ([`Store::hard_delete_versions`]),
//! so the same schema registered again gets a new ID, and IMPORT may then rebind the ID itself to
//! another schema ([`Store::bind_id_in`]). The registry remembers carried IDs for a short, bounded
//! time instead (`registry::live_ids`).
//! Only positive answers are cached: an absent body or binding may appear a moment later.
//! Everything mutable (versions, config, mode, listings, the ID counter) goes straight to the
//! inner store on every call, so the read-after-write contract of [`Store`] still holds.
//!
//! The [`Store`] impl is generated from the trait's one method list
//! ([`crate::store::for_each_store_method!`]), so every method, one with a default body included,
//! reaches the inner store's own implementation.

use crate::bounded::BoundedMap;
use crate::model::{ConfigRecord, Context, Guid, SchemaBody, SchemaId, Scope, Subject, Version, VersionRow};
use crate::store::{
    CommitHints, ConfiguredPage, GuidCarried, HardDeletion, IdRowsPage, LayeredContext, NewVersion, Preconditions,
    Revision, SettingWrite, SoftDeletion, Store, StoreResult, SubjectsPage, VersionsPage,
};
use async_trait::async_trait;
use registry_schema::Fingerprint;
use std::sync::{Mutex, MutexGuard};

/// The default bound of [`CachedStore::new`]: 32 MiB of cached answers.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Bytes charged per entry on top of its payload (key, hash-table slot, enum tags).
const ENTRY_OVERHEAD: usize = 96;

/// A [`Store`] that answers repeated immutable reads from memory. See the module docs for what
/// is cached and why that never serves stale data.
#[derive(Debug)]
pub struct CachedStore<S> {
    inner: S,
    cache: Mutex<Cache>,
}

/// What [`CachedStore::stats`] reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Cached entries right now.
    pub entries: usize,
    /// Bytes charged for them (payload estimate plus a fixed per-entry overhead); never above the bound.
    pub bytes: usize,
    /// Reads answered from memory.
    pub hits: u64,
    /// Reads passed to the inner store.
    pub misses: u64,
}

impl<S: Store> CachedStore<S> {
    /// `inner` with a cache of at most [`DEFAULT_CACHE_BYTES`].
    pub fn new(inner: S) -> Self {
        Self::with_capacity(inner, DEFAULT_CACHE_BYTES)
    }

    /// `inner` with a cache of at most `max_bytes` (0 disables caching).
    pub fn with_capacity(inner: S, max_bytes: usize) -> Self {
        CachedStore { inner, cache: Mutex::new(Cache::new(max_bytes)) }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Current size and hit counts.
    pub fn stats(&self) -> CacheStats {
        let cache = self.cache();
        CacheStats { entries: cache.map.len(), bytes: cache.map.bytes(), hits: cache.hits, misses: cache.misses }
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // Every mutation completes before the guard drops, so a poisoned lock is still consistent.
        self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Body(Fingerprint),
    FingerprintOfGuid(Guid),
}

#[derive(Debug, Clone)]
enum Value {
    Body(SchemaBody),
    Fingerprint(Fingerprint),
}

/// The cached answers ([`BoundedMap`]) and the hit counts.
#[derive(Debug)]
struct Cache {
    map: BoundedMap<Key, Value>,
    hits: u64,
    misses: u64,
}

impl Cache {
    fn new(max_bytes: usize) -> Self {
        Cache { map: BoundedMap::new(max_bytes), hits: 0, misses: 0 }
    }

    fn get(&mut self, key: &Key) -> Option<Value> {
        let value = self.map.get(key);
        match value {
            Some(_) => self.hits += 1,
            None => self.misses += 1,
        }
        value
    }

    fn put(&mut self, key: Key, value: Value) {
        let bytes = ENTRY_OVERHEAD + value_bytes(&value);
        self.map.insert(key, value, bytes);
    }
}

fn value_bytes(value: &Value) -> usize {
    match value {
        Value::Body(body) => {
            let json = |v: &Option<serde_json::Value>| v.as_ref().map_or(0, |v| v.to_string().len());
            let references: usize = body.references.iter().map(|r| r.name.len() + r.subject.len() + 32).sum::<usize>();
            body.schema.len() + references + json(&body.metadata) + json(&body.rule_set)
        }
        Value::Fingerprint(_) => 0,
    }
}

/// Implements [`Store`] for [`CachedStore`] from [`for_each_store_method!`]: every method goes to
/// [`cached_call!`], which answers the cached ones and forwards the rest to the inner store.
macro_rules! cached_store {
    ($($kind:ident $method:ident($($arg:ident: $ty:ty),*) -> $answer:ty
        => $variant:ident $({ $($field:ident: $field_ty:ty = $value:expr),* })?;)*) => {
        #[async_trait]
        impl<S: Store> Store for CachedStore<S> {
            $(
                async fn $method(&self, $($arg: $ty),*) -> StoreResult<$answer> {
                    cached_call!(self, $method($($arg),*))
                }
            )*

            fn cache_stats(&self) -> Option<CacheStats> {
                Some(self.stats())
            }
        }
    };
}

/// One [`CachedStore`] method: the immutable reads and the guid binding go through the cache; the
/// rest (mutable data, and the ID bindings a hard delete or IMPORT may change) to the inner store.
macro_rules! cached_call {
    ($self:ident, get_body($fingerprint:ident)) => {
        $self.cached_body($fingerprint).await
    };
    ($self:ident, bind_guid($guid:ident, $fingerprint:ident)) => {
        $self.bind_guid_cached($guid, $fingerprint).await
    };
    ($self:ident, fingerprint_for_guid($guid:ident)) => {
        $self.cached_fingerprint_for_guid($guid).await
    };
    ($self:ident, carried_id_for_guid($guid:ident)) => {
        $self.carried_id_for_guid_caching($guid).await
    };
    ($self:ident, $method:ident($($arg:ident),*)) => {
        $self.inner.$method($($arg),*).await
    };
}

crate::store::for_each_store_method!(cached_store);

impl<S: Store> CachedStore<S> {
    async fn cached_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        let key = Key::Body(*fingerprint);
        if let Some(Value::Body(body)) = self.cache().get(&key) {
            return Ok(Some(body));
        }
        let body = self.inner.get_body(fingerprint).await?;
        if let Some(body) = &body {
            self.cache().put(key, Value::Body(body.clone()));
        }
        Ok(body)
    }

    async fn bind_guid_cached(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.inner.bind_guid(guid, fingerprint).await?;
        self.cache().put(Key::FingerprintOfGuid(*guid), Value::Fingerprint(*fingerprint));
        Ok(())
    }

    async fn cached_fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        let key = Key::FingerprintOfGuid(*guid);
        if let Some(Value::Fingerprint(fingerprint)) = self.cache().get(&key) {
            return Ok(Some(fingerprint));
        }
        let fingerprint = self.inner.fingerprint_for_guid(guid).await?;
        if let Some(fingerprint) = fingerprint {
            self.cache().put(key, Value::Fingerprint(fingerprint));
        }
        Ok(fingerprint)
    }

    /// Whether a row carries the ID may change (a hard delete), so it is always asked; the guid's
    /// fingerprint in a positive answer is immutable and cached.
    async fn carried_id_for_guid_caching(&self, guid: &Guid) -> StoreResult<Option<GuidCarried>> {
        let carried = self.inner.carried_id_for_guid(guid).await?;
        if let Some(found) = &carried {
            self.cache().put(Key::FingerprintOfGuid(*guid), Value::Fingerprint(found.fingerprint));
        }
        Ok(carried)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used)]

    use super::*;
    use crate::memory::MemoryStore;
    use crate::testkit::{self, HookedStore, StoreCall, StoreHook, StoreTestExt, record_body, row, unique_subject};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the reads reaching the store behind the cache.
    #[derive(Debug, Default)]
    struct ReadCounts {
        immutable_reads: AtomicUsize,
        other_reads: AtomicUsize,
    }

    impl StoreHook for ReadCounts {
        fn before(&self, call: StoreCall) -> StoreResult<()> {
            let counter = match call {
                StoreCall::GetBody
                | StoreCall::IdForFingerprint
                | StoreCall::FingerprintForId
                | StoreCall::FingerprintForGuid => &self.immutable_reads,
                call if call.is_write() => return Ok(()),
                _ => &self.other_reads,
            };
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    type Counting = HookedStore<ReadCounts>;

    /// A MemoryStore that counts the reads reaching it.
    fn counting() -> Counting {
        HookedStore::new(Arc::new(MemoryStore::new()), ReadCounts::default())
    }

    fn immutable(store: &CachedStore<Counting>) -> usize {
        store.inner().hook().immutable_reads.load(Ordering::SeqCst)
    }

    fn other(store: &CachedStore<Counting>) -> usize {
        store.inner().hook().other_reads.load(Ordering::SeqCst)
    }

    async fn stored(store: &CachedStore<Counting>, tag: &str) -> (Fingerprint, SchemaBody, SchemaId) {
        let body = record_body(tag);
        let fingerprint = body.fingerprint();
        store.put_body(&fingerprint, &body).await.expect("put_body");
        let id = store.inner().inner().allocate_id(&fingerprint).await.expect("allocate_id");
        (fingerprint, body, id)
    }

    #[tokio::test]
    async fn repeated_immutable_reads_are_answered_from_memory() {
        let store = CachedStore::new(counting());
        let (fingerprint, body, id) = stored(&store, "hit").await;
        for _ in 0..3 {
            assert_eq!(store.get_body(&fingerprint).await.unwrap(), Some(body.clone()));
            assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(fingerprint));
            assert_eq!(store.id_for_fingerprint(&fingerprint).await.unwrap(), Some(id));
        }
        // Bodies are immutable: cached. ID bindings are not (a hard delete unbinds the schema, and
        // IMPORT may then rebind the ID), so every read of them reaches the store.
        assert_eq!(immutable(&store), 1 + 3 + 3, "only the first body read reaches the store");
        let stats = store.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (2, 1, 1));
    }

    #[tokio::test]
    async fn absent_answers_are_not_cached() {
        let store = CachedStore::new(counting());
        let body = record_body("later");
        let fingerprint = body.fingerprint();
        assert_eq!(store.get_body(&fingerprint).await.unwrap(), None);
        assert_eq!(store.id_for_fingerprint(&fingerprint).await.unwrap(), None);
        assert_eq!(store.fingerprint_for_id(SchemaId(1)).await.unwrap(), None);

        // Another process writes them.
        store.inner().inner().put_body(&fingerprint, &body).await.unwrap();
        let id = store.inner().inner().allocate_id(&fingerprint).await.unwrap();
        assert_eq!(store.get_body(&fingerprint).await.unwrap(), Some(body));
        assert_eq!(store.id_for_fingerprint(&fingerprint).await.unwrap(), Some(id));
        assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(fingerprint));
        assert_eq!(immutable(&store), 6);
    }

    #[tokio::test]
    async fn an_id_rebound_by_import_is_read_again() {
        let store = CachedStore::new(counting());
        let (old, _, id) = stored(&store, "rebound-old").await;
        assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(old));
        // No row carries the ID: IMPORT (here through the store behind the cache, as another
        // process would) gives it another schema.
        let new = record_body("rebound-new").fingerprint();
        store.inner().inner().bind_id(id, &new).await.unwrap();
        assert_eq!(store.fingerprint_for_id(id).await.unwrap(), Some(new));
        assert_eq!(store.id_for_fingerprint(&old).await.unwrap(), None, "the old schema is unbound");
    }

    #[tokio::test]
    async fn guid_bindings_are_cached_once_present() {
        let store = CachedStore::new(counting());
        let body = record_body("guid");
        let (guid, fingerprint) = (Guid::of(&body), body.fingerprint());
        assert_eq!(store.fingerprint_for_guid(&guid).await.unwrap(), None);
        // Another process binds it: the absent answer was not cached.
        store.inner().inner().bind_guid(&guid, &fingerprint).await.unwrap();
        for _ in 0..3 {
            assert_eq!(store.fingerprint_for_guid(&guid).await.unwrap(), Some(fingerprint));
        }
        assert_eq!(immutable(&store), 2, "one miss while absent, one read once bound, then memory");

        let other = record_body("guid-bound-here");
        let (other_guid, other_fingerprint) = (Guid::of(&other), other.fingerprint());
        store.bind_guid(&other_guid, &other_fingerprint).await.unwrap();
        assert_eq!(store.fingerprint_for_guid(&other_guid).await.unwrap(), Some(other_fingerprint));
        assert_eq!(immutable(&store), 2, "a guid this process bound resolves without a read");
    }

    #[tokio::test]
    async fn mutable_data_always_reaches_the_store() {
        let store = CachedStore::new(counting());
        let (fingerprint, _, id) = stored(&store, "mutable").await;
        let subject = unique_subject("mutable");
        store
            .create_version(
                &row(&subject, 1, id, fingerprint),
                &crate::store::Preconditions::default(),
                &crate::CommitHints::default(),
            )
            .await
            .unwrap();
        for _ in 0..2 {
            assert_eq!(store.versions(&subject).await.unwrap().len(), 1);
            assert!(store.get_version(&subject, Version(1)).await.unwrap().is_some());
            assert_eq!(store.get_config(&Scope::Global).await.unwrap(), None);
            assert_eq!(store.get_mode(&Scope::Global).await.unwrap(), None);
        }
        assert_eq!(other(&store), 8);
        store.set_version_deleted(&subject, Version(1), true).await.unwrap();
        assert!(store.get_version(&subject, Version(1)).await.unwrap().is_some_and(|row| row.deleted));
    }

    #[tokio::test]
    async fn the_byte_bound_is_respected_and_recent_entries_survive() {
        let bound = 64 * 1024;
        let store = CachedStore::with_capacity(counting(), bound);
        let mut fingerprints = Vec::new();
        for i in 0..500 {
            let (fingerprint, _, _) = stored(&store, &format!("bound-{i}-{}", "x".repeat(200))).await;
            store.get_body(&fingerprint).await.unwrap();
            assert!(store.stats().bytes <= bound, "cache holds {} bytes, bound {bound}", store.stats().bytes);
            fingerprints.push(fingerprint);
        }
        assert!(store.stats().entries < 500, "old entries were evicted");
        let reads = immutable(&store);
        let last = *fingerprints.last().unwrap();
        store.get_body(&last).await.unwrap();
        assert_eq!(immutable(&store), reads, "the most recent entry is still cached");
        store.get_body(&fingerprints[0]).await.unwrap();
        assert_eq!(immutable(&store), reads + 1, "the oldest entry was evicted");
    }

    #[tokio::test]
    async fn a_zero_bound_caches_nothing() {
        let store = CachedStore::with_capacity(counting(), 0);
        let (fingerprint, _, _) = stored(&store, "zero").await;
        store.get_body(&fingerprint).await.unwrap();
        store.get_body(&fingerprint).await.unwrap();
        assert_eq!(immutable(&store), 2);
        assert_eq!(store.stats().bytes, 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn cached_memory_store_passes_the_conformance_suite() {
        let store: Arc<dyn Store> = Arc::new(CachedStore::new(MemoryStore::new()));
        testkit::run_conformance(store.clone()).await;
        testkit::run_conformance(store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_tiny_cache_passes_the_conformance_suite() {
        testkit::run_conformance(Arc::new(CachedStore::with_capacity(MemoryStore::new(), 2048))).await;
    }
}
