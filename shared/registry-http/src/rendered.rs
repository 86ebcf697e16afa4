//! Answers kept rendered. By-ID answers: the body bytes of `GET /schemas/ids/{id}` and of its
//! `/schema`, with their ETags, by the fingerprint of the schema they show, and the same answers
//! by the ID a plain request names, while the registry's memory of that ID holds
//! ([`RenderedAnswers::by_id`]: a hit is one lookup, not one in the registry's memory and one
//! here). Lookup answers (`POST /subjects/{s}` without `format`): the bytes of the answer by the
//! request as the client sent it (subject, options and body bytes), while the registry's lookup
//! memory still gives the answer they show to the caller asking
//! ([`RenderedAnswers::lookup`], [`registry_core::Registry::lookup_again`]). A hit is a lookup
//! and a reference count: no parse of the body, no JSON serialization, no hashing of the schema.
//!
//! Why a fingerprint key is safe: a fingerprint addresses one body for ever (the store is
//! content-addressed), and a plain by-ID answer (no `format`, `fetchMaxId` or `findTags`) is a
//! function of the body alone. Which body an ID names is still decided on every request by the
//! registry ([`registry_core::Registry::fingerprint_of_id_in`], with its own memory and rules), so
//! keeping an answer here never lets an ID answer a body it no longer names.

use crate::extract::{MEDIA_GENERIC, MEDIA_JSON, MEDIA_V1};
use crate::http_cache::{Representation, etag};
use axum::body::Bytes;
use axum::http::HeaderValue;
use registry_core::bounded::{BoundedMap, Hasher};
use registry_core::{Fingerprint, Freshness, LookupAnswer, LookupOptions};
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard};

/// Bytes of rendered by-ID answers kept (bodies plus [`ENTRY_OVERHEAD`] each): 32 MiB by
/// fingerprint, and as much by ID (mostly the same bodies, shared).
const MAX_BYTES: usize = 32 * 1024 * 1024;

/// Bytes of rendered lookup answers kept (each charged its request body, its answer and the schema
/// text of the record it holds): 16 MiB, as the lookup memory whose records they show. A shard keeps
/// an answer of up to 1 MiB in all; a larger one is rendered for each request.
const MAX_LOOKUP_BYTES: usize = 16 * 1024 * 1024;

/// Shards, each with its own lock and an even share of [`MAX_BYTES`] (4 MiB: a schema of up to
/// 2 MiB is kept).
const SHARDS: usize = 8;

/// Charged per answer on top of its body (the key, three tags, the table slot).
const ENTRY_OVERHEAD: usize = 512;

/// One representation of one schema, rendered.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The answer's body.
    pub body: Bytes,
    /// Its strong ETag in each response media type, in [`media_index`] order.
    tags: [HeaderValue; 3],
    /// Its `Content-Length` value.
    length: HeaderValue,
}

/// What a by-ID answer sends of a [`Rendered`] in one media type: the body, its tag and its length.
#[derive(Debug, Clone)]
pub struct Reply {
    pub body: Bytes,
    pub tag: HeaderValue,
    pub length: HeaderValue,
}

impl Rendered {
    /// `body`, the `representation` of the schema `fingerprint` names, with its tags and length.
    /// All are kept in one buffer, in the order an answer writes them (header values, then the
    /// body), so an answer's clones count on one shared count and its bytes are read in one pass.
    pub fn new(fingerprint: &Fingerprint, representation: Representation, body: Bytes) -> Rendered {
        let tags = [MEDIA_V1, MEDIA_GENERIC, MEDIA_JSON].map(|media| etag(fingerprint, representation, media));
        let length = HeaderValue::from(body.len());
        let values = tags.iter().chain([&length]);
        let mut buffer = Vec::with_capacity(values.clone().map(HeaderValue::len).sum::<usize>() + body.len());
        values.for_each(|value| buffer.extend_from_slice(value.as_bytes()));
        let head = buffer.len();
        buffer.extend_from_slice(&body);
        let buffer = Bytes::from(buffer);
        let mut end = 0;
        let mut shared = |value: HeaderValue| {
            let start = end;
            end += value.len();
            HeaderValue::from_maybe_shared(buffer.slice(start..end)).unwrap_or(value)
        };
        let tags = tags.map(&mut shared);
        let length = shared(length);
        Rendered { body: buffer.slice(head..), tags, length }
    }

