//! The base-URL form of contexts: `/contexts/{context}/...` is the whole API with every subject in
//! the path, every `subjectPrefix` of the listings and the `subject` of the by-ID reads qualified
//! with the context, as Confluent's `ContextFilter` rewrites a request before routing. A client
//! configured with `https://registry/contexts/.team-a` works unchanged and lands in `.team-a`.

use crate::endpoint::Caller;
use crate::error::ApiError;
use axum::extract::Request;
use axum::http::{Extensions, Uri};
use axum::response::{IntoResponse, Response};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use registry_core::{Context, RegistryError};
use tower::ServiceExt;

/// What a qualifier is encoded with inside a path segment or a query value: everything but the
/// characters a context name commonly holds and that need no escaping.
const ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'.').remove(b'-').remove(b'_').remove(b'~').remove(b':');

/// Serves `request`, a `/contexts/{context}/...` request, as the qualified request through `api`.
/// The request reaches `api` with the caller the authentication layer identified and nothing else
/// from this routing (its path parameters would be taken for the qualified route's).
pub(crate) async fn forward(api: axum::Router, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let rewritten = qualify(parts.uri.path(), parts.uri.query());
    // A path that does not rewrite is answered here, before any route's guard: a caller without
    // valid credentials learns nothing of it (401, as for any other path).
    let refused = match rewritten.map(|uri| uri.and_then(|uri| uri.parse::<Uri>().ok())) {
        Ok(Some(uri)) => {
            parts.uri = uri;
            None
        }
        Ok(None) => Some(ApiError::NotFound),
        Err(error) => Some(ApiError::from(error)),
    };
    if let Some(error) = refused {
        return match parts.extensions.get::<Caller>() {
            Some(Caller::Unauthenticated { bearer }) => ApiError::Unauthorized { bearer: *bearer }.into_response(),
            _ => error.into_response(),
        };
    }
    let caller = parts.extensions.remove::<Caller>();
    parts.extensions = Extensions::new();
    if let Some(caller) = caller {
        parts.extensions.insert(caller);
    }
    match api.oneshot(Request::from_parts(parts, body)).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The path and query `path`/`query` (a `/contexts/{context}/rest` request) mean: `rest` with its
/// subjects qualified; `None` when `path` is not of that form; 400 for an invalid context name.
pub(crate) fn qualify(path: &str, query: Option<&str>) -> Result<Option<String>, RegistryError> {
    let Some((raw_context, rest)) = path.strip_prefix("/contexts/").and_then(|tail| tail.split_once('/')) else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(None);
    }
    let context = Context::parse(&decode(raw_context))?;
    let prefix = context.subject_prefix();
    let encoded = utf8_percent_encode(&prefix, ESCAPED).to_string();
    let segments: Vec<&str> = rest.split('/').collect();
    let mut out: Vec<String> = Vec::with_capacity(segments.len() + 1);
    let root_setting = matches!(segments.first(), Some(&"config") | Some(&"mode"));
    let mut subject_next = false;
    // `POST /subjects/match` and `/subjects/validate` are analysis endpoints, not subjects.
    let catalog_subjects = matches!(segments.as_slice(), ["subjects", "match" | "validate"]);
    for (index, segment) in segments.iter().enumerate() {
        let names_subject = (subject_next && !catalog_subjects) || (root_setting && index == 1);
        subject_next = *segment == "subjects";
        out.push(if names_subject && !is_qualified(segment) {
            format!("{encoded}{segment}")
        } else {
            segment.to_string()
        });
    }
    if root_setting && segments.len() == 1 && !prefix.is_empty() {
        out.push(encoded.clone());
    }
    let path = out.join("/");
    let query = qualify_query(&path, query.unwrap_or(""), &encoded);
    Ok(Some(if query.is_empty() { format!("/{path}") } else { format!("/{path}?{query}") }))
}

/// The query with the context applied: the `subject` of `/schemas/ids/...` and the
/// `subjectPrefix` of `/schemas` and `/subjects` get the qualifier unless they carry one; an
/// absent one is added as the bare qualifier (the whole context).
fn qualify_query(path: &str, query: &str, encoded: &str) -> String {
    let key = if path.starts_with("schemas/ids") {
        "subject"
    } else if path == "schemas" || path == "subjects" {
        "subjectPrefix"
    } else if CATALOG_SCANS.contains(&path) || path.starts_with("statistics/fields/") {
        // The analysis endpoints that walk subjects, or take them in the body, get the context
        // whole (`routes::catalog::CatalogContext`).
        "context"
    } else {
        return query.to_string();
    };
    let mut found = false;
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if name == key => {
                found = true;
                if is_qualified(value) { pair.to_string() } else { format!("{name}={encoded}{value}") }
            }
            None if pair == key => {
                found = true;
                format!("{key}={encoded}")
            }
            _ => pair.to_string(),
        })
        .collect();
    if !found && !encoded.is_empty() {
        pairs.push(format!("{key}={encoded}"));
    }
    pairs.join("&")
}

/// The analysis endpoints (AxonOps's) whose subjects are not in the path.
const CATALOG_SCANS: [&str; 10] = [
    "schemas/search",
    "schemas/search/field",
    "schemas/search/type",
    "schemas/similar",
    "schemas/quality",
    "compatibility/check",
    "subjects/match",
    "subjects/validate",
    "statistics",
    "statistics/patterns",
];

