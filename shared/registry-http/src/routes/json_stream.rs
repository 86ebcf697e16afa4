//! JSON arrays answered while they are read from the store, one page at a time, so a listing of
//! any length never holds the whole list (`GET /subjects`, `GET /schemas`,
//! `GET /subjects/{s}/versions`).
//!
//! The array is produced chunk by chunk: the first chunk opens it, each later one carries one store
//! page of items, the last closes it. The first chunk is read before the status is sent, so an error
//! on the first page (or an empty listing that must be a 404) still gets its own status and error
//! body; a failure after that aborts the body, so a client never takes a truncated list for a
//! complete one. `offset` and `limit` apply across pages.

use crate::error::ApiError;
use crate::extract::Page;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::future::BoxFuture;

/// One page of a listing: its items (maybe none, e.g. when every row read was filtered out), and
/// whether the store has nothing after it.
#[derive(Debug)]
pub struct PageRead<T> {
    pub items: Vec<T>,
    pub last: bool,
}

/// A listing read page by page.
pub trait Pages: Send + 'static {
    /// What one page holds; written to JSON only when it falls inside `offset`/`limit`.
    type Item: Send + 'static;

    /// The most one page reads from the store (its page size, in the source's own units).
    const READ_SIZE: usize;

    /// The next page; never asked for again after one that was the last. `size` (1 to
    /// [`Pages::READ_SIZE`]) is how many more items the answer can use, counting those `offset`
    /// still skips: a source reads no more than that from the store.
    fn next_page(&mut self, size: usize) -> BoxFuture<'_, Result<PageRead<Self::Item>, ApiError>>;

    /// Appends `item` to `out` as one JSON value.
    fn write_item<'a>(&'a self, item: Self::Item, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>>;

    /// The answer when the listing has no item at all (before `offset`): an empty array, or an error.
    fn when_empty(&self) -> Result<(), ApiError> {
        Ok(())
    }
}

/// The chunks of one array over `P`.
#[derive(Debug)]
pub struct JsonArray<P> {
    pages: P,
    window: Page,
    skipped: usize,
    emitted: usize,
    seen_any: bool,
    /// A page said it was the last.
    exhausted: bool,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NotStarted,
    Listing,
    Done,
}

impl<P: Pages> JsonArray<P> {
    /// The array of `pages`' items inside `window`.
    pub fn new(pages: P, window: Page) -> Self {
        JsonArray { pages, window, skipped: 0, emitted: 0, seen_any: false, exhausted: false, state: State::NotStarted }
    }

    /// The next chunk, or `None` once the closing `]` was returned.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ApiError> {
        let mut chunk = Vec::new();
        match self.state {
            State::Done => return Ok(None),
            State::NotStarted => {
                chunk.push(b'[');
                self.state = State::Listing;
            }
            State::Listing => {}
        }
        loop {
            if self.emitted >= self.window.limit {
                return Ok(Some(self.close(chunk)));
            }
            let wanted =
                self.window.offset.saturating_sub(self.skipped).saturating_add(self.window.limit - self.emitted);
            if self.exhausted {
                if !self.seen_any {
                    self.pages.when_empty()?;
                }
                return Ok(Some(self.close(chunk)));
            }
            let PageRead { items, last } = self.pages.next_page(wanted.clamp(1, P::READ_SIZE)).await?;
            self.exhausted = last;
            if items.is_empty() {
                continue;
            }
            self.seen_any = true;
            for item in items {
                if self.skipped < self.window.offset {
                    self.skipped += 1;
                    continue;
                }
                if self.emitted >= self.window.limit {
                    break;
                }
                if self.emitted > 0 {
                    chunk.push(b',');
                }
                self.pages.write_item(item, &mut chunk).await?;
                self.emitted += 1;
            }
            return Ok(Some(chunk));
        }
    }

    fn close(&mut self, mut chunk: Vec<u8>) -> Vec<u8> {
        chunk.push(b']');
        self.state = State::Done;
        chunk
    }
}

/// A 200 answer streaming the array of `pages` inside `window` (`what` names the listing in the
/// log line of a failure after the first chunk).
pub async fn respond<P: Pages>(pages: P, window: Page, what: &'static str) -> Result<Response, ApiError> {
    let mut array = JsonArray::new(pages, window);
    let first = array.next_chunk().await?.unwrap_or_default();
    let rest = futures::stream::unfold(Some(array), move |array| async move {
        let mut array = array?;
        match array.next_chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(array))),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(?error, "{what} failed after the first page; aborting the body");
                Some((Err(std::io::Error::other(format!("{what} failed"))), None))
            }
        }
    });
    let chunks = futures::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(rest);
    let mut response = (StatusCode::OK, Body::from_stream(chunks)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(crate::extract::MEDIA_V1));
    Ok(response)
}

/// Appends `value` as JSON.
pub fn write_json<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), ApiError> {
    serde_json::to_writer(out, value).map_err(|error| ApiError::Internal(error.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Numbers 0..n in pages of `size`, recording what was asked.
    struct Numbers {
        next: u32,
        n: u32,
        size: usize,
        asked: Vec<usize>,
    }

    impl Pages for Numbers {
        type Item = u32;
        const READ_SIZE: usize = usize::MAX;
        fn next_page(&mut self, wanted: usize) -> BoxFuture<'_, Result<PageRead<u32>, ApiError>> {
            self.asked.push(wanted);
            let take = self.size.min(wanted) as u32;
            let items: Vec<u32> = (self.next..self.n.min(self.next + take)).collect();
            self.next += items.len() as u32;
            let last = self.next >= self.n;
            Box::pin(async move { Ok(PageRead { items, last }) })
        }
        fn write_item<'a>(&'a self, item: u32, out: &'a mut Vec<u8>) -> BoxFuture<'a, Result<(), ApiError>> {
            Box::pin(async move { write_json(&item, out) })
        }
    }

    async fn collect(pages: Numbers, window: Page) -> (String, usize, Vec<usize>) {
        let mut array = JsonArray::new(pages, window);
        let (mut text, mut chunks) = (Vec::new(), 0);
        while let Some(chunk) = array.next_chunk().await.unwrap() {
            text.extend(chunk);
            chunks += 1;
        }
        (String::from_utf8(text).unwrap(), chunks, array.pages.asked)
    }

    fn numbers(n: u32, size: usize) -> Numbers {
        Numbers { next: 0, n, size, asked: Vec::new() }
    }

    #[tokio::test]
    async fn pages_join_into_one_array_and_the_window_crosses_pages() {
        assert_eq!(collect(numbers(0, 3), Page::ALL).await.0, "[]");
        let (text, chunks, _) = collect(numbers(7, 3), Page::ALL).await;
        assert_eq!((text.as_str(), chunks), ("[0,1,2,3,4,5,6]", 4));
        let (text, _, asked) = collect(numbers(7, 3), Page { offset: 2, limit: 3 }).await;
        assert_eq!(text, "[2,3,4]");
        assert_eq!(asked, [5, 2], "never asks for more than offset + limit still need");
        assert_eq!(collect(numbers(7, 3), Page { offset: 9, limit: 3 }).await.0, "[]");
    }
}