    /// The ETag of this answer in the response media type `media`.
    pub fn tag(&self, media: &str) -> &HeaderValue {
        &self.tags[media_index(media)]
    }

    /// This answer in the response media type `media`.
    pub fn reply(&self, media: &str) -> Reply {
        Reply { body: self.body.clone(), tag: self.tag(media).clone(), length: self.length.clone() }
    }
}

fn media_index(media: &str) -> usize {
    match media {
        MEDIA_GENERIC => 1,
        MEDIA_JSON => 2,
        _ => 0,
    }
}

type Key = (Fingerprint, Representation);

/// A plain by-ID request in the default context: the ID and the representation asked for.
type IdKey = (i32, Representation);

/// An answer kept by ID: the registry's memory of the ID held when it was kept, and holds for as
/// long as [`Freshness`] says.
type IdAnswer = (Freshness, Rendered);

/// A plain lookup (`POST /subjects/{s}` without `format`) as the client sent it: the subject as
/// the path decodes it, the options and the body's bytes. The same bytes parse to the same posted
/// schema, so they have the same answer for as long as the registry's lookup memory gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LookupRequest {
    pub subject: String,
    pub options: LookupOptions,
    pub body: Bytes,
}

/// A lookup's answer ([`LookupAnswer`]: the record and how long the registry gives it) and its
/// rendered bytes.
type KeptLookup = (LookupAnswer, Bytes);

/// The rendered answers of one process, bounded by bytes, least recently used dropped first.
#[derive(Debug)]
pub struct RenderedAnswers {
    shards: Vec<Mutex<BoundedMap<Key, Rendered>>>,
    by_id: Vec<Mutex<BoundedMap<IdKey, IdAnswer>>>,
    lookups: Vec<Mutex<BoundedMap<LookupRequest, KeptLookup>>>,
    /// Picks a lookup's shard by its subject.
    hasher: Hasher,
}

impl Default for RenderedAnswers {
    fn default() -> Self {
        RenderedAnswers {
            shards: shards(MAX_BYTES),
            by_id: shards(MAX_BYTES),
            lookups: shards(MAX_LOOKUP_BYTES),
            hasher: Hasher::default(),
        }
    }
}

fn shards<K: Eq + std::hash::Hash + Clone, V: Clone>(max_bytes: usize) -> Vec<Mutex<BoundedMap<K, V>>> {
    (0..SHARDS).map(|_| Mutex::new(BoundedMap::new(max_bytes / SHARDS))).collect()
}

