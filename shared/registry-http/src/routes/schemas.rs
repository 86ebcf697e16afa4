//! `/schemas` resource (schema types, the schema listing, everything keyed by schema ID) and `/contexts`.

use super::apply_format;
use super::json_stream::{self, PageRead, Pages, write_json};
use super::{ApiResult, Call, DeletedPagedQuery, json, raw_schema, with_media};
use crate::AppState;
use crate::dto::{SchemaDto, SchemaStringDto, SubjectVersionDto};
use crate::endpoint::Permit;
use crate::error::ApiError;
use crate::extract::{ConfluentQuery, FindTags, Page, Paging, Segment, flag, parse_schema_id, text};
use crate::http_cache::{self, Representation, Validators};
use crate::rendered::{Rendered, Reply};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use registry_core::{
    Context, Fingerprint, Freshness, Registry, RegistryError, SchemaBody, SchemaId, SchemaType, SchemasQuery, Subject,
    SubjectScope, Version, VersionRow,
};
use serde::Deserialize;

/// Default and maximum page size of `GET /schemas` (`schema.search.default.limit` / `.max.limit`).
pub const SCHEMA_SEARCH_LIMIT: usize = 1000;

/// Default and maximum page size of the id listings and `/contexts` (CP 8.0+ paging).
pub const LIST_LIMIT: usize = 1000;

/// `GET /schemas/types`: the supported formats.
pub async fn get_schema_types() -> ApiResult {
    let types: Vec<&str> = SchemaType::ALL.iter().map(|t| t.as_str()).collect();
    json(&types)
}

/// Subjects whose versions one store page of `GET /schemas` covers.
const SCHEMAS_SUBJECTS_PER_PAGE: usize = 100;

/// The schemas of a `GET /schemas`: rows a page of subjects at a time, each body read only when
/// its row is inside `offset`/`limit`, and written before the next is read.
#[derive(Debug)]
struct SchemaPages {
    registry: Registry,
    query: SchemasQuery,
    after: Option<Subject>,
}

impl Pages for SchemaPages {
    type Item = VersionRow;
    const READ_SIZE: usize = SCHEMAS_SUBJECTS_PER_PAGE;

    /// Every listed subject has at least one included row, so `size` subjects are enough.
    fn next_page(&mut self, size: usize) -> BoxFuture<'_, Result<PageRead<VersionRow>, ApiError>> {
        Box::pin(async move {
            let (items, next) = self.registry.schema_rows_page(&self.query, self.after.as_ref(), size).await?;
            let last = next.is_none();
            self.after = next;
            Ok(PageRead { items, last })
        })
    }

    fn write_item<'a>(&'a self, row: VersionRow, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let record = self.registry.schema_record(&row).await?;
            write_json(&SchemaDto::from_record(&record), out)
        })
    }
}

/// Query of `GET /schemas`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSchemasQuery {
    #[serde(default, deserialize_with = "text")]
    pub subject_prefix: Option<String>,
    #[serde(default, deserialize_with = "flag")]
    pub deleted: bool,
    /// Only the highest listed version of each subject.
    #[serde(default, deserialize_with = "flag")]
    pub latest_only: bool,
    #[serde(flatten)]
    pub paging: Paging,
}

/// `GET /schemas`: `subjectPrefix`, `deleted`, `latestOnly`, `offset`, `limit` (default and max
/// 1000). Streamed from store pages (see [`json_stream`]); only the caller's subjects.
pub async fn get_schemas(call: Call, ConfluentQuery(listing): ConfluentQuery<ListSchemasQuery>) -> ApiResult {
    let window = listing.paging.window(SCHEMA_SEARCH_LIMIT, SCHEMA_SEARCH_LIMIT);
    let query = SchemasQuery {
        subject_prefix: listing.subject_prefix.unwrap_or_default(),
        scope: call.permit.subjects(),
        include_deleted: listing.deleted,
        latest_only: listing.latest_only,
        offset: window.offset,
        limit: window.limit,
    };
    let pages = SchemaPages { registry: call.state.registry.clone(), query, after: None };
    json_stream::respond(pages, window, "schema listing").await
}

