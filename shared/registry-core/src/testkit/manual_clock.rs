//! A clock that moves only when the test says so, for code that takes its time from a closure
//! (credential reloads, the home marker's time to live): what it makes of time is checked at any
//! speed of the machine, and no test waits for the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Starts at the instant it was made; clones share one time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    elapsed_ms: Arc<AtomicU64>,
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

impl ManualClock {
    pub fn new() -> ManualClock {
        ManualClock { start: Instant::now(), elapsed_ms: Arc::default() }
    }

    /// Moves the time forward by `by` (whole milliseconds).
    pub fn advance(&self, by: Duration) {
        self.elapsed_ms.fetch_add(u64::try_from(by.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        self.start + Duration::from_millis(self.elapsed_ms.load(Ordering::SeqCst))
    }
}
