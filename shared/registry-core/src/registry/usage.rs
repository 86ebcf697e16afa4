//! The last-used marker: register and lookup note that a subject is in use, for `registry prune`.
//!
//! Cost: at most one [`crate::Store::mark_used`] write per subject per period (`usage_granularity_days`,
//! default one day) per process, and no storage call at all when this process already marked the
//! subject in the current period (an in-process set, bounded by [`MAX_REMEMBERED`]). A fleet of N
//! warm processes writes at most N markers per active subject per period; each write is
//! conditional (never moves the day back), so the order of concurrent writers does not matter.
//! Marking is best effort: a failed write is logged and retried on the next use, never failing
//! the request it rides on.

use super::Registry;
use crate::model::Subject;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Subjects remembered as marked; above it the set is cleared (costing at most one extra
/// conditional write per subject), so memory stays bounded at about this many names.
pub const MAX_REMEMBERED: usize = 50_000;

/// Seconds in a day.
const DAY_SECONDS: u64 = 86_400;

/// The in-process memory of which subjects were marked in which period.
#[derive(Debug, Default)]
pub(crate) struct UsageMarks {
    marked: Mutex<HashMap<Subject, u32>>,
}

impl UsageMarks {
    /// True (and remembered) when `subject` has not been marked for `day` by this process.
    fn claim(&self, subject: &Subject, day: u32) -> bool {
        let mut marked = self.marked.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if marked.get(subject).is_some_and(|seen| *seen >= day) {
            return false;
        }
        if marked.len() >= MAX_REMEMBERED && !marked.contains_key(subject) {
            marked.retain(|_, seen| *seen >= day);
            if marked.len() >= MAX_REMEMBERED {
                marked.clear();
            }
        }
        marked.insert(subject.clone(), day);
        true
    }

    /// Forgets a claim whose write failed, so the next use retries it.
    fn release(&self, subject: &Subject) {
        let mut marked = self.marked.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        marked.remove(subject);
    }
}

/// Whole days since the Unix epoch (UTC) at `now`.
pub fn epoch_day(now: SystemTime) -> u32 {
    let seconds = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    u32::try_from(seconds / DAY_SECONDS).unwrap_or(u32::MAX)
}

/// The marker day for `day` at `granularity_days`: the first day of its period, so the stored
/// value changes (and is written) once per period. `None` when marking is off (granularity 0).
pub fn period_start(day: u32, granularity_days: u32) -> Option<u32> {
    (granularity_days > 0).then(|| day - day % granularity_days)
}

impl Registry {
    /// Notes that `subject` was registered into or looked up now (see the module doc for cost).
    pub(super) async fn note_use(&self, subject: &Subject) {
        let Some(day) = period_start(epoch_day(SystemTime::now()), self.settings.usage_granularity_days) else {
            return;
        };
        if !self.usage.claim(subject, day) {
            return;
        }
        if let Err(error) = self.store.mark_used(subject, day).await {
            tracing::warn!(%subject, %error, "cannot record the subject's last use; retrying on its next use");
            self.usage.release(subject);
        }
    }

    /// The day `subject` was last marked used, if ever (for `registry prune`).
    pub async fn last_used_day(&self, subject: &Subject) -> Result<Option<u32>, crate::RegistryError> {
        Ok(self.store.last_used(subject).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn subject(name: &str) -> Subject {
        Subject::new(name).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn epoch_day_counts_whole_utc_days() {
        assert_eq!(epoch_day(UNIX_EPOCH), 0);
        assert_eq!(epoch_day(UNIX_EPOCH + Duration::from_secs(DAY_SECONDS - 1)), 0);
        assert_eq!(epoch_day(UNIX_EPOCH + Duration::from_secs(3 * DAY_SECONDS)), 3);
    }

    #[test]
    fn periods_start_on_multiples_of_the_granularity() {
        assert_eq!(period_start(20_003, 1), Some(20_003));
        assert_eq!(period_start(20_003, 7), Some(20_003 - 20_003 % 7));
        assert_eq!(period_start(20_003, 0), None, "0 turns marking off");
    }

    #[test]
    fn a_subject_is_claimed_once_per_period_until_released() {
        let marks = UsageMarks::default();
        let orders = subject("orders");
        assert!(marks.claim(&orders, 10));
        assert!(!marks.claim(&orders, 10), "same period: no second write");
        assert!(!marks.claim(&orders, 9), "an older period never writes");
        assert!(marks.claim(&subject("payments"), 10), "claims are per subject");
        assert!(marks.claim(&orders, 11), "next period writes again");
        marks.release(&orders);
        assert!(marks.claim(&orders, 11), "a failed write is retried on the next use");
    }
}
