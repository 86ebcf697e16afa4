//! [`PasswordPool`]: where argon2 verifications run: on tokio's blocking threads, at most `workers` at once,
//! behind a gate that keeps one client address from delaying the others.
//!
//! Why: a verification costs tens of milliseconds of CPU and the hash's memory (19 MiB at the default cost) by
//! design. On the async worker threads a few clients sending wrong passwords would hold every other request
//! behind them. Here verifications queue for a permit (the semaphore is fair: arrival order) while the async
//! workers keep serving, and the memory they take at once is bounded by `workers` times the hash's cost.
//!
//! The gate ([`GateLimits`]), for checks that name their client's address: an address has at most
//! [`GateLimits::per_address`] checks queued or running at once, so a flood from a few addresses queues
//! ahead of another client's login at most that many times per address; an address's failed checks are
//! rate-limited (a burst, then one per refill period); and at most [`GateLimits::queued`] checks wait at
//! once overall. A check the gate refuses costs no argon2 and fails like a wrong password.

use crate::password::verify_password;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Verifications running at once when not configured: half the cores (at least one), so a flood of wrong
/// passwords can take at most half the CPU from the requests that already authenticated.
pub fn default_password_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 2).max(1))
}

/// The bounds of the gate in front of the verifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateLimits {
    /// Checks queued or running at once for one client address.
    pub per_address: usize,
    /// Checks queued or running at once in all (with or without an address).
    pub queued: usize,
    /// Failed checks an address may have in a burst before it is limited to one per `refill`.
    pub failure_burst: u32,
    /// The time that gives an address back one failed check.
    pub refill: Duration,
}

impl GateLimits {
    /// Two checks per address at once, 256 in all, ten failures in a burst and then one a second.
    pub const DEFAULT: GateLimits =
        GateLimits { per_address: 2, queued: 256, failure_burst: 10, refill: Duration::from_secs(1) };
}

/// How many addresses the gate remembers at most; past it, addresses with nothing queued and a full
/// allowance are forgotten, and a new address is refused while every remembered one is still busy.
const MAX_ADDRESSES: usize = 65_536;

/// A bounded pool of argon2 verifications with work counters. Cheap to share behind the `Authenticator`.
#[derive(Debug)]
pub struct PasswordPool {
    permits: Arc<Semaphore>,
    workers: usize,
    limits: GateLimits,
    gate: Mutex<Gate>,
    counters: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    performed: AtomicU64,
    refused: AtomicU64,
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// Checks queued or running, in all and per address, and each address's allowance of failures.
#[derive(Debug, Default)]
struct Gate {
    queued: usize,
    addresses: HashMap<IpAddr, Address>,
}

#[derive(Debug)]
struct Address {
    in_flight: usize,
    /// Failed checks the address may still make now (refilled over time up to the burst).
    allowance: f64,
    refilled: Instant,
}

impl Address {
    fn refill(&mut self, limits: &GateLimits, now: Instant) {
        let periods = now.duration_since(self.refilled).as_secs_f64() / limits.refill.as_secs_f64().max(1e-9);
        self.allowance = (self.allowance + periods).min(f64::from(limits.failure_burst));
        self.refilled = now;
    }

    fn at_rest(&self, limits: &GateLimits) -> bool {
        self.in_flight == 0 && self.allowance >= f64::from(limits.failure_burst)
    }
}

/// A check admitted by the gate; dropping it gives its place back.
struct Admitted<'a> {
    pool: &'a PasswordPool,
    peer: Option<IpAddr>,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        let Ok(mut gate) = self.pool.gate.lock() else { return };
        gate.queued = gate.queued.saturating_sub(1);
        if let Some(peer) = self.peer
            && let Some(address) = gate.addresses.get_mut(&peer)
        {
            address.in_flight = address.in_flight.saturating_sub(1);
        }
    }
}

