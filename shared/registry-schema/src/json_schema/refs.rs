//! `$ref` resolution for JSON Schema: only the caller's dependencies and the bundled meta-schemas of drafts
//! 4, 6 and 7, never the network or disk.

use crate::{Dependency, SchemaError, SchemaType};
use jsonschema::{Retrieve, Uri};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

/// Base URI the validator gives a document without `$id` (the `referencing` crate's default root).
pub(super) const DEFAULT_BASE: &str = "json-schema:///";

/// Serves dependency documents by the URIs a `$ref` can resolve to; refuses everything else.
///
/// Each dependency is reachable under its name as written (absolute URL, or relative name resolved
/// against the default base), and under its name resolved against the root schema's `$id`, as
/// Confluent registers references relative to that id.
pub(super) struct DependencyRetriever {
    documents: HashMap<String, Value>,
}

impl DependencyRetriever {
    /// Parses every dependency (JSON text) and indexes it by the URIs it answers to.
    pub(super) fn new(dependencies: &[Dependency], root_id: Option<&str>) -> Result<Self, SchemaError> {
        let mut documents = HashMap::new();
        for dependency in dependencies {
            let document: Value = serde_json::from_str(&dependency.schema).map_err(|e| {
                SchemaError::parse(SchemaType::Json, format!("referenced schema {}: {e}", dependency.name))
            })?;
            for uri in candidate_uris(&dependency.name, root_id) {
                documents.entry(uri).or_insert_with(|| document.clone());
            }
        }
        Ok(DependencyRetriever { documents })
    }
}

/// The URIs (fragment removed) under which `name` may be requested.
fn candidate_uris(name: &str, root_id: Option<&str>) -> Vec<String> {
    let mut uris = Vec::new();
    let mut push = |uri: String| {
        let uri = strip_fragment(&uri).to_string();
        if !uris.contains(&uri) {
            uris.push(uri);
        }
    };
    push(name.to_string());
    if let Ok(uri) = jsonschema::uri::from_str(name) {
        push(uri.as_str().to_string());
    }
    if let Some(base) = root_id.and_then(|id| Uri::parse(id).ok())
        && let Ok(uri) = jsonschema::uri::resolve_against(&base, name)
    {
        push(uri.as_str().to_string());
    }
    uris
}

fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(before, _)| before)
}

/// The error a retriever returns for a URI that is not a dependency.
#[derive(Debug)]
struct NotADependency;

impl fmt::Display for NotADependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not among the schema's references")
    }
}

impl std::error::Error for NotADependency {}

impl Retrieve for DependencyRetriever {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let uri = strip_fragment(uri.as_str());
        if let Some(document) = self.documents.get(uri) {
            return Ok(document.clone());
        }
        match bundled_meta_schema(uri) {
            Some(text) => Ok(serde_json::from_str(text)?),
            None => Err(Box::new(NotADependency).into()),
        }
    }
}

/// The meta-schema of draft 4, 6 or 7 a `$ref` names by `uri` (fragment removed; `http` or `https`), as
/// Confluent bundles them (`JsonSchema.previousDraftMetaSchemas`, commit 5d7e0dfa9f5) so such a `$ref`
/// resolves without a fetch; a dependency of the same name comes first.
pub(super) fn bundled_meta_schema(uri: &str) -> Option<&'static str> {
    let path = uri.strip_prefix("http://").or_else(|| uri.strip_prefix("https://"))?;
    match path {
        "json-schema.org/draft-04/schema" => Some(include_str!("metaschemas/draft-04.json")),
        "json-schema.org/draft-06/schema" => Some(include_str!("metaschemas/draft-06.json")),
        "json-schema.org/draft-07/schema" => Some(include_str!("metaschemas/draft-07.json")),
        _ => None,
    }
}

/// The bundled meta-schemas under their `http` URIs, for the validator: it never asks the retriever
/// for an `http://json-schema.org/draft-...` URI (it takes them for its own), yet knows only the
/// meta-schema of the document's own draft. The `https` forms reach [`DependencyRetriever`].
pub(super) fn meta_schemas() -> Option<&'static jsonschema::Registry<'static>> {
    static REGISTRY: LazyLock<Option<jsonschema::Registry<'static>>> = LazyLock::new(|| {
        let uris = ["http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-06/schema"];
        let resources = uris
            .into_iter()
            .chain(["http://json-schema.org/draft-07/schema"])
            .map(|uri| Some((uri, serde_json::from_str::<Value>(bundled_meta_schema(uri)?).ok()?)))
            .collect::<Option<Vec<_>>>()?;
        jsonschema::Registry::new().extend(resources).ok()?.prepare().ok()
    });
    REGISTRY.as_ref()
}

/// The name a user wrote for an unresolvable URI: relative names lose the default base again.
pub(super) fn display_name(uri: &str) -> String {
    uri.strip_prefix(DEFAULT_BASE).unwrap_or(uri).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_names_answer_under_default_base_and_root_id() {
        let uris = candidate_uris("address.json", Some("https://example.com/schemas/person.json"));
        assert!(uris.contains(&"address.json".to_string()));
        assert!(uris.contains(&"json-schema:///address.json".to_string()));
        assert!(uris.contains(&"https://example.com/schemas/address.json".to_string()));
    }

    #[test]
    fn bundled_meta_schemas_answer_both_schemes_and_parse() {
        for uri in ["http://json-schema.org/draft-04/schema", "https://json-schema.org/draft-07/schema"] {
            let text = bundled_meta_schema(uri).unwrap_or_default();
            assert!(serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()), "{uri}");
        }
        assert_eq!(bundled_meta_schema("https://json-schema.org/draft-05/schema"), None);
        assert_eq!(bundled_meta_schema("https://example.com/json-schema.org/draft-07/schema"), None);
    }

    #[test]
    fn display_name_strips_only_the_default_base() {
        assert_eq!(display_name("json-schema:///a.json"), "a.json");
        assert_eq!(display_name("https://x.test/a.json"), "https://x.test/a.json");
    }
}
