//! `registry prune`: soft- then hard-deletes subjects nobody registered into or looked up for
//! `--inactive-days` days (or the subjects listed in `--subjects-from`).
//!
//! A subject's last activity is the later of its last-used marker (configured store only; the
//! API does not expose it) and its newest version's registration time (`ts`). The retention
//! guard `--min-age DAYS` refuses the hard delete of a subject active within that many days, or
//! whose activity is unknown, because messages carrying its IDs may still sit in topics; such
//! subjects stay soft-deleted (their IDs still resolve) and are listed.

use super::api::{Answer, Api};
use super::{AdminError, Summary, progress};
use registry_core::registry::epoch_day;
use std::time::SystemTime;

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// What to prune and how.
#[derive(Debug, Clone)]
pub struct PrunePlan {
    /// Prune subjects inactive for at least this many days (ignored with `subjects`).
    pub inactive_days: Option<u32>,
    /// Refuse hard deletes of subjects active within this many days.
    pub min_age_days: Option<u32>,
    /// Prune exactly these subjects instead of choosing by activity.
    pub subjects: Option<Vec<String>>,
    /// Report only.
    pub dry_run: bool,
}

/// The day of `subject`'s last known activity, if any is known.
async fn last_activity(api: &Api, subject: &str) -> Result<Option<u32>, AdminError> {
    let marker = match api {
        Api::Local { .. } => api.last_used(subject).await?,
        Api::Remote { .. } => None,
    };
    let newest = api.versions(subject, true).await?.last().copied();
    let registered = match newest {
        Some(version) => {
            let answer = api.version(subject, version).await?;
            answer.get("ts").and_then(serde_json::Value::as_i64).filter(|ts| *ts > 0).map(|ts| ts / DAY_MS)
        }
        None => None,
    };
    let registered = registered.and_then(|day| u32::try_from(day).ok());
    Ok(marker.max(registered))
}

/// How one subject's prune ended.
enum Outcome {
    Done,
    /// Refused because another version references it (42206): retried after the others.
    Referenced(String),
}

/// Soft- then hard-deletes `subject` when it qualifies.
async fn prune_one(
    api: &Api,
    plan: &PrunePlan,
    subject: &str,
    by_activity: Option<u32>,
    summary: &mut Summary,
) -> Result<Outcome, AdminError> {
    let today = epoch_day(SystemTime::now());
    let idle = last_activity(api, subject).await?.map(|day| today.saturating_sub(day));
    if let Some(days) = by_activity
        && idle.is_some_and(|idle| idle < days)
    {
        summary.count("subjects active");
        return Ok(Outcome::Done);
    }
    if api.versions(subject, true).await?.is_empty() {
        summary.problems.push(format!("{subject}: no such subject"));
        return Ok(Outcome::Done);
    }
    if !api.versions(subject, false).await?.is_empty() {
        if !plan.dry_run {
            let answer = api.delete_subject(subject, false).await?;
            if let Some(outcome) = refused(subject, &answer, summary) {
                return Ok(outcome);
            }
        }
        summary.count("subjects soft-deleted");
    }
    if let Some(min_age) = plan.min_age_days
        && idle.is_none_or(|idle| idle < min_age)
    {
        let why = idle.map_or("activity unknown".to_string(), |idle| format!("active {idle} days ago"));
        summary.list("kept soft-deleted by --min-age (IDs may still be in topics)", format!("{subject} ({why})"));
        return Ok(Outcome::Done);
    }
    if !plan.dry_run {
        let answer = api.delete_subject(subject, true).await?;
        if let Some(outcome) = refused(subject, &answer, summary) {
            return Ok(outcome);
        }
    }
    summary.count("subjects hard-deleted");
    Ok(Outcome::Done)
}

/// `None` when `answer` succeeded; else how the refusal is handled (read-only subjects are
/// listed and left alone, referenced ones retried, anything else is a problem).
fn refused(subject: &str, answer: &Answer, summary: &mut Summary) -> Option<Outcome> {
    if answer.status < 300 {
        return None;
    }
    match answer.body.get("error_code").and_then(serde_json::Value::as_i64) {
        Some(42205) => summary.list("skipped: read-only mode", subject.to_string()),
        Some(42206) => return Some(Outcome::Referenced(format!("{subject}: {}", answer.body))),
        _ => summary.problems.push(format!("{subject}: delete refused: HTTP {} {}", answer.status, answer.body)),
    }
    Some(Outcome::Done)
}

/// Runs the plan against `api`. Subjects refused because another subject references them are
/// retried after the rest (their referrers may be pruned in the same run) while that helps.
pub async fn run(api: &Api, plan: &PrunePlan) -> Result<Summary, AdminError> {
    let mut summary = Summary::new(if plan.dry_run { "prune (dry run)" } else { "prune" });
    let (mut pending, by_activity) = match (&plan.subjects, plan.inactive_days) {
        (Some(list), _) => (list.clone(), None),
        (None, Some(days)) => {
            if matches!(api, Api::Remote { .. }) {
                return Err("--inactive-days needs the last-used marker, which only the configured store has; \
                            against a URL, pass the subjects with --subjects-from"
                    .into());
            }
            (api.subjects().await?, Some(days))
        }
        (None, None) => return Err("give --inactive-days N or --subjects-from FILE".into()),
    };
    let bar = progress::bar(pending.len(), "pruning subjects");
    loop {
        let mut retry = Vec::new();
        for subject in &pending {
            match prune_one(api, plan, subject, by_activity, &mut summary).await? {
                Outcome::Done => bar.inc(1),
                Outcome::Referenced(why) => retry.push((subject.clone(), why)),
            }
        }
        if retry.is_empty() || retry.len() == pending.len() {
            summary.problems.extend(retry.into_iter().map(|(_, why)| format!("referenced: {why}")));
            break;
        }
        pending = retry.into_iter().map(|(subject, _)| subject).collect();
    }
    bar.finish_and_clear();
    Ok(summary)
}