/// Query of `GET /schemas/ids/{id}/schema`, and part of `GET /schemas/ids/{id}`'s.
#[derive(Debug, Default, Deserialize)]
pub struct IdContextQuery {
    /// Picks the context the ID is read in ([`Registry::context_for_id`]).
    #[serde(default, deserialize_with = "text")]
    pub subject: Option<String>,
    /// See [`apply_format`].
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
}

/// Query of `GET /schemas/ids/{id}`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaByIdQuery {
    #[serde(flatten)]
    pub read: IdContextQuery,
    /// The highest ID too, as `maxId`.
    #[serde(default, deserialize_with = "flag")]
    pub fetch_max_id: bool,
}

/// `GET /schemas/ids/{id}`: `{"schemaType","schema","references"?}`, plus `maxId` (of the ID's
/// context) with `fetchMaxId=true`, and `schemaTags` with `findTags` (repeatable; `*` for every
/// tag): the records and fields whose inline tags include one of them, found in the stored schema
/// before any `format` applies, as Confluent does. `subject` picks the context
/// ([`Registry::context_for_id`]); `format` as in [`apply_format`]. Cacheable (see [`http_cache`])
/// except with `fetchMaxId=true`, `findTags` or a format that re-renders the schema; a matching
/// `If-None-Match` gets 304. The cacheable answers are kept rendered ([`crate::rendered`]).
pub async fn get_schemas_by_id(
    State(state): State<AppState>,
    permit: Permit,
    validators: Validators,
    Segment(id): Segment,
    ConfluentQuery(query): ConfluentQuery<SchemaByIdQuery>,
    FindTags(find_tags): FindTags,
) -> ApiResult {
    let plain = !query.fetch_max_id && find_tags.is_empty() && no_format(query.read.format.as_deref());
    if plain
        && query.read.subject.is_none()
        && let Some(answer) = remembered(&state, &id, Representation::SchemaObject, &validators)
    {
        return answer;
    }
    // Boxed: the answer from memory above does not carry the reads' state in its future.
    Box::pin(schema_by_id_read(Call::new(state, permit), validators, id, query, find_tags)).await
}

/// [`get_schemas_by_id`] through the registry's reads.
async fn schema_by_id_read(
    call: Call,
    validators: Validators,
    id: String,
    query: SchemaByIdQuery,
    find_tags: Vec<String>,
) -> ApiResult {
    let (id, context, fingerprint) = schema_of_id(&call, &id, query.read.subject.as_deref()).await?;
    let object = |body: &SchemaBody| to_json(&SchemaStringDto::of_body(body, None));
    if !query.fetch_max_id && find_tags.is_empty() && no_format(query.read.format.as_deref()) {
        return rendered(&call.state, &fingerprint, Representation::SchemaObject, &validators, object).await;
    }
    // Boxed: the common answer above does not carry this path's state in its future.
    Box::pin(schema_by_id_shown(call, validators, id, context, fingerprint, query, find_tags)).await
}

/// [`get_schemas_by_id`] with `fetchMaxId`, `findTags` or a `format`.
async fn schema_by_id_shown(
    call: Call,
    validators: Validators,
    id: SchemaId,
    context: Context,
    fingerprint: Fingerprint,
    query: SchemaByIdQuery,
    find_tags: Vec<String>,
) -> ApiResult {
    let state = &call.state;
    let object = |body: &SchemaBody| to_json(&SchemaStringDto::of_body(body, None));
    let mut body = state.registry.schema_body(&fingerprint).await?;
    let schema_tags = match find_tags.is_empty() {
        true => Vec::new(),
        false => state.registry.schema_tags(&context, &body, &find_tags).await?,
    };
    let formatted = apply_format(&state.registry, &context, &mut body, query.read.format.as_deref()).await?;
    if query.fetch_max_id || formatted || !find_tags.is_empty() {
        let max_id = match query.fetch_max_id {
            true => state.registry.max_id_in(&context).await?.map(|max| max.0.max(id.0)),
            false => None,
        };
        return json(&SchemaStringDto { schema_tags, ..SchemaStringDto::of_body(&body, max_id) });
    }
    rendered(state, &fingerprint, Representation::SchemaObject, &validators, object).await
}

