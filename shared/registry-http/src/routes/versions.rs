//! `/subjects/{s}/versions` resource: register, version listing, one version, its raw schema,
//! its referrers, and version delete.

use super::json_stream::{self, PageRead, Pages, write_json};
use super::schemas::LIST_LIMIT;
use super::{ApiResult, Call, DeleteQuery, DeletedPagedQuery, DeletedQuery, apply_format, json, raw_schema};
use crate::dto::{RegisterSchemaRequest, SchemaDto};
use crate::endpoint::Permit;
use crate::error::ApiError;
use crate::extract::{
    ConfluentJson, ConfluentQuery, FindTags, Paging, Segment, SubjectVersion, flag, parse_version, text,
};
use futures::future::BoxFuture;
use registry_auth::Operation;
use registry_core::{DeletedFilter, RegisterOptions, Registry, RegistryError, SchemaRecord, Subject, Version};
use registry_schema::tags::SchemaTags;
use serde::Deserialize;

/// Query of `POST /subjects/{s}/versions`.
#[derive(Debug, Default, Deserialize)]
pub struct RegisterQuery {
    /// Register Confluent's normal form.
    #[serde(default, deserialize_with = "flag")]
    pub normalize: bool,
    /// Register without the compatibility check (Confluent's `force`, 38996279868).
    #[serde(default, deserialize_with = "flag")]
    pub force: bool,
    /// How the answer's `schema` is rendered ([`super::apply_format`]).
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
}

/// `POST /subjects/{s}/versions`: registers (or finds) the schema; answers the stored schema
/// object of CP 8.x without `subject`. `normalize` applies Confluent's normal form; `force` skips the
/// compatibility check (and the reserved-field check that goes with it), as IMPORT mode does. An IMPORT
/// registration (explicit ID) needs the admin role, judged on the request registered, with a scope
/// that covers the subject's whole context ([`require_import_in_context`]).
pub async fn register_schema(
    call: Call,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<RegisterQuery>,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    call.permit.require(request.operation(), Some(&subject))?;
    if request.operation() == Operation::Import {
        require_import_in_context(&call.permit, &subject)?;
    }
    let options = RegisterOptions { normalize: query.normalize, force: query.force };
    let mut record = call.registry.register(&subject, request.into_new_schema()?, options).await?;
    apply_format(&call.registry, &record.subject.context(), &mut record.body, query.format.as_deref()).await?;
    json(&SchemaDto::registered(&record))
}

/// An explicit ID raises its context's ID counter, which every subject of the context shares: a
/// caller scoped to some subjects of a context may not move the IDs the others get. Its scope must
/// hold the whole context (a prefix of `:.ctx:`; unscoped for the default context, whose subjects
/// share no prefix), as [`Operation::decided_on`] says for the registry's own checks (an
/// alias target). A subject that does not parse is left to the registry's 42208.
fn require_import_in_context(permit: &Permit, subject: &str) -> Result<(), ApiError> {
    let Ok(subject) = Subject::new(subject) else { return Ok(()) };
    permit.require(Operation::Import, Operation::Import.decided_on(&subject).as_deref())
}

/// Rows of one subject read per store page while listing its versions.
const VERSIONS_PAGE_SIZE: usize = 1000;

/// The version numbers of a `GET /subjects/{s}/versions`, read one store page at a time.
#[derive(Debug)]
struct VersionPages {
    registry: Registry,
    subject: Subject,
    filter: DeletedFilter,
    /// Soft-deleted versions as negative numbers (`deletedAsNegative`).
    as_negative: bool,
    after: Option<Version>,
    /// Some row was read, whatever the filter kept.
    any_row: bool,
}

impl Pages for VersionPages {
    type Item = i32;
    const READ_SIZE: usize = VERSIONS_PAGE_SIZE;

    fn next_page(&mut self, size: usize) -> BoxFuture<'_, Result<PageRead<i32>, ApiError>> {
        Box::pin(async move {
            let rows = match self.after {
                Some(after) => self.registry.versions_page(&self.subject, Some(after), size).await?,
                None => {
                    // A subject whose own config has an alias lists its target's versions (the
                    // config is read with the first page).
                    let first = self.registry.versions_page(&self.subject, None, size);
                    let (alias, rows) = futures::future::join(self.registry.alias_of(&self.subject), first).await;
                    match alias? {
                        Some(target) => {
                            self.subject = target;
                            self.registry.versions_page(&self.subject, None, size).await?
                        }
                        None => rows?,
                    }
                }
            };
            self.after = rows.last().map(|row| row.version);
            self.any_row |= !rows.is_empty();
            let items = rows
                .iter()
                .filter(|row| self.filter.includes(row.deleted))
                .map(|row| if self.as_negative && row.deleted { -row.version.0 } else { row.version.0 })
                .collect();
            Ok(PageRead { items, last: rows.len() < size })
        })
    }

    fn write_item<'a>(&'a self, number: i32, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move { write_json(&number, out) })
    }

    /// A subject without a version visible under the filter is 40401, as Confluent; with `deletedOnly`
    /// a subject with versions, none of them soft-deleted, is an empty list (Confluent's
    /// `listVersions` asks `hasSubjects(subject, deleted || deletedOnly)`, then filters).
    fn when_empty(&self) -> Result<(), ApiError> {
        if self.filter == DeletedFilter::DeletedOnly && self.any_row {
            return Ok(());
        }
        Err(RegistryError::SubjectNotFound { subject: self.subject.to_string() }.into())
    }
}

