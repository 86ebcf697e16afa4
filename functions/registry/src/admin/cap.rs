//! `registry cap-versions`: keeps the newest `--keep` live versions of each subject and deletes
//! (soft, then hard) the older ones, but only where the subject's effective compatibility is not
//! transitive: a transitive level checks new schemas against every version, so deleting old ones
//! silently weakens it. Transitive subjects are skipped and listed unless `--force`. Subjects of
//! named contexts are capped like any other (their level resolves through their context's config).

use super::api::Api;
use super::contexts::Selection;
use super::{AdminError, Summary, progress};

/// What to cap and how.
#[derive(Debug, Clone)]
pub struct CapPlan {
    /// Live versions kept per subject (at least 1).
    pub keep: usize,
    /// The subjects considered (`--context`, `--subject-prefix`).
    pub selection: Selection,
    /// Cap transitive subjects too.
    pub force: bool,
    /// Report only.
    pub dry_run: bool,
}

/// True for the `*_TRANSITIVE` levels.
pub fn is_transitive(level: &str) -> bool {
    level.to_ascii_uppercase().ends_with("_TRANSITIVE")
}

/// Runs the plan against `api`.
pub async fn run(api: &Api, plan: &CapPlan) -> Result<Summary, AdminError> {
    if plan.keep == 0 {
        return Err("--keep must be at least 1".into());
    }
    let mut summary = Summary::new(if plan.dry_run { "cap-versions (dry run)" } else { "cap-versions" });
    let subjects: Vec<String> = api.subjects().await?.into_iter().filter(|s| plan.selection.subject(s)).collect();
    let bar = progress::bar(subjects.len(), "capping subjects");
    for subject in &subjects {
        bar.inc(1);
        let live = api.versions(subject, false).await?;
        if live.len() <= plan.keep {
            summary.count("subjects within the cap");
            continue;
        }
        let level = api.effective_level(subject).await?;
        if is_transitive(&level) && !plan.force {
            summary.list("skipped: transitive compatibility (use --force)", format!("{subject} ({level})"));
            continue;
        }
        summary.count("subjects capped");
        for version in &live[..live.len() - plan.keep] {
            summary.count("versions deleted");
            if plan.dry_run {
                continue;
            }
            for permanent in [false, true] {
                let answer = api.delete_version(subject, *version, permanent).await?;
                if answer.status >= 300 {
                    summary.problems.push(format!("{subject} version {version}: delete refused: {}", answer.body));
                    break;
                }
            }
        }
    }
    bar.finish_and_clear();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::is_transitive;

    #[test]
    fn only_the_transitive_levels_are_transitive() {
        for level in ["BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE", "full_transitive"] {
            assert!(is_transitive(level), "{level}");
        }
        for level in ["BACKWARD", "FORWARD", "FULL", "NONE"] {
            assert!(!is_transitive(level), "{level}");
        }
    }
}
