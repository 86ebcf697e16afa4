//! `/subjects` and `/subjects/{s}` resource: the subject listing, lookup and subject delete.

use super::json_stream::{self, PageRead, Pages, write_json};
use super::{ApiResult, Call, DeleteQuery, json};
use crate::dto::{RegisterSchemaRequest, SchemaDto};
use crate::error::ApiError;
use crate::extract::{ConfluentBody, ConfluentQuery, Paging, Segment, flag, parse_object, text};
use crate::rendered::LookupRequest;
use axum::body::Bytes;
use futures::future::BoxFuture;
use registry_core::{DeletedFilter, LookupOptions, Registry, SchemaRecord, Subject, SubjectScope};
use serde::Deserialize;

/// How many subjects one store page holds while building the `/subjects` answer.
pub const SUBJECTS_PAGE_SIZE: usize = 1000;

/// The wildcard prefix Confluent uses by default ("every context"); the same as no prefix here.
const ALL_CONTEXTS_PREFIX: &str = ":*:";

/// Query of `GET /subjects`; `offset`/`limit` absent or not positive: everything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectsQuery {
    #[serde(default, deserialize_with = "text")]
    pub subject_prefix: Option<String>,
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    /// Only subjects whose versions are all soft-deleted; wins over `deleted`.
    #[serde(default, deserialize_with = "flag")]
    pub deleted_only: bool,
    #[serde(flatten)]
    pub paging: Paging,
}

impl SubjectsQuery {
    /// The names listed start with this (Confluent's every-context wildcard is no prefix).
    pub fn prefix(&self) -> &str {
        match self.subject_prefix.as_deref() {
            None | Some(ALL_CONTEXTS_PREFIX) => "",
            Some(prefix) => prefix,
        }
    }

    /// Which subjects count, by their versions' deleted flags.
    pub fn filter(&self) -> DeletedFilter {
        DeletedFilter::of(self.deleted, self.deleted_only)
    }
}

/// Query of `POST /subjects/{s}` (lookup).
#[derive(Debug, Default, Deserialize)]
pub struct LookupQuery {
    /// Match Confluent's normal form.
    #[serde(default, deserialize_with = "flag")]
    pub normalize: bool,
    /// Soft-deleted versions match too.
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    /// How the answer's `schema` is rendered ([`super::apply_format`]).
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
}

/// The subject names of a `GET /subjects`, read one store page at a time.
#[derive(Debug)]
pub struct SubjectPages {
    registry: Registry,
    prefix: String,
    filter: DeletedFilter,
    scope: SubjectScope,
    after: Option<Subject>,
}

impl SubjectPages {
    /// The names `query` lists inside `scope` (its `offset`/`limit` are applied by the array).
    pub fn new(registry: Registry, query: &SubjectsQuery, scope: SubjectScope) -> Self {
        SubjectPages { registry, prefix: query.prefix().to_string(), filter: query.filter(), scope, after: None }
    }
}

impl Pages for SubjectPages {
    type Item = Subject;
    const READ_SIZE: usize = SUBJECTS_PAGE_SIZE;

    /// No more names than the answer still needs (`?limit=1` reads one, not a page).
    fn next_page(&mut self, size: usize) -> BoxFuture<'_, Result<PageRead<Subject>, ApiError>> {
        Box::pin(async move {
            let after = self.after.as_ref();
            let items = self.registry.subjects_page(&self.scope, &self.prefix, self.filter, after, size).await?;
            self.after = items.last().cloned();
            Ok(PageRead { last: items.len() < size, items })
        })
    }

    fn write_item<'a>(&'a self, subject: Subject, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move { write_json(subject.as_str(), out) })
    }
}

/// `GET /subjects`: sorted subject names; `subjectPrefix`, `deleted`, `deletedOnly`, `offset`, `limit`.
/// Streamed from store pages (see [`json_stream`]); only the caller's subjects.
pub async fn get_all_subjects(call: Call, ConfluentQuery(query): ConfluentQuery<SubjectsQuery>) -> ApiResult {
    let window = query.paging.window(usize::MAX, usize::MAX);
    let pages = SubjectPages::new(call.state.registry.clone(), &query, call.permit.subjects());
    json_stream::respond(pages, window, "subject listing").await
}

/// `POST /subjects/{s}`: the version of the subject matching the posted schema; `normalize`, `deleted`,
/// `format`.
pub async fn look_up_schema_under_subject(
    call: Call,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<LookupQuery>,
    ConfluentBody(body): ConfluentBody,
) -> ApiResult {
    let options = LookupOptions { normalize: query.normalize, include_deleted: query.deleted };
    if query.format.as_deref().is_none_or(str::is_empty) {
        return plain_lookup(&call, LookupRequest { subject, options, body }).await;
    }
    let posted: RegisterSchemaRequest = parse_object(&body)?;
    let answer = call.registry.lookup_shared(&subject, posted.into_new_schema()?, options).await?;
    // Boxed: the plain answer above does not carry the formatting's state in its future.
    Box::pin(formatted_lookup_answer(&call, &answer.record, query.format.as_deref())).await
}

/// A lookup without `format`: the answer kept for the very same request while the registry would
/// still give it to this caller ([`crate::rendered`]), else the lookup's answer, rendered and kept.
async fn plain_lookup(call: &Call, request: LookupRequest) -> ApiResult {
    if let Some((answer, bytes)) = call.state.rendered.lookup(&request)
        && call.registry.lookup_again(&answer).await
    {
        return Ok(super::with_media(bytes));
    }
    // Boxed: an answer kept for the request does not carry the lookup's state in its future.
    Box::pin(rendered_lookup(call, request)).await
}

/// [`plain_lookup`] through the registry's lookup: the request's body parsed, looked up, rendered.
async fn rendered_lookup(call: &Call, request: LookupRequest) -> ApiResult {
    let posted: RegisterSchemaRequest = parse_object(&request.body)?;
    let schema = posted.into_new_schema()?;
    let answer = call.registry.lookup_shared(&request.subject, schema, request.options).await?;
    let rendered = serde_json::to_vec(&SchemaDto::from_record(&answer.record))
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    let bytes = Bytes::from(rendered);
    call.state.rendered.keep_lookup(request, answer, bytes.clone());
    Ok(super::with_media(bytes))
}

/// The lookup answer `shared` with its schema in `format` ([`super::apply_format`]).
async fn formatted_lookup_answer(call: &Call, shared: &SchemaRecord, format: Option<&str>) -> ApiResult {
    let mut record = shared.clone();
    super::apply_format(&call.registry, &record.subject.context(), &mut record.body, format).await?;
    json(&SchemaDto::from_record(&record))
}

/// `DELETE /subjects/{s}`: the deleted version numbers; `permanent` for a hard delete (admin only).
pub async fn delete_subject(
    call: Call,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<DeleteQuery>,
) -> ApiResult {
    call.permit.require(query.operation(), Some(&subject))?;
    let versions = call.registry.delete_subject(&subject, query.permanent).await?;
    let numbers: Vec<i32> = versions.iter().map(|v| v.0).collect();
    json(&numbers)
}
