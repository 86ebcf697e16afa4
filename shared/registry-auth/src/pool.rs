//! [`PasswordPool`]: where argon2 verifications run: on tokio's blocking threads, at most `workers` at once.
//!
//! Why: a verification costs tens of milliseconds of CPU and the hash's memory (19 MiB at the default cost) by
//! design. On the async worker threads a few clients sending wrong passwords would hold every other request
//! behind them. Here verifications queue for a permit (the semaphore is fair: arrival order) while the async
//! workers keep serving, and the memory they take at once is bounded by `workers` times the hash's cost.

use crate::password::verify_password;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tokio::sync::Semaphore;

/// Verifications running at once when not configured: half the cores (at least one), so a flood of wrong
/// passwords can take at most half the CPU from the requests that already authenticated.
pub fn default_password_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 2).max(1))
}

/// A bounded pool of argon2 verifications with work counters. Cheap to share behind the `Authenticator`.
#[derive(Debug)]
pub struct PasswordPool {
    permits: Arc<Semaphore>,
    workers: usize,
    counters: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    performed: AtomicU64,
    running: AtomicUsize,
    peak: AtomicUsize,
}

impl PasswordPool {
    /// A pool running at most `workers` verifications at once (at least one).
    pub fn new(workers: usize) -> PasswordPool {
        let workers = workers.max(1);
        PasswordPool { permits: Arc::new(Semaphore::new(workers)), workers, counters: Arc::default() }
    }

    /// The bound on verifications running at once.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether `password` matches `phc` (as [`verify_password`]), computed on a blocking thread once a
    /// permit is free. Fails closed: if the runtime is shutting down, the answer is `false`.
    pub async fn verify(&self, password: &str, phc: &str) -> bool {
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

    /// Verifications running right now.
    pub fn running(&self) -> usize {
        self.counters.running.load(Ordering::SeqCst)
    }

    /// The most verifications that ever ran at once; never above [`PasswordPool::workers`].
    pub fn peak_running(&self) -> usize {
        self.counters.peak.load(Ordering::SeqCst)
    }
}
