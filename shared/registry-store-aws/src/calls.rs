//! Counts the AWS operations a store performs (one per SDK operation, retries not counted), for
//! tests and benchmarks that check how many calls a registry operation costs; and, once asked,
//! keeps a copy of every DynamoDB write the store sends, for tests that check what each write
//! path conditions on (`tests/writes.rs`).

use aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemInput;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A shared counter of AWS operations, installed on both SDK clients of an
/// [`AwsStore`](crate::AwsStore). Cloning shares the count.
#[derive(Debug, Clone, Default)]
pub struct CallCounter {
    count: Arc<AtomicU64>,
    /// The writes sent since [`CallCounter::record_writes`]; `None` while not recording.
    writes: Arc<Mutex<Option<Vec<SentWrite>>>>,
}

/// A DynamoDB write request as the store sent it (before the SDK serialized it).
#[derive(Debug, Clone)]
pub enum SentWrite {
    Transaction(TransactWriteItemsInput),
    Put(PutItemInput),
    Update(UpdateItemInput),
    Delete(DeleteItemInput),
}

impl CallCounter {
    /// Operations started since the store was built.
    pub fn get(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Keeps a copy of every DynamoDB write sent from now on (dropping any kept before).
    pub fn record_writes(&self) {
        *self.recorded() = Some(Vec::new());
    }

    /// The writes kept since [`CallCounter::record_writes`] or the last call of this, in the order
    /// they were sent; recording goes on.
    pub fn take_writes(&self) -> Vec<SentWrite> {
        self.recorded().as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn recorded(&self) -> MutexGuard<'_, Option<Vec<SentWrite>>> {
        // A panic while holding the lock left a list that is still whole: keep using it.
        self.writes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        self.count.fetch_add(1, Ordering::SeqCst);
        let mut recorded = self.recorded();
        if let Some(writes) = recorded.as_mut() {
            let input = context.input();
            let write = if let Some(input) = input.downcast_ref::<TransactWriteItemsInput>() {
                Some(SentWrite::Transaction(input.clone()))
            } else if let Some(input) = input.downcast_ref::<PutItemInput>() {
                Some(SentWrite::Put(input.clone()))
            } else if let Some(input) = input.downcast_ref::<UpdateItemInput>() {
                Some(SentWrite::Update(input.clone()))
            } else {
                input.downcast_ref::<DeleteItemInput>().map(|input| SentWrite::Delete(input.clone()))
            };
            writes.extend(write);
        }
        Ok(())
    }
}