impl PasswordPool {
    /// A pool running at most `workers` verifications at once (at least one), behind
    /// [`GateLimits::DEFAULT`].
    pub fn new(workers: usize) -> PasswordPool {
        PasswordPool::with_limits(workers, GateLimits::DEFAULT)
    }

    /// A pool running at most `workers` verifications at once behind `limits`.
    pub fn with_limits(workers: usize, limits: GateLimits) -> PasswordPool {
        let workers = workers.max(1);
        PasswordPool {
            permits: Arc::new(Semaphore::new(workers)),
            workers,
            limits,
            gate: Mutex::default(),
            counters: Arc::default(),
        }
    }

    /// The bound on verifications running at once.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether `password` matches `phc` (as [`verify_password`]), computed on a blocking thread once a
    /// permit is free, for a client whose address is unknown (only the overall bound applies).
    pub async fn verify(&self, password: &str, phc: &str) -> bool {
        self.verify_from(None, password, phc).await
    }

    /// Whether `password` matches `phc`, checked for the client at `peer` (an IPv6 client's /64 is one
    /// address to the caller's liking). Fails closed: `false` when the gate refuses the check (the
    /// address has its most in flight or no failures left, or the queue is full) or the runtime is
    /// shutting down.
    pub async fn verify_from(&self, peer: Option<IpAddr>, password: &str, phc: &str) -> bool {
        let Some(admitted) = self.admit(peer) else {
            self.counters.refused.fetch_add(1, Ordering::SeqCst);
            return false;
        };
        let matches = self.verify_admitted(password, phc).await;
        if !matches {
            self.failed(peer);
        }
        drop(admitted);
        matches
    }