/// Whether an encoded segment or value already names a context (`:.ctx:...`) or every context (`:*:`).
fn is_qualified(encoded: &str) -> bool {
    let text = decode(encoded);
    text.starts_with(":.") || text.starts_with(":*:")
}

fn decode(encoded: &str) -> String {
    percent_decode_str(encoded).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(path: &str, query: Option<&str>) -> Option<String> {
        qualify(path, query).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn subjects_in_the_path_are_qualified() {
        let cases = [
            ("/contexts/.team/subjects/orders/versions", "/subjects/:.team:orders/versions"),
            ("/contexts/team/subjects/orders/versions/1", "/subjects/:.team:orders/versions/1"),
            ("/contexts/:.team:/subjects/orders", "/subjects/:.team:orders"),
            ("/contexts/.team/subjects/:.other:orders", "/subjects/:.other:orders"),
            ("/contexts/.team/subjects/%3A.other%3Aorders", "/subjects/%3A.other%3Aorders"),
            (
                "/contexts/.team/compatibility/subjects/orders/versions/latest",
                "/compatibility/subjects/:.team:orders/versions/latest",
            ),
            ("/contexts/.team/config/orders", "/config/:.team:orders"),
            ("/contexts/.team/mode/orders", "/mode/:.team:orders"),
            ("/contexts/.team/config", "/config/:.team:"),
            ("/contexts/.team/schemas/types", "/schemas/types"),
            ("/contexts/.:/subjects/orders", "/subjects/orders"),
            ("/contexts/./config", "/config"),
        ];
        for (path, expected) in cases {
            assert_eq!(rewritten(path, None).as_deref(), Some(expected), "{path}");
        }
    }

    #[test]
    fn by_id_reads_and_listings_get_the_context_in_their_query() {
        let cases = [
            ("/contexts/.team/schemas/ids/3", None, "/schemas/ids/3?subject=:.team:"),
            ("/contexts/.team/schemas/ids/3", Some("subject=orders"), "/schemas/ids/3?subject=:.team:orders"),
            ("/contexts/.team/schemas/ids/3/schema", Some("subject=:.x:o"), "/schemas/ids/3/schema?subject=:.x:o"),
            ("/contexts/.team/subjects", Some("deleted=true"), "/subjects?deleted=true&subjectPrefix=:.team:"),
            ("/contexts/.team/subjects", Some("subjectPrefix=ord"), "/subjects?subjectPrefix=:.team:ord"),
            ("/contexts/.team/schemas", Some("subjectPrefix=:*:"), "/schemas?subjectPrefix=:*:"),
            ("/contexts/.:/schemas/ids/3", Some("fetchMaxId=true"), "/schemas/ids/3?fetchMaxId=true"),
            ("/contexts/.team/schemas/search/field", None, "/schemas/search/field?context=:.team:"),
            ("/contexts/.team/subjects/match", None, "/subjects/match?context=:.team:"),
            ("/contexts/.team/subjects/validate", None, "/subjects/validate?context=:.team:"),
            ("/contexts/.team/statistics/fields/id", None, "/statistics/fields/id?context=:.team:"),
            ("/contexts/.team/statistics", Some("max_subjects=10"), "/statistics?max_subjects=10&context=:.team:"),
            ("/contexts/.team/subjects/match/versions", None, "/subjects/:.team:match/versions"),
            ("/contexts/.:/compatibility/check", None, "/compatibility/check"),
        ];
        for (path, query, expected) in cases {
            assert_eq!(rewritten(path, query).as_deref(), Some(expected), "{path}?{query:?}");
        }
    }

    #[test]
    fn other_paths_are_not_rewritten_and_bad_contexts_are_400() {
        assert_eq!(rewritten("/contexts", None), None);
        assert_eq!(rewritten("/contexts/.team", None), None);
        assert_eq!(rewritten("/contexts/.team/", None), None);
        assert_eq!(rewritten("/subjects/orders", None), None);
        let refused = qualify("/contexts/.a%3Ab/subjects/x", None);
        assert!(matches!(refused, Err(RegistryError::InvalidContext { .. })), "{refused:?}");
    }

    #[test]
    fn a_context_with_escaped_characters_stays_escaped() {
        let got = rewritten("/contexts/.a%20b/subjects/o", None);
        assert_eq!(got.as_deref(), Some("/subjects/:.a%20b:o"), "the qualifier is escaped as a path segment");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod served {
    use axum::body::Body;
    use axum::http::Request;
    use registry_core::{MemoryStore, Registry, RegistrySettings};
    use std::sync::Arc;
    use tower::ServiceExt;

    /// Routed through the whole app: the qualified route answers (its 40401 names the qualified subject).
    #[tokio::test]
    async fn a_base_url_request_reaches_the_qualified_route() {
        let registry = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
        let app = crate::app(registry, crate::AppOptions::default());
        let request = Request::get("/contexts/.team/subjects/orders/versions").body(Body::empty()).unwrap();
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        assert_eq!(status, 404, "{body:?}");
        assert!(String::from_utf8_lossy(&body).contains("Subject ':.team:orders' not found."), "{body:?}");
    }
}
