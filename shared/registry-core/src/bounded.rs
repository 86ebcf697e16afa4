//! [`BoundedMap`]: the byte-bounded in-memory map behind every cache of this crate (store answers,
//! parsed schemas, recent lookups) and the router's rendered answers.

use std::collections::HashMap;
use std::hash::Hash;

/// The maps' hasher: foldhash, seeded per process. Every hit hashes its key, and SipHash (the
/// standard default) was a visible part of a cached answer's cost; keys an attacker may pick (IDs,
/// subjects) still cannot be aimed at one bucket without the process's random hash key.
pub type Hasher = foldhash::fast::RandomState;

/// A map whose entries' charged bytes never exceed a bound: an LRU approximation with O(1)
/// operations in two generations. Inserts go to `young`; when `young` would pass half the bound
/// it becomes `old` and the previous `old` is dropped. A hit in `old` moves the entry back to
/// `young`, so entries in use survive. Not synchronised: callers hold it under their own lock.
#[derive(Debug)]
pub struct BoundedMap<K, V> {
    max_bytes: usize,
    young: Generation<K, V>,
    old: Generation<K, V>,
}

#[derive(Debug)]
struct Generation<K, V> {
    entries: HashMap<K, (V, usize), Hasher>,
    bytes: usize,
}

impl<K, V> Default for Generation<K, V> {
    fn default() -> Self {
        Generation { entries: HashMap::default(), bytes: 0 }
    }
}

impl<K: Eq + Hash, V> Generation<K, V> {
    fn remove(&mut self, key: &K) -> Option<(V, usize)> {
        let (value, bytes) = self.entries.remove(key)?;
        self.bytes -= bytes;
        Some((value, bytes))
    }
}

impl<K: Eq + Hash + Clone, V: Clone> BoundedMap<K, V> {
    /// An empty map holding at most `max_bytes` (0 holds nothing).
    pub fn new(max_bytes: usize) -> Self {
        BoundedMap { max_bytes, young: Generation::default(), old: Generation::default() }
    }

    /// The value under `key`, if held; a hit keeps the entry through the next rotation.
    pub fn get(&mut self, key: &K) -> Option<V> {
        self.read(key, V::clone)
    }

    /// What `read` takes from the value under `key`, if held (the value itself is not cloned); a
    /// hit keeps the entry through the next rotation.
    pub fn read<R>(&mut self, key: &K, read: impl FnOnce(&V) -> R) -> Option<R> {
        if let Some((value, _)) = self.young.entries.get(key) {
            return Some(read(value));
        }
        let (value, bytes) = self.old.remove(key)?;
        let taken = read(&value);
        self.insert(key.clone(), value, bytes);
        Some(taken)
    }

    /// Holds `value` under `key`, charged `bytes`, replacing any entry for `key`. An entry over
    /// half the bound is not held (and `key` is then absent). Says whether it is held.
    pub fn insert(&mut self, key: K, value: V, bytes: usize) -> bool {
        self.young.remove(&key);
        self.old.remove(&key);
        if !self.can_hold(bytes) {
            return false;
        }
        let half = self.max_bytes / 2;
        if self.young.bytes + bytes > half {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.bytes += bytes;
        self.young.entries.insert(key, (value, bytes));
        true
    }

    /// Whether an entry charged `bytes` would be held: at most half the bound (so a caller can
    /// skip building an entry that would not be).
    pub fn can_hold(&self, bytes: usize) -> bool {
        self.max_bytes > 0 && bytes <= self.max_bytes / 2
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.young = Generation::default();
        self.old = Generation::default();
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.young.entries.len() + self.old.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes charged for the entries held; never above the bound.
    pub fn bytes(&self) -> usize {
        self.young.bytes + self.old.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_kept_and_entries_in_use_survive() {
        let mut map = BoundedMap::new(100);
        map.insert(0, "kept", 10);
        for key in 1..50 {
            map.insert(key, "filler", 10);
            assert_eq!(map.get(&0), Some("kept"), "a hit before each rotation keeps the entry (key {key})");
            assert!(map.bytes() <= 100 && map.bytes() == 10 * map.len(), "{} bytes", map.bytes());
        }
        assert_eq!(map.get(&1), None, "an entry nobody asked for is dropped after two rotations");
        assert_eq!(map.get(&49), Some("filler"));
    }

    #[test]
    fn insert_replaces_and_oversized_entries_are_not_held() {
        let mut map = BoundedMap::new(100);
        assert!(map.insert("a", 1, 10));
        assert!(map.insert("a", 2, 20));
        assert_eq!((map.get(&"a"), map.len(), map.bytes()), (Some(2), 1, 20));
        assert!(map.can_hold(50) && !map.can_hold(51));
        assert!(!map.insert("a", 3, 51), "over half the bound");
        assert_eq!((map.get(&"a"), map.len(), map.bytes()), (None, 0, 0), "over half the bound");
        map.insert("b", 1, 10);
        map.clear();
        assert_eq!((map.get(&"b"), map.len(), map.bytes()), (None, 0, 0));
        let mut nothing = BoundedMap::new(0);
        assert!(!nothing.can_hold(0) && !nothing.insert("c", 1, 0));
        assert_eq!(nothing.get(&"c"), None, "a zero bound holds nothing");
    }
}
