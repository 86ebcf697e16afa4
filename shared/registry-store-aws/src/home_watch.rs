//! Following the home marker: which region commits writes, as this region's replica says.
//!
//! `registry failover --to R` writes `HOME/MARKER {region: R}` in R's replica and global-table
//! replication carries it to every other replica. A process given every region's bucket
//! (`REGISTRY_REGION_BUCKETS`) opens the stores of every region that may be home ([`Follow::open`],
//! each exactly what [`Deployment::open`] builds when that region is configured as home) and asks
//! [`HomeWatch::home`], per request, which of them to use: the region the local replica's marker
//! names, read at most once per time to live, or the configured home while no failover has written
//! a marker. A failover thus reaches a process's writes within the marker's replication plus the
//! time to live, with no redeploy; the configured home (`REGISTRY_HOME_REGION`) is only where a
//! registry starts.

use crate::regions::{Deployment, RegionConfig};
use crate::{AwsEnv, AwsStore};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a marker read may take: past it the home last known is kept for another period (a
/// replica that slow is not answering the requests either).
const MARKER_READ_TIMEOUT: Duration = Duration::from_secs(1);

/// Where a watch's time comes from: the monotonic clock, or in tests one the test moves, so that
/// what a test checks of the time to live does not depend on how fast the machine is.
#[derive(Clone)]
pub struct WatchClock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl WatchClock {
    /// A clock reading `now`.
    pub fn new(now: impl Fn() -> Instant + Send + Sync + 'static) -> WatchClock {
        WatchClock(Arc::new(now))
    }

    fn now(&self) -> Instant {
        (self.0)()
    }
}

impl Default for WatchClock {
    fn default() -> WatchClock {
        WatchClock::new(Instant::now)
    }
}

impl std::fmt::Debug for WatchClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchClock")
    }
}

/// The region the home marker of the local replica names, re-read at most once per time to live.
#[derive(Debug)]
pub struct HomeWatch {
    /// The local replica (reads only: the marker's GetItem).
    local: AwsStore,
    /// The home while no marker exists.
    configured: String,
    ttl: Duration,
    clock: WatchClock,
    /// How long one marker read may take ([`MARKER_READ_TIMEOUT`]).
    read_timeout: Duration,
    /// The home last read and when its read started (held only to copy or replace it).
    last: std::sync::Mutex<Option<(Instant, String)>>,
    /// Held by the one request reading the marker: the others answer with the home last known
    /// meanwhile, and wait only for the first read, when none is known yet.
    reading: tokio::sync::Mutex<()>,
    reads: AtomicU64,
}

impl HomeWatch {
    /// Watches the marker in `local`'s table; `configured` is the home until a marker exists.
    pub fn new(local: AwsStore, configured: &str, ttl: Duration) -> HomeWatch {
        HomeWatch {
            local,
            configured: configured.to_string(),
            ttl,
            clock: WatchClock::default(),
            read_timeout: MARKER_READ_TIMEOUT,
            last: std::sync::Mutex::default(),
            reading: tokio::sync::Mutex::default(),
            reads: AtomicU64::new(0),
        }
    }

    /// The same watch timed by `clock` (tests move it by hand).
    pub fn with_clock(mut self, clock: WatchClock) -> HomeWatch {
        self.clock = clock;
        self
    }

    /// The same watch allowing a marker read `timeout` (a second by default).
    pub fn with_read_timeout(mut self, timeout: Duration) -> HomeWatch {
        self.read_timeout = timeout;
        self
    }

    /// The current home: the marker's region (the configured home without a marker), from the
    /// last read if it started less than the time to live ago, else from one strongly consistent
    /// GetItem now, made by one request while the others go where the home last known is (no
    /// request waits on a slow replica but the very first). A failed read, or one slower than a
    /// second, keeps the home last known (the configured one at first) for another period and is
    /// logged: a replica that cannot be read leaves routing as it was.
    pub async fn home(&self) -> String {
        let _reading = match self.reading.try_lock() {
            Ok(reading) => reading,
            Err(_) => match self.last_read() {
                Some((_, home)) => return home,
                None => self.reading.lock().await,
            },
        };
        // Read again under the lock: another request may have just read the marker.
        let known = match self.last_read() {
            Some((at, home)) if self.clock.now().saturating_duration_since(at) < self.ttl => return home,
            Some((_, home)) => home,
            None => self.configured.clone(),
        };
        let started = self.clock.now();
        self.reads.fetch_add(1, Ordering::Relaxed);
        let home = match tokio::time::timeout(self.read_timeout, self.local.home_marker()).await {
            Ok(Ok(Some(marker))) => marker.region,
            Ok(Ok(None)) => self.configured.clone(),
            Ok(Err(error)) => {
                tracing::warn!(%error, home = %known, "cannot read the home marker; keeping the home last known");
                known.clone()
            }
            Err(_) => {
                let waited = self.read_timeout.as_millis();
                tracing::warn!(waited_ms = waited, home = %known, "no home marker read in time; keeping the home last known");
                known.clone()
            }
        };
        if home != known {
            tracing::info!(from = %known, to = %home, "the home marker names a new home: writes go there");
        }
        *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((started, home.clone()));
        home
    }

