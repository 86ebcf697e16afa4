//! `registry failover --to REGION`: makes a read region of a multi-region registry the home
//! (docs/multi-region.md, "Failover and failback runbook"). Works on that region's replica of the
//! table and its bucket: first every context's ID counter jumps past the highest ID the replica's
//! counter or ID ledger shows plus `--gap` (IDs the old home may have issued whose replication has
//! not arrived), then the home marker names the region with the next epoch, which fences every
//! function still committing for the old home once the marker reaches it, and carries the gap as
//! the floor a context without a counter (unknown to the jump) starts above. Failback is the same
//! command naming the old home.

use super::{AdminError, Summary};
use crate::config::FailoverArgs;
use registry_store_aws::regions::in_region;
use registry_store_aws::{AwsEnv, AwsStore, AwsStoreConfig};

/// Jumps the counters and writes the marker in `args.to`'s replica.
pub async fn run(args: &FailoverArgs) -> Result<Summary, AdminError> {
    let env = AwsEnv::from_env().await?;
    let bucket = args.bucket.clone().unwrap_or_else(|| env.store.bucket.clone());
    let config = AwsStoreConfig { table: env.store.table.clone(), bucket };
    tracing::info!(region = %args.to, table = %config.table, bucket = %config.bucket, gap = args.gap, "failing over");
    let store = AwsStore::with_path_style(&in_region(&env.sdk, &args.to), config, env.s3_path_style);
    let done = store.fail_over(&args.to, args.gap).await?;
    let mut summary = Summary::new(&format!("failover to {}", args.to));
    summary.add("home marker epoch", usize::try_from(done.after.epoch).unwrap_or(usize::MAX));
    let before = done
        .before
        .map_or_else(|| "none (first failover)".to_string(), |m| format!("{} (epoch {})", m.region, m.epoch));
    summary.list("home before", before);
    if let Some(floor) = done.after.floor {
        summary.list("contexts without a counter", format!("start above {} (the gap)", floor.0));
    }
    for (context, seen, jumped) in done.counters {
        let seen = seen.map_or_else(|| "none".to_string(), |id| id.0.to_string());
        summary.list("counters", format!("{context}: highest seen {seen}, counter now {}", jumped.0));
    }
    Ok(summary)
}
