//! A bounded, short-lived memory of answers this process read from the store, forgotten all at
//! once when this process writes something that could change them.
//!
//! Correctness within one process: a caller reads [`Recent::generation`] before it reads the
//! store and passes it to [`Recent::remember`]; every write that could change a remembered answer
//! calls [`Recent::forget_all`] after the store call, which bumps the generation. So an answer read
//! before such a write is either dropped by the write or never stored after it. Across processes
//! an answer may outlive a change made elsewhere by at most the TTL the caller passes to
//! [`Recent::get`]; a zero TTL turns the memory off.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Answers keyed by `K`, each with what it costs (bytes or entries) toward `max_cost`; past the
/// bound the memory starts over (simple, and a warm working set fills it again in one pass).
#[derive(Debug)]
pub(super) struct Recent<K, V> {
    max_cost: usize,
    state: Mutex<State<K, V>>,
}

#[derive(Debug)]
struct State<K, V> {
    generation: u64,
    cost: usize,
    answers: HashMap<K, Remembered<V>>,
}

#[derive(Debug)]
struct Remembered<V> {
    at: Instant,
    cost: usize,
    value: V,
}

impl<K: Eq + Hash, V: Clone> Recent<K, V> {
    pub(super) fn new(max_cost: usize) -> Self {
        Recent { max_cost, state: Mutex::new(State { generation: 0, cost: 0, answers: HashMap::new() }) }
    }

    fn state(&self) -> MutexGuard<'_, State<K, V>> {
        // Every mutation completes under the guard, so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answer remembered for `key` less than `ttl` ago.
    pub(super) fn get(&self, key: &K, ttl: Duration) -> Option<V> {
        let state = self.state();
        let remembered = state.answers.get(key)?;
        (remembered.at.elapsed() < ttl).then(|| remembered.value.clone())
    }

    /// The generation a read starts in; pass it to [`Recent::remember`].
    pub(super) fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Remembers `value` for `key`, unless something was forgotten since `generation` was read
    /// or the answer alone costs more than half the bound.
    pub(super) fn remember(&self, key: K, value: V, cost: usize, generation: u64) {
        if cost > self.max_cost / 2 {
            return;
        }
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        if state.cost + cost > self.max_cost {
            state.answers.clear();
            state.cost = 0;
        }
        let previous = state.answers.insert(key, Remembered { at: Instant::now(), cost, value });
        state.cost = state.cost + cost - previous.map_or(0, |p| p.cost);
    }

    /// Forgets every answer; reads that started before this call will not be remembered.
    pub(super) fn forget_all(&self) {
        let mut state = self.state();
        state.generation = state.generation.wrapping_add(1);
        state.answers.clear();
        state.cost = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(60);

    #[test]
    fn answers_expire_and_a_forget_wins_over_an_older_read() {
        let recent: Recent<u32, &str> = Recent::new(100);
        recent.remember(1, "one", 1, recent.generation());
        assert_eq!(recent.get(&1, LONG), Some("one"));
        assert_eq!(recent.get(&1, Duration::ZERO), None, "a zero TTL never answers from memory");
        assert_eq!(recent.get(&2, LONG), None);

        let before_write = recent.generation();
        recent.forget_all();
        assert_eq!(recent.get(&1, LONG), None, "a write forgets everything");
        recent.remember(1, "stale", 1, before_write);
        assert_eq!(recent.get(&1, LONG), None, "a read from before the write is dropped");
        recent.remember(1, "fresh", 1, recent.generation());
        assert_eq!(recent.get(&1, LONG), Some("fresh"));
    }

    #[test]
    fn the_cost_bound_is_kept() {
        let recent: Recent<u32, u32> = Recent::new(10);
        let generation = recent.generation();
        recent.remember(0, 0, 6, generation);
        assert_eq!(recent.get(&0, LONG), None, "an answer over half the bound is not kept");
        for key in 0..25 {
            recent.remember(key, key, 3, generation);
            let state = recent.state();
            assert!(state.cost <= 10 && state.cost == 3 * state.answers.len(), "cost {}", state.cost);
        }
        assert_eq!(recent.get(&24, LONG), Some(24), "the newest answer survives a start-over");
        recent.remember(24, 42, 3, generation);
        assert_eq!(recent.get(&24, LONG), Some(42), "remembering a key again replaces it");
        let state = recent.state();
        assert_eq!(state.cost, 3 * state.answers.len());
    }
}