/// The `representation` of the schema `fingerprint` names, rendered by `render` from its body and
/// kept among the rendered answers.
async fn render_and_keep(
    state: &AppState,
    fingerprint: &Fingerprint,
    representation: Representation,
    render: impl FnOnce(&SchemaBody) -> Result<Vec<u8>, ApiError>,
) -> Result<Rendered, ApiError> {
    let body = state.registry.schema_body(fingerprint).await?;
    let answer = Rendered::new(fingerprint, representation, render(&body)?.into());
    state.rendered.keep(fingerprint, representation, answer.clone());
    Ok(answer)
}

/// `GET /schemas/ids/{id}/schema`: the schema text itself (40403 for an unknown ID); `subject`
/// picks the context; `format` as in [`apply_format`]. Cacheable unless a format re-renders it.
pub async fn get_only_schema_by_id(
    call: Call,
    validators: Validators,
    Segment(id): Segment,
    ConfluentQuery(query): ConfluentQuery<IdContextQuery>,
) -> ApiResult {
    if no_format(query.format.as_deref())
        && query.subject.is_none()
        && let Some(answer) = remembered(&call.state, &id, Representation::SchemaText, &validators)
    {
        return answer;
    }
    // Boxed: the answer from memory above does not carry the reads' state in its future.
    Box::pin(only_schema_by_id_read(call, validators, id, query)).await
}

/// [`get_only_schema_by_id`] through the registry's reads.
async fn only_schema_by_id_read(call: Call, validators: Validators, id: String, query: IdContextQuery) -> ApiResult {
    let (_, context, fingerprint) = schema_of_id(&call, &id, query.subject.as_deref()).await?;
    if !no_format(query.format.as_deref()) {
        let mut body = call.state.registry.schema_body(&fingerprint).await?;
        if apply_format(&call.state.registry, &context, &mut body, query.format.as_deref()).await? {
            return raw_schema(body.schema);
        }
    }
    let text = |body: &SchemaBody| Ok(body.schema.clone().into_bytes());
    rendered(&call.state, &fingerprint, Representation::SchemaText, &validators, text).await
}

/// [`remembered`] for a plain `GET /schemas/ids/{id}` (no query at all: no `subject`, `format`,
/// `fetchMaxId` or `findTags`), as the endpoint's [`crate::endpoint::EarlyAnswer`].
pub(crate) fn remembered_by_id(parts: &Parts, state: &AppState) -> Option<Response> {
    let id = plain_id_segment(parts, parts.uri.path().strip_prefix("/schemas/ids/"))?;
    remembered(state, id, Representation::SchemaObject, &Validators::of(&parts.headers))
        .map(IntoResponse::into_response)
}

/// [`remembered`] for a plain `GET /schemas/ids/{id}/schema` (no query at all: no `subject` or
/// `format`), as the endpoint's [`crate::endpoint::EarlyAnswer`].
pub(crate) fn remembered_text_by_id(parts: &Parts, state: &AppState) -> Option<Response> {
    let tail = parts.uri.path().strip_prefix("/schemas/ids/").and_then(|tail| tail.strip_suffix("/schema"));
    let id = plain_id_segment(parts, tail)?;
    remembered(state, id, Representation::SchemaText, &Validators::of(&parts.headers)).map(IntoResponse::into_response)
}

/// The `{id}` segment `segment` of a request without a query, when it needs no percent-decoding
/// (so it is what the handler's [`Segment`] extractor would give).
fn plain_id_segment<'a>(parts: &Parts, segment: Option<&'a str>) -> Option<&'a str> {
    let segment = segment?;
    (parts.uri.query().is_none() && !segment.contains(['%', '/'])).then_some(segment)
}

