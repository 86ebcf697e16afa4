//! Keeps the function taking invocations after one of its calls to the Lambda Runtime API fails.
//!
//! `lambda_runtime`'s loop (1.5) goes on after the Runtime API *answers* an error status to a
//! response post (it logs it), but ends, returning the error, when the post itself fails: the
//! connection closed before the answer (`hyper::Error(IncompleteMessage)`: `cargo lambda watch`
//! answers 500 and drops the connection when the caller of the invocation went away), reset, or
//! refused. Returned from `main`, that error ends the process, and the function serves nothing
//! until it is started again. [`keep_serving`] starts the loop again instead: the invocation whose
//! post failed is lost (its caller is told by the Runtime API, as for any failed invocation), the
//! next one is served. A loop that ends without any invocation handled since the previous end means
//! the Runtime API cannot be reached at all (`GET /runtime/invocation/next` fails): it is retried
//! [`IDLE_RESTARTS`] times with a doubling pause, then the error is returned and the process
//! exits, as when the Runtime API is gone (the host is shutting the instance down).

use lambda_http::Error;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Consecutive loop ends with no invocation handled in between before the function gives up.
pub const IDLE_RESTARTS: u32 = 5;

/// The pause before the first restart after an idle end; doubled at each further one (0.1 s to
/// 1.6 s: about 3 s in all before the process exits).
pub const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// Counts the invocations a runtime loop hands to the function ([`Invocations::handled`] in the
/// handler, once per invocation), so that [`keep_serving`] tells a loop that served from one that
/// could not reach the Runtime API.
#[derive(Debug, Clone, Default)]
pub struct Invocations(Arc<AtomicU64>);

impl Invocations {
    /// Records one invocation handed to the function.
    pub fn handled(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Runs the loop `run` makes, again each time it ends with an error (logged), until it ends
/// without one, or has ended [`IDLE_RESTARTS`] + 1 times in a row without an invocation counted
/// in `invocations` in between (pausing `first_pause`, [`FIRST_PAUSE`] in the function, then twice
/// as long each time): then its last error is returned.
pub async fn keep_serving<F, Fut>(invocations: &Invocations, first_pause: Duration, mut run: F) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut idle_ends = 0;
    let mut seen = invocations.count();
    loop {
        let error = match run().await {
            Ok(()) => return Ok(()),
            Err(error) => error,
        };
        let count = invocations.count();
        if count != seen {
            seen = count;
            idle_ends = 0;
            tracing::error!(error = %error, "a Runtime API call failed: taking the next invocation");
            continue;
        }
        if idle_ends == IDLE_RESTARTS {
            tracing::error!(error = %error, "the Runtime API cannot be reached: exiting");
            return Err(error);
        }
        let pause = first_pause * 2u32.pow(idle_ends);
        idle_ends += 1;
        tracing::error!(
            error = %error,
            pause_ms = pause.as_millis() as u64,
            attempt = idle_ends,
            "the Runtime API cannot be reached: trying again"
        );
        tokio::time::sleep(pause).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A loop that, on its n-th run, counts `served[n]` invocations then ends with an error (past
    /// the list: ends cleanly).
    async fn runs(served: &[u64]) -> (Result<(), Error>, usize) {
        let invocations = Invocations::default();
        let runs = Mutex::new(0usize);
        let result = keep_serving(&invocations, Duration::from_millis(1), || {
            let run = {
                let mut runs = runs.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                *runs += 1;
                *runs - 1
            };
            let invocations = invocations.clone();
            let served = served.get(run).copied();
            async move {
                let Some(served) = served else { return Ok(()) };
                (0..served).for_each(|_| invocations.handled());
                Err(Error::from(format!("run {run} failed")))
            }
        })
        .await;
        (result, runs.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    #[tokio::test]
    async fn a_loop_that_served_is_started_again_and_one_that_cannot_reach_the_runtime_api_gives_up() {
        // Failed posts after serving: started again each time, until the loop ends cleanly.
        let (result, count) = runs(&[3, 1, 1, 1, 1, 1, 1, 1]).await;
        assert!(result.is_ok());
        assert_eq!(count, 9);
        // Never reaching the Runtime API: the first end and IDLE_RESTARTS more, then its error.
        let (result, count) = runs(&[0; 10]).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err(format!("run {IDLE_RESTARTS} failed")));
        assert_eq!(count, IDLE_RESTARTS as usize + 1);
        // Served in between: the idle ends count again from zero.
        let (result, count) = runs(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await;
        assert!(result.is_err());
        assert_eq!(count, 11);
    }
}
