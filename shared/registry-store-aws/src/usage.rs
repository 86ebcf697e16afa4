//! The per-subject last-used marker: item `S#<subject>` / `USED` with attribute `day`, kept in
//! the subject's own partition so marking spreads over partitions (no hot key at midnight).
//!
//! Cost: one `GetItem` per `last_used`, one conditional `UpdateItem` (1 WCU) per `mark_used`
//! (on a fenced home-region store one TransactWriteItems of the update and the fence, see `fence`);
//! the registry calls `mark_used` at most once per subject per day per process, and not when the
//! write context's BatchGetItem (which reads the marker too) found it already at that day.

use crate::AwsStore;
use crate::errors::AwsError;
use crate::fence::OneWrite;
use crate::items::{ItemExt, key, n};
use crate::keys;
use registry_core::Subject;

/// Sort key of the marker item inside `S#<subject>` (outside the `V#` version range).
pub(crate) const USED_SK: &str = "USED";
/// The marker's day attribute.
const DAY: &str = "day";

/// The key of `subject`'s marker item.
pub(crate) fn marker_key(subject: &Subject) -> crate::items::Item {
    key(keys::subject_pk(subject), USED_SK)
}

/// The day a marker item holds.
pub(crate) fn marker_day(item: &crate::items::Item) -> Result<Option<u32>, AwsError> {
    item.optional_number(DAY)
}

impl AwsStore {
    pub(crate) async fn read_last_used(&self, subject: &Subject) -> Result<Option<u32>, AwsError> {
        let item = self.get_item("GetItem(usage)", marker_key(subject)).await?;
        match item {
            Some(item) => marker_day(&item),
            None => Ok(None),
        }
    }

    /// Sets `day` unless an equal or newer one is stored; a failed condition is success.
    pub(crate) async fn write_mark_used(&self, subject: &Subject, day: u32) -> Result<(), AwsError> {
        let update = self
            .dynamo
            .update_item()
            .table_name(&self.table)
            .set_key(Some(marker_key(subject)))
            .update_expression("SET #day = :day")
            .condition_expression("attribute_not_exists(#day) OR #day < :day")
            .expression_attribute_names("#day", DAY)
            .expression_attribute_values(":day", n(day));
        match self.write_one("UpdateItem(usage)", OneWrite::Update(update)).await {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }
}
