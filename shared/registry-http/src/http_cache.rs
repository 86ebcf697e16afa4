//! HTTP caching of the router's answers: strong `ETag`s and a configurable `Cache-Control` on the
//! by-ID answers, `If-None-Match` → 304, and `Cache-Control: no-store` on everything else.
//!
//! **What an ID names.** An ID names one schema body while any version carries it: registrations
//! never rebind an ID, not even after a hard delete. Its existence ends when every version
//! carrying it is hard-deleted (then 40403), and then IMPORT may give the ID to another schema
//! (Confluent's `checkIfSchemaWithIdExist` allows it: restoring a wiped registry). So a by-ID
//! answer is *not* immutable, and the rule every cache obeys is: **no cache answers a body an ID
//! no longer names.** In process, a rebind waits until every answer memory of the old binding has
//! expired (`registry_core`'s `live_ids`); over HTTP, the by-ID answers must be revalidated before
//! each reuse. The ETag is derived from the body's fingerprint (SHA-256 of type, text, references,
//! metadata, rule set), the endpoint, and the negotiated media type, so every distinct
//! representation has its own tag, a cache that revalidates gets a cheap 304 while the ID names
//! the same schema, and a 200 with the new schema and tag after a rebind.
//!
//! **Default `Cache-Control`** ([`DEFAULT_ID_CACHE_CONTROL`]): `public, max-age=0, must-revalidate`.
//! A shared cache (CloudFront, a proxy) may keep the body but asks the registry (`If-None-Match`)
//! before every reuse. `REGISTRY_ID_CACHE_CONTROL` changes it: a positive `max-age` (the former
//! default was `public, max-age=31536000, immutable`) lets a shared cache serve a hard-deleted
//! ID, or an ID IMPORT rebound since, with its old schema for that long; set it only where IDs are
//! never rebound. An empty value sends no `Cache-Control` on these answers (they then get
//! `no-store` like the rest). `fetchMaxId=true` answers carry the current maximum ID, which
//! grows, so they are not cacheable.
//!
//! **Everything else** (listings, versions, lookups, config, errors) is mutable and gets
//! `Cache-Control: no-store`, so a CDN's default TTL never serves a stale subject list.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use registry_core::Fingerprint;

/// `Cache-Control` of the by-ID answers unless configured otherwise (see the module doc).
pub const DEFAULT_ID_CACHE_CONTROL: &str = "public, max-age=0, must-revalidate";

/// HTTP settings of the router, from the binary's configuration.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// `Cache-Control` sent with the by-ID answers (and their 304s); `None` sends none.
    pub id_cache_control: Option<HeaderValue>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig { id_cache_control: Some(HeaderValue::from_static(DEFAULT_ID_CACHE_CONTROL)) }
    }
}

impl HttpConfig {
    /// From the configured text: empty means no header. Fails on a value that is not a valid
    /// header value (control characters).
    pub fn with_id_cache_control(text: &str) -> Result<HttpConfig, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(HttpConfig { id_cache_control: None });
        }
        let value = HeaderValue::from_str(text).map_err(|_| format!("invalid Cache-Control value {text:?}"))?;
        Ok(HttpConfig { id_cache_control: Some(value) })
    }
}

impl HttpConfig {
    /// The settings for answers given only to authenticated callers: a `public` directive becomes
    /// `private`, so a shared cache (CDN, proxy) never serves one caller's answer to another.
    pub fn for_authenticated(self) -> HttpConfig {
        let id_cache_control = self.id_cache_control.map(|value| {
            let text = value.to_str().unwrap_or_default();
            let directives: Vec<&str> = text
                .split(',')
                .map(str::trim)
                .map(|directive| if directive.eq_ignore_ascii_case("public") { "private" } else { directive })
                .collect();
            HeaderValue::from_str(&directives.join(", ")).unwrap_or(value)
        });
        HttpConfig { id_cache_control }
    }
}

/// Which representation of a schema an ETag names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Representation {
    /// `GET /schemas/ids/{id}`: the JSON object.
    SchemaObject,
    /// `GET /schemas/ids/{id}/schema`: the text itself.
    SchemaText,
}

