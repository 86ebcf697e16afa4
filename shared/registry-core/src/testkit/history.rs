//! HISTORY section: config and mode changes, deletes and references race registrations, through
//! one registry and through two registries over one store (separate caches, no answer memory, as
//! two Lambda instances); each operation's invocation, acknowledgement and storage calls are
//! recorded on one clock, and the invariants a client relies on are asserted over the history:
//!
//! 1. no version is committed after a stricter config committed, unless it complies;
//! 2. no write is committed after `READONLY` committed;
//! 3. no live version references a deleted or absent version (or one re-created since);
//! 4. one ID per schema: rows carrying a fingerprint share one ID, the one it is bound to;
//! 5. versions stay dense, and a subject's config survives while versions live (or the delete fails).
//!
//! The checks use commit order, not only acknowledgement order: a storage write that started
//! after another one ended committed after it.

mod record;
mod scenarios;

pub use record::{Call, Cluster, History, Operation, Outcome, Recorder, Request};
pub use scenarios::Findings;

use crate::store::Store;
use std::sync::Arc;

/// Runs every scenario `rounds` times with one registry instance and `rounds` times with two,
/// then panics listing every anomaly, or when the races never interleaved (no conditional write
/// lost, or no operation was refused because of a concurrent one). Returns the findings.
pub async fn history_cases(store: Arc<dyn Store>, rounds: usize) -> Findings {
    let mut findings = Findings::default();
    for (instances, round) in history_rounds(rounds) {
        findings.add(history_round(store.clone(), instances, round).await);
    }
    check_history(&findings, rounds);
    findings
}

/// The rounds of [`history_cases`]: (registry instances, round number), `rounds` with one
/// instance then `rounds` with two. A backend may run each on a store of its own with
/// [`history_round`], add up the findings and [`check_history`] them.
pub fn history_rounds(rounds: usize) -> impl Iterator<Item = (usize, usize)> {
    [1, 2].into_iter().flat_map(move |instances| (0..rounds).map(move |round| (instances, round)))
}

/// Runs every scenario once with `instances` registry instances over `store`, in `round` (which
/// varies where the late operations start), and returns what they found.
pub async fn history_round(store: Arc<dyn Store>, instances: usize, round: usize) -> Findings {
    let mut findings = Findings::default();
    scenarios::round(store, instances, round, &mut findings).await;
    findings
}

/// Panics listing every anomaly of `findings` (from `rounds` rounds), or when the races never
/// interleaved: no conditional write lost, or no race decided both ways.
pub fn check_history(findings: &Findings, rounds: usize) {
    assert!(
        findings.anomalies.is_empty(),
        "history: {} anomalies in {rounds} rounds:\n{}",
        findings.anomalies.len(),
        findings.anomalies.join("\n")
    );
    assert!(findings.conflicts > 0, "history: no conditional write ever lost: the races did not interleave");
    assert!(findings.refused > 0 && findings.registered > 0, "history: no race was decided both ways: {findings:?}");
}
