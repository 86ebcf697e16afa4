//! `registry restore-check`: after a DynamoDB restore of the table (point-in-time or from a
//! backup), raises the ID counter past every ID the ledger in the bucket says was ever issued, so
//! no ID already written into Kafka is handed to another schema (see `registry_store_aws::ledger`).
//! Every context's counter is checked against its own ledger. Works on the configured AWS store
//! only: the ledger lives beside the table, not behind the API.

use super::{AdminError, Summary};
use registry_store_aws::AwsStore;

/// Compares the counter with the ledger and, unless `dry_run`, raises it. Idempotent: a second
/// run finds nothing above the counter.
pub async fn run(dry_run: bool) -> Result<Summary, AdminError> {
    let store = AwsStore::from_env().await?;
    let config = store.config();
    tracing::info!(table = %config.table, bucket = %config.bucket, "comparing the ID counters with the ledger");
    let mut summary = Summary::new(if dry_run { "restore-check (dry run)" } else { "restore-check" });
    for (context, found) in store.restore_check_contexts(!dry_run).await? {
        // The default context's lines keep their names; a named context's carry it.
        let label = |text: &str| match context.is_default() {
            true => text.to_string(),
            false => format!("{}: {text}", context.name()),
        };
        summary.add(&label("id counter before"), id_number(found.counter));
        summary.add(&label("highest ledger id above the counter"), id_number(found.ledger_max));
        match found.ledger_max {
            Some(max) if found.raised => summary.add(&label("counter raised to"), id_number(Some(max))),
            Some(max) => summary.add(&label("counter would be raised to"), id_number(Some(max))),
            None => {}
        }
    }
    Ok(summary)
}

/// An ID as a count for the summary (0: none).
fn id_number(id: Option<registry_core::SchemaId>) -> usize {
    id.map_or(0, |id| usize::try_from(id.0).unwrap_or(0))
}
