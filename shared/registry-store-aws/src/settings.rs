//! Config and mode items: `CONFIG/GLOBAL`, `CONFIG/S#<subject>`, `MODE/GLOBAL`, `MODE/S#<subject>`,
//! each holding its value as JSON (config) or the mode's wire name. A named context's settings and
//! the registry-wide ones sit at their pseudo-subjects (`CONFIG/S#:.ctx:`, `CONFIG/S#:.__GLOBAL:`),
//! which no subject's key can equal (a subject's name inside its context is never empty).

use crate::AwsStore;
use crate::commit::Commit;
use crate::conditions::{kind_pk, setting_condition};
use crate::errors::AwsError;
use crate::fence::OneWrite;
use crate::items::{ItemExt, attr, key, s};
use crate::keys;
use crate::transact::{Part, transact_item};
use registry_core::{ConfigRecord, Mode, Preconditions, Scope, SettingChange, SettingSeen};

/// Partition of config items.
pub(crate) const CONFIG: &str = "CONFIG";

impl AwsStore {
    async fn read_setting(&self, kind: &str, scope: &Scope) -> Result<Option<String>, AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let item = self.get_item("GetItem(setting)", key(pk, sk)).await?;
        item.map(|item| item.string(attr::VALUE).map(str::to_string)).transpose()
    }

    async fn put_setting_item(&self, kind: &str, scope: &Scope, value: String) -> Result<(), AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let mut item = key(pk, sk);
        item.insert(attr::VALUE.into(), s(value));
        let put = self.dynamo.put_item().table_name(&self.table).set_item(Some(item));
        // Fenced on a home-region store (see `fence`), as the conditioned writes' transactions are.
        self.write_one("PutItem(setting)", OneWrite::Put(put)).await
    }

    async fn remove_setting(&self, kind: &str, scope: &Scope) -> Result<(), AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let delete = self.dynamo.delete_item().table_name(&self.table).set_key(Some(key(pk, sk)));
        self.write_one("DeleteItem(setting)", OneWrite::Delete(delete)).await
    }

    /// A settings write under `preconditions` (see [`registry_core::Store::write_setting`]): one
    /// TransactWriteItems holding the write (conditioned on the item as read, when it was) and a
    /// ConditionCheck per other item read and on the subject's revision; a plain write without
    /// preconditions. Answers the item's value written (`None`: the item was deleted).
    pub(crate) async fn write_setting_if(
        &self,
        scope: &Scope,
        change: &SettingChange,
        preconditions: &Preconditions,
    ) -> Result<Option<String>, AwsError> {
        let kind = change.kind();
        let (pk, sk) = keys::scoped(kind_pk(kind), scope);
        let value = match change {
            SettingChange::Config(config) => config.as_deref().map(config_text).transpose()?,
            SettingChange::Mode(mode) => mode.map(|mode| mode.as_str().to_string()),
        };
        let revision = match scope {
            Scope::Subject(subject) => preconditions.revision.map(|revision| (subject, revision)),
            Scope::Global => None,
        };
        if preconditions.settings.is_empty() && revision.is_none() {
            match &value {
                Some(value) => self.put_setting_item(kind_pk(kind), scope, value.clone()).await?,
                None => self.remove_setting(kind_pk(kind), scope).await?,
            }
            return Ok(value);
        }
        let written = |seen: &SettingSeen| seen.kind == kind && seen.scope == *scope;
        let condition = preconditions.settings.iter().find(|seen| written(seen)).map(setting_condition);
        let (expression, names, values) = match condition {
            Some(c) => (Some(c.expression), Some(c.names), (!c.values.is_empty()).then_some(c.values)),
            None => (None, None, None),
        };
        let write = match value.clone() {
            Some(value) => {
                let mut item = key(pk, sk);
                item.insert(attr::VALUE.into(), s(value));
                let put = self
                    .put_of(item)
                    .set_condition_expression(expression)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values);
                transact_item("Put(setting)", Part::Put(put))?
            }
            None => {
                let delete = self
                    .delete_of(key(pk, sk))
                    .set_condition_expression(expression)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values);
                transact_item("Delete(setting)", Part::Delete(delete))?
            }
        };
        let op = "TransactWriteItems(write_setting)";
        Commit::at_scope(self, op, scope, preconditions).setting(kind, scope, write).commit().await?;
        Ok(value)
    }

    pub(crate) async fn read_config(&self, scope: &Scope) -> Result<Option<ConfigRecord>, AwsError> {
        self.read_setting(CONFIG, scope).await?.map(|text| parse_config(&text)).transpose()
    }
}

fn config_text(config: &ConfigRecord) -> Result<String, AwsError> {
    serde_json::to_string(config).map_err(|e| AwsError::Corrupt(format!("config: {e}")))
}

pub(crate) fn parse_config(text: &str) -> Result<ConfigRecord, AwsError> {
    serde_json::from_str(text).map_err(|e| AwsError::Corrupt(format!("config item {text:?}: {e}")))
}

pub(crate) fn parse_mode(text: &str) -> Result<Mode, AwsError> {
    text.parse().map_err(|_| AwsError::Corrupt(format!("mode item {text:?}")))
}
