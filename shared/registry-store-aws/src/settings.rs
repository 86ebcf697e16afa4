//! Config and mode items: `CONFIG/GLOBAL`, `CONFIG/S#<subject>`, `MODE/GLOBAL`, `MODE/S#<subject>`,
//! each holding its value as JSON (config) or the mode's wire name.

use crate::AwsStore;
use crate::errors::{AwsError, classify};
use crate::items::{Item, ItemExt, attr, key, s};
use crate::keys;
use aws_sdk_dynamodb::types::ReturnValue;
use registry_core::{ConfigRecord, Mode, Scope};

/// Partition of config items.
const CONFIG: &str = "CONFIG";
/// Partition of mode items.
const MODE: &str = "MODE";

impl AwsStore {
    async fn read_setting(&self, kind: &str, scope: &Scope) -> Result<Option<String>, AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let item = self.get_item("GetItem(setting)", key(pk, sk)).await?;
        item.map(|item| item.string(attr::VALUE).map(str::to_string)).transpose()
    }

    async fn write_setting(&self, kind: &str, scope: &Scope, value: String) -> Result<(), AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let mut item = key(pk, sk);
        item.insert(attr::VALUE.into(), s(value));
        self.dynamo
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| classify("PutItem(setting)", e))?;
        Ok(())
    }

    async fn remove_setting(&self, kind: &str, scope: &Scope) -> Result<Option<String>, AwsError> {
        let (pk, sk) = keys::scoped(kind, scope);
        let output = self
            .dynamo
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| classify("DeleteItem(setting)", e))?;
        let old: Option<Item> = output.attributes.filter(|item| !item.is_empty());
        old.map(|item| item.string(attr::VALUE).map(str::to_string)).transpose()
    }

    pub(crate) async fn read_config(&self, scope: &Scope) -> Result<Option<ConfigRecord>, AwsError> {
        self.read_setting(CONFIG, scope).await?.map(|text| parse_config(&text)).transpose()
    }

    pub(crate) async fn write_config(&self, scope: &Scope, config: &ConfigRecord) -> Result<(), AwsError> {
        let text = serde_json::to_string(config).map_err(|e| AwsError::Corrupt(format!("config: {e}")))?;
        self.write_setting(CONFIG, scope, text).await
    }

    pub(crate) async fn remove_config(&self, scope: &Scope) -> Result<Option<ConfigRecord>, AwsError> {
        self.remove_setting(CONFIG, scope).await?.map(|text| parse_config(&text)).transpose()
    }

    pub(crate) async fn read_mode(&self, scope: &Scope) -> Result<Option<Mode>, AwsError> {
        self.read_setting(MODE, scope).await?.map(|text| parse_mode(&text)).transpose()
    }

    pub(crate) async fn write_mode(&self, scope: &Scope, mode: Mode) -> Result<(), AwsError> {
        self.write_setting(MODE, scope, mode.as_str().to_string()).await
    }

    pub(crate) async fn remove_mode(&self, scope: &Scope) -> Result<Option<Mode>, AwsError> {
        self.remove_setting(MODE, scope).await?.map(|text| parse_mode(&text)).transpose()
    }
}

pub(crate) fn parse_config(text: &str) -> Result<ConfigRecord, AwsError> {
    serde_json::from_str(text).map_err(|e| AwsError::Corrupt(format!("config item {text:?}: {e}")))
}

pub(crate) fn parse_mode(text: &str) -> Result<Mode, AwsError> {
    text.parse().map_err(|_| AwsError::Corrupt(format!("mode item {text:?}")))
}
