//! What a function sends back on `POST /runtime/invocation/{id}/response`, turned into the HTTP
//! answer a Function URL gives its caller.
//!
//! Streaming mode (`Lambda-Runtime-Function-Response-Mode: streaming`, what `registry-lambda` uses):
//! a JSON prelude (`statusCode`, `headers`, `cookies`), eight NUL bytes, then the body as it is
//! produced. A failure after the prelude arrives as an error trailer; `lambda_runtime` writes it
//! as a body chunk starting with `Lambda-Runtime-Function-Error-Type:`, and the caller then gets a
//! cut-off body, as from AWS. Buffered mode: one JSON document (`statusCode`, `headers`,
//! `multiValueHeaders`, `cookies`, `body`, `isBase64Encoded`).

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

/// Separates the prelude from the body in a streamed response.
pub const PRELUDE_DELIMITER: [u8; 8] = [0; 8];
/// How an error trailer starts when `lambda_runtime` writes it into the body.
pub const ERROR_TRAILER: &[u8] = b"Lambda-Runtime-Function-Error-Type:";
/// Largest prelude accepted (status and headers only; the body follows the delimiter).
const MAX_PRELUDE: usize = 1 << 20;

/// A function's answer to one invocation.
#[derive(Debug)]
pub enum Answer {
    /// Status and headers from the prelude; the body arrives on the channel.
    Streaming { status: StatusCode, headers: HeaderMap, body: mpsc::Receiver<Result<Bytes, std::io::Error>> },
    /// A whole buffered response.
    Buffered(Value),
    /// The invocation failed (`/error`, a malformed response, or the instance went away).
    Failed(String),
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self {
            Answer::Streaming { status, headers, body } => {
                let stream =
                    futures::stream::unfold(
                        body,
                        |mut body| async move { body.recv().await.map(|chunk| (chunk, body)) },
                    );
                let mut response = Response::new(Body::from_stream(stream));
                *response.status_mut() = status;
                *response.headers_mut() = headers;
                response
            }
            Answer::Buffered(value) => buffered(&value).unwrap_or_else(|reason| failed(&reason)),
            Answer::Failed(reason) => failed(&reason),
        }
    }
}

/// What a Function URL answers when the function failed: 502 with AWS's body.
fn failed(reason: &str) -> Response {
    eprintln!("lambda emulator: invocation failed: {reason}");
    (StatusCode::BAD_GATEWAY, [(header::CONTENT_TYPE, "application/json")], r#"{"Message":"Internal Server Error"}"#)
        .into_response()
}

/// Reads a streamed response from `body`: the prelude, then every chunk into the returned answer's
/// channel. The returned future finishes when the function has sent its whole response (the
/// Runtime API call must be read to the end even if the caller went away).
pub async fn read_streaming<S, E>(mut body: S, deliver: impl FnOnce(Answer))
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut head = Vec::new();
    let rest = loop {
        match body.next().await {
            Some(Ok(chunk)) => head.extend_from_slice(&chunk),
            Some(Err(error)) => return deliver(Answer::Failed(format!("response stream: {error}"))),
            None => return deliver(Answer::Failed("response ended before the prelude delimiter".into())),
        }
        if let Some(at) = head.windows(PRELUDE_DELIMITER.len()).position(|w| w == PRELUDE_DELIMITER) {
            let rest = head.split_off(at + PRELUDE_DELIMITER.len());
            head.truncate(at);
            break rest;
        }
        if head.len() > MAX_PRELUDE {
            return deliver(Answer::Failed("no prelude delimiter in the first MiB".into()));
        }
    };
    let (status, headers) = match prelude(&head) {
        Ok(parsed) => parsed,
        Err(reason) => return deliver(Answer::Failed(reason)),
    };
    let (sender, receiver) = mpsc::channel(16);
    deliver(Answer::Streaming { status, headers, body: receiver });
    // Once the caller has gone away, the rest is still read (the function's call must complete).
    let mut open = true;
    if !rest.is_empty() {
        open = forward(&sender, Bytes::from(rest)).await;
    }
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) if open => open = forward(&sender, chunk).await,
            Ok(_) => {}
            Err(error) => {
                if open {
                    let _ = sender.send(Err(std::io::Error::other(error.to_string()))).await;
                }
                return;
            }
        }
    }
}

/// Passes one body chunk on (an error trailer as an error); false once the caller has gone.
async fn forward(sender: &mpsc::Sender<Result<Bytes, std::io::Error>>, chunk: Bytes) -> bool {
    let item = if chunk.starts_with(ERROR_TRAILER) {
        Err(std::io::Error::other(String::from_utf8_lossy(&chunk).into_owned()))
    } else {
        Ok(chunk)
    };
    sender.send(item).await.is_ok()
}

/// Status and headers of a streamed prelude.
fn prelude(json: &[u8]) -> Result<(StatusCode, HeaderMap), String> {
    let value: Value = serde_json::from_slice(json).map_err(|e| format!("prelude is not JSON: {e}"))?;
    let status = status_of(&value)?;
    let mut headers = HeaderMap::new();
    add_headers(&mut headers, &value["headers"])?;
    add_cookies(&mut headers, &value["cookies"])?;
    Ok((status, headers))
}