/// The strong ETag of `representation` of the body `fingerprint` in `media`:
/// `"<sha256 hex>-<o|t>-<media tag>"`.
pub fn etag(fingerprint: &Fingerprint, representation: Representation, media: &str) -> HeaderValue {
    let kind = match representation {
        Representation::SchemaObject => 'o',
        Representation::SchemaText => 't',
    };
    let media = match media {
        crate::extract::MEDIA_GENERIC => "g",
        crate::extract::MEDIA_JSON => "j",
        _ => "v1",
    };
    let mut text = String::with_capacity(80);
    text.push('"');
    text.push_str(&fingerprint.to_string());
    text.push('-');
    text.push(kind);
    text.push('-');
    text.push_str(media);
    text.push('"');
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("\"invalid\""))
}

/// Whether one of the `If-None-Match` `values` matches `tag` (RFC 9110 weak comparison: `W/`
/// ignored; `*` matches).
pub fn not_modified<'a>(values: impl IntoIterator<Item = &'a HeaderValue>, tag: &HeaderValue) -> bool {
    let tag = tag.as_bytes();
    values.into_iter().filter_map(|value| value.to_str().ok()).any(|value| {
        value
            .split(',')
            .map(str::trim)
            .any(|candidate| candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate).as_bytes() == tag)
    })
}

/// What a cacheable answer is judged by: the negotiated response media type (its ETag differs per
/// type) and the request's `If-None-Match` values (usually none: nothing is copied then).
#[derive(Debug, Clone)]
pub struct Validators {
    /// The response media type ([`crate::extract::negotiate`]).
    pub media: &'static str,
    /// The `If-None-Match` header values.
    pub if_none_match: Vec<HeaderValue>,
}

impl Validators {
    /// The validators of a request with `headers`.
    pub fn of(headers: &HeaderMap) -> Validators {
        let if_none_match = headers.get_all(header::IF_NONE_MATCH).iter().cloned().collect();
        Validators { media: crate::extract::negotiate(headers), if_none_match }
    }

    /// Whether the client already holds the answer tagged `tag`.
    pub fn not_modified(&self, tag: &HeaderValue) -> bool {
        not_modified(&self.if_none_match, tag)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Validators {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Validators::of(&parts.headers))
    }
}

/// The 304 answer for `tag`, with the same validators and caching headers a 200 would carry.
pub fn not_modified_response(tag: HeaderValue, config: &HttpConfig) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    add_validators(response.headers_mut(), tag, config);
    response
}

/// Adds `ETag`, `Vary: Accept` and the configured `Cache-Control` to a by-ID answer.
pub fn add_validators(headers: &mut HeaderMap, tag: HeaderValue, config: &HttpConfig) {
    headers.insert(header::ETAG, tag);
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    if let Some(cache_control) = &config.id_cache_control {
        headers.insert(header::CACHE_CONTROL, cache_control.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(if_none_match: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(if_none_match).unwrap_or_else(|e| panic!("{e}")));
        headers
    }

    #[test]
    fn tags_differ_per_representation_and_media_and_match_weakly() {
        let fingerprint = Fingerprint([7; 32]);
        let object = etag(&fingerprint, Representation::SchemaObject, crate::extract::MEDIA_V1);
        let text = etag(&fingerprint, Representation::SchemaText, crate::extract::MEDIA_V1);
        let json = etag(&fingerprint, Representation::SchemaObject, crate::extract::MEDIA_JSON);
        assert_ne!(object, text);
        assert_ne!(object, json);
        let object_text = object.to_str().unwrap_or_default().to_string();
        assert!(object_text.starts_with('"') && object_text.ends_with('"'));
        let matches = |map: HeaderMap| not_modified(map.get_all(header::IF_NONE_MATCH), &object);
        assert!(matches(headers(&object_text)));
        assert!(matches(headers(&format!("W/{object_text}"))));
        assert!(matches(headers(&format!("\"x\", {object_text}"))));
        assert!(matches(headers("*")));
        assert!(!matches(headers("\"x\"")));
        assert!(!matches(HeaderMap::new()));
    }

    #[test]
    fn an_empty_setting_sends_no_cache_control_and_bad_values_are_refused() {
        assert!(HttpConfig::with_id_cache_control("  ").is_ok_and(|c| c.id_cache_control.is_none()));
        assert!(HttpConfig::with_id_cache_control("no-cache").is_ok_and(|c| c.id_cache_control.is_some()));
        assert!(HttpConfig::with_id_cache_control("a\nb").is_err());
        assert_eq!(
            HttpConfig::default().id_cache_control.as_ref().and_then(|v| v.to_str().ok()),
            Some(DEFAULT_ID_CACHE_CONTROL)
        );
    }
}
