//! A bounded, short-lived memory of answers this process read from the store, forgotten all at
//! once when this process writes something that could change them.
//!
//! Correctness within one process: a caller reads [`Recent::generation`] (the generation and the
//! instant) before it reads the store and passes it to [`Recent::remember`]; every write that could change a remembered answer
//! calls [`Recent::forget_all`] after the store call, which bumps the generation. So an answer read
//! before such a write is either dropped by the write or never stored after it. Across processes
//! an answer may outlive a change made elsewhere by at most the TTL the caller passes to
//! [`Recent::remember`], counted from the start of its read; a zero TTL turns the memory off. Each answer is kept for a share of the
//! TTL between one half and all of it, spread by a counter: answers read in one burst (a warm-up,
//! a rebalance) then expire over half a TTL instead of all at once, which would send a burst of
//! reads to the store and show in the tail latency.

use crate::bounded::{BoundedMap, Hasher};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Answers keyed by `K`, each with what it costs (bytes or entries) toward `max_cost`, in
/// [`BoundedMap`]s: past the bound the answers least recently used are dropped first. The answers
/// are split over shards by key, each under its own lock with its share of the bound, so requests
/// for different keys rarely wait for one another.
#[derive(Debug)]
pub(super) struct Recent<K, V> {
    /// Bumped by every [`Recent::forget_all`], before the shards are cleared.
    generation: AtomicU64,
    hasher: Hasher,
    shards: Box<[Mutex<Shard<K, V>>]>,
}

#[derive(Debug)]
struct Shard<K, V> {
    /// Counts remembered answers; spreads their lifetimes.
    remembered: u64,
    answers: BoundedMap<K, Remembered<V>>,
}

/// The generation a read of the store starts in and when it started ([`Recent::generation`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadStart {
    generation: u64,
    at: Instant,
}

#[derive(Debug, Clone)]
struct Remembered<V> {
    until: Instant,
    /// The generation its read started in (the one it was remembered in).
    generation: u64,
    value: V,
}

/// Whether a remembered answer, copied out of the memory ([`Recent::get_fresh`]), is one the
/// memory would still give: nothing was forgotten since it was remembered, and it has not expired
/// ([`Recent::is_fresh`]). An answer dropped for room is still fresh: room is not a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    generation: u64,
    until: Instant,
}

impl<K: Eq + Hash + Clone, V: Clone> Recent<K, V> {
    /// `shards` shards (at least one) of `max_cost / shards` each.
    pub(super) fn sharded(max_cost: usize, shards: usize) -> Self {
        let shards = shards.max(1);
        let shard = || Mutex::new(Shard { remembered: 0, answers: BoundedMap::new(max_cost / shards) });
        Recent {
            generation: AtomicU64::new(0),
            hasher: Hasher::default(),
            shards: (0..shards).map(|_| shard()).collect(),
        }
    }

    fn shard(&self, key: &K) -> MutexGuard<'_, Shard<K, V>> {
        let index = (self.hasher.hash_one(key) % self.shards.len() as u64) as usize;
        // Every mutation completes under the guard, so a poisoned lock is still consistent.
        self.shards[index].lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answer remembered for `key`, while it lives.
    pub(super) fn get(&self, key: &K) -> Option<V> {
        let remembered = self.shard(key).answers.get(key)?;
        (Instant::now() < remembered.until).then_some(remembered.value)
    }

    /// The answer remembered for `key` while it lives, with its [`Freshness`] (for a copy kept
    /// elsewhere). Stricter than [`Recent::get`]: an answer remembered before a forget that is
    /// still clearing the shards is not given.
    pub(super) fn get_fresh(&self, key: &K) -> Option<(V, Freshness)> {
        let remembered = self.shard(key).answers.get(key)?;
        let freshness = Freshness { generation: remembered.generation, until: remembered.until };
        self.is_fresh(&freshness).then_some((remembered.value, freshness))
    }

    /// Whether an answer of [`Recent::get_fresh`] is still one this memory would give.
    pub(super) fn is_fresh(&self, freshness: &Freshness) -> bool {
        self.generation.load(Ordering::SeqCst) == freshness.generation && Instant::now() < freshness.until
    }

    /// Where a read starts: the generation and the instant; pass it to [`Recent::remember`].
    pub(super) fn generation(&self) -> ReadStart {
        ReadStart { generation: self.generation.load(Ordering::SeqCst), at: Instant::now() }
    }

    /// Remembers `value` for `key` for at most `ttl` counted from `start` (see the module doc),
    /// unless something was forgotten since `start` or the answer alone costs more than half the
    /// shard's bound. Counting from the read's start, not its end, bounds how long an answer
    /// outlives a change made elsewhere by `ttl` however long the read took (what an IMPORT
    /// rebinding a freed ID waits out, see `live_ids`). Returns the answer's [`Freshness`] when it
    /// is remembered (not when the TTL is zero, a forget came first, or it costs too much).
    pub(super) fn remember(&self, key: K, value: V, cost: usize, start: ReadStart, ttl: Duration) -> Option<Freshness> {
        if ttl.is_zero() {
            return None;
        }
        let mut shard = self.shard(&key);
        // Checked under the shard's lock: a forget bumps the generation before it takes the lock
        // to clear the shard, so an answer is either refused here or cleared by that forget.
        if self.generation.load(Ordering::SeqCst) != start.generation {
            return None;
        }
        shard.remembered = shard.remembered.wrapping_add(1);
        let until = start.at + ttl.mul_f64(lifetime_share(shard.remembered));
        let held = shard.answers.insert(key, Remembered { until, generation: start.generation, value }, cost);
        held.then_some(Freshness { generation: start.generation, until })
    }

