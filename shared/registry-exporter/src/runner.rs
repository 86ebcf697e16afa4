//! The background task of `registry serve`: on each tick (after a write, a backoff, or `interval`),
//! one [`sync_pass`] per exporter that is not PAUSED, the outcome recorded in its status: RUNNING with the offset raised by the
//! writes made, or ERROR with the reason in `trace` and the exporter retried after a backoff that
//! doubles up to `max_backoff` (a destination that comes back is caught up by the next pass;
//! nothing is skipped, since a pass compares the whole exported state).
//!
//! The status is written conditionally on the revision read before the pass: when the API changed
//! the exporter meanwhile (pause, reset, new definition), the outcome is dropped and the next
//! tick decides again. Delivery is therefore at least once and idempotent.

use crate::engine::{PassError, RegistryApi, sync_pass};
use crate::model::{ExporterRecord, ExporterState, ExporterStatus, now_ms};
use crate::service::ExporterService;
use crate::store::{Expect, StoreError, Stored};
use crate::transport::HttpApi;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the runner paces itself.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// Longest time between two ticks.
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

pub struct Runner {
    service: ExporterService,
    source: Arc<dyn RegistryApi>,
    pacing: Pacing,
    backoff: HashMap<String, (Instant, Duration)>,
}

impl Runner {
    pub fn new(service: ExporterService, source: Arc<dyn RegistryApi>, pacing: Pacing) -> Self {
        Self { service, source, pacing, backoff: HashMap::new() }
    }

    /// Runs for ever on the current runtime: a tick when `trigger` is notified (the host notifies
    /// it after every write it serves), when an exporter's backoff is over, and at least every
    /// `interval` (changes made by another process on the same store).
    pub fn spawn(mut self, trigger: Arc<tokio::sync::Notify>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                self.tick().await;
                let now = Instant::now();
                let wait = self
                    .backoff
                    .values()
                    .map(|(until, _)| until.saturating_duration_since(now))
                    .min()
                    .map_or(self.pacing.interval, |due| due.min(self.pacing.interval));
                tokio::select! {
                    () = trigger.notified() => {}
                    () = tokio::time::sleep(wait) => {}
                }
            }
        })
    }

    /// One pass of every exporter due.
    pub async fn tick(&mut self) {
        let exporters = match self.service.store().exporters().await {
            Ok(exporters) => exporters,
            Err(error) => {
                tracing::warn!(%error, "exporters: cannot list");
                return;
            }
        };
        let names: Vec<String> = exporters.iter().map(|stored| stored.value.exporter.name.clone()).collect();
        self.backoff.retain(|name, _| names.contains(name));
        for stored in exporters {
            self.run_one(stored).await;
        }
    }

    async fn run_one(&mut self, stored: Stored<ExporterRecord>) {
        let name = stored.value.exporter.name.clone();
        if stored.value.status.state == ExporterState::Paused {
            self.backoff.remove(&name);
            return;
        }
        if let Some((until, _)) = self.backoff.get(&name)
            && Instant::now() < *until
        {
            return;
        }
        let outcome = self.pass(&stored.value).await;
        match &outcome {
            Ok(_) => {
                self.backoff.remove(&name);
            }
            Err(error) => {
                let delay = self
                    .backoff
                    .get(&name)
                    .map_or(self.pacing.first_backoff, |(_, delay)| (*delay * 2).min(self.pacing.max_backoff));
                self.backoff.insert(name.clone(), (Instant::now() + delay, delay));
                tracing::warn!(exporter = %name, %error, retry_in_ms = delay.as_millis() as u64, "exporter pass failed");
            }
        }
        if let Err(error) = self.record(stored, outcome).await {
            tracing::warn!(exporter = %name, %error, "exporter status not recorded");
        }
    }

    async fn pass(&self, record: &ExporterRecord) -> Result<u64, PassError> {
        let config =
            self.service.destination_config(&record.exporter).await.map_err(|error| PassError(error.to_string()))?;
        let destination = HttpApi::from_config(&record.exporter.name, &config).map_err(PassError)?;
        sync_pass(&record.exporter, self.source.as_ref(), &destination).await
    }

    /// Writes the pass's outcome into the status, unless the exporter changed meanwhile.
    async fn record(&self, stored: Stored<ExporterRecord>, outcome: Result<u64, PassError>) -> Result<(), StoreError> {
        let before = &stored.value.status;
        let status = match outcome {
            Ok(0) if before.state == ExporterState::Running => return Ok(()),
            Ok(writes) => ExporterStatus {
                state: ExporterState::Running,
                offset: before.offset.saturating_add(i64::try_from(writes).unwrap_or(i64::MAX)),
                ts: now_ms(),
                trace: None,
            },
            Err(error) => {
                if before.state == ExporterState::Error && before.trace.as_deref() == Some(error.0.as_str()) {
                    return Ok(());
                }
                ExporterStatus {
                    state: ExporterState::Error,
                    offset: before.offset,
                    ts: now_ms(),
                    trace: Some(error.0),
                }
            }
        };
        let record = ExporterRecord { exporter: stored.value.exporter.clone(), status };
        match self.service.store().put_exporter(&record, Expect::Revision(stored.revision)).await {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }
}
