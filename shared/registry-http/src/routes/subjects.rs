//! `/subjects` and `/subjects/{s}` resource: the subject listing, lookup and subject delete.

use super::{ApiResult, json};
use crate::AppState;
use crate::dto::{RegisterSchemaRequest, SchemaDto};
use crate::error::ApiError;
use crate::extract::{ConfluentJson, Params, Segment};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use futures::StreamExt;
use registry_core::{DeletedFilter, LookupOptions, Registry, Subject};

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

/// The `/subjects` JSON array, produced chunk by chunk from store pages so the answer can be
/// streamed: the first chunk opens the array, the last one closes it, and no chunk holds more
/// than one store page of names.
#[derive(Debug)]
pub struct SubjectsJson {
    registry: Registry,
    query: SubjectsQuery,
    after: Option<Subject>,
    skipped: usize,
    emitted: usize,
    state: ChunkState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    NotStarted,
    Listing,
    Done,
}

impl SubjectsJson {
    /// A producer for `query` over `registry`.
    pub fn new(registry: Registry, query: SubjectsQuery) -> Self {
        SubjectsJson { registry, query, after: None, skipped: 0, emitted: 0, state: ChunkState::NotStarted }
    }

    /// The next chunk of the JSON array, or `None` once the closing `]` was returned.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ApiError> {
        let mut chunk = Vec::new();
        match self.state {
            ChunkState::Done => return Ok(None),
            ChunkState::NotStarted => {
                chunk.push(b'[');
                self.state = ChunkState::Listing;
            }
            ChunkState::Listing => {}
        }
        if self.emitted >= self.query.limit {
            return Ok(Some(self.close(chunk)));
        }
        // Read no more names than the answer still needs (`?limit=1` reads one, not a page).
        let wanted = (self.query.offset.saturating_sub(self.skipped))
            .saturating_add(self.query.limit - self.emitted)
            .min(SUBJECTS_PAGE_SIZE);
        let page =
            self.registry.subjects_page(&self.query.prefix, self.query.filter, self.after.as_ref(), wanted).await?;
        let last_page = page.len() < wanted;
        self.after = page.last().cloned();
        for subject in page {
            if self.skipped < self.query.offset {
                self.skipped += 1;
                continue;
            }
            if self.emitted >= self.query.limit {
                break;
            }
            if self.emitted > 0 {
                chunk.push(b',');
            }
            serde_json::to_writer(&mut chunk, subject.as_str()).map_err(|e| ApiError::Internal(e.to_string()))?;
            self.emitted += 1;
        }
        if last_page || self.after.is_none() {
            return Ok(Some(self.close(chunk)));
        }
        Ok(Some(chunk))
    }

    fn close(&mut self, mut chunk: Vec<u8>) -> Vec<u8> {
        chunk.push(b']');
        self.state = ChunkState::Done;
        chunk
    }
}

/// `GET /subjects`: sorted subject names; `subjectPrefix`, `deleted`, `deletedOnly`, `offset`, `limit`.
/// Streamed: the first store page is read before answering (so a failing store still gets its
/// 5xx status), the rest page by page while the client reads; a later failure aborts the body.
#[tracing::instrument(name = "get_all_subjects", skip_all)]
pub async fn get_all_subjects(State(state): State<AppState>, params: Params) -> ApiResult {
    let query = SubjectsQuery::from_params(&params)?;
    let mut producer = SubjectsJson::new(state.registry.clone(), query);
    let first = producer.next_chunk().await?.unwrap_or_default();
    let rest = futures::stream::unfold(Some(producer), |producer| async move {
        let mut producer = producer?;
        match producer.next_chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(producer))),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(?error, "GET /subjects failed after the first page; aborting the body");
                Some((Err(std::io::Error::other("subject listing failed")), None))
            }
        }
    });
    let chunks = futures::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(rest);
    let mut response = (StatusCode::OK, Body::from_stream(chunks)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(crate::extract::MEDIA_V1));
    Ok(response)
}

/// `POST /subjects/{s}`: the version of the subject matching the posted schema; `normalize`, `deleted`.
#[tracing::instrument(name = "look_up_schema_under_subject", skip_all, fields(subject = %subject))]
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

/// `DELETE /subjects/{s}`: the deleted version numbers; `permanent` for a hard delete.
#[tracing::instrument(name = "delete_subject", skip_all, fields(subject = %subject))]
pub async fn delete_subject(State(state): State<AppState>, Segment(subject): Segment, params: Params) -> ApiResult {
    let versions = state.registry.delete_subject(&subject, params.flag("permanent")).await?;
    let numbers: Vec<i32> = versions.iter().map(|v| v.0).collect();
    json(&numbers)
}
