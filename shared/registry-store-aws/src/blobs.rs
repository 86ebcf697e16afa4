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

/// Why S3 answered a GetObject with 403. Without `s3:ListBucket` on the bucket S3 answers 403, not
/// 404, for a key that does not exist, so a missing body cannot be told from a real denial: the
/// Terraform module grants `s3:ListBucket` on the whole bucket (a prefix condition would not count for
/// GetObject) so that absence is a 404. A 403 is then a real denial, and stays an error.
fn denied<R>(error: aws_sdk_s3::error::SdkError<GetObjectError, R>) -> String {
    use aws_sdk_s3::error::ProvideErrorMetadata;
    format!(
        "{} (403; a missing key is also answered 403 unless the caller may s3:ListBucket the bucket)",
        error.code().unwrap_or("AccessDenied")
    )
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
            Err(error) if error.raw_response().is_some_and(|r| r.status().as_u16() == 403) => {
                return Err(AwsError::Service { op, detail: format!("{key}: {}", denied(error)) });
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// An S3 endpoint answering every request with `status` and S3's XML error `code`, as S3 does.
    fn s3_answering(status: &'static str, code: &'static str) -> aws_sdk_s3::Client {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        std::thread::spawn(move || {
            for mut socket in listener.incoming().flatten() {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match socket.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let body = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>m</Message><RequestId>R</RequestId><HostId>H</HostId></Error>"
                );
                let answer = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nx-amz-request-id: R\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes());
            }
        });
        let config = aws_sdk_s3::Config::builder()
            .behavior_version_latest()
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .endpoint_url(format!("http://{address}"))
            .credentials_provider(aws_sdk_s3::config::Credentials::new("test", "test", None, None, "test"))
            .force_path_style(true)
            .build();
        aws_sdk_s3::Client::from_conf(config)
    }

    #[tokio::test]
    async fn a_missing_key_is_absent_when_s3_answers_404() {
        let s3 = s3_answering("404 Not Found", "NoSuchKey");
        let read = get_bytes(&s3, "bucket", "schemas/0123", "GetObject").await;
        assert!(matches!(read, Ok(None)), "{read:?}");
    }

    #[tokio::test]
    async fn a_403_stays_an_error_naming_the_list_permission() {
        let s3 = s3_answering("403 Forbidden", "AccessDenied");
        let read = get_bytes(&s3, "bucket", "schemas/0123", "GetObject").await;
        match read {
            Err(AwsError::Service { detail, .. }) => {
                assert!(detail.contains("AccessDenied") && detail.contains("s3:ListBucket"), "{detail}");
            }
            other => panic!("expected a denial naming s3:ListBucket, got {other:?}"),
        }
    }
}
