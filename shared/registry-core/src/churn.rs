//! The churn guard: per-subject count of new versions over the last hour, to catch a producer
//! that registers a new schema on every message and burns the ID space.
//!
//! Only registrations that would append a new version count; an idempotent re-registration is
//! answered before the guard is consulted and is never refused. The window is the last 60 whole
//! minutes (a ring of 60 one-minute buckets per subject), so a count drops out at minute
//! granularity. The map is bounded ([`MAX_SUBJECTS`]): when full, subjects with an empty window
//! go first, then the least recently active ones, so memory stays flat whatever the subject count.
//!
//! The state is per process. On Lambda each instance counts only what it served, so with many
//! instances one subject's churn is spread over them and a single instance may never trip; the
//! `ChurnExceeded` metric and the ID-growth alarm (summed across instances by CloudWatch) are the
//! fleet-wide signal, and enforcement is a best-effort local brake. Concurrent registrations into
//! one subject may each pass the check before either is recorded, so the limit can be exceeded by
//! the number of concurrent writers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Subjects tracked at most (about 260 bytes each).
pub const MAX_SUBJECTS: usize = 10_000;

/// Minutes in the window.
const WINDOW_MINUTES: u64 = 60;

/// The guard's configuration (plain values; read from the environment by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChurnSettings {
    /// New versions per subject per rolling hour that are still fine; the next one is over the
    /// threshold. 0 turns the guard off. Default 50.
    pub max_per_hour: u32,
    /// Refuse registrations over the threshold with 429 / 42901 instead of only logging and counting.
    pub enforce: bool,
}

impl Default for ChurnSettings {
    fn default() -> Self {
        ChurnSettings { max_per_hour: 50, enforce: false }
    }
}

/// The guard's answer for one would-be new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChurnVerdict {
    /// Under the threshold (or the guard is off).
    Allow,
    /// Over the threshold, not enforced: log, count, and register anyway.
    Exceeded {
        /// New versions of the subject in the window so far.
        recent: u32,
    },
    /// Over the threshold and enforced: refuse.
    Refuse {
        /// New versions of the subject in the window so far.
        recent: u32,
    },
}

#[derive(Debug)]
struct Window {
    /// The newest minute written into `counts`.
    minute: u64,
    counts: [u32; WINDOW_MINUTES as usize],
}

impl Window {
    fn total(&self, now: u64) -> u32 {
        let now = now.max(self.minute);
        let oldest = (now + 1).saturating_sub(WINDOW_MINUTES);
        (oldest.max(self.minute.saturating_sub(WINDOW_MINUTES - 1))..=self.minute)
            .map(|minute| self.counts.get((minute % WINDOW_MINUTES) as usize).copied().unwrap_or(0))
            .fold(0u32, u32::saturating_add)
    }

    fn add(&mut self, now: u64) {
        if now > self.minute {
            let cleared = (now - self.minute).min(WINDOW_MINUTES);
            for minute in (now + 1 - cleared)..=now {
                if let Some(slot) = self.counts.get_mut((minute % WINDOW_MINUTES) as usize) {
                    *slot = 0;
                }
            }
            self.minute = now;
        }
        if let Some(slot) = self.counts.get_mut((self.minute % WINDOW_MINUTES) as usize) {
            *slot = slot.saturating_add(1);
        }
    }
}

/// Per-subject new-version counts over the last hour. Cheap: one mutex-guarded map lookup per
/// new version; nothing on reads or idempotent registrations.
#[derive(Debug)]
pub struct ChurnGuard {
    settings: ChurnSettings,
    subjects: Mutex<HashMap<String, Window>>,
}

impl ChurnGuard {
    /// A guard with `settings` and nothing counted.
    pub fn new(settings: ChurnSettings) -> Self {
        ChurnGuard { settings, subjects: Mutex::new(HashMap::new()) }
    }

    /// The settings in force.
    pub fn settings(&self) -> ChurnSettings {
        self.settings
    }

    /// Whether one more new version of `subject` now would be over the threshold.
    pub fn check(&self, subject: &str) -> ChurnVerdict {
        self.check_at(subject, now_minute())
    }

    /// Counts one new version of `subject` now.
    pub fn record(&self, subject: &str) {
        self.record_at(subject, now_minute());
    }