/// The plain `representation` (no `format`) of the schema `id` names in the default context, when
/// this process remembers both which schema that is ([`Registry::remembered_id_in`]) and its
/// rendering: answered without a read or an await, from the answer kept by ID while the registry's
/// memory of the ID holds, else from the two memories (and then kept by ID). `None` sends the
/// request through the reads, which also decide its errors.
fn remembered(
    state: &AppState,
    id: &str,
    representation: Representation,
    validators: &Validators,
) -> Option<ApiResult> {
    let id = parse_schema_id(id).ok()?.0;
    let holds = |freshness: &Freshness| state.registry.still_remembered(freshness);
    if let Some(reply) = state.rendered.by_id(id, representation, validators.media, holds) {
        return Some(Ok(answer(state, reply, validators)));
    }
    let (fingerprint, freshness) = state.registry.remembered_id_in(&Context::DEFAULT, id)?;
    let rendered = state.rendered.rendered(&fingerprint, representation)?;
    let reply = rendered.reply(validators.media);
    state.rendered.keep_by_id(id, representation, freshness, rendered);
    Some(Ok(answer(state, reply, validators)))
}

/// The `{id}` segment's ID, the context it is read in (`subject` picks it, by the registry acting
/// for the caller: [`Registry::context_for_id`]) and the fingerprint of its schema there.
async fn schema_of_id(
    call: &Call,
    id: &str,
    subject: Option<&str>,
) -> Result<(SchemaId, Context, Fingerprint), ApiError> {
    let id = parse_schema_id(id)?;
    let context = call.registry.context_for_id(id.0, subject).await?;
    let fingerprint = call.state.registry.fingerprint_of_id_in(&context, id.0).await?;
    Ok((id, context, fingerprint))
}

/// Whether `format` asks for nothing (absent or empty): the stored text is answered as it is.
fn no_format(format: Option<&str>) -> bool {
    format.is_none_or(str::is_empty)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(value).map_err(|error| ApiError::Internal(error.to_string()))
}

/// The `representation` of the schema `fingerprint` names, from the rendered answers (rendered by
/// `render` from the body and kept on a miss), with its validators; 304 when `If-None-Match`
/// names it.
async fn rendered(
    state: &AppState,
    fingerprint: &Fingerprint,
    representation: Representation,
    validators: &Validators,
    render: impl FnOnce(&SchemaBody) -> Result<Vec<u8>, ApiError>,
) -> ApiResult {
    let reply = match state.rendered.answer(fingerprint, representation, validators.media) {
        Some(reply) => reply,
        // Boxed: a hit does not carry the body read's state in its future.
        None => Box::pin(render_and_keep(state, fingerprint, representation, render)).await?.reply(validators.media),
    };
    Ok(answer(state, reply, validators))
}

/// A by-ID answer: the rendered body with its length and validators, or 304 when `If-None-Match`
/// names its tag.
fn answer(state: &AppState, reply: Reply, validators: &Validators) -> Response {
    if validators.not_modified(&reply.tag) {
        return http_cache::not_modified_response(reply.tag, &state.http);
    }
    let mut response = with_media(reply.body);
    // Kept with the body: not formatted again for each answer.
    response.headers_mut().insert(header::CONTENT_LENGTH, reply.length);
    http_cache::add_validators(response.headers_mut(), reply.tag, &state.http);
    response
}

/// Rows carrying one schema ID read per store page while listing them.
const ROWS_BY_ID_PAGE_SIZE: usize = 1000;

/// The rows carrying a schema ID in the caller's subjects, read one store page at a time,
/// soft-deleted ones only when asked; shared by the two listings by ID below.
#[derive(Debug)]
struct RowsById {
    registry: Registry,
    context: Context,
    id: i32,
    include_deleted: bool,
    scope: SubjectScope,
    after: Option<(Subject, Version)>,
    any_row: bool,
}

impl RowsById {
    fn new(registry: Registry, context: Context, id: i32, include_deleted: bool, scope: SubjectScope) -> Self {
        RowsById { registry, context, id, include_deleted, scope, after: None, any_row: false }
    }

    /// The next page of rows carrying the ID, filtered by `include_deleted`.
    async fn next_visible(&mut self) -> Result<PageRead<VersionRow>, ApiError> {
        let after = self.after.as_ref().map(|(subject, version)| (subject, *version));
        let rows =
            self.registry.rows_with_id_page(&self.context, self.id, &self.scope, after, ROWS_BY_ID_PAGE_SIZE).await?;
        let last = rows.len() < ROWS_BY_ID_PAGE_SIZE;
        self.any_row |= !rows.is_empty();
        if last && !self.any_row && self.scope != SubjectScope::All {
            // Whether the ID exists outside the scope decides between `[]` and 40403.
            let all = SubjectScope::All;
            self.any_row = !self.registry.rows_with_id_page(&self.context, self.id, &all, None, 1).await?.is_empty();
        }
        self.after = rows.last().map(|row| (row.subject.clone(), row.version));
        let items = rows.into_iter().filter(|row| self.include_deleted || !row.deleted).collect();
        Ok(PageRead { items, last })
    }

