//! The origin header: a public Function URL behind CloudFront can be called around the distribution
//! (and its WAF) by anyone who learns the URL. With `REGISTRY_ORIGIN_SECRET` naming a secret,
//! CloudFront adds the header [`HEADER`] with a secret value to every request it forwards, and the
//! function answers any request without an accepted value with 403 before the registry sees it.
//! Unlike origin access control, the client's `Authorization` reaches the registry, so its own auth
//! stays on and stock producers can POST.
//!
//! The secret holds the accepted values, one per line: CloudFront sends the first; a rotation lists
//! the new value first and the old one second until every edge sends the new one (the Terraform
//! module's `cloudfront_origin_secret` and `cloudfront_origin_secret_previous`). It is read at init,
//! again once the auth reload interval has passed, and after a mismatch at most every
//! [`ReloadPolicy::after_miss`].

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use registry_auth::{AuthError, Clock, ReloadPolicy, SecretReader};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The header CloudFront adds (an origin custom header).
pub const HEADER: &str = "x-registry-origin";

/// The accepted origin-header values, read from their secret again on the reload schedule.
#[derive(Debug)]
pub struct OriginGuard {
    secret_id: String,
    reader: Arc<dyn SecretReader>,
    policy: ReloadPolicy,
    clock: ClockFn,
    state: Mutex<Accepted>,
    turn: tokio::sync::Mutex<()>,
}

/// [`Clock`] with a `Debug` the guard can derive.
struct ClockFn(Clock);

impl std::fmt::Debug for ClockFn {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Clock")
    }
}

#[derive(Debug)]
struct Accepted {
    values: Arc<Vec<String>>,
    last_read: Instant,
}

impl OriginGuard {
    /// The guard over the values of secret `secret_id`, read now through `reader`. A secret that
    /// cannot be read or holds no value is an error: init fails rather than serve unguarded.
    pub async fn load(
        secret_id: &str,
        reader: Arc<dyn SecretReader>,
        policy: ReloadPolicy,
    ) -> Result<OriginGuard, AuthError> {
        let values = accepted_values(secret_id, &reader.read_secret(secret_id).await?)?;
        let clock = ClockFn(Arc::new(Instant::now));
        let state = Mutex::new(Accepted { values: Arc::new(values), last_read: (clock.0)() });
        let turn = tokio::sync::Mutex::new(());
        Ok(OriginGuard { secret_id: secret_id.to_string(), reader, policy, clock, state, turn })
    }

    /// The same guard timing its reads by `clock` (tests advance it by hand); its last read is now.
    pub fn with_clock(mut self, clock: Clock) -> OriginGuard {
        self.clock = ClockFn(clock);
        let now = (self.clock.0)();
        self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).last_read = now;
        self
    }

    /// Whether `presented` (the header's value, if any) is an accepted value, the secret read again
    /// first when the interval has passed, and after a mismatch when the miss gap has.
    pub async fn admits(&self, presented: Option<&str>) -> bool {
        self.refresh(self.policy.interval).await;
        let Some(presented) = presented else { return false };
        if self.matches(presented) {
            return true;
        }
        self.refresh(self.policy.after_miss).await && self.matches(presented)
    }

    fn matches(&self, presented: &str) -> bool {
        let values = Arc::clone(&self.lock().values);
        values.iter().fold(false, |found, value| found | same(value.as_bytes(), presented.as_bytes()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Accepted> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn due(&self, gap: Duration) -> bool {
        !self.policy.interval.is_zero() && (self.clock.0)().saturating_duration_since(self.lock().last_read) >= gap
    }

    /// Reads the secret when `gap` has passed since the last read; `true` when the values changed.
    async fn refresh(&self, gap: Duration) -> bool {
        if !self.due(gap) {
            return false;
        }
        let _turn = self.turn.lock().await;
        if !self.due(gap) {
            return false;
        }
        self.lock().last_read = (self.clock.0)();
        let read = self.reader.read_secret(&self.secret_id).await;
        match read.and_then(|text| accepted_values(&self.secret_id, &text)) {
            Ok(values) => {
                let mut state = self.lock();
                let changed = *state.values != values;
                if changed {
                    state.values = Arc::new(values);
                }
                changed
            }
            Err(error) => {
                tracing::warn!(%error, "reading the origin secret again failed; the loaded values stay in use");
                false
            }
        }
    }
}

/// The non-empty lines of the secret; none is an error.
fn accepted_values(secret_id: &str, text: &str) -> Result<Vec<String>, AuthError> {
    let values: Vec<String> = text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_string).collect();
    if values.is_empty() {
        return Err(AuthError::Config(format!("the origin secret {secret_id} holds no value")));
    }
    Ok(values)
}

/// Equal bytes, compared in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |difference, (x, y)| difference | (x ^ y)) == 0
}

