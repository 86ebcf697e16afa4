//! The backend's private error and its one mapping into [`StoreError`].

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use registry_core::StoreError;

/// What went wrong talking to DynamoDB or S3, before classification for the registry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AwsError {
    /// A condition expression (or an S3 precondition) failed: someone else wrote first.
    #[error("{op}: condition failed: {detail}")]
    ConditionFailed { op: &'static str, detail: String },
    /// Throttled, timed out or unreachable after the SDK's own retries.
    #[error("{op}: unavailable: {detail}")]
    Unavailable { op: &'static str, detail: String },
    /// A request above a DynamoDB bound (items per transaction) that no retry can fit.
    #[error("{op}: {detail}")]
    Limit { op: &'static str, detail: String },
    /// An item or object that does not parse.
    #[error("corrupt item: {0}")]
    Corrupt(String),
    /// Any other service or client error.
    #[error("{op}: {detail}")]
    Service { op: &'static str, detail: String },
    /// A multi-region write refused because this region is no longer home (see `fence`), or not
    /// yet visible in a region that must show it before it is acknowledged (see `replicas`):
    /// retryable once the deployment points at the right home, or once replication catches up.
    #[error("{op}: {detail}")]
    Fenced { op: &'static str, detail: String },
}

impl From<AwsError> for StoreError {
    fn from(error: AwsError) -> Self {
        match error {
            AwsError::ConditionFailed { .. } => StoreError::Conflict(error.to_string()),
            AwsError::Unavailable { .. } | AwsError::Fenced { .. } => StoreError::Unavailable(error.to_string()),
            AwsError::Limit { detail, .. } => StoreError::Limit(detail),
            AwsError::Corrupt(detail) => StoreError::Corrupt(detail),
            AwsError::Service { .. } => StoreError::Other(Box::new(error)),
        }
    }
}

/// Error codes DynamoDB and S3 use for throttling and transient server trouble.
const UNAVAILABLE_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "Throttling",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "SlowDown",
    "InternalError",
    "TransactionInProgressException",
];

/// Classifies an SDK error from operation `op` by its error code.
pub(crate) fn classify<E, R>(op: &'static str, error: SdkError<E, R>) -> AwsError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    let code = error.code().map(str::to_string);
    let detail = match error.message() {
        Some(message) => format!("{}: {message}", code.as_deref().unwrap_or("error")),
        None => format!("{}", aws_sdk_dynamodb::error::DisplayErrorContext(&error)),
    };
    match (&error, code.as_deref()) {
        (_, Some("ConditionalCheckFailedException" | "PreconditionFailed" | "TransactionConflictException")) => {
            AwsError::ConditionFailed { op, detail }
        }
        (_, Some(code)) if UNAVAILABLE_CODES.contains(&code) => AwsError::Unavailable { op, detail },
        (SdkError::TimeoutError(_) | SdkError::DispatchFailure(_), _) => AwsError::Unavailable { op, detail },
        _ => AwsError::Service { op, detail },
    }
}

/// Classifies a failed TransactWriteItems. `Conflict` when any item's condition failed or a
/// concurrent transaction touched an item; the returned list holds each item's cancellation code
/// (`None` for items that passed), so callers can tell which condition failed.
pub(crate) fn classify_transaction(
    op: &'static str,
    error: SdkError<TransactWriteItemsError, aws_sdk_dynamodb::config::http::HttpResponse>,
) -> (AwsError, Vec<Option<String>>) {
    let reasons: Vec<Option<String>> = match error.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => cancelled
            .cancellation_reasons()
            .iter()
            .map(|reason| reason.code().filter(|code| *code != "None").map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let lost = reasons.iter().flatten().any(|code| code == "ConditionalCheckFailed" || code == "TransactionConflict");
    let throttled = reasons.iter().flatten().any(|code| code.contains("Throttl") || code.contains("Capacity"));
    let classified = match classify(op, error) {
        _ if lost => AwsError::ConditionFailed { op, detail: format!("cancellation reasons {reasons:?}") },
        _ if throttled => AwsError::Unavailable { op, detail: format!("cancellation reasons {reasons:?}") },
        other => other,
    };
    (classified, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_maps_to_what_the_caller_must_do() {
        let lost = AwsError::ConditionFailed { op: "PutItem", detail: "x".into() };
        assert!(matches!(StoreError::from(lost), StoreError::Conflict(_)));
        let slow = AwsError::Unavailable { op: "Query", detail: "x".into() };
        assert!(matches!(StoreError::from(slow), StoreError::Unavailable(_)));
        assert!(matches!(StoreError::from(AwsError::Corrupt("bad".into())), StoreError::Corrupt(_)));
        let other = AwsError::Service { op: "GetItem", detail: "AccessDenied".into() };
        assert!(matches!(StoreError::from(other), StoreError::Other(_)));
    }
}