    /// An ID no row carries (not even a soft-deleted one, in any subject) is 40403; one whose
    /// rows are all soft-deleted or out of the caller's scope lists `[]`.
    fn when_empty(&self) -> Result<(), ApiError> {
        if self.any_row { Ok(()) } else { Err(RegistryError::SchemaNotFound.into()) }
    }
}

/// The distinct subjects of the rows carrying an ID.
#[derive(Debug)]
struct SubjectsById {
    rows: RowsById,
    last_subject: Option<Subject>,
}

impl Pages for SubjectsById {
    type Item = Subject;
    const READ_SIZE: usize = ROWS_BY_ID_PAGE_SIZE;

    fn next_page(&mut self, _size: usize) -> BoxFuture<'_, Result<PageRead<Subject>, ApiError>> {
        Box::pin(async move {
            let PageRead { items: rows, last } = self.rows.next_visible().await?;
            let mut subjects = Vec::new();
            for row in rows {
                if self.last_subject.as_ref() != Some(&row.subject) {
                    self.last_subject = Some(row.subject.clone());
                    subjects.push(row.subject);
                }
            }
            Ok(PageRead { items: subjects, last })
        })
    }

    fn write_item<'a>(&'a self, subject: Subject, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move { write_json(subject.as_str(), out) })
    }

    fn when_empty(&self) -> Result<(), ApiError> {
        self.rows.when_empty()
    }
}

/// The (subject, version) pairs of the rows carrying an ID.
#[derive(Debug)]
struct VersionsById {
    rows: RowsById,
}

impl Pages for VersionsById {
    type Item = VersionRow;
    const READ_SIZE: usize = ROWS_BY_ID_PAGE_SIZE;

    fn next_page(&mut self, _size: usize) -> BoxFuture<'_, Result<PageRead<VersionRow>, ApiError>> {
        Box::pin(self.rows.next_visible())
    }

    fn write_item<'a>(&'a self, row: VersionRow, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move { write_json(&SubjectVersionDto::from(&(row.subject, row.version)), out) })
    }

    fn when_empty(&self) -> Result<(), ApiError> {
        self.rows.when_empty()
    }
}

/// Query of `GET /schemas/ids/{id}/subjects` and `/versions`.
#[derive(Debug, Default, Deserialize)]
pub struct RowsByIdQuery {
    /// Picks the context the ID is read in ([`Registry::context_for_id`]).
    #[serde(default, deserialize_with = "text")]
    pub subject: Option<String>,
    #[serde(flatten)]
    pub listing: DeletedPagedQuery,
}

/// What both listings by ID read from a request: the caller's rows carrying the path's ID
/// (`deleted`: soft-deleted ones too) and the window of `offset` and `limit`.
pub struct ListingById {
    rows: RowsById,
    window: Page,
}

impl FromRequestParts<AppState> for ListingById {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let permit = Permit::from_request_parts(parts, state).await?;
        let Segment(id) = Segment::from_request_parts(parts, state).await?;
        let ConfluentQuery(query) = ConfluentQuery::<RowsByIdQuery>::from_request_parts(parts, state).await?;
        let id = parse_schema_id(&id)?;
        let window = query.listing.paging.window(LIST_LIMIT, LIST_LIMIT);
        let context = permit.acting(&state.registry).context_for_id(id.0, query.subject.as_deref()).await?;
        let rows = RowsById::new(state.registry.clone(), context, id.0, query.listing.deleted, permit.subjects());
        Ok(ListingById { rows, window })
    }
}

/// `GET /schemas/ids/{id}/subjects`: sorted subjects carrying the ID; `deleted`, `offset`, `limit`.
/// Streamed from store pages (see [`json_stream`]); only the caller's subjects.
pub async fn get_all_subjects_by_id(ListingById { rows, window }: ListingById) -> ApiResult {
    json_stream::respond(SubjectsById { rows, last_subject: None }, window, "subject listing by ID").await
}

