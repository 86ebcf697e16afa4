//! Counts the AWS operations a store performs (one per SDK operation, retries not counted), for
//! tests and benchmarks that check how many calls a registry operation costs.

use aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A shared counter of AWS operations, installed on both SDK clients of an
/// [`AwsStore`](crate::AwsStore). Cloning shares the count.
#[derive(Debug, Clone, Default)]
pub struct CallCounter {
    count: Arc<AtomicU64>,
}

impl CallCounter {
    /// Operations started since the store was built.
    pub fn get(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        self.count.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
