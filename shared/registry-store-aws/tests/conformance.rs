//! The registry-core store conformance suite (`registry_core::testkit`) against `AwsStore` on the
//! emulator: one test per case of the suite, each on a fresh table and bucket, and the racing
//! histories with a fresh table and bucket per round.
//!
//! A table per case, not one for the whole suite: the emulator copies a table once per item of
//! every transaction on it, so on one table holding everything the suite wrote its cost grows with
//! the square of the suite.

mod support;

use registry_core::{Store, testkit};
use std::sync::Arc;
use support::with_store;

/// One test per case of [`registry_core::conformance_cases`], on a table and bucket of its own.
macro_rules! aws_store_cases {
    ($($section:ident $name:ident => $case:expr,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let case: testkit::CaseFn = $case;
            with_store(|store, _| async move { case(Arc::new(store)).await }).await;
        }
    )*};
}
registry_core::conformance_cases!(aws_store_cases);

/// Rounds per instance count of the racing histories: the emulator is slow, so few rounds, each
/// still sweeping where the late operation starts.
const HISTORY_ROUNDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_store_keeps_every_invariant_over_racing_histories() {
    let mut findings = testkit::history::Findings::default();
    for (instances, round) in testkit::history_rounds(HISTORY_ROUNDS) {
        let found = with_store(|store, _| async move {
            let store: Arc<dyn Store> = Arc::new(store);
            testkit::history_round(store, instances, round).await
        })
        .await;
        let Some(found) = found else { return };
        findings.add(found);
    }
    testkit::check_history(&findings, HISTORY_ROUNDS);
    eprintln!("history on DynamoDB: {findings:?}");
}

/// The store ignoring every commit hint (`CommitHints`: the bindings read with the write context
/// and the keeping revision step) stays correct: the registration races and the decisions over
/// one subject pass with every version commit handed `CommitHints::default()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_store_registers_correctly_with_commit_hints_dropped() {
    with_store(|store, _| async move {
        let hinted_away: Arc<dyn Store> =
            Arc::new(testkit::HookedStore::new(Arc::new(store), |_| Ok(())).dropping_hints());
        // The hints change what a commit reads, not how many writers contend: half the
        // conformance width keeps every registration racing at a quarter of the work.
        testkit::race_same_schema_one_subject(hinted_away.clone(), testkit::RACE_TASKS).await;
        testkit::race_different_schemas_one_subject(hinted_away.clone(), testkit::ONE_SUBJECT_RACE_TASKS / 2).await;
        testkit::race_mixed(hinted_away.clone(), 8, 4).await;
        testkit::alias_change_between_decision_and_commit(hinted_away).await;
    })
    .await;
}