/// `GET /schemas/ids/{id}/versions`: `[{"subject","version"}]`; `deleted`, `offset`, `limit`.
/// Streamed from store pages (see [`json_stream`]); only the caller's subjects.
pub async fn get_all_versions_by_id(ListingById { rows, window }: ListingById) -> ApiResult {
    json_stream::respond(VersionsById { rows }, window, "version listing by ID").await
}

/// Query of `GET /contexts`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextsQuery {
    /// Only contexts whose name (`.`, `.team`) starts with it; empty: every context.
    #[serde(default, deserialize_with = "text")]
    pub context_prefix: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

/// `GET /contexts`: `["."]` plus the listed named contexts, ascending; `contextPrefix` filters
/// before `offset` and `limit` apply, as Confluent's `ContextsResource`.
pub async fn list_contexts(
    State(state): State<AppState>,
    ConfluentQuery(query): ConfluentQuery<ContextsQuery>,
) -> ApiResult {
    let page = query.paging.window(LIST_LIMIT, LIST_LIMIT);
    let prefix = query.context_prefix.unwrap_or_default();
    let contexts = state.registry.contexts().await?.into_iter().filter(|context| context.starts_with(&prefix));
    json(&page.apply(contexts.collect()))
}

/// `DELETE /contexts/{context}`: 204 once the context is no longer listed; 42211 while a subject
/// is left in it; 400 for a context name with a colon.
pub async fn delete_context(State(state): State<AppState>, Segment(context): Segment) -> ApiResult {
    state.registry.delete_context(&context).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Services;
    use axum::body::{Body, Bytes};
    use http_body_util::BodyExt;
    use registry_core::{MemoryStore, RegistrySettings};
    use std::sync::Arc;
    use tower::ServiceExt;

    fn head(uri: &str) -> Parts {
        axum::http::Request::get(uri).body(()).unwrap_or_else(|e| panic!("{e}")).into_parts().0
    }

    async fn body(response: Response) -> Bytes {
        response.into_body().collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes()
    }

    #[tokio::test]
    async fn plain_by_id_requests_are_answered_early_once_remembered_and_as_the_handler_answers() {
        let state = AppState(Arc::new(Services {
            registry: Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default()),
            deks: None,
            exporters: None,
            authenticator: None,
            http: http_cache::HttpConfig::default(),
            rendered: Default::default(),
        }));
        let router = crate::routes(state.clone());
        let call = |method: &str, uri: &str, body: &'static str| {
            let request = axum::http::Request::builder()
                .method(method)
                .uri(uri)
                .header("content-type", "application/json")
                .body(Body::from(body))
                .unwrap_or_else(|e| panic!("{e}"));
            router.clone().oneshot(request)
        };
        let registered = call("POST", "/subjects/users/versions", r#"{"schema":"\"string\""}"#).await;
        assert_eq!(registered.map(|r| r.status()).ok(), Some(StatusCode::OK));
        type Early = fn(&Parts, &AppState) -> Option<Response>;
        let early: [(&str, Early); 2] =
            [("/schemas/ids/1", remembered_by_id), ("/schemas/ids/1/schema", remembered_text_by_id)];
        for (path, early) in early {
            assert!(early(&head(path), &state).is_none(), "{path}: nothing is remembered before a read");
            let handled = call("GET", path, "").await.unwrap_or_else(|never| match never {});
            let answer = early(&head(path), &state).unwrap_or_else(|| panic!("{path}: remembered after a read"));
            assert_eq!(answer.status(), handled.status());
            assert_eq!(answer.headers(), handled.headers(), "{path}");
            assert_eq!(body(answer).await, body(handled).await, "{path}");
            for other in [format!("{path}?format="), format!("{path}?subject=users"), path.replace("/1", "/%31")] {
                assert!(early(&head(&other), &state).is_none(), "{other} is left to the handler");
            }
            assert!(early(&head(&path.replace("/1", "/2")), &state).is_none(), "an ID never read is not remembered");
        }
    }
}
