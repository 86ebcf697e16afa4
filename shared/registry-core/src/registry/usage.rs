//! The last-used marker: lookups and registrations that find their version note that a subject is
//! in use, for `registry prune`, whose activity is the later of this marker and the newest
//! version's registration time. A registration that creates a version therefore writes no marker
//! (its row's time is the activity), and neither does a use whose subject's newest version was
//! registered in the current period.
//!
//! Cost: never a read of its own. At most one [`crate::Store::mark_used`] write per subject per
//! period (`usage_granularity_days`, default one day) per process, and none when this process
//! already marked the subject in the current period (an in-process set, bounded by
//! [`MAX_REMEMBERED`]), when the newest version is that recent, or when the stored marker, read
//! with the write context a lookup or registration reads anyway ([`crate::WriteContext::last_used`]),
//! already names the period: so a fleet of cold instances writes about one marker per active
//! subject per period, not one per instance. Each write is conditional (never moves the day back),
//! so the order of concurrent writers does not matter. Marking is best effort: a failed write is
//! logged and retried on the next use, never failing the request it rides on.

use super::Registry;
use crate::bounded::Hasher;
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
    marked: Mutex<HashMap<Subject, u32, Hasher>>,
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

/// The proleptic Gregorian `(year, month, day)` of the UTC day `days` after 1970-01-01 (before
/// it when negative): Howard Hinnant's civil-from-days, for printing epoch days and times.
pub fn civil_date(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The marker day for `day` at `granularity_days`: the first day of its period, so the stored
/// value changes (and is written) once per period. `None` when marking is off (granularity 0).
pub fn period_start(day: u32, granularity_days: u32) -> Option<u32> {
    (granularity_days > 0).then(|| day - day % granularity_days)
}

/// What a request read of a subject's recorded activity (both `None` when it read nothing).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Activity {
    /// Registration time (ms) of the subject's newest row.
    pub newest_ms: Option<i64>,
    /// The stored marker day, when read with the write context.
    pub marked: Option<u32>,
}

impl Registry {
    /// Notes that `subject` was looked up or registered into (an existing version) now, given what
    /// the caller read of its recorded activity. See the module doc for cost.
    pub(super) async fn note_use(&self, subject: &Subject, seen: Activity) {
        if let Some(day) = self.use_to_mark(subject, seen) {
            // Boxed: a use already recorded (nearly every one) does not carry the write in its future.
            Box::pin(self.mark_used(subject, day)).await;
        }
    }

    /// The day to mark `subject` used on now, unless that is recorded (or claimed by another
    /// request of this process) already.
    fn use_to_mark(&self, subject: &Subject, seen: Activity) -> Option<u32> {
        let granularity = self.settings.usage_granularity_days;
        let day = period_start(epoch_day(SystemTime::now()), granularity)?;
        let registered = seen.newest_ms.and_then(|ms| u64::try_from(ms).ok()).map(|ms| {
            let at = UNIX_EPOCH + std::time::Duration::from_millis(ms);
            period_start(epoch_day(at), granularity).unwrap_or(0)
        });
        if !self.usage.claim(subject, day) || registered.max(seen.marked).is_some_and(|recorded| recorded >= day) {
            return None;
        }
        Some(day)
    }

    /// Marks `subject` used on `day` (claimed by [`Registry::use_to_mark`]); a failure releases
    /// the claim, so the next use tries again.
    async fn mark_used(&self, subject: &Subject, day: u32) {
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
    use crate::testkit::subject;
    use std::time::Duration;

    #[test]
    fn civil_date_is_the_gregorian_date_of_an_epoch_day() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_453), (2025, 12, 31));
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
