//! `registry failover --to REGION`: makes a read region of a multi-region registry the home
//! (docs/multi-region.md, "Failover and failback runbook"). Works on that region's replica of the
//! table and its bucket: first every context's ID counter jumps past the highest ID the replica's
//! counter or ID ledger shows plus `--gap` (IDs the old home may have issued whose replication has
//! not arrived), then the home marker names the region with the next epoch and the allocation
//! floor every ID the new home issues lies above. Then the same marker is written in the old
//! home's replica, which fences the old home at once instead of after the marker's replication:
//! the old home is reached (one read) before anything is written, and the failover refuses when it
//! cannot be, unless `--accept-loss` (a lost region). Failback is the same command naming the old
//! home.

use super::{AdminError, Summary};
use crate::config::FailoverArgs;
use registry_store_aws::fence::OldHomeReplica;
use registry_store_aws::regions::in_region;
use registry_store_aws::{AwsEnv, AwsStore, AwsStoreConfig};
use std::time::Duration;

/// How long the old home's replica may take to answer before the failover refuses.
const REACH_TIMEOUT: Duration = Duration::from_secs(10);

/// Jumps the counters and writes the marker in `args.to`'s replica, then in the old home's.
pub async fn run(args: &FailoverArgs) -> Result<Summary, AdminError> {
    let env = AwsEnv::from_env().await?;
    let bucket = args.bucket.clone().unwrap_or_else(|| env.store.bucket.clone());
    let config = AwsStoreConfig { table: env.store.table.clone(), bucket };
    tracing::info!(region = %args.to, table = %config.table, bucket = %config.bucket, gap = args.gap, "failing over");
    let store = AwsStore::with_path_style(&in_region(&env.sdk, &args.to), config.clone(), env.s3_path_style);
    // The old home: the region the marker names (none when it names `--to`: a run again), else the
    // region named, which a first failover needs unless the old home is lost.
    let from = match store.home_marker().await? {
        Some(marker) => Some(marker.region).filter(|region| *region != args.to),
        None if args.accept_loss => args.from.clone(),
        None => match args.from.clone() {
            Some(region) => Some(region).filter(|region| *region != args.to),
            None => {
                let to = &args.to;
                let why = format!(
                    "no home marker in {to}'s replica and no old home named: name it with --from (or \
                     REGISTRY_HOME_REGION), or pass --accept-loss if it is lost"
                );
                return Err(why.into());
            }
        },
    };
    let old_home = match &from {
        Some(region) if !args.accept_loss => {
            let old = AwsStore::with_path_style(&in_region(&env.sdk, region), config, env.s3_path_style);
            match reach(region, &old).await? {
                OldHomeReplica::Reached(_) => OldHome::Reached(region.clone(), old),
                OldHomeReplica::Absent => OldHome::NoReplica(region.clone()),
            }
        }
        Some(region) => OldHome::NotReached(region.clone()),
        None if args.accept_loss => OldHome::NotReached("the old home".into()),
        None => OldHome::None,
    };
    let done = store.fail_over(&args.to, args.gap).await?;
    let mut summary = Summary::new(&format!("failover to {}", args.to));
    summary.add("home marker epoch", usize::try_from(done.after.epoch).unwrap_or(usize::MAX));
    let before = done
        .before
        .as_ref()
        .map_or_else(|| "none (first failover)".to_string(), |m| format!("{} (epoch {})", m.region, m.epoch));
    summary.list("home before", before);
    if let Some(floor) = done.after.floor {
        summary.list("allocation floor", format!("every ID {} issues lies above {}", args.to, floor.0));
    }
    for (context, seen, jumped) in &done.counters {
        let seen = seen.map_or_else(|| "none".to_string(), |id| id.0.to_string());
        summary.list("counters", format!("{context}: highest seen {seen}, counter now {}", jumped.0));
    }
    let fenced = match old_home {
        OldHome::Reached(region, old) => match old.fence_old_home(&done.after).await {
            Ok(true) => format!("{region}: marker written there, its writes are refused from now on"),
            Ok(false) => format!("{region}: already held this marker or a later one"),
            Err(error) => {
                return Err(format!(
                    "{} is home now, but the marker could not be written in {region}'s replica ({error}): \
                     it commits until the marker replicates there; run the command again to retry",
                    args.to
                )
                .into());
            }
        },
        OldHome::NoReplica(region) => format!("{region}: holds no replica of this table, so commits nothing"),
        OldHome::NotReached(region) => {
            format!("{region}: not reached (--accept-loss): it commits until the marker replicates there")
        }
        OldHome::None => format!("none: {} was home already", args.to),
    };
    summary.list("old home", fenced);
    Ok(summary)
}

/// What the failover does about the old home.
enum OldHome {
    /// Reached: the marker is written in its replica after the failover.
    Reached(String, AwsStore),
    /// Its region holds no replica of the table.
    NoReplica(String),
    /// Not contacted (`--accept-loss`).
    NotReached(String),
    /// The marker named `--to` already: no other home to fence.
    None,
}

/// Refuses unless the old home `region`'s replica answers within [`REACH_TIMEOUT`] (or holds no
/// replica of the table, so nothing there can commit).
async fn reach(region: &str, old: &AwsStore) -> Result<OldHomeReplica, AdminError> {
    let refused = |why: String| -> AdminError {
        format!(
            "the old home {region} could not be reached ({why}): it may still be committing writes, and \
             those that meet the new home's may be lost; fail over with --accept-loss if {region} is lost"
        )
        .into()
    };
    match tokio::time::timeout(REACH_TIMEOUT, old.reach_old_home()).await {
        Ok(Ok(replica)) => Ok(replica),
        Ok(Err(error)) => Err(refused(error.to_string())),
        Err(_) => Err(refused(format!("no answer in {REACH_TIMEOUT:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_old_home_that_cannot_be_reached_refuses_the_failover() {
        let sdk = registry_store_aws::testing::unreachable_sdk().await;
        let config = AwsStoreConfig { table: "registry".into(), bucket: "bodies".into() };
        let old = AwsStore::with_path_style(&sdk, config, true);
        let refused = reach("eu-west-1", &old).await.map_err(|e| e.to_string());
        let refused = refused.err().unwrap_or_default();
        assert!(refused.contains("eu-west-1 could not be reached") && refused.contains("--accept-loss"), "{refused}");
    }
}