    fn admit(&self, peer: Option<IpAddr>) -> Option<Admitted<'_>> {
        let limits = &self.limits;
        let mut gate = self.gate.lock().ok()?;
        if gate.queued >= limits.queued {
            return None;
        }
        if let Some(peer) = peer {
            let now = Instant::now();
            if gate.addresses.len() >= MAX_ADDRESSES && !gate.addresses.contains_key(&peer) {
                gate.addresses.retain(|_, address| {
                    address.refill(limits, now);
                    !address.at_rest(limits)
                });
                if gate.addresses.len() >= MAX_ADDRESSES {
                    return None;
                }
            }
            let address = gate.addresses.entry(peer).or_insert_with(|| Address {
                in_flight: 0,
                allowance: f64::from(limits.failure_burst),
                refilled: now,
            });
            address.refill(limits, now);
            if address.in_flight >= limits.per_address || address.allowance < 1.0 {
                return None;
            }
            address.in_flight += 1;
        }
        gate.queued += 1;
        Some(Admitted { pool: self, peer })
    }

    fn failed(&self, peer: Option<IpAddr>) {
        let Some(peer) = peer else { return };
        if let Ok(mut gate) = self.gate.lock()
            && let Some(address) = gate.addresses.get_mut(&peer)
        {
            address.allowance -= 1.0;
        }
    }

    async fn verify_admitted(&self, password: &str, phc: &str) -> bool {
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return false;
        };
        let (password, phc, counters) = (password.to_string(), phc.to_string(), Arc::clone(&self.counters));
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let running = counters.running.fetch_add(1, Ordering::SeqCst) + 1;
            counters.peak.fetch_max(running, Ordering::SeqCst);
            let matches = verify_password(&password, &phc);
            counters.performed.fetch_add(1, Ordering::SeqCst);
            counters.running.fetch_sub(1, Ordering::SeqCst);
            matches
        })
        .await
        .unwrap_or(false)
    }

    /// argon2 verifications completed since start-up.
    pub fn verifications(&self) -> u64 {
        self.counters.performed.load(Ordering::SeqCst)
    }

    /// Checks the gate refused (answered as a wrong password without argon2) since start-up.
    pub fn refusals(&self) -> u64 {
        self.counters.refused.load(Ordering::SeqCst)
    }

    /// Verifications running right now.
    pub fn running(&self) -> usize {
        self.counters.running.load(Ordering::SeqCst)
    }

    /// The most verifications that ever ran at once; never above [`PasswordPool::workers`].
    pub fn peak_running(&self) -> usize {
        self.counters.peak.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::password::{HashCost, hash_password};

    fn ip(text: &str) -> Option<IpAddr> {
        text.parse().ok()
    }

    fn hash() -> String {
        hash_password("right", HashCost::TEST).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A one-worker pool whose addresses may fail `failure_burst` times, a failure coming back each
    /// `refill`, and the hash of the password `right`.
    fn pool_with_failures(failure_burst: u32, refill: Duration) -> (PasswordPool, String) {
        let limits = GateLimits { failure_burst, refill, ..GateLimits::DEFAULT };
        (PasswordPool::with_limits(1, limits), hash())
    }

    #[tokio::test]
    async fn an_address_runs_out_of_failures_and_others_keep_theirs() {
        let (pool, phc) = pool_with_failures(3, Duration::from_secs(3600));
        for _ in 0..3 {
            assert!(!pool.verify_from(ip("10.0.0.1"), "wrong", &phc).await);
        }
        assert_eq!(pool.verifications(), 3);
        assert!(!pool.verify_from(ip("10.0.0.1"), "right", &phc).await, "no failures left: refused");
        assert_eq!((pool.verifications(), pool.refusals()), (3, 1), "a refusal costs no argon2");
        assert!(pool.verify_from(ip("10.0.0.2"), "right", &phc).await, "another address is checked");
        assert!(pool.verify("right", &phc).await, "an unknown address has no failure limit");
        assert_eq!(pool.verifications(), 5);
    }

    #[tokio::test]
    async fn a_success_costs_no_allowance_and_failures_come_back_over_time() {
        let (pool, phc) = pool_with_failures(1, Duration::from_millis(1));
        for _ in 0..3 {
            assert!(pool.verify_from(ip("10.0.0.1"), "right", &phc).await);
        }
        assert!(!pool.verify_from(ip("10.0.0.1"), "wrong", &phc).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(pool.verify_from(ip("10.0.0.1"), "right", &phc).await, "refilled");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_address_has_at_most_its_share_in_flight() {
        let limits = GateLimits { per_address: 2, ..GateLimits::DEFAULT };
        let pool = Arc::new(PasswordPool::with_limits(1, limits));
        // Hold the only permit, so admitted checks stay queued.
        let held = Arc::clone(&pool.permits).acquire_owned().await.unwrap_or_else(|e| panic!("{e}"));
        let phc = hash();
        let queued: Vec<_> = (0..2)
            .map(|_| {
                let (pool, phc) = (Arc::clone(&pool), phc.clone());
                tokio::spawn(async move { pool.verify_from(ip("10.0.0.1"), "right", &phc).await })
            })
            .collect();
        while pool.gate.lock().map_or(0, |gate| gate.queued) < 2 {
            tokio::task::yield_now().await;
        }
        assert!(!pool.verify_from(ip("10.0.0.1"), "right", &phc).await, "a third from the address is refused");
        assert_eq!(pool.refusals(), 1);
        drop(held);
        for check in queued {
            assert_eq!(check.await.ok(), Some(true));
        }
        assert!(pool.verify_from(ip("10.0.0.1"), "right", &phc).await, "its places are back");
        assert_eq!(pool.gate.lock().map_or(99, |gate| gate.queued), 0);
    }

    #[tokio::test]
    async fn the_queue_is_bounded() {
        let limits = GateLimits { queued: 0, ..GateLimits::DEFAULT };
        let pool = PasswordPool::with_limits(1, limits);
        assert!(!pool.verify("right", &hash()).await);
        assert_eq!((pool.verifications(), pool.refusals()), (0, 1));
    }
}
