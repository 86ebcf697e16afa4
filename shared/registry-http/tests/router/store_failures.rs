//! Storage failures become generic 5xx answers (50001/50002) whose body never carries the detail.

use crate::support::Api;
use async_trait::async_trait;
use registry_core::{
    ConfigRecord, DeletedFilter, Fingerprint, Guid, Mode, SchemaBody, SchemaId, Scope, Store, StoreError, StoreResult,
    Subject, Version, VersionRow,
};
use serde_json::json;

const SECRET: &str = "arn:aws:dynamodb:eu-west-1:123456789012:table/secret";

/// Every call fails: `Unavailable` when `throttled`, `Corrupt` otherwise.
#[derive(Debug)]
pub struct BrokenStore {
    pub throttled: bool,
}

impl BrokenStore {
    fn fail<T>(&self) -> StoreResult<T> {
        Err(if self.throttled {
            StoreError::Unavailable(format!("throttled by {SECRET}"))
        } else {
            StoreError::Corrupt(format!("bad item in {SECRET}"))
        })
    }
}

#[async_trait]
impl Store for BrokenStore {
    async fn put_body(&self, _: &Fingerprint, _: &SchemaBody) -> StoreResult<()> {
        self.fail()
    }
    async fn get_body(&self, _: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        self.fail()
    }
    async fn id_for_fingerprint(&self, _: &Fingerprint) -> StoreResult<Option<SchemaId>> {
        self.fail()
    }
    async fn fingerprint_for_id(&self, _: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.fail()
    }
    async fn allocate_id(&self, _: &Fingerprint) -> StoreResult<SchemaId> {
        self.fail()
    }
    async fn bind_id(&self, _: SchemaId, _: &Fingerprint) -> StoreResult<()> {
        self.fail()
    }
    async fn unbind_fingerprint(&self, _: &Fingerprint, _: SchemaId) -> StoreResult<()> {
        self.fail()
    }
    async fn max_id(&self) -> StoreResult<Option<SchemaId>> {
        self.fail()
    }
    async fn bind_guid(&self, _: &Guid, _: &Fingerprint) -> StoreResult<()> {
        self.fail()
    }
    async fn fingerprint_for_guid(&self, _: &Guid) -> StoreResult<Option<Fingerprint>> {
        self.fail()
    }
    async fn versions(&self, _: &Subject) -> StoreResult<Vec<VersionRow>> {
        self.fail()
    }
    async fn get_version(&self, _: &Subject, _: Version) -> StoreResult<Option<VersionRow>> {
        self.fail()
    }
    async fn create_version(&self, _: &VersionRow) -> StoreResult<()> {
        self.fail()
    }
    async fn set_version_deleted(&self, _: &Subject, _: Version, _: bool) -> StoreResult<()> {
        self.fail()
    }
    async fn delete_version(&self, _: &Subject, _: Version) -> StoreResult<()> {
        self.fail()
    }
    async fn rows_with_id(&self, _: SchemaId) -> StoreResult<Vec<VersionRow>> {
        self.fail()
    }
    async fn rows_with_id_page(
        &self,
        _: SchemaId,
        _: Option<(&Subject, Version)>,
        _: usize,
    ) -> StoreResult<Vec<VersionRow>> {
        self.fail()
    }
    async fn versions_page(&self, _: &Subject, _: Option<Version>, _: usize) -> StoreResult<Vec<VersionRow>> {
        self.fail()
    }
    async fn referrers(&self, _: &Subject, _: Version) -> StoreResult<Vec<VersionRow>> {
        self.fail()
    }
    async fn list_subjects(
        &self,
        _: &str,
        _: DeletedFilter,
        _: Option<&Subject>,
        _: usize,
    ) -> StoreResult<Vec<Subject>> {
        self.fail()
    }
    async fn get_config(&self, _: &Scope) -> StoreResult<Option<ConfigRecord>> {
        self.fail()
    }
    async fn put_config(&self, _: &Scope, _: &ConfigRecord) -> StoreResult<()> {
        self.fail()
    }
    async fn delete_config(&self, _: &Scope) -> StoreResult<Option<ConfigRecord>> {
        self.fail()
    }
    async fn get_mode(&self, _: &Scope) -> StoreResult<Option<Mode>> {
        self.fail()
    }
    async fn put_mode(&self, _: &Scope, _: Mode) -> StoreResult<()> {
        self.fail()
    }
    async fn delete_mode(&self, _: &Scope) -> StoreResult<Option<Mode>> {
        self.fail()
    }
    async fn last_used(&self, _: &Subject) -> StoreResult<Option<u32>> {
        self.fail()
    }
    async fn mark_used(&self, _: &Subject, _: u32) -> StoreResult<()> {
        self.fail()
    }
}

async fn assert_generic_5xx(api: &Api, error_code: u64) {
    let replies = [
        api.get("/subjects").await,
        api.get("/schemas/ids/1").await,
        api.get("/subjects/users/versions/1").await,
        api.get("/config").await,
        api.post("/subjects/users/versions", json!({"schema": "\"string\""})).await,
    ];
    for reply in replies {
        let message = reply.error(500, error_code);
        assert!(!message.contains("secret") && !message.contains("arn:"), "detail leaked: {message}");
    }
}

#[tokio::test]
async fn unavailable_store_is_50002_without_detail() {
    assert_generic_5xx(&Api::over(BrokenStore { throttled: true }), 50002).await;
}

#[tokio::test]
async fn corrupt_store_is_50001_without_detail() {
    assert_generic_5xx(&Api::over(BrokenStore { throttled: false }), 50001).await;
}
