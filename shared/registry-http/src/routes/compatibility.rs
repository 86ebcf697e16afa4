//! `/compatibility` resource: test a schema against one version or against the subject.

use super::{ApiResult, Call, json};
use crate::dto::{CompatibilityDto, RegisterSchemaRequest};
use crate::extract::{ConfluentJson, ConfluentQuery, Params, flag, parse_version};
use serde::Deserialize;

/// Query of both compatibility tests.
#[derive(Debug, Default, Deserialize)]
pub struct CompatibilityQuery {
    /// The incompatibilities in `messages`.
    #[serde(default, deserialize_with = "flag")]
    pub verbose: bool,
    /// Compare Confluent's normal forms.
    #[serde(default, deserialize_with = "flag")]
    pub normalize: bool,
}

/// The path of both tests: the subject, and the version tested against when the path names one.
#[derive(Debug, Deserialize)]
pub struct CompatibilityPath {
    subject: String,
    version: Option<String>,
}

/// `POST /compatibility/subjects/{s}/versions/{v}`: against that version only (`latest` = highest
/// live). `POST /compatibility/subjects/{s}/versions`: against every live version the subject's
/// level requires (transitive levels: all). `{"is_compatible"}`, plus `messages` with
/// `verbose=true`; `normalize`.
pub async fn test_compatibility(
    call: Call,
    Params(path): Params<CompatibilityPath>,
    ConfluentQuery(query): ConfluentQuery<CompatibilityQuery>,
    ConfluentJson(request): ConfluentJson<RegisterSchemaRequest>,
) -> ApiResult {
    let selector = path.version.as_deref().map(parse_version).transpose()?;
    let schema = request.into_new_schema()?;
    let report =
        call.registry.test_compatibility(&path.subject, selector, schema, query.normalize, query.verbose).await?;
    json(&CompatibilityDto::new(report, query.verbose))
}
