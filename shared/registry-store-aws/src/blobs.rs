//! Schema bodies in S3, content-addressed: `schemas/<sha256 hex>`, written create-if-absent.

use crate::errors::{AwsError, classify};
use crate::keys;
use aws_sdk_s3::operation::get_object::GetObjectError;
use aws_sdk_s3::primitives::ByteStream;
use registry_core::{Fingerprint, SchemaBody};

/// How often a put that met a concurrent conditional write (S3 409) is tried again.
const CONCURRENT_PUT_ATTEMPTS: usize = 5;

/// How often a get whose body broke off while streaming is tried again. The SDK retries a failed
/// request, but not a response whose body fails after the headers arrived (a dropped connection).
const BODY_READ_ATTEMPTS: usize = 3;

/// Writes `body` at its content address with `If-None-Match: *`. An object already there (412)
/// is the same body by construction, so that is success. Returns only once the object exists.
pub(crate) async fn put(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    fingerprint: &Fingerprint,
    body: &SchemaBody,
) -> Result<(), AwsError> {
    let bytes = serde_json::to_vec(body).map_err(|e| AwsError::Corrupt(format!("body {fingerprint}: {e}")))?;
    let key = keys::body_key(fingerprint);
    put_if_absent(s3, bucket, &key, bytes, "PutObject").await.map(drop)
}

/// Writes `bytes` at `key` with `If-None-Match: *`, trying again on a concurrent conditional write
/// (S3 409); `op` names the call in errors. `true`: this call created the object; `false`: it was
/// there already (412).
pub(crate) async fn put_if_absent(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
    bytes: Vec<u8>,
    op: &'static str,
) -> Result<bool, AwsError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = s3
            .put_object()
            .bucket(bucket)
            .key(key)
            .if_none_match("*")
            .content_type("application/json")
            .body(ByteStream::from(bytes.clone()))
            .send()
            .await;
        let error = match result {
            Ok(_) => return Ok(true),
            Err(error) => error,
        };
        match error.raw_response().map(|r| r.status().as_u16()) {
            Some(412) => return Ok(false),
            Some(409) if attempt < CONCURRENT_PUT_ATTEMPTS => {
                tokio::time::sleep(std::time::Duration::from_millis(20 * attempt as u64)).await;
            }
            _ => return Err(classify(op, error)),
        }
    }
}

/// The body stored at `fingerprint`'s address, if any.
pub(crate) async fn get(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    fingerprint: &Fingerprint,
) -> Result<Option<SchemaBody>, AwsError> {
    let key = keys::body_key(fingerprint);
    let Some(bytes) = get_bytes(s3, bucket, &key, "GetObject").await? else {
        return Ok(None);
    };
    let body: SchemaBody =
        serde_json::from_slice(&bytes).map_err(|e| AwsError::Corrupt(format!("object {key}: {e}")))?;
    if body.fingerprint() != *fingerprint {
        return Err(AwsError::Corrupt(format!("object {key} does not hash to its key")));
    }
    Ok(Some(body))
}

/// The bytes of the object at `key`, `None` when there is none; `op` names the call in errors.
/// A body that breaks off while streaming is read again, at most `BODY_READ_ATTEMPTS` times.
pub(crate) async fn get_bytes(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
    op: &'static str,
) -> Result<Option<Vec<u8>>, AwsError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let output = match s3.get_object().bucket(bucket).key(key).send().await {
            Ok(output) => output,
            Err(error) if matches!(error.as_service_error(), Some(GetObjectError::NoSuchKey(_))) => return Ok(None),
            Err(error) => return Err(classify(op, error)),
        };
        match output.body.collect().await {
            Ok(bytes) => return Ok(Some(bytes.to_vec())),
            Err(_) if attempt < BODY_READ_ATTEMPTS => {
                tokio::time::sleep(std::time::Duration::from_millis(20 * attempt as u64)).await;
            }
            Err(e) => return Err(AwsError::Unavailable { op, detail: format!("reading {key}: {e}") }),
        }
    }
}
