//! Data-contract reads: `GET /subjects/{s}/metadata` (latest version by metadata properties) and
//! CP 8's `GET /schemas/guids/{guid}`.

use super::{ApiResult, Call, DeletedQuery, FormatQuery, apply_format, json};
use crate::AppState;
use crate::dto::{SchemaDto, SchemaStringDto};
use crate::error::ApiError;
use crate::extract::{ConfluentQuery, QueryLists, Segment};
use axum::extract::State;
use registry_core::registry::contracts::is_guid;

/// `GET /subjects/{s}/metadata?key=K&value=V[&key=K2&value=V2...][&deleted=true]`: the highest
/// version whose metadata properties hold every pair (`key` and `value` lists zipped in order, as
/// Confluent's `getLatestWithMetadata`). 40401 unknown subject; 40403 when no version matches.
pub async fn get_latest_with_metadata(
    call: Call,
    Segment(subject): Segment,
    ConfluentQuery(query): ConfluentQuery<DeletedQuery>,
    lists: QueryLists,
) -> ApiResult {
    let filter: Vec<(String, String)> = lists
        .all("key")
        .into_iter()
        .zip(lists.all("value"))
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    let mut record = call.registry.latest_with_metadata(&subject, &filter, query.deleted).await?;
    apply_format(&call.registry, &record.subject.context(), &mut record.body, query.format.as_deref()).await?;
    json(&SchemaDto::from_record(&record))
}

/// `GET /schemas/guids/{guid}`: the schema with that guid (`SchemaString` shape with `guid`);
/// 40403 `Schema not found` when none has it; a path that is not a UUID is the framework's 404.
/// `format` as in [`apply_format`].
pub async fn get_schema_by_guid(
    State(state): State<AppState>,
    Segment(guid): Segment,
    ConfluentQuery(query): ConfluentQuery<FormatQuery>,
) -> ApiResult {
    if !is_guid(&guid) {
        return Err(ApiError::NotFound);
    }
    let mut found = state.registry.schema_by_guid(&guid).await?;
    apply_format(&state.registry, &found.context, &mut found.body, query.format.as_deref()).await?;
    json(&SchemaStringDto::new(&found, None))
}