/// Every mutation completes under the guard, so a poisoned lock is still consistent.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RenderedAnswers {
    fn shard(&self, key: &Key) -> MutexGuard<'_, BoundedMap<Key, Rendered>> {
        // A fingerprint is a SHA-256: its first byte is as good a spread as any hash of it.
        locked(&self.shards[usize::from(key.0.0[0]) % self.shards.len()])
    }

    /// The answer kept for `request` and its bytes, if any: the caller gives the bytes only when
    /// the registry would still give that answer ([`registry_core::Registry::lookup_again`]).
    pub fn lookup(&self, request: &LookupRequest) -> Option<KeptLookup> {
        self.lookup_shard(request).get(request)
    }

    /// Keeps `bytes`, the rendering of `answer`, as the answer to `request`, when the registry's
    /// lookup memory keeps that answer (it is given again only while the memory would give it).
    /// The body is kept as a copy of its own: the request's bytes may be a slice of a larger read
    /// buffer, which the entry would otherwise hold whole. An answer too large for its shard is not
    /// copied at all.
    pub fn keep_lookup(&self, request: LookupRequest, answer: LookupAnswer, bytes: Bytes) {
        let cost =
            request.body.len() + request.subject.len() + bytes.len() + answer.record.body.schema.len() + ENTRY_OVERHEAD;
        if !answer.is_remembered() || !self.lookup_shard(&request).can_hold(cost) {
            return;
        }
        let request = LookupRequest { body: Bytes::copy_from_slice(&request.body), ..request };
        self.lookup_shard(&request).insert(request, (answer, bytes), cost);
    }

    fn lookup_shard(&self, request: &LookupRequest) -> MutexGuard<'_, BoundedMap<LookupRequest, KeptLookup>> {
        let index = self.hasher.hash_one(&request.subject) % self.lookups.len() as u64;
        locked(&self.lookups[index as usize])
    }

    /// The `representation` of the schema `fingerprint` names as answered in the response media
    /// type `media`, when kept (what an answer takes, and nothing else).
    pub fn answer(&self, fingerprint: &Fingerprint, representation: Representation, media: &str) -> Option<Reply> {
        let key = (*fingerprint, representation);
        self.shard(&key).read(&key, |rendered| rendered.reply(media))
    }

    /// The rendered `representation` of the schema `fingerprint` names, when kept.
    pub fn rendered(&self, fingerprint: &Fingerprint, representation: Representation) -> Option<Rendered> {
        let key = (*fingerprint, representation);
        self.shard(&key).get(&key)
    }

    /// The answer (in `media`) kept for a plain request for the `representation` of `id` in the
    /// default context, while `holds` says the registry's memory of the ID still holds.
    pub fn by_id(
        &self,
        id: i32,
        representation: Representation,
        media: &str,
        holds: impl FnOnce(&Freshness) -> bool,
    ) -> Option<Reply> {
        let key = (id, representation);
        let (freshness, reply) =
            self.id_shard(id).read(&key, |(freshness, rendered)| (*freshness, rendered.reply(media)))?;
        holds(&freshness).then_some(reply)
    }

    /// Keeps `rendered` as the answer to a plain request for the `representation` of `id` in the
    /// default context, for as long as `freshness` holds.
    pub fn keep_by_id(&self, id: i32, representation: Representation, freshness: Freshness, rendered: Rendered) {
        let cost = rendered.body.len() + ENTRY_OVERHEAD;
        self.id_shard(id).insert((id, representation), (freshness, rendered), cost);
    }

    fn id_shard(&self, id: i32) -> MutexGuard<'_, BoundedMap<IdKey, IdAnswer>> {
        locked(&self.by_id[id.unsigned_abs() as usize % self.by_id.len()])
    }

    /// Keeps `rendered` as the `representation` of the schema `fingerprint` names.
    pub fn keep(&self, fingerprint: &Fingerprint, representation: Representation, rendered: Rendered) {
        let key = (*fingerprint, representation);
        let cost = rendered.body.len() + ENTRY_OVERHEAD;
        self.shard(&key).insert(key, rendered, cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_fingerprint_and_representation_with_a_tag_per_media() {
        let answers = RenderedAnswers::default();
        let (one, two) = (Fingerprint([1; 32]), Fingerprint([2; 32]));
        let object = Rendered::new(&one, Representation::SchemaObject, Bytes::from_static(b"{}"));
        answers.keep(&one, Representation::SchemaObject, object);
        let kept = answers.answer(&one, Representation::SchemaObject, MEDIA_V1);
        assert_eq!(kept.as_ref().map(|reply| reply.body.as_ref()), Some(&b"{}"[..]));
        assert_eq!(kept.as_ref().map(|reply| reply.length.as_bytes()), Some(&b"2"[..]));
        assert!(answers.answer(&one, Representation::SchemaText, MEDIA_V1).is_none());
        assert!(answers.answer(&two, Representation::SchemaObject, MEDIA_V1).is_none());
        let tag = |media| answers.answer(&one, Representation::SchemaObject, media).map(|reply| reply.tag);
        for media in [MEDIA_V1, MEDIA_GENERIC, MEDIA_JSON] {
            assert_eq!(tag(media), Some(etag(&one, Representation::SchemaObject, media)), "{media}");
        }
        assert_ne!(tag(MEDIA_GENERIC), tag(MEDIA_V1));
    }

    /// A lookup answer of a registry whose lookup memory lasts `ttl`.
    async fn lookup_answer(ttl: std::time::Duration) -> LookupAnswer {
        use registry_core::{MemoryStore, NewSchema, Registry, RegistrySettings};
        let settings = RegistrySettings { lookup_ttl: ttl, ..RegistrySettings::default() };
        let registry = Registry::new(std::sync::Arc::new(MemoryStore::new()), settings);
        let schema = || NewSchema { schema: Some("\"string\"".into()), ..NewSchema::default() };
        let registered = registry.register("users", schema(), Default::default()).await;
        assert!(registered.is_ok(), "{registered:?}");
        let answer = registry.lookup_shared("users", schema(), LookupOptions::default()).await;
        answer.unwrap_or_else(|error| panic!("lookup: {error}"))
    }

    #[tokio::test]
    async fn lookup_answers_are_kept_by_request_only_when_remembered_and_within_the_bound() {
        let answers = RenderedAnswers::default();
        let request = |n: u32, body: &[u8]| LookupRequest {
            subject: format!("subject-{n}"),
            options: LookupOptions::default(),
            body: Bytes::copy_from_slice(body),
        };
        let forgotten = lookup_answer(std::time::Duration::ZERO).await;
        answers.keep_lookup(request(0, b"{}"), forgotten, Bytes::from_static(b"answer"));
        assert!(answers.lookup(&request(0, b"{}")).is_none(), "an answer the memory does not keep is not kept");

        let remembered = lookup_answer(std::time::Duration::from_secs(60)).await;
        answers.keep_lookup(request(1, b"{}"), remembered.clone(), Bytes::from_static(b"answer"));
        let kept = answers.lookup(&request(1, b"{}")).map(|(_, bytes)| bytes);
        assert_eq!(kept.as_deref(), Some(&b"answer"[..]));
        assert!(answers.lookup(&request(1, b"{ }")).is_none(), "other bytes are another request");
        let deleted = LookupRequest {
            options: LookupOptions { include_deleted: true, ..LookupOptions::default() },
            ..request(1, b"{}")
        };
        assert!(answers.lookup(&deleted).is_none(), "other options are another request");

        let oversized =
            LookupRequest { body: Bytes::from(vec![b' '; MAX_LOOKUP_BYTES / SHARDS / 2]), ..request(2, b"") };
        answers.keep_lookup(oversized.clone(), remembered.clone(), Bytes::from_static(b"answer"));
        assert!(answers.lookup(&oversized).is_none(), "an answer over half its shard is not kept");

        // Bodies sliced from one large buffer: each is charged its own bytes, and the bound holds
        // (in answers of their own: which of the small answers above stay depends on the shards).
        let answers = RenderedAnswers::default();
        let buffer = Bytes::from(vec![b' '; 1 << 20]);
        for n in 0..200 {
            let sliced = LookupRequest { body: buffer.slice(..100 * 1024), ..request(n, b"") };
            answers.keep_lookup(sliced, remembered.clone(), Bytes::from_static(b"answer"));
        }
        let shards = answers.lookups.iter().map(|shard| shard.lock().unwrap_or_else(|p| p.into_inner()));
        let (mut bytes, mut held) = (0, 0);
        for shard in shards {
            bytes += shard.bytes();
            held += shard.len();
        }
        assert!(bytes <= MAX_LOOKUP_BYTES && held > 0, "{bytes} bytes in {held} answers");
        assert!(bytes >= held * 100 * 1024, "each body is charged: {bytes} bytes in {held} answers");
    }

    #[test]
    fn the_bytes_kept_stay_bounded() {
        let answers = RenderedAnswers::default();
        let body = Bytes::from(vec![b'x'; 1 << 20]);
        for n in 0..=255u8 {
            let fingerprint = Fingerprint([n; 32]);
            answers.keep(
                &fingerprint,
                Representation::SchemaText,
                Rendered::new(&fingerprint, Representation::SchemaText, body.clone()),
            );
        }
        let kept: usize = answers.shards.iter().map(|shard| shard.lock().map_or(0, |map| map.bytes())).sum();
        assert!(kept <= MAX_BYTES, "{kept} bytes kept");
        assert!(kept > 0);
    }
}
