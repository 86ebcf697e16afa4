//! Registry errors: one variant per Confluent error family, with the fields its message needs.
//! No HTTP here: the router maps each variant to a status and `error_code` exactly once.

use crate::store::StoreError;

/// Everything a registry operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// 40401
    #[error("Subject '{subject}' not found.")]
    SubjectNotFound { subject: String },
    /// 40402
    #[error("Version {version} not found.")]
    VersionNotFound { subject: String, version: String },
    /// 40403 by id: `Schema {id} not found`
    #[error("Schema {id} not found")]
    SchemaIdNotFound { id: i32 },
    /// 40403 for lookups and id listings: `Schema not found`
    #[error("Schema not found")]
    SchemaNotFound,
    /// 40404
    #[error("Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")]
    SubjectSoftDeleted { subject: String },
    /// 40405
    #[error("Subject '{subject}' was not deleted first before being permanently deleted")]
    SubjectNotSoftDeleted { subject: String },
    /// 40406
    #[error("Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently")]
    VersionSoftDeleted { subject: String, version: i32 },
    /// 40407
    #[error("Subject '{subject}' Version {version} was not deleted first before being permanently deleted")]
    VersionNotSoftDeleted { subject: String, version: i32 },
    /// 40408
    #[error("Subject '{subject}' does not have subject-level compatibility configured")]
    SubjectConfigNotFound { subject: String },
    /// 40409
    #[error("Subject '{subject}' does not have subject-level mode configured")]
    SubjectModeNotFound { subject: String },
    /// 409 / 40901: `messages` are the individual incompatibility strings.
    #[error("Schema being registered is incompatible with an earlier schema for subject \"{subject}\", details: [{}]", messages.join(", "))]
    IncompatibleSchema { subject: String, messages: Vec<String> },
    /// 42201: the schema (or its type, references, default values, explicit version) is invalid.
    #[error("{reason}")]
    InvalidSchema { reason: String },
    /// 42202
    #[error(
        "The specified version '{version}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""
    )]
    InvalidVersion { version: String },
    /// 42203
    #[error(
        "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"
    )]
    InvalidCompatibilityLevel { level: String },
    /// 42204
    #[error("Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT.")]
    InvalidMode { mode: String },
    /// 42205: a write refused by the mode, or an IMPORT precondition; the text is Confluent's.
    #[error("{message}")]
    OperationNotPermitted { message: String },
    /// 42206: `key` is Confluent's SchemaKey text.
    #[error("One or more references exist to the schema {key}.")]
    ReferenceExists { key: String },
    /// 42207
    #[error("The ID of an imported schema does not match the existing ID")]
    IdDoesNotMatch,
    /// 42208
    #[error("The specified subject '{subject}' is not a valid.")]
    InvalidSubject { subject: String },
    /// 400 (Confluent's `ContextFilter` answers a bad `/contexts/{context}` with error_code 400).
    #[error("Context name '{context}' cannot contain a colon")]
    InvalidContext { context: String },
    /// 42211
    #[error("The specified context '{context}' is not empty.")]
    ContextNotEmpty { context: String },
    /// 42209
    #[error("Register operation failed because schema is too large")]
    SchemaTooLarge,
    /// 42210: a rule set (in a request or a config) fails Confluent's `RuleSet.validate`; the text is its message.
    #[error("{reason}")]
    InvalidRuleSet { reason: String },
    /// 42201: the ownership policy refuses a new subject whose metadata lacks the owner property.
    #[error(
        "Subject '{subject}' has no owner: registering a new subject requires the metadata property '{property}' (ownership policy)"
    )]
    OwnerRequired { subject: String, property: String },
    /// 42901 (HTTP 429): the churn guard refused a new version of `subject`: `limit` new versions
    /// were already registered in the last hour (`REGISTRY_CHURN_ENFORCE`). Not a Confluent code;
    /// shaped like rest-utils' 429 answers so clients surface it as a retryable error.
    #[error(
        "Subject '{subject}' already registered {limit} new schemas in the last hour; registration refused by the churn guard"
    )]
    TooManyRegistrations { subject: String, limit: u32 },
    /// 403 / 40301: the caller may not perform `operation` on `subject`, a subject the request
    /// reached indirectly (an alias target, a referenced subject), a context's `:.ctx:` or the
    /// registry (`None`) as [`crate::access::Operation::decided_on`] names it; see
    /// [`crate::access`].
    #[error("User is denied operation {} on {}", operation.as_str(), target_name(subject.as_deref()))]
    Forbidden { operation: crate::access::Operation, subject: Option<String> },
    /// 50001 / 50002 / 500: storage failed; the detail is logged, never returned.
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
}

/// What a 403 message names: `Subject: <s>`, or `SchemaRegistry` for a registry-wide decision.
fn target_name(subject: Option<&str>) -> String {
    subject.map_or_else(|| "SchemaRegistry".to_string(), |subject| format!("Subject: {subject}"))
}

impl From<registry_schema::SchemaError> for RegistryError {
    fn from(error: registry_schema::SchemaError) -> Self {
        RegistryError::InvalidSchema { reason: error.to_string() }
    }
}
