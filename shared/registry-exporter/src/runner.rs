//! The background task of `registry serve`: each exporter that is not PAUSED gets one
//! [`sync_pass`](crate::engine::sync_pass) per round (a round starts after a write the host
//! serves, and at least every `interval`), the outcome recorded in its status: RUNNING with the
//! offset raised by the writes made, or ERROR with the reason in `trace` and the exporter retried
//! after a backoff that doubles up to `max_backoff` (a destination that comes back is caught up by
//! the next pass; nothing is skipped, since a pass compares the whole exported state).
//!
//! Exporters run independently: each pass is a task of its own, so a slow or hanging destination
//! (every call bounded by the transport's timeout) delays only its own exporter. An
//! exporter has at most one pass at a time; a round that comes while it runs starts another pass
//! as soon as it ends.
//!
//! The status is written conditionally on the revision read before the pass: when the API changed
//! the exporter meanwhile (pause, reset, new definition), the outcome is dropped and the next
//! round decides again. Delivery is therefore at least once and idempotent.

use crate::engine::{Connect, RegistryApi};
use crate::model::ExporterState;
use crate::service::ExporterService;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How the runner paces itself.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// Longest time between two rounds.
    pub interval: Duration,
    /// First retry delay after an ERROR, doubled on each further failure.
    pub first_backoff: Duration,
    /// Longest retry delay.
    pub max_backoff: Duration,
}

impl Default for Pacing {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// Where one exporter is in the runner's schedule.
#[derive(Default)]
struct Schedule {
    /// The round its last pass was started in (a pass per round).
    round: u64,
    /// A pass of it is running.
    running: bool,
    /// After a failure: not before this instant, and the delay that led there.
    backoff: Option<(Instant, Duration)>,
}

pub struct Runner {
    service: ExporterService,
    source: Arc<dyn RegistryApi>,
    destinations: Arc<dyn Connect>,
    pacing: Pacing,
    round: u64,
    round_started: Instant,
    schedules: HashMap<String, Schedule>,
    passes: JoinSet<(String, bool)>,
}

impl Runner {
    /// Passes from `source` (this registry) to destinations opened by `destinations`.
    pub fn new(
        service: ExporterService,
        source: Arc<dyn RegistryApi>,
        destinations: Arc<dyn Connect>,
        pacing: Pacing,
    ) -> Self {
        Self {
            service,
            source,
            destinations,
            pacing,
            round: 1,
            round_started: Instant::now(),
            schedules: HashMap::new(),
            passes: JoinSet::new(),
        }
    }

    /// Runs for ever on the current runtime: a round when `trigger` is notified (the host notifies
    /// it after every write it serves) and at least every `interval` (changes made by another
    /// process on the same store); an exporter whose backoff is over runs at once.
    pub fn spawn(mut self, trigger: Arc<tokio::sync::Notify>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                self.start_due().await;
                let now = Instant::now();
                let next_round = (self.round_started + self.pacing.interval).saturating_duration_since(now);
                let wait = self
                    .schedules
                    .values()
                    .filter_map(|schedule| schedule.backoff.map(|(until, _)| until.saturating_duration_since(now)))
                    .fold(next_round, Duration::min);
                tokio::select! {
                    () = trigger.notified() => self.next_round(),
                    () = tokio::time::sleep(wait) => {
                        if self.round_started.elapsed() >= self.pacing.interval {
                            self.next_round();
                        }
                    }
                    Some(joined) = self.passes.join_next(), if !self.passes.is_empty() => match joined {
                        Ok((name, succeeded)) => self.finished(&name, succeeded),
                        Err(error) => tracing::error!(%error, "an exporter pass panicked"),
                    },
                }
            }
        })
    }

    fn next_round(&mut self) {
        self.round += 1;
        self.round_started = Instant::now();
    }

    /// Starts a pass of every exporter that is due: not paused, not running, past its backoff,
    /// and not yet passed in this round (an exporter past its backoff runs whatever the round).
    async fn start_due(&mut self) {
        let exporters = match self.service.store().exporters().await {
            Ok(exporters) => exporters,
            Err(error) => {
                tracing::warn!(%error, "exporters: cannot list");
                return;
            }
        };
        let names: Vec<String> = exporters.iter().map(|stored| stored.value.exporter.name.clone()).collect();
        self.schedules.retain(|name, schedule| schedule.running || names.contains(name));
        let now = Instant::now();
        for stored in exporters {
            let name = stored.value.exporter.name.clone();
            let schedule = self.schedules.entry(name.clone()).or_default();
            if stored.value.status.state == ExporterState::Paused {
                schedule.backoff = None;
                continue;
            }
            let due = match schedule.backoff {
                Some((until, _)) => now >= until,
                None => schedule.round < self.round,
            };
            if schedule.running || !due {
                continue;
            }
            schedule.running = true;
            schedule.round = self.round;
            let (service, source, destinations) =
                (self.service.clone(), self.source.clone(), self.destinations.clone());
            self.passes.spawn(async move {
                let (outcome, recorded) = service.pass(&stored, source.as_ref(), destinations.as_ref()).await;
                let succeeded = outcome.is_ok();
                if let Err(error) = &outcome {
                    tracing::warn!(exporter = %name, %error, "exporter pass failed");
                }
                if let Err(error) = recorded {
                    tracing::warn!(exporter = %name, %error, "exporter status not recorded");
                }
                (name, succeeded)
            });
        }
    }

    fn finished(&mut self, name: &str, succeeded: bool) {
        let Some(schedule) = self.schedules.get_mut(name) else { return };
        schedule.running = false;
        if succeeded {
            schedule.backoff = None;
        } else {
            let delay = schedule
                .backoff
                .map_or(self.pacing.first_backoff, |(_, delay)| (delay * 2).min(self.pacing.max_backoff));
            schedule.backoff = Some((Instant::now() + delay, delay));
        }
    }
}