    /// [`ChurnGuard::check`] at `minute` (minutes since the epoch).
    pub fn check_at(&self, subject: &str, minute: u64) -> ChurnVerdict {
        let max = self.settings.max_per_hour;
        if max == 0 {
            return ChurnVerdict::Allow;
        }
        let recent = self.lock().get(subject).map_or(0, |window| window.total(minute));
        match (recent >= max, self.settings.enforce) {
            (false, _) => ChurnVerdict::Allow,
            (true, false) => ChurnVerdict::Exceeded { recent },
            (true, true) => ChurnVerdict::Refuse { recent },
        }
    }

    /// [`ChurnGuard::record`] at `minute`.
    pub fn record_at(&self, subject: &str, minute: u64) {
        if self.settings.max_per_hour == 0 {
            return;
        }
        let mut subjects = self.lock();
        if !subjects.contains_key(subject) && subjects.len() >= MAX_SUBJECTS {
            evict(&mut subjects, minute);
        }
        subjects
            .entry(subject.to_string())
            .or_insert_with(|| Window { minute, counts: [0; WINDOW_MINUTES as usize] })
            .add(minute);
    }

    /// Subjects currently tracked.
    pub fn tracked(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Window>> {
        // Every mutation completes before the guard drops, so a poisoned lock is still consistent.
        self.subjects.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Frees at least a tenth of the map: idle windows first, then the least recently active.
fn evict(subjects: &mut HashMap<String, Window>, minute: u64) {
    subjects.retain(|_, window| window.total(minute) > 0);
    let target = MAX_SUBJECTS - MAX_SUBJECTS / 10;
    if subjects.len() > target {
        let mut ages: Vec<(u64, String)> = subjects.iter().map(|(s, w)| (w.minute, s.clone())).collect();
        ages.sort_unstable();
        for (_, subject) in ages.into_iter().take(subjects.len() - target) {
            subjects.remove(&subject);
        }
    }
}

fn now_minute() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs() / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(max: u32, enforce: bool) -> ChurnGuard {
        ChurnGuard::new(ChurnSettings { max_per_hour: max, enforce })
    }

    #[test]
    fn trips_at_the_threshold_and_not_before() {
        let guard = guard(3, true);
        for n in 0..3 {
            assert_eq!(guard.check_at("orders", 1000), ChurnVerdict::Allow, "new version {n}");
            guard.record_at("orders", 1000);
        }
        assert_eq!(guard.check_at("orders", 1000), ChurnVerdict::Refuse { recent: 3 });
        assert_eq!(guard.check_at("payments", 1000), ChurnVerdict::Allow, "per subject");
    }

    #[test]
    fn unenforced_guard_reports_without_refusing() {
        let guard = guard(1, false);
        guard.record_at("orders", 5);
        assert_eq!(guard.check_at("orders", 5), ChurnVerdict::Exceeded { recent: 1 });
    }

    #[test]
    fn the_window_slides_by_the_minute() {
        let guard = guard(2, true);
        guard.record_at("orders", 100);
        guard.record_at("orders", 130);
        assert_eq!(guard.check_at("orders", 159), ChurnVerdict::Refuse { recent: 2 });
        assert_eq!(guard.check_at("orders", 160), ChurnVerdict::Allow, "minute 100 left the window");
        guard.record_at("orders", 160);
        assert_eq!(guard.check_at("orders", 160), ChurnVerdict::Refuse { recent: 2 });
        assert_eq!(guard.check_at("orders", 500), ChurnVerdict::Allow, "everything expired");
    }

    #[test]
    fn zero_turns_the_guard_off() {
        let guard = guard(0, true);
        for _ in 0..100 {
            guard.record_at("orders", 1);
        }
        assert_eq!(guard.check_at("orders", 1), ChurnVerdict::Allow);
        assert_eq!(guard.tracked(), 0);
    }

    #[test]
    fn the_map_stays_bounded() {
        let guard = guard(5, false);
        for n in 0..(MAX_SUBJECTS + 50) {
            guard.record_at(&format!("s{n}"), n as u64 / 1000);
        }
        assert!(guard.tracked() <= MAX_SUBJECTS);
        let newest = format!("s{}", MAX_SUBJECTS + 49);
        guard.record_at(&newest, 20);
        assert_eq!(guard.check_at(&newest, 20), ChurnVerdict::Allow);
        assert!(guard.lock().contains_key(&newest), "the most recent subject is kept");
    }
}