/// `router` answering 403 to every request without an accepted [`HEADER`].
pub fn layer(router: axum::Router, guard: Arc<OriginGuard>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(guard, check))
}

async fn check(State(guard): State<Arc<OriginGuard>>, request: Request, next: Next) -> Response {
    let presented = request.headers().get(HEADER).and_then(|value| value.to_str().ok());
    if guard.admits(presented).await {
        return next.run(request).await;
    }
    let body = r#"{"error_code":40301,"message":"This registry is served through its custom domain only"}"#;
    (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "application/vnd.schemaregistry.v1+json")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tower::ServiceExt;

    #[derive(Debug, Default)]
    struct Secret(Mutex<String>);

    impl SecretReader for Secret {
        fn read_secret<'a>(&'a self, _secret_id: &'a str) -> registry_auth::reload::ReadFuture<'a, String> {
            Box::pin(async move { Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()) })
        }
    }

    const INTERVAL: Duration = Duration::from_secs(60);

    async fn guard(text: &str) -> (Arc<Secret>, Arc<AtomicU64>, OriginGuard) {
        let secret = Arc::new(Secret(Mutex::new(text.to_string())));
        let elapsed = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let ticks = Arc::clone(&elapsed);
        let clock: Clock = Arc::new(move || start + Duration::from_secs(ticks.load(Ordering::SeqCst)));
        let reader: Arc<dyn SecretReader> = secret.clone();
        let guard = OriginGuard::load("origin", reader, ReloadPolicy::every(INTERVAL))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .with_clock(clock);
        (secret, elapsed, guard)
    }

    #[tokio::test]
    async fn only_the_listed_values_pass() {
        let (_, _, guard) = guard("new-value\nold-value\n").await;
        assert!(guard.admits(Some("new-value")).await);
        assert!(guard.admits(Some("old-value")).await, "the previous value passes during a rotation");
        assert!(!guard.admits(Some("new-valu")).await);
        assert!(!guard.admits(Some("")).await);
        assert!(!guard.admits(None).await);
    }

    #[tokio::test]
    async fn a_rotated_out_value_stops_passing_after_the_interval() {
        let (secret, elapsed, guard) = guard("first").await;
        *secret.0.lock().unwrap_or_else(|e| e.into_inner()) = "second".into();
        elapsed.store(ReloadPolicy::MISS_GAP.as_secs(), Ordering::SeqCst);
        assert!(guard.admits(Some("second")).await, "a new value passes at once (a miss reads again)");
        assert!(!guard.admits(Some("first")).await, "the old one is gone with the read");
        *secret.0.lock().unwrap_or_else(|e| e.into_inner()) = "third".into();
        elapsed.store(ReloadPolicy::MISS_GAP.as_secs() + INTERVAL.as_secs(), Ordering::SeqCst);
        assert!(!guard.admits(Some("second")).await);
        assert!(guard.admits(Some("third")).await);
    }

    #[tokio::test]
    async fn an_empty_secret_fails_init() {
        let reader: Arc<dyn SecretReader> = Arc::new(Secret(Mutex::new(" \n".into())));
        assert!(OriginGuard::load("origin", reader, ReloadPolicy::every(INTERVAL)).await.is_err());
    }

    #[tokio::test]
    async fn requests_without_the_header_are_answered_403_before_the_registry() {
        let (_, _, guard) = guard("secret-value").await;
        let app = layer(axum::Router::new().route("/", axum::routing::get(|| async { "registry" })), Arc::new(guard));
        let request = |value: Option<&str>| {
            let builder = Request::builder().uri("/");
            let builder = match value {
                Some(value) => builder.header(HEADER, value),
                None => builder,
            };
            builder.body(Body::empty()).unwrap_or_else(|e| panic!("{e}"))
        };
        let denied = app.clone().oneshot(request(None)).await.unwrap_or_else(|e| match e {});
        assert_eq!(denied.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            denied.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            Some("application/vnd.schemaregistry.v1+json")
        );
        let wrong = app.clone().oneshot(request(Some("guess"))).await.unwrap_or_else(|e| match e {});
        assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
        let passed = app.oneshot(request(Some("secret-value"))).await.unwrap_or_else(|e| match e {});
        assert_eq!(passed.status(), StatusCode::OK);
    }
}
