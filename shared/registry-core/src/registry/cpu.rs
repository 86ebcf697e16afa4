//! The one place CPU-heavy schema work runs: parsing, stored text, fingerprints' inputs and
//! compatibility checks go to tokio's blocking threads, at most `schema_workers` at a time.
//!
//! Why: that work can take up to its budgets' worth of CPU (see `registry_schema::limits`). On the
//! async worker threads it would hold every other request on the same thread, so a few heavy checks
//! would stall cheap reads for everyone. Here heavy jobs queue for a permit (in arrival order, the
//! semaphore is fair) while the async workers keep serving reads and storage calls.

use crate::error::RegistryError;
use crate::store::StoreError;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Schema workers when the settings do not say: one per available core.
pub fn default_schema_workers() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
}

/// A bounded pool over tokio's blocking threads.
#[derive(Debug)]
pub(super) struct CpuPool {
    permits: Arc<Semaphore>,
}

impl CpuPool {
    /// A pool running at most `workers` jobs at once (at least one).
    pub(super) fn new(workers: usize) -> CpuPool {
        CpuPool { permits: Arc::new(Semaphore::new(workers.max(1))) }
    }

    /// Runs `job` on a blocking thread once a permit is free, and returns its answer. Waiting costs
    /// the caller nothing but its place in the queue.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, RegistryError> {
        let permit = Arc::clone(&self.permits).acquire_owned().await.map_err(|_| stopped())?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        })
        .await
        .map_err(|_| stopped())
    }

    /// Jobs that could start now without waiting (for tests).
    #[cfg(test)]
    pub(super) fn available(&self) -> usize {
        self.permits.available_permits()
    }
}

/// The job panicked or the runtime is shutting down: not the caller's fault, and nothing was written.
fn stopped() -> RegistryError {
    RegistryError::Store(StoreError::Unavailable("schema worker stopped before answering".to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_beyond_the_bound_wait_for_a_permit() {
        let pool = Arc::new(CpuPool::new(1));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel();
        let first = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move {
                pool.run(move || {
                    let _ = started.send(());
                    released.recv().is_ok()
                })
                .await
            }
        });
        running.await.unwrap();
        assert_eq!(pool.available(), 0);
        let second = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.run(|| 2 + 2).await }
        });
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        assert!(!second.is_finished(), "the second job must wait for the first one's permit");
        release.send(()).unwrap();
        assert!(first.await.unwrap().unwrap());
        assert_eq!(second.await.unwrap().unwrap(), 4);
        assert_eq!(pool.available(), 1);
    }

    #[tokio::test]
    async fn a_cheap_read_is_served_while_parsing_waits_for_the_saturated_pool() {
        use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
        let settings = RegistrySettings { schema_workers: 1, ..RegistrySettings::default() };
        let registry = Registry::new(Arc::new(crate::MemoryStore::new()), settings);
        let schema = |text: &str| NewSchema { schema: Some(text.to_string()), ..NewSchema::default() };
        let first = registry.register("s", schema(r#""string""#), RegisterOptions::default()).await.unwrap();

        // A heavy job holds the only worker until released.
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel();
        let heavy = tokio::spawn({
            let registry = registry.clone();
            async move {
                registry
                    .cpu
                    .run(move || {
                        let _ = started.send(());
                        released.recv().is_ok()
                    })
                    .await
            }
        });
        running.await.unwrap();
        // A registration needs a parse: it queues behind the heavy job.
        let queued = tokio::spawn({
            let registry = registry.clone();
            async move { registry.register("s", schema(r#""bytes""#), RegisterOptions::default()).await }
        });
        // Meanwhile reads that need no schema work are answered on this (async) thread.
        for _ in 0..3 {
            assert_eq!(registry.schema_by_id(first.id.0).await.unwrap().body.schema, r#""string""#);
            tokio::task::yield_now().await;
        }
        assert!(!queued.is_finished(), "the registration must still wait for a worker");
        release.send(()).unwrap();
        assert!(heavy.await.unwrap().unwrap());
        let second = queued.await.unwrap();
        assert!(second.is_ok() || matches!(second, Err(RegistryError::IncompatibleSchema { .. })), "{second:?}");
    }
}