    /// Forgets every answer; reads that started before this call will not be remembered.
    pub(super) fn forget_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        for shard in &self.shards {
            shard.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).answers.clear();
        }
    }
}

/// The `n`-th answer's share of the TTL, in [0.5, 1): the fractional parts of `n` times the
/// golden ratio are evenly spread for any run of consecutive `n`.
fn lifetime_share(n: u64) -> f64 {
    const GOLDEN: f64 = 0.618_033_988_749_895;
    let fraction = (n as f64 * GOLDEN).fract();
    0.5 + fraction / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Longer than any run: an answer remembered this long cannot expire between two lines.
    const LONG: Duration = Duration::from_secs(24 * 3600);

    #[test]
    fn answers_expire_and_a_forget_wins_over_an_older_read() {
        let recent: Recent<u32, &str> = Recent::sharded(100, 1);
        assert!(recent.remember(1, "one", 1, recent.generation(), LONG).is_some());
        assert_eq!(recent.get(&1), Some("one"));
        assert_eq!(recent.get(&2), None);
        assert_eq!(recent.remember(2, "two", 1, recent.generation(), Duration::ZERO), None);
        assert_eq!(recent.get(&2), None, "a zero TTL never remembers");
        assert_eq!(recent.remember(2, "two", 51, recent.generation(), LONG), None, "over half the bound");
        recent.remember(3, "three", 1, recent.generation(), Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(25));
        assert_eq!(recent.get(&3), None, "an answer never outlives its TTL");

        let before_write = recent.generation();
        recent.forget_all();
        assert_eq!(recent.get(&1), None, "a write forgets everything");
        assert_eq!(recent.remember(1, "stale", 1, before_write, LONG), None);
        assert_eq!(recent.get(&1), None, "a read from before the write is dropped");
        recent.remember(1, "fresh", 1, recent.generation(), LONG);
        assert_eq!(recent.get(&1), Some("fresh"));
    }

    #[test]
    fn a_copied_answer_stays_fresh_until_it_expires_or_anything_is_forgotten() {
        let recent: Recent<u32, &str> = Recent::sharded(100, 2);
        let remembered = recent.remember(1, "one", 1, recent.generation(), LONG);
        let (value, kept) = recent.get_fresh(&1).unwrap_or_else(|| panic!("remembered"));
        assert_eq!(value, "one");
        assert_eq!(remembered, Some(kept), "remembering gives the freshness a read gives");
        assert!(recent.is_fresh(&kept));
        recent.forget_all();
        assert!(!recent.is_fresh(&kept), "a forget ends every copy");
        assert_eq!(recent.get_fresh(&1), None);

        recent.remember(2, "two", 1, recent.generation(), Duration::from_millis(20));
        let (_, short) = recent.get_fresh(&2).unwrap_or_else(|| panic!("remembered"));
        std::thread::sleep(Duration::from_millis(25));
        assert!(!recent.is_fresh(&short), "a copy expires with its answer");

        let before_forget = recent.generation();
        recent.remember(3, "three", 1, before_forget, LONG);
        let (_, kept) = recent.get_fresh(&3).unwrap_or_else(|| panic!("remembered"));
        // A forget that bumped the generation but has not cleared this shard yet.
        recent.generation.fetch_add(1, Ordering::SeqCst);
        assert_eq!(recent.get_fresh(&3), None, "not given while a forget clears the shards");
        assert!(!recent.is_fresh(&kept));
    }

    #[test]
    fn the_cost_bound_is_kept() {
        let recent: Recent<u32, u32> = Recent::sharded(10, 1);
        let generation = recent.generation();
        recent.remember(0, 0, 6, generation, LONG);
        assert_eq!(recent.get(&0), None, "an answer over half the bound is not kept");
        for key in 0..25 {
            recent.remember(key, key, 3, generation, LONG);
            let shard = recent.shard(&key);
            let cost = shard.answers.bytes();
            assert!(cost <= 10 && cost == 3 * shard.answers.len(), "cost {cost}");
        }
        assert_eq!(recent.get(&24), Some(24), "the newest answer survives");
        recent.remember(24, 42, 3, generation, LONG);
        assert_eq!(recent.get(&24), Some(42), "remembering a key again replaces it");
        let shard = recent.shard(&24);
        assert_eq!(shard.answers.bytes(), 3 * shard.answers.len());
    }

    #[test]
    fn a_forget_clears_every_shard_and_drops_older_reads_in_each() {
        let recent: Recent<u32, u32> = Recent::sharded(1600, 16);
        let before = recent.generation();
        (0..100).for_each(|key| {
            recent.remember(key, key, 1, before, LONG);
        });
        assert!((0..100).all(|key| recent.get(&key) == Some(key)));
        recent.forget_all();
        assert!((0..100).all(|key| recent.get(&key).is_none()), "every shard forgets");
        (0..100).for_each(|key| {
            recent.remember(key, key, 1, before, LONG);
        });
        assert!((0..100).all(|key| recent.get(&key).is_none()), "no shard keeps a read from before the forget");
    }

    #[test]
    fn lifetimes_of_a_burst_spread_over_the_second_half_of_the_ttl() {
        let shares: Vec<f64> = (1..=1000).map(lifetime_share).collect();
        assert!(shares.iter().all(|share| (0.5..1.0).contains(share)));
        for tenth in 0..10 {
            let low = 0.5 + f64::from(tenth) / 20.0;
            let in_slice = shares.iter().filter(|share| (low..low + 0.05).contains(*share)).count();
            assert!((80..=120).contains(&in_slice), "{in_slice} of 1000 in [{low}, {})", low + 0.05);
        }
    }
}
