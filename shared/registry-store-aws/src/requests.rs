//! The DynamoDB requests several writers and readers share: one transaction, and a strongly
//! consistent batch read that retries the keys DynamoDB left unprocessed.

use crate::AwsStore;
use crate::errors::{AwsError, classify, classify_transaction};
use crate::ids::build_error;
use crate::items::Item;
use aws_sdk_dynamodb::types::{KeysAndAttributes, TransactWriteItem};

/// DynamoDB's limit on keys in one BatchGetItem.
pub(crate) const MAX_BATCH_KEYS: usize = 100;

impl AwsStore {
    /// `items` as one TransactWriteItems; `op` names the call in errors.
    pub(crate) async fn transact(&self, op: &'static str, items: Vec<TransactWriteItem>) -> Result<(), AwsError> {
        let items = self.fenced(items)?;
        let result = self.dynamo.transact_write_items().set_transact_items(Some(items)).send().await;
        result.map(drop).map_err(|e| self.fence_refusal(op, &e).unwrap_or_else(|| classify_transaction(op, e).0))
    }

    /// Strongly consistent BatchGetItem of `wanted` (at most [`MAX_BATCH_KEYS`] keys), retrying
    /// unprocessed keys; `op` names the call in errors.
    pub(crate) async fn batch_get(&self, op: &'static str, wanted: Vec<Item>) -> Result<Vec<Item>, AwsError> {
        let mut left = wanted;
        let mut found = Vec::new();
        while !left.is_empty() {
            let request = KeysAndAttributes::builder()
                .set_keys(Some(std::mem::take(&mut left)))
                .consistent_read(true)
                .build()
                .map_err(|e| build_error("BatchGetItem", e))?;
            let output = self
                .dynamo
                .batch_get_item()
                .request_items(&self.table, request)
                .send()
                .await
                .map_err(|e| classify(op, e))?;
            found.extend(output.responses.unwrap_or_default().remove(&self.table).unwrap_or_default());
            if let Some(mut unprocessed) = output.unprocessed_keys
                && let Some(rest) = unprocessed.remove(&self.table)
            {
                left = rest.keys;
            }
        }
        Ok(found)
    }
}
