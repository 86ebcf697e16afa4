//! `/subjects` and `/subjects/{s}` resource: the subject listing, lookup and subject delete.

use super::json_stream::{self, Pages, write_json};
use super::{ApiResult, deletion, json};
use crate::AppState;
use crate::dto::{RegisterSchemaRequest, SchemaDto};
use crate::endpoint::Permit;
use crate::error::ApiError;
use crate::extract::{ConfluentJson, Page, Params, Segment};
use axum::extract::State;
use futures::future::BoxFuture;
use registry_core::{DeletedFilter, LookupOptions, Registry, Subject, SubjectScope};

/// How many subjects one store page holds while building the `/subjects` answer.
pub const SUBJECTS_PAGE_SIZE: usize = 1000;

/// The wildcard prefix Confluent uses by default ("every context"); the same as no prefix here.
const ALL_CONTEXTS_PREFIX: &str = ":*:";

/// What `GET /subjects` lists.
#[derive(Debug, Clone)]
pub struct SubjectsQuery {
    pub prefix: String,
    pub filter: DeletedFilter,
    pub offset: usize,
    pub limit: usize,
}

impl SubjectsQuery {
    /// From `subjectPrefix`, `deleted`, `deletedOnly` (wins over `deleted`), `offset`, `limit`
    /// (absent or not positive: everything).
    pub fn from_params(params: &Params) -> Result<Self, ApiError> {
        let page = params.page(usize::MAX, usize::MAX)?;
        let prefix = match params.get("subjectPrefix") {
            None | Some(ALL_CONTEXTS_PREFIX) => String::new(),
            Some(prefix) => prefix.to_string(),
        };
        let filter = if params.flag("deletedOnly") {
            DeletedFilter::DeletedOnly
        } else if params.flag("deleted") {
            DeletedFilter::IncludeDeleted
        } else {
            DeletedFilter::LiveOnly
        };
        Ok(SubjectsQuery { prefix, filter, offset: page.offset, limit: page.limit })
    }
}

/// The subject names of a `GET /subjects`, read one store page at a time.
#[derive(Debug)]
pub struct SubjectPages {
    registry: Registry,
    prefix: String,
    filter: DeletedFilter,
    scope: SubjectScope,
    after: Option<Subject>,
    exhausted: bool,
}

impl SubjectPages {
    /// The names `query` lists inside `scope` (its `offset`/`limit` are applied by the array).
    pub fn new(registry: Registry, query: &SubjectsQuery, scope: SubjectScope) -> Self {
        SubjectPages {
            registry,
            prefix: query.prefix.clone(),
            filter: query.filter,
            scope,
            after: None,
            exhausted: false,
        }
    }
}

impl Pages for SubjectPages {
    type Item = Subject;

    fn next_page(&mut self, wanted: usize) -> BoxFuture<'_, Result<Option<Vec<Subject>>, ApiError>> {
        Box::pin(async move {
            if self.exhausted {
                return Ok(None);
            }
            // No more names than the answer still needs (`?limit=1` reads one, not a page).
            let size = wanted.clamp(1, SUBJECTS_PAGE_SIZE);
            let after = self.after.as_ref();
            let page = self.registry.subjects_page(&self.scope, &self.prefix, self.filter, after, size).await?;
            self.exhausted = page.len() < size;
            self.after = page.last().cloned();
            Ok(Some(page))
        })
    }

    fn write_item<'a>(&'a self, subject: Subject, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move { write_json(subject.as_str(), out) })
    }
}

/// `GET /subjects`: sorted subject names; `subjectPrefix`, `deleted`, `deletedOnly`, `offset`, `limit`.
/// Streamed from store pages (see [`json_stream`]); only the caller's subjects.
pub async fn get_all_subjects(State(state): State<AppState>, permit: Permit, params: Params) -> ApiResult {
    let query = SubjectsQuery::from_params(&params)?;
    let window = Page { offset: query.offset, limit: query.limit };
    let pages = SubjectPages::new(state.registry.clone(), &query, permit.subjects());
    json_stream::respond(pages, window, "subject listing").await
}

/// `POST /subjects/{s}`: the version of the subject matching the posted schema; `normalize`, `deleted`.
pub async fn look_up_schema_under_subject(
    State(state): State<AppState>,
    Segment(subject): Segment,
    params: Params,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let options = LookupOptions { normalize: params.flag("normalize"), include_deleted: params.flag("deleted") };
    let record = state.registry.lookup(&subject, request.into_new_schema()?, options).await?;
    json(&SchemaDto::from_record(&record))
}

/// `DELETE /subjects/{s}`: the deleted version numbers; `permanent` for a hard delete (admin only).
pub async fn delete_subject(
    State(state): State<AppState>,
    permit: Permit,
    Segment(subject): Segment,
    params: Params,
) -> ApiResult {
    let permanent = params.flag("permanent");
    permit.require(deletion(permanent), Some(&subject))?;
    let versions = state.registry.delete_subject(&subject, permanent).await?;
    let numbers: Vec<i32> = versions.iter().map(|v| v.0).collect();
    json(&numbers)
}
