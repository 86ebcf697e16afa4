//! [`WatchedStream`]: the connection's socket as hyper sees it. Reads move the connection's [`Clock`];
//! writes pass through, except hyper's own answers to requests it could not parse, and fail once the
//! client has not read [`WRITE_PROGRESS`] of them within the write budget (hyper then drops the
//! connection: a client that pipelines requests and never reads the answers holds nothing longer).
//!
//! hyper answers an unparsable request head itself (400 malformed, 414 target over 64 KiB, 431 head
//! over its buffer) with an empty body and closes the connection; no service ever sees the request.
//! Such an answer is the only thing hyper writes while no request is being served, and it is a bare
//! head with `content-length: 0`. The stream writes Confluent's JSON error in its place
//! (`{"error_code":431,"message":"HTTP 431 Request Header Fields Too Large"}`), with the same status.
//!
//! Closing lingers: when hyper shuts the connection down (after an answer it sent before reading the
//! whole request, such as a 413 for a `Content-Length` over the limit), the stream sends its FIN, then
//! reads and discards what the client still sends, for at most [`LINGER`] and [`LINGER_BYTES`],
//! before the socket closes. Closing with unread bytes would make the kernel reset the connection,
//! and a client still sending its body would then lose the answer to the reset. A connection the
//! listener evicted was idle between requests, with nothing to drain: it closes at once.

use super::connection::Clock;
use axum::http::StatusCode;
use registry_http::error::ApiError;
use registry_http::extract::MEDIA_V1;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// How long a closing connection keeps reading what the client still sends.
const LINGER: Duration = Duration::from_secs(2);
/// How much a closing connection reads and discards at most (the 4 MiB body limit and some).
const LINGER_BYTES: usize = 8 << 20;

/// Bytes the client's socket must accept within the write budget for a blocked write to count as
/// read: a reader taking a byte now and then cannot hold its answer open.
pub const WRITE_PROGRESS: usize = 16 * 1024;

/// A TCP stream that reports received bytes to its [`Clock`] and rewrites hyper's automatic answers.
#[derive(Debug)]
pub struct WatchedStream {
    inner: TcpStream,
    clock: Arc<Clock>,
    write_budget: Duration,
    /// Once a write found the socket full: when the answer is abandoned, and what was written since.
    write_stall: Option<(Pin<Box<Sleep>>, usize)>,
    /// The JSON answer written instead of hyper's, and how much of it is written; once set, hyper's
    /// own bytes are discarded (the connection closes after the answer).
    replacement: Option<(Vec<u8>, usize)>,
    /// Once the write half is shut: when lingering ends, and how many bytes were discarded.
    lingering: Option<(Pin<Box<Sleep>>, usize)>,
}

impl WatchedStream {
    /// `inner`, reporting to `clock`, abandoning what the client does not read within `write_budget`.
    pub fn new(inner: TcpStream, clock: Arc<Clock>, write_budget: Duration) -> WatchedStream {
        WatchedStream { inner, clock, write_budget, write_stall: None, replacement: None, lingering: None }
    }

