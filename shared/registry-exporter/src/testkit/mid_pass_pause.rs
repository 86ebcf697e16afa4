//! An operator pausing an exporter from inside one of its passes, as the schema linking property
//! tests inject it: the destination pauses the exporter right after a planned call, the pass
//! learns of it only from the exporter's record, and every write the destination receives once
//! the pause was acknowledged is counted (each one a pass that did not stop).

use crate::service::ExporterService;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Counts `left` down; true when this call is the one it named.
pub fn due(left: &AtomicU64) -> bool {
    left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1)) == Ok(1)
}

/// The pause of one exporter, planned by the test and made by its destination.
pub struct MidPassPause {
    service: ExporterService,
    exporter: String,
    /// Calls left until the one after which the exporter is paused (0: none planned).
    pause_in: AtomicU64,
    /// Whether the pause was acknowledged (and not yet resumed).
    paused: AtomicBool,
    written_while_paused: AtomicU64,
}

impl MidPassPause {
    /// No pause planned for `exporter` of `service`.
    pub fn new(service: ExporterService, exporter: &str) -> MidPassPause {
        MidPassPause {
            service,
            exporter: exporter.to_owned(),
            pause_in: AtomicU64::new(0),
            paused: AtomicBool::new(false),
            written_while_paused: AtomicU64::new(0),
        }
    }

    /// Pauses the exporter after the `calls`th destination call from now (0: none planned).
    pub fn plan(&self, calls: u64) {
        self.pause_in.store(calls, Ordering::Relaxed);
    }

    /// Runs `pass` with the exporter paused after its `calls`th destination call (if it makes that
    /// many); `happened` records "paused mid-pass" when it was.
    pub async fn during<T>(&self, calls: u64, pass: impl Future<Output = T>, happened: &mut Vec<&'static str>) -> T {
        self.plan(calls);
        let outcome = pass.await;
        self.plan(0);
        if self.is_paused() {
            happened.push("paused mid-pass");
        }
        outcome
    }

    /// Whether the exporter is paused (the pause acknowledged, not yet resumed).
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Before the destination applies a call: a write (`writes`) while paused is counted.
    pub fn before_call(&self, writes: bool) {
        if writes && self.is_paused() {
            self.written_while_paused.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// After the destination applied a call: pauses the exporter if this call is the planned one.
    pub async fn after_call(&self) {
        if due(&self.pause_in) {
            self.service.pause(&self.exporter).await.unwrap_or_else(|error| panic!("pause: {error}"));
            self.paused.store(true, Ordering::Relaxed);
        }
    }

    /// Resumes the paused exporter, reset first when `reset`; what was done goes to `happened`.
    pub async fn resume(&self, reset: bool, happened: &mut Vec<&'static str>) -> Result<(), String> {
        if reset {
            self.service.reset(&self.exporter).await.map_err(|error| format!("reset: {error}"))?;
            happened.push("reset");
        }
        self.paused.store(false, Ordering::Relaxed);
        self.service.resume(&self.exporter).await.map_err(|error| format!("resume: {error}"))?;
        happened.push("resumed");
        Ok(())
    }

    /// The end of the faults: `Err` if a write reached the destination after a pause was
    /// acknowledged; else the exporter runs again (resumed if paused).
    pub async fn finish(&self) -> Result<(), String> {
        let written_while_paused = self.written_while_paused.load(Ordering::Relaxed);
        if written_while_paused > 0 {
            return Err(format!(
                "{written_while_paused} write(s) reached the destination after the pause was acknowledged"
            ));
        }
        if self.paused.swap(false, Ordering::Relaxed) {
            self.service.resume(&self.exporter).await.map_err(|error| format!("resume: {error}"))?;
        }
        Ok(())
    }
}