/// A buffered (API Gateway v2 / Function URL) response document as an HTTP response.
fn buffered(value: &Value) -> Result<Response, String> {
    let status = status_of(value)?;
    let mut headers = HeaderMap::new();
    add_headers(&mut headers, &value["headers"])?;
    add_headers(&mut headers, &value["multiValueHeaders"])?;
    add_cookies(&mut headers, &value["cookies"])?;
    let text = value["body"].as_str().unwrap_or("");
    let body = if value["isBase64Encoded"].as_bool() == Some(true) {
        base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("body is not base64: {e}"))?
    } else {
        text.as_bytes().to_vec()
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    Ok(response)
}

fn status_of(value: &Value) -> Result<StatusCode, String> {
    let code = value["statusCode"].as_u64().unwrap_or(200);
    u16::try_from(code).ok().and_then(|code| StatusCode::from_u16(code).ok()).ok_or(format!("bad statusCode {code}"))
}

/// Adds a `{"name": "value" | ["value", ...]}` object's headers.
fn add_headers(headers: &mut HeaderMap, object: &Value) -> Result<(), String> {
    let Some(object) = object.as_object() else { return Ok(()) };
    for (name, values) in object {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("header {name:?}: {e}"))?;
        let values = match values {
            Value::Array(values) => values.iter().filter_map(Value::as_str).collect(),
            other => other.as_str().into_iter().collect::<Vec<_>>(),
        };
        for value in values {
            let value = HeaderValue::from_str(value).map_err(|e| format!("header {name}: {e}"))?;
            headers.append(name.clone(), value);
        }
    }
    Ok(())
}

fn add_cookies(headers: &mut HeaderMap, cookies: &Value) -> Result<(), String> {
    for cookie in cookies.as_array().into_iter().flatten().filter_map(Value::as_str) {
        let value = HeaderValue::from_str(cookie).map_err(|e| format!("cookie: {e}"))?;
        headers.append(header::SET_COOKIE, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    async fn answer_of(chunks: Vec<&'static [u8]>) -> Answer {
        let stream = futures::stream::iter(chunks.into_iter().map(|c| Ok::<_, Infallible>(Bytes::from_static(c))));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let reading = tokio::spawn(read_streaming(stream, move |answer| {
            let _ = tx.send(answer);
        }));
        let answer = rx.await.unwrap_or_else(|e| panic!("{e}"));
        if !matches!(answer, Answer::Streaming { .. }) {
            reading.await.unwrap_or_else(|e| panic!("{e}"));
        } else {
            tokio::spawn(reading);
        }
        answer
    }

    async fn body_of(answer: Answer) -> (StatusCode, HeaderMap, Vec<Result<Bytes, String>>) {
        let Answer::Streaming { status, headers, mut body } = answer else { panic!("not streaming: {answer:?}") };
        let mut chunks = Vec::new();
        while let Some(chunk) = body.recv().await {
            chunks.push(chunk.map_err(|e| e.to_string()));
        }
        (status, headers, chunks)
    }

    #[tokio::test]
    async fn prelude_split_across_chunks_then_body() {
        let prelude: &[u8] =
            br#"{"statusCode":404,"headers":{"content-type":"application/json","x":["a","b"]},"cookies":["c=1"]}"#;
        let answer = answer_of(vec![&prelude[..10], &prelude[10..], b"\0\0\0\0", b"\0\0\0\0{\"a\"", b":1}"]).await;
        let (status, headers, chunks) = body_of(answer).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(headers.get_all("x").iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(headers.get(header::SET_COOKIE).map(|v| v.as_bytes()), Some(&b"c=1"[..]));
        let body: Vec<u8> = chunks.into_iter().flat_map(|c| c.unwrap_or_else(|e| panic!("{e}")).to_vec()).collect();
        assert_eq!(body, b"{\"a\":1}");
    }

    #[tokio::test]
    async fn an_error_trailer_cuts_the_body() {
        let answer = answer_of(vec![
            b"{\"statusCode\":200}\0\0\0\0\0\0\0\0[\"a\"",
            b"Lambda-Runtime-Function-Error-Type: Runtime.StreamError\r\n",
        ])
        .await;
        let (_, _, chunks) = body_of(answer).await;
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].is_ok());
        assert!(chunks[1].as_ref().is_err_and(|e| e.contains("Runtime.StreamError")));
    }

    #[tokio::test]
    async fn a_response_without_delimiter_fails_the_invocation() {
        assert!(matches!(answer_of(vec![b"{\"statusCode\":200}"]).await, Answer::Failed(_)));
    }

    #[test]
    fn buffered_response_with_base64_body() {
        let value =
            serde_json::json!({"statusCode": 201, "headers": {"a": "b"}, "body": "aGk=", "isBase64Encoded": true});
        let response = buffered(&value).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(response.headers().get("a").map(|v| v.as_bytes()), Some(&b"b"[..]));
    }
}