    /// The last read's start and home, if any.
    fn last_read(&self) -> Option<(Instant, String)> {
        self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Marker reads made since the watch was built.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

/// The stores of every region that may be home, and the watch choosing among them.
#[derive(Debug)]
pub struct Follow {
    /// Which region is home now.
    pub watch: Arc<HomeWatch>,
    /// Per region, the stores [`Deployment::open`] builds with that region as home: the
    /// [`Deployment::Home`] variant for this process's own region, [`Deployment::Read`] for the
    /// others (writes to that region's table and bucket, fenced on it).
    pub homes: BTreeMap<String, Deployment>,
}

impl Follow {
    /// The stores for every region of `buckets` (`REGISTRY_REGION_BUCKETS`: `region=bucket`,
    /// comma-separated) as home, with `regions`' acknowledging replicas (minus each home itself)
    /// and a watch of `ttl`. `None` when `buckets` is empty or no home is configured (a fixed
    /// home, or a single region: as before). Fails when the list is malformed, or does not name
    /// this region with `REGISTRY_BUCKET` or the configured home with its bucket.
    pub fn open(
        env: &AwsEnv,
        regions: Option<&RegionConfig>,
        buckets: &str,
        ttl: Duration,
    ) -> Result<Option<Follow>, String> {
        let buckets = parse_region_buckets(buckets)?;
        let Some(regions) = regions.filter(|_| !buckets.is_empty()) else { return Ok(None) };
        let own = env.sdk.region().map(|r| r.as_ref().to_string()).unwrap_or_default();
        for (region, bucket, what) in [
            (&own, &env.store.bucket, "this region's REGISTRY_BUCKET"),
            (&regions.home_region, &regions.home_bucket, "the configured home's bucket"),
        ] {
            match buckets.get(region) {
                Some(listed) if listed == bucket => {}
                listed => {
                    return Err(format!(
                        "REGISTRY_REGION_BUCKETS gives {region} the bucket {listed:?}, but {what} is {bucket}"
                    ));
                }
            }
        }
        let homes = buckets
            .iter()
            .map(|(home, bucket)| {
                let config = RegionConfig {
                    home_region: home.clone(),
                    home_bucket: bucket.clone(),
                    ack_regions: regions.ack_regions.iter().filter(|ack| &ack.region != home).cloned().collect(),
                    ack_timeout: regions.ack_timeout,
                };
                (home.clone(), Deployment::open_with_mirrors(env, Some(&config), &buckets))
            })
            .collect();
        let local = AwsStore::with_path_style(&env.sdk, env.store.clone(), env.s3_path_style);
        let watch = Arc::new(HomeWatch::new(local, &regions.home_region, ttl));
        Ok(Some(Follow { watch, homes }))
    }
}

/// The `region=bucket` entries of a comma-separated list (empty entries skipped); an entry without
/// `=`, with an empty side or naming a region twice is an error.
pub fn parse_region_buckets(list: &str) -> Result<BTreeMap<String, String>, String> {
    let mut buckets = BTreeMap::new();
    for entry in list.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
        let Some((region, bucket)) = entry.split_once('=').map(|(r, b)| (r.trim(), b.trim())) else {
            return Err(format!("REGISTRY_REGION_BUCKETS entry {entry:?} is not region=bucket"));
        };
        if region.is_empty() || bucket.is_empty() {
            return Err(format!("REGISTRY_REGION_BUCKETS entry {entry:?} is not region=bucket"));
        }
        if buckets.insert(region.to_string(), bucket.to_string()).is_some() {
            return Err(format!("REGISTRY_REGION_BUCKETS names {region} twice"));
        }
    }
    Ok(buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_buckets_are_region_equals_bucket() {
        let parsed = parse_region_buckets(" us-east-1=bodies-a , eu-west-1 = bodies-b,,");
        let expected = BTreeMap::from([
            ("eu-west-1".to_string(), "bodies-b".to_string()),
            ("us-east-1".to_string(), "bodies-a".to_string()),
        ]);
        assert_eq!(parsed, Ok(expected));
        assert_eq!(parse_region_buckets(""), Ok(BTreeMap::new()));
        assert!(parse_region_buckets("us-east-1").is_err());
        assert!(parse_region_buckets("us-east-1=").is_err());
        assert!(parse_region_buckets("=b").is_err());
        assert!(parse_region_buckets("us-east-1=a,us-east-1=b").is_err());
    }
}
