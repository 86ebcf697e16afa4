//! Items of a TransactWriteItems on this store's table: the SDK's Update, ConditionCheck, Put and
//! Delete builders started on an item of the table, and each built into the transaction's item.

use crate::AwsStore;
use crate::conditions::Condition;
use crate::errors::AwsError;
use crate::ids::build_error;
use crate::items::Item;
use aws_sdk_dynamodb::types::builders::{ConditionCheckBuilder, DeleteBuilder, PutBuilder, UpdateBuilder};
use aws_sdk_dynamodb::types::{ConditionCheck, Delete, Put, TransactWriteItem, Update};

impl AwsStore {
    /// An Update of this table's item at `item_key`.
    pub(crate) fn update_of(&self, item_key: Item) -> UpdateBuilder {
        Update::builder().table_name(&self.table).set_key(Some(item_key))
    }

    /// A ConditionCheck of this table's item at `item_key`.
    pub(crate) fn check_of(&self, item_key: Item) -> ConditionCheckBuilder {
        ConditionCheck::builder().table_name(&self.table).set_key(Some(item_key))
    }

    /// A Put of `item` in this table.
    pub(crate) fn put_of(&self, item: Item) -> PutBuilder {
        Put::builder().table_name(&self.table).set_item(Some(item))
    }

    /// A Delete of this table's item at `item_key`.
    pub(crate) fn delete_of(&self, item_key: Item) -> DeleteBuilder {
        Delete::builder().table_name(&self.table).set_key(Some(item_key))
    }

    /// A ConditionCheck that this table's item at `item_key` meets `condition`.
    pub(crate) fn condition_check(
        &self,
        op: &'static str,
        item_key: Item,
        condition: Condition,
    ) -> Result<TransactWriteItem, AwsError> {
        let check = self
            .check_of(item_key)
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names))
            .set_expression_attribute_values((!condition.values.is_empty()).then_some(condition.values));
        transact_item(op, Part::Check(check))
    }
}

/// An item of a transaction, before it is built.
pub(crate) enum Part {
    Update(UpdateBuilder),
    Check(ConditionCheckBuilder),
    Put(PutBuilder),
    Delete(DeleteBuilder),
}

/// `part` built as an item of a transaction (`op` names it if the SDK refuses to build it: a bug).
pub(crate) fn transact_item(op: &'static str, part: Part) -> Result<TransactWriteItem, AwsError> {
    let item = TransactWriteItem::builder();
    let item = match part {
        Part::Update(update) => item.update(update.build().map_err(|e| build_error(op, e))?),
        Part::Check(check) => item.condition_check(check.build().map_err(|e| build_error(op, e))?),
        Part::Put(put) => item.put(put.build().map_err(|e| build_error(op, e))?),
        Part::Delete(delete) => item.delete(delete.build().map_err(|e| build_error(op, e))?),
    };
    Ok(item.build())
}
