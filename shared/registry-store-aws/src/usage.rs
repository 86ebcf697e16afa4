//! The per-subject last-used marker: item `S#<subject>` / `USED` with attribute `day`, kept in
//! the subject's own partition so marking spreads over partitions (no hot key at midnight).
//!
//! Cost: one `GetItem` per `last_used`, one conditional `UpdateItem` (1 WCU) per `mark_used`;
//! the registry calls `mark_used` at most once per subject per day per process.

use crate::AwsStore;
use crate::errors::{AwsError, classify};
use crate::items::{ItemExt, key, n};
use crate::keys;
use registry_core::Subject;

/// Sort key of the marker item inside `S#<subject>` (outside the `V#` version range).
pub(crate) const USED_SK: &str = "USED";
/// The marker's day attribute.
const DAY: &str = "day";

impl AwsStore {
    pub(crate) async fn read_last_used(&self, subject: &Subject) -> Result<Option<u32>, AwsError> {
        let item = self.get_item("GetItem(usage)", key(keys::subject_pk(subject), USED_SK)).await?;
        match item {
            Some(item) => item.optional_number(DAY),
            None => Ok(None),
        }
    }

    /// Sets `day` unless an equal or newer one is stored; a failed condition is success.
    pub(crate) async fn write_mark_used(&self, subject: &Subject, day: u32) -> Result<(), AwsError> {
        let written = self
            .dynamo
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(keys::subject_pk(subject), USED_SK)))
            .update_expression("SET #day = :day")
            .condition_expression("attribute_not_exists(#day) OR #day < :day")
            .expression_attribute_names("#day", DAY)
            .expression_attribute_values(":day", n(day))
            .send()
            .await;
        match written.map_err(|e| classify("UpdateItem(usage)", e)) {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }
}
