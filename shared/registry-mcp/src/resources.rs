//! Resources: the registry's subjects, schemas, configuration and keys as `schema://` URIs
//! (AxonOps Schema Registry's URIs), each read as one GET of the REST API.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::model::{Resource, ResourceTemplate};

const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Every resource, `(URI, name, description)`: the static ones, then the templates (whose URIs
/// have `{placeholders}`).
pub const RESOURCES: &[(&str, &str, &str)] = &[
    ("schema://subjects", "subjects", "The subjects the caller may read"),
    ("schema://contexts", "contexts", "The registry's contexts"),
    ("schema://types", "schema-types", "The schema formats the registry accepts"),
    ("schema://server/config", "server-config", "The global compatibility configuration"),
    ("schema://mode", "global-mode", "The global mode"),
    ("schema://exporters", "exporters", "The schema exporters"),
    ("schema://keks", "keks", "The key encryption keys"),
    ("schema://subjects/{subject}", "subject-detail", "A subject's latest version"),
    ("schema://subjects/{subject}/versions", "subject-versions", "A subject's version numbers"),
    ("schema://subjects/{subject}/versions/{version}", "subject-version-detail", "One version of a subject"),
    ("schema://subjects/{subject}/config", "subject-config", "A subject's compatibility configuration"),
    ("schema://subjects/{subject}/mode", "subject-mode", "A subject's mode"),
    ("schema://schemas/{id}", "schema-by-id", "A schema by its global ID"),
    ("schema://schemas/{id}/subjects", "schema-subjects", "The subjects using a schema ID"),
    ("schema://schemas/{id}/versions", "schema-versions", "The subject versions using a schema ID"),
    ("schema://exporters/{name}", "exporter-detail", "An exporter's settings"),
    ("schema://keks/{name}", "kek-detail", "A key encryption key"),
    ("schema://keks/{name}/deks", "kek-deks", "The DEK subjects of a key encryption key"),
    ("schema://contexts/{context}/subjects", "context-subjects", "The subjects of a context"),
    ("schema://contexts/{context}/subjects/{subject}", "context-subject-detail", "A subject of a context"),
    (
        "schema://contexts/{context}/subjects/{subject}/versions/{version}",
        "context-subject-version-detail",
        "One version of a subject of a context",
    ),
    ("schema://contexts/{context}/schemas/{id}", "context-schema-by-id", "A schema by ID within a context"),
];

/// Every resource is JSON.
const MIME_TYPE: &str = "application/json";

/// The entries of [`RESOURCES`] whose URI is (`template`) or is not a template.
fn entries(template: bool) -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
    RESOURCES.iter().filter(move |(uri, _, _)| uri.contains('{') == template)
}

pub fn listed() -> Vec<Resource> {
    let resource = |(uri, name, description): &(&str, &str, &str)| {
        Resource::new(*uri, *name).with_description(*description).with_mime_type(MIME_TYPE)
    };
    entries(false).map(resource).collect()
}

pub fn templates() -> Vec<ResourceTemplate> {
    let template = |(uri, name, description): &(&str, &str, &str)| {
        ResourceTemplate::new(*uri, *name).with_description(*description).with_mime_type(MIME_TYPE)
    };
    entries(true).map(template).collect()
}

/// The REST path a resource URI reads; `None` for a URI that names no resource.
pub fn path_of(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("schema://")?;
    let segments: Vec<String> =
        rest.split('/').map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned()).collect();
    if segments.iter().any(String::is_empty) {
        return None;
    }
    let (context, segments) = match segments.as_slice() {
        [first, context, tail @ ..] if first == "contexts" && !tail.is_empty() => (Some(context.clone()), tail),
        all => (None, all),
    };
    let e = |s: &String| utf8_percent_encode(s, SEGMENT).to_string();
    let path = match segments {
        [a] if a == "subjects" => "/subjects".to_string(),
        [a] if a == "contexts" && context.is_none() => "/contexts".to_string(),
        [a] if a == "types" => "/schemas/types".to_string(),
        [a, b] if a == "server" && b == "config" => "/config".to_string(),
        [a] if a == "mode" => "/mode".to_string(),
        [a] if a == "exporters" => "/exporters".to_string(),
        [a] if a == "keks" => "/dek-registry/v1/keks".to_string(),
        [a, s] if a == "subjects" => format!("/subjects/{}/versions/latest", e(s)),
        [a, s, b] if a == "subjects" && b == "versions" => format!("/subjects/{}/versions", e(s)),
        [a, s, b, v] if a == "subjects" && b == "versions" => format!("/subjects/{}/versions/{}", e(s), e(v)),
        [a, s, b] if a == "subjects" && b == "config" => format!("/config/{}", e(s)),
        [a, s, b] if a == "subjects" && b == "mode" => format!("/mode/{}", e(s)),
        [a, id] if a == "schemas" => format!("/schemas/ids/{}", e(id)),
        [a, id, b] if a == "schemas" && (b == "subjects" || b == "versions") => format!("/schemas/ids/{}/{b}", e(id)),
        [a, n] if a == "exporters" => format!("/exporters/{}", e(n)),
        [a, n] if a == "keks" => format!("/dek-registry/v1/keks/{}", e(n)),
        [a, n, b] if a == "keks" && b == "deks" => format!("/dek-registry/v1/keks/{}/deks", e(n)),
        _ => return None,
    };
    Some(match context {
        Some(context) => format!("/contexts/{}{path}", e(&context)),
        None => path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_resource_and_template_reads_a_path() {
        assert_eq!((listed().len(), templates().len()), (7, 15));
        for (template, _, _) in RESOURCES {
            let uri = template.replace("{subject}", "s").replace("{version}", "1").replace("{id}", "3");
            let uri = uri.replace("{name}", "n").replace("{context}", ".team");
            assert!(path_of(&uri).is_some(), "{uri}");
        }
    }

    #[test]
    fn uris_map_to_rest_paths() {
        let cases = [
            ("schema://subjects/orders-value", Some("/subjects/orders-value/versions/latest")),
            ("schema://subjects/a%2Fb/versions/2", Some("/subjects/a%2Fb/versions/2")),
            ("schema://schemas/7/subjects", Some("/schemas/ids/7/subjects")),
            ("schema://contexts/.team/subjects", Some("/contexts/.team/subjects")),
            ("schema://contexts/.team/schemas/7", Some("/contexts/.team/schemas/ids/7")),
            ("schema://keks/k/deks", Some("/dek-registry/v1/keks/k/deks")),
            ("schema://subjects//versions", None),
            ("schema://nothing", None),
            ("http://subjects", None),
        ];
        for (uri, path) in cases {
            assert_eq!(path_of(uri).as_deref(), path, "{uri}");
        }
    }
}
