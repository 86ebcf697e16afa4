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
    for instances in [1, 2] {
        for round in 0..rounds {
            scenarios::round(store.clone(), instances, round, &mut findings).await;
        }
    }
    assert!(
        findings.anomalies.is_empty(),
        "history: {} anomalies in {rounds} rounds:\n{}",
        findings.anomalies.len(),
        findings.anomalies.join("\n")
    );
    assert!(findings.conflicts > 0, "history: no conditional write ever lost: the races did not interleave");
    assert!(findings.refused > 0 && findings.registered > 0, "history: no race was decided both ways: {findings:?}");
    findings
}