/// Query of `GET /subjects/{s}/versions`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionsQuery {
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    /// Only soft-deleted versions; wins over the others.
    #[serde(default, deserialize_with = "flag")]
    pub deleted_only: bool,
    /// Soft-deleted versions too, as negative numbers.
    #[serde(default, deserialize_with = "flag")]
    pub deleted_as_negative: bool,
    #[serde(flatten)]
    pub paging: Paging,
}

/// `GET /subjects/{s}/versions`: ascending numbers; `deleted`, `deletedOnly`, `deletedAsNegative`
/// (soft-deleted versions as negative numbers; implies `deleted`), `offset`, `limit`. Streamed from
/// store pages (see [`json_stream`]); 40401 when no version is visible.
pub async fn get_all_versions(
    call: Call,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<VersionsQuery>,
) -> ApiResult {
    let window = query.paging.window(usize::MAX, usize::MAX);
    let filter = DeletedFilter::of(query.deleted || query.deleted_as_negative, query.deleted_only);
    let as_negative = query.deleted_as_negative && filter == DeletedFilter::IncludeDeleted;
    let subject = Subject::new(subject)?;
    let pages = VersionPages { registry: call.registry, subject, filter, as_negative, after: None, any_row: false };
    json_stream::respond(pages, window, "version listing").await
}

/// The version `version` of `subject` (a soft-deleted one too with `deleted`) read by `registry`,
/// with the `schemaTags` `find_tags` asks for (none when empty), found in the stored schema before
/// its schema is rendered as `format` asks ([`super::apply_format`]), as Confluent does.
async fn formatted_version(
    registry: &Registry,
    subject: &str,
    version: &str,
    query: &DeletedQuery,
    find_tags: &[String],
) -> Result<(SchemaRecord, Vec<SchemaTags>), ApiError> {
    let selector = parse_version(version)?;
    let mut record = registry.version(subject, selector, query.deleted).await?;
    let context = record.subject.context();
    let schema_tags = match find_tags.is_empty() {
        true => Vec::new(),
        false => registry.schema_tags(&context, &record.body, find_tags).await?,
    };
    apply_format(registry, &context, &mut record.body, query.format.as_deref()).await?;
    Ok((record, schema_tags))
}

/// `GET /subjects/{s}/versions/{v}`: `{"subject","version","id","schemaType","references"?,"schema",..}`;
/// `deleted` returns a soft-deleted version too; `format` as in [`super::apply_format`]; `findTags`
/// (repeatable; `*` for every tag) adds `schemaTags`.
pub async fn get_schema_by_version(
    call: Call,
    SubjectVersion(subject, version): SubjectVersion,
    ConfluentQuery(query): ConfluentQuery<DeletedQuery>,
    FindTags(find_tags): FindTags,
) -> ApiResult {
    let (record, schema_tags) = formatted_version(&call.registry, &subject, &version, &query, &find_tags).await?;
    json(&SchemaDto { schema_tags, ..SchemaDto::from_record(&record) })
}

/// `GET /subjects/{s}/versions/{v}/schema`: the schema text itself; `deleted` and `format` as above.
pub async fn get_schema_only(
    call: Call,
    SubjectVersion(subject, version): SubjectVersion,
    ConfluentQuery(query): ConfluentQuery<DeletedQuery>,
) -> ApiResult {
    let (record, _) = formatted_version(&call.registry, &subject, &version, &query, &[]).await?;
    raw_schema(record.body.schema)
}

/// `GET /subjects/{s}/versions/{v}/referencedby`: IDs of referring schemas, ascending;
/// `deleted`, `offset`, `limit`.
pub async fn get_referenced_by(
    call: Call,
    SubjectVersion(subject, version): SubjectVersion,
    ConfluentQuery(query): ConfluentQuery<DeletedPagedQuery>,
) -> ApiResult {
    let selector = parse_version(&version)?;
    let page = query.paging.window(LIST_LIMIT, LIST_LIMIT);
    let ids = call.registry.referenced_by(&subject, selector, query.deleted).await?;
    let ids: Vec<i32> = ids.iter().map(|id| id.0).collect();
    json(&page.apply(ids))
}

/// `DELETE /subjects/{s}/versions/{v}`: the deleted version number as a bare JSON int; `permanent`
/// (admin only).
pub async fn delete_schema_version(
    call: Call,
    SubjectVersion(subject, version): SubjectVersion,
    ConfluentQuery(query): ConfluentQuery<DeleteQuery>,
) -> ApiResult {
    call.permit.require(query.operation(), Some(&subject))?;
    let selector = parse_version(&version)?;
    let deleted = call.registry.delete_version(&subject, selector, query.permanent).await?;
    json(&deleted.0)
}