    /// `written` as the socket answered it, timing the stall while the client does not read: a
    /// pending write starts (or keeps) the write budget's timer, which fails the write when it fires;
    /// [`WRITE_PROGRESS`] written since the stall began ends it.
    fn timed(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match written {
            Poll::Pending => {
                let budget = self.write_budget;
                let (timer, _) = self.write_stall.get_or_insert_with(|| {
                    self.clock.write_blocked();
                    (Box::pin(tokio::time::sleep(budget)), 0)
                });
                if timer.as_mut().poll(cx).is_ready() {
                    tracing::debug!("response not read in time: closing the connection");
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "response not read in time")));
                }
                Poll::Pending
            }
            Poll::Ready(Ok(n)) => {
                if let Some((_, progress)) = self.write_stall.as_mut() {
                    *progress += n;
                    if *progress >= WRITE_PROGRESS {
                        self.write_stall = None;
                        self.clock.write_progressed();
                    }
                }
                Poll::Ready(Ok(n))
            }
            failed => failed,
        }
    }

    /// Writes what is left of the replacement answer.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((answer, written)) = self.replacement.as_mut() {
            if *written >= answer.len() {
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &answer[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for WatchedStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            self.clock.received(buf.filled().len() - before);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.replacement.is_none()
            && let Some(status) = automatic_answer(buf)
            && !self.clock.busy()
        {
            self.replacement = Some((json_answer(status), 0));
        }
        if self.replacement.is_some() {
            ready!(self.poll_replacement(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.timed(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // An automatic answer is one bare head, so only a write that starts with one goes through
        // `poll_write`. An answer whose body hyper has already dropped (the connection is idle again
        // while it is flushed) still goes out with its head in one vectored write, not two sends.
        let first = bufs.iter().find(|buf| !buf.is_empty()).map_or(&[][..], |buf| &buf[..]);
        if self.replacement.is_some() || (automatic_answer(first).is_some() && !self.clock.busy()) {
            return self.poll_write(cx, first);
        }
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.timed(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        if self.lingering.is_none() {
            ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
            // An evicted connection was idle: no unread request to drain, and its place is wanted now.
            if self.clock.evicted() {
                return Poll::Ready(Ok(()));
            }
            self.lingering = Some((Box::pin(tokio::time::sleep(LINGER)), 0));
        }
        let this = &mut *self;
        let Some((until, discarded)) = this.lingering.as_mut() else { return Poll::Ready(Ok(())) };
        let mut scratch = [0u8; 16 * 1024];
        while *discarded < LINGER_BYTES && until.as_mut().poll(cx).is_pending() {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => *discarded += buf.filled().len(),
                // The client closed (or reset): nothing is left to read.
                Poll::Ready(_) => break,
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// The status of `bytes` when they are one of hyper's automatic answers: a whole head, without a
/// body, with a 4xx status and `content-length: 0`.
fn automatic_answer(bytes: &[u8]) -> Option<StatusCode> {
    // Every other write (answers the service made, bodies) is told apart by its first bytes.
    if !bytes.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    let head = std::str::from_utf8(bytes).ok()?;
    let rest = head.strip_prefix("HTTP/1.1 ")?;
    let status = StatusCode::from_bytes(rest.get(..3)?.as_bytes()).ok()?;
    let whole_head = head.ends_with("\r\n\r\n") && head.find("\r\n\r\n") == Some(head.len() - 4);
    let empty = head.lines().any(|line| line.eq_ignore_ascii_case("content-length: 0"));
    (status.is_client_error() && whole_head && empty).then_some(status)
}

/// The whole HTTP answer for `status` in Confluent's error shape, closing the connection.
fn json_answer(status: StatusCode) -> Vec<u8> {
    let (status, body) = ApiError::Http(status).status_and_body();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {MEDIA_V1}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or_default(),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_4xx_heads_are_automatic_answers() {
        let date = "date: Tue, 01 Dec 2026 17:00:00 GMT\r\n";
        let bare = |status: &str| format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n{date}\r\n");
        assert_eq!(automatic_answer(bare("400 Bad Request").as_bytes()), Some(StatusCode::BAD_REQUEST));
        assert_eq!(automatic_answer(bare("414 URI Too Long").as_bytes()), Some(StatusCode::URI_TOO_LONG));
        assert_eq!(
            automatic_answer(bare("431 Request Header Fields Too Large").as_bytes()),
            Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        );
        assert_eq!(automatic_answer(bare("200 OK").as_bytes()), None);
        let with_body = "HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(automatic_answer(with_body.as_bytes()), None);
        assert_eq!(automatic_answer(b"0\r\n\r\n"), None, "the tail of a chunked answer");
    }

    #[test]
    fn the_json_answer_is_a_whole_response() {
        let answer = String::from_utf8(json_answer(StatusCode::URI_TOO_LONG)).unwrap_or_default();
        let body = r#"{"error_code":414,"message":"HTTP 414 URI Too Long"}"#;
        assert!(answer.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{answer}");
        assert!(answer.contains(&format!("content-length: {}\r\n", body.len())), "{answer}");
        assert!(answer.ends_with(&format!("\r\n\r\n{body}")), "{answer}");
    }
}
