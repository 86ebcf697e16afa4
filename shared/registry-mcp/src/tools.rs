//! The tool table: each tool is one REST request of the registry's API (AxonOps Schema Registry's
//! tool names and argument names, `docs/mcp-reference.md`), and how a call's arguments become that
//! request's path, query and body.

use axum::http::Method;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Characters escaped in a path segment or query value (everything but unreserved ones).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Where a tool argument goes in its REST request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Replaces `{name}` in the path.
    Path,
    /// A query parameter of this name.
    Query(&'static str),
    /// A field of the JSON body of this name.
    Body(&'static str),
    /// The whole JSON body (an object argument).
    WholeBody,
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    pub name: &'static str,
    /// JSON Schema type: `string`, `integer`, `number`, `boolean`, `array`, `object`.
    pub kind: &'static str,
    pub required: bool,
    pub place: Place,
    pub description: &'static str,
}

const fn arg(name: &'static str, kind: &'static str, place: Place, description: &'static str) -> Arg {
    Arg { name, kind, required: false, place, description }
}

const fn required(name: &'static str, kind: &'static str, place: Place, description: &'static str) -> Arg {
    Arg { name, kind, required: true, place, description }
}

/// What a tool does to the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Reads,
    /// Writes: runs only with `confirm: true`.
    Writes,
    /// Deletes: runs only with `confirm: true`.
    Deletes,
}

/// One tool: the REST request it sends.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub method: Method,
    /// The path with `{arg}` placeholders; `alt_path` when an optional path argument is absent.
    pub path: &'static str,
    pub alt_path: Option<&'static str>,
    pub args: &'static [Arg],
    pub effect: Effect,
}

impl Spec {
    /// Whether the tool takes the registry context as its `context` argument (every tool but
    /// those whose own `context` argument is a field of the body, as an exporter's).
    fn takes_context(&self) -> bool {
        !self.args.iter().any(|a| a.name == "context")
    }
}

const SUBJECT: Arg = required("subject", "string", Place::Path, "the subject name");
const OPTIONAL_SUBJECT: Arg = arg("subject", "string", Place::Path, "the subject; absent: the global one");
const VERSION: Arg = required("version", "string", Place::Path, "a version number, or latest");
const ID: Arg = required("id", "integer", Place::Path, "the schema ID");
const SCHEMA: Arg = required("schema", "string", Place::Body("schema"), "the schema text");
const SCHEMA_TYPE: Arg = arg("schema_type", "string", Place::Body("schemaType"), "AVRO (default), JSON or PROTOBUF");
const OPTIONAL_SCHEMA: Arg = arg("schema", "string", Place::Body("schema"), "the schema text");
const BODY_SUBJECT: Arg = arg("subject", "string", Place::Body("subject"), "a subject whose latest version to use");
const REFERENCES: Arg = arg("references", "array", Place::Body("references"), "references: [{name, subject, version}]");
const DELETED: Arg = arg("deleted", "boolean", Place::Query("deleted"), "soft-deleted ones too");
const PERMANENT: Arg = arg("permanent", "boolean", Place::Query("permanent"), "a hard delete (after a soft one)");
const NORMALIZE: Arg = arg("normalize", "boolean", Place::Query("normalize"), "normalize the schema first");
const NAME: Arg = required("name", "string", Place::Path, "the exporter's name");
const KEK: Arg = required("name", "string", Place::Path, "the KEK's name");
const KEK_NAME: Arg = required("kek_name", "string", Place::Path, "the KEK's name");
const DEK_SUBJECT: Arg = required("subject", "string", Place::Path, "the DEK's subject");
const ALGORITHM: Arg =
    arg("algorithm", "string", Place::Query("algorithm"), "AES128_GCM, AES256_GCM (default) or AES256_SIV");
const MAX_SUBJECTS: Arg =
    arg("max_subjects", "integer", Place::Body("max_subjects"), "subjects one call scans (default 1000)");
const CURSOR: Arg = arg("cursor", "string", Place::Body("cursor"), "continue after this subject (next_cursor)");
const LIMIT: Arg = arg("limit", "integer", Place::Body("limit"), "most results");
const QUERY_MAX_SUBJECTS: Arg =
    arg("max_subjects", "integer", Place::Query("max_subjects"), "subjects one call scans (default 1000)");
const QUERY_CURSOR: Arg = arg("cursor", "string", Place::Query("cursor"), "continue after this subject");
/// An exporter's own `context` (a body field, not the registry context).
const EXPORTER_FIELDS: [Arg; 5] = [
    arg("context_type", "string", Place::Body("contextType"), "AUTO, CUSTOM or NONE"),
    arg("context", "string", Place::Body("context"), "the destination context (CUSTOM)"),
    arg("subjects", "array", Place::Body("subjects"), "subjects or patterns to export"),
    arg("subject_rename_format", "string", Place::Body("subjectRenameFormat"), "e.g. dc1.${subject}"),
    arg("config", "object", Place::Body("config"), "the destination's client configuration"),
];

const fn read(name: &'static str, description: &'static str, path: &'static str, args: &'static [Arg]) -> Spec {
    Spec { name, description, method: Method::GET, path, alt_path: None, args, effect: Effect::Reads }
}

const fn ask(name: &'static str, description: &'static str, path: &'static str, args: &'static [Arg]) -> Spec {
    Spec { name, description, method: Method::POST, path, alt_path: None, args, effect: Effect::Reads }
}

const fn change(
    name: &'static str,
    description: &'static str,
    method: Method,
    path: &'static str,
    args: &'static [Arg],
) -> Spec {
    let effect = if matches!(method, Method::DELETE) { Effect::Deletes } else { Effect::Writes };
    Spec { name, description, method, path, alt_path: None, args, effect }
}

/// A tool on a subject's setting, or the global one when `subject` is absent (`global_path`).
const fn setting(
    name: &'static str,
    description: &'static str,
    method: Method,
    path: &'static str,
    global_path: &'static str,
    args: &'static [Arg],
) -> Spec {
    let effect = match method {
        Method::GET => Effect::Reads,
        Method::DELETE => Effect::Deletes,
        _ => Effect::Writes,
    };
    Spec { name, description, method, path, alt_path: Some(global_path), args, effect }
}

/// Every tool, in the order `tools/list` gives them.
pub const TOOLS: &[Spec] = &[
    // Schemas and subjects.
    read(
        "list_subjects",
        "List the subjects the caller may read",
        "/subjects",
        &[arg("prefix", "string", Place::Query("subjectPrefix"), "only subjects starting with it"), DELETED],
    ),
    read(
        "list_schemas",
        "List the latest (or every) schema of the subjects the caller may read",
        "/schemas",
        &[
            arg("prefix", "string", Place::Query("subjectPrefix"), "only subjects starting with it"),
            arg("latest_only", "boolean", Place::Query("latestOnly"), "only each subject's latest version"),
            DELETED,
        ],
    ),
    read("list_versions", "List a subject's version numbers", "/subjects/{subject}/versions", &[SUBJECT, DELETED]),
    read(
        "get_latest_schema",
        "The latest version of a subject's schema",
        "/subjects/{subject}/versions/latest",
        &[SUBJECT],
    ),
    read(
        "get_schema_version",
        "One version of a subject's schema",
        "/subjects/{subject}/versions/{version}",
        &[SUBJECT, VERSION, DELETED],
    ),
    read(
        "get_raw_schema_version",
        "The schema text of one version of a subject",
        "/subjects/{subject}/versions/{version}/schema",
        &[SUBJECT, VERSION],
    ),
    read("get_schema_by_id", "A schema by its global ID", "/schemas/ids/{id}", &[ID]),
    read("get_raw_schema_by_id", "The schema text of a global ID", "/schemas/ids/{id}/schema", &[ID]),
    read("get_subjects_for_schema", "The subjects using a schema ID", "/schemas/ids/{id}/subjects", &[ID, DELETED]),
    read(
        "get_versions_for_schema",
        "The subject versions using a schema ID",
        "/schemas/ids/{id}/versions",
        &[ID, DELETED],
    ),
    read(
        "get_referenced_by",
        "The IDs of schemas referencing a subject version",
        "/subjects/{subject}/versions/{version}/referencedby",
        &[SUBJECT, VERSION],
    ),
    read(
        "get_subject_metadata",
        "The metadata of a subject's latest version",
        "/subjects/{subject}/metadata",
        &[SUBJECT],
    ),
    read("get_schema_types", "The schema formats the registry accepts", "/schemas/types", &[]),
    read("list_contexts", "The registry's contexts", "/contexts", &[]),
    read("get_cluster_id", "The registry's cluster ID", "/v1/metadata/id", &[]),
    read("get_server_version", "The registry's version", "/v1/metadata/version", &[]),
    read("health_check", "Whether the registry answers", "/", &[]),
    ask(
        "lookup_schema",
        "Find a schema under a subject: its version and ID",
        "/subjects/{subject}",
        &[SUBJECT, SCHEMA, SCHEMA_TYPE, REFERENCES, NORMALIZE, DELETED],
    ),
    Spec {
        name: "check_compatibility",
        description: "Check a schema against a subject's version (latest by default), with the reasons",
        method: Method::POST,
        path: "/compatibility/subjects/{subject}/versions/{version}?verbose=true",
        alt_path: Some("/compatibility/subjects/{subject}/versions?verbose=true"),
        args: &[
            SUBJECT,
            arg("version", "string", Place::Path, "a version number or latest; absent: every version"),
            SCHEMA,
            SCHEMA_TYPE,
            REFERENCES,
        ],
        effect: Effect::Reads,
    },
    change(
        "register_schema",
        "Register a schema under a subject (needs confirm: true)",
        Method::POST,
        "/subjects/{subject}/versions",
        &[
            SUBJECT,
            SCHEMA,
            SCHEMA_TYPE,
            REFERENCES,
            NORMALIZE,
            arg("metadata", "object", Place::Body("metadata"), "data contract metadata"),
            arg("rule_set", "object", Place::Body("ruleSet"), "data contract rules"),
        ],
    ),
    change(
        "delete_subject",
        "Delete a subject: soft, or hard with permanent (needs confirm: true)",
        Method::DELETE,
        "/subjects/{subject}",
        &[SUBJECT, PERMANENT],
    ),
    change(
        "delete_version",
        "Delete one version of a subject: soft, or hard with permanent (needs confirm: true)",
        Method::DELETE,
        "/subjects/{subject}/versions/{version}",
        &[SUBJECT, VERSION, PERMANENT],
    ),
    // Configuration and mode.
    setting(
        "get_config",
        "A subject's compatibility configuration, or the global one",
        Method::GET,
        "/config/{subject}",
        "/config",
        &[OPTIONAL_SUBJECT],
    ),
    setting(
        "set_config",
        "Set a subject's compatibility level, or the global one (needs confirm: true)",
        Method::PUT,
        "/config/{subject}",
        "/config",
        &[
            OPTIONAL_SUBJECT,
            required("compatibility", "string", Place::Body("compatibility"), "BACKWARD, FORWARD, FULL, NONE, ..."),
        ],
    ),
    setting(
        "delete_config",
        "Remove a subject's compatibility configuration, or the global one (needs confirm: true)",
        Method::DELETE,
        "/config/{subject}",
        "/config",
        &[OPTIONAL_SUBJECT],
    ),
    setting(
        "get_mode",
        "A subject's mode, or the global one",
        Method::GET,
        "/mode/{subject}",
        "/mode",
        &[OPTIONAL_SUBJECT],
    ),
    setting(
        "set_mode",
        "Set a subject's mode, or the global one (needs confirm: true)",
        Method::PUT,
        "/mode/{subject}",
        "/mode",
        &[OPTIONAL_SUBJECT, required("mode", "string", Place::Body("mode"), "READWRITE, READONLY or IMPORT")],
    ),
    setting(
        "delete_mode",
        "Remove a subject's mode, or the global one (needs confirm: true)",
        Method::DELETE,
        "/mode/{subject}",
        "/mode",
        &[OPTIONAL_SUBJECT],
    ),
    // Analysis.
    ask(
        "search_schemas",
        "Search the latest schemas' text (substring, or regex)",
        "/schemas/search",
        &[
            required("pattern", "string", Place::Body("query"), "the text or regex to find"),
            arg("regex", "boolean", Place::Body("regex"), "pattern is a regular expression"),
            LIMIT,
            MAX_SUBJECTS,
            CURSOR,
        ],
    ),
    ask(
        "find_schemas_by_field",
        "Find the latest schemas with a field of this name (exact in any naming convention, fuzzy or regex)",
        "/schemas/search/field",
        &[
            required("field", "string", Place::Body("field"), "the field name"),
            arg("match_type", "string", Place::Body("mode"), "exact (default), fuzzy or regex"),
            arg("threshold", "number", Place::Body("threshold"), "fuzzy similarity (0-1)"),
            LIMIT,
            MAX_SUBJECTS,
            CURSOR,
        ],
    ),
    ask(
        "find_schemas_by_type",
        "Find the latest schemas with fields of a type",
        "/schemas/search/type",
        &[
            required("type_pattern", "string", Place::Body("type_pattern"), "a type name, e.g. decimal"),
            arg("regex", "boolean", Place::Body("regex"), "type_pattern is a regular expression"),
            LIMIT,
            MAX_SUBJECTS,
            CURSOR,
        ],
    ),
    ask(
        "find_similar_schemas",
        "Subjects whose latest fields overlap a subject's (Jaccard similarity)",
        "/schemas/similar",
        &[
            required("subject", "string", Place::Body("subject"), "the subject to compare with"),
            arg("threshold", "number", Place::Body("threshold"), "least similarity (default 0.3)"),
            LIMIT,
            MAX_SUBJECTS,
            CURSOR,
        ],
    ),
    ask(
        "validate_schema",
        "Whether a schema parses, with its fingerprint",
        "/schemas/validate",
        &[SCHEMA, SCHEMA_TYPE, REFERENCES],
    ),
    ask(
        "normalize_schema",
        "A schema's normal form and fingerprint",
        "/schemas/normalize",
        &[SCHEMA, SCHEMA_TYPE, REFERENCES],
    ),
    ask(
        "score_schema_quality",
        "Quality score (naming, documentation, types, evolution)",
        "/schemas/quality",
        &[OPTIONAL_SCHEMA, SCHEMA_TYPE, BODY_SUBJECT],
    ),
    ask(
        "get_schema_complexity",
        "Field count, depth and grade of a schema",
        "/schemas/complexity",
        &[OPTIONAL_SCHEMA, SCHEMA_TYPE, BODY_SUBJECT],
    ),
    ask(
        "validate_subject_name",
        "Whether a subject name follows a naming strategy",
        "/subjects/validate",
        &[
            required("subject", "string", Place::Body("subject"), "the subject name"),
            arg(
                "strategy",
                "string",
                Place::Body("strategy"),
                "topic_name (default), record_name or topic_record_name",
            ),
        ],
    ),
    ask(
        "match_subjects",
        "Subjects whose names match a pattern",
        "/subjects/match",
        &[
            required("pattern", "string", Place::Body("pattern"), "the pattern"),
            arg("mode", "string", Place::Body("mode"), "regex (default), glob or fuzzy"),
            MAX_SUBJECTS,
            CURSOR,
        ],
    ),
    read(
        "get_schema_history",
        "Every version of a subject, with its schema",
        "/subjects/{subject}/history",
        &[SUBJECT],
    ),
    read(
        "get_dependency_graph",
        "What a subject version references and what references it",
        "/subjects/{subject}/versions/{version}/dependencies",
        &[SUBJECT, VERSION],
    ),
    ask(
        "diff_schemas",
        "Fields added, removed and changed between two versions",
        "/subjects/{subject}/diff",
        &[
            SUBJECT,
            arg("version_from", "integer", Place::Body("version1"), "the older version (default 1)"),
            arg("version_to", "integer", Place::Body("version2"), "the newer version (default latest)"),
        ],
    ),
    ask(
        "suggest_schema_evolution",
        "Advice on proposed changes under the subject's compatibility level",
        "/subjects/{subject}/evolve",
        &[SUBJECT, arg("changes", "array", Place::Body("changes"), "[{action: add|remove|modify, field, type}]")],
    ),
    ask(
        "plan_migration_path",
        "The steps from a subject's latest schema to a target",
        "/subjects/{subject}/migrate",
        &[
            SUBJECT,
            required("target_schema", "string", Place::Body("target_schema"), "the schema to reach"),
            arg("schema_type", "string", Place::Body("schema_type"), "the target's format (default the subject's)"),
        ],
    ),
    read("export_subject", "Every version of a subject in a portable form", "/subjects/{subject}/export", &[SUBJECT]),
    read(
        "export_schema",
        "One version of a subject in a portable form",
        "/subjects/{subject}/versions/{version}/export",
        &[SUBJECT, VERSION],
    ),
    ask(
        "check_compatibility_multi",
        "Check a schema against several subjects at once",
        "/compatibility/check",
        &[
            SCHEMA,
            SCHEMA_TYPE,
            REFERENCES,
            required("subjects", "array", Place::Body("subjects"), "the subjects to check against"),
        ],
    ),
    read(
        "get_registry_statistics",
        "Subjects, versions and formats of the latest versions",
        "/statistics",
        &[QUERY_MAX_SUBJECTS, QUERY_CURSOR],
    ),
    read(
        "check_field_consistency",
        "Whether a field has one type across the latest schemas",
        "/statistics/fields/{field}",
        &[required("field", "string", Place::Path, "the field name"), QUERY_MAX_SUBJECTS, QUERY_CURSOR],
    ),
    read(
        "detect_schema_patterns",
        "Field names shared by several schemas",
        "/statistics/patterns",
        &[QUERY_MAX_SUBJECTS, QUERY_CURSOR],
    ),
    // Schema linking.
    read("list_exporters", "The schema exporters", "/exporters", &[]),
    read("get_exporter", "An exporter's settings", "/exporters/{name}", &[NAME]),
    read("get_exporter_config", "An exporter's destination configuration", "/exporters/{name}/config", &[NAME]),
    read("get_exporter_status", "An exporter's state, offset and last error", "/exporters/{name}/status", &[NAME]),
    change(
        "create_exporter",
        "Create a schema exporter (needs confirm: true)",
        Method::POST,
        "/exporters",
        &[
            required("name", "string", Place::Body("name"), "the exporter's name"),
            EXPORTER_FIELDS[0],
            EXPORTER_FIELDS[1],
            EXPORTER_FIELDS[2],
            EXPORTER_FIELDS[3],
            EXPORTER_FIELDS[4],
        ],
    ),
    change(
        "update_exporter",
        "Change an exporter (needs confirm: true)",
        Method::PUT,
        "/exporters/{name}",
        &[NAME, EXPORTER_FIELDS[0], EXPORTER_FIELDS[1], EXPORTER_FIELDS[2], EXPORTER_FIELDS[3], EXPORTER_FIELDS[4]],
    ),
    change(
        "update_exporter_config",
        "Change an exporter's destination configuration (needs confirm: true)",
        Method::PUT,
        "/exporters/{name}/config",
        &[NAME, required("config", "object", Place::WholeBody, "the configuration")],
    ),
    change(
        "pause_exporter",
        "Pause an exporter (needs confirm: true)",
        Method::PUT,
        "/exporters/{name}/pause",
        &[NAME],
    ),
    change(
        "resume_exporter",
        "Resume an exporter (needs confirm: true)",
        Method::PUT,
        "/exporters/{name}/resume",
        &[NAME],
    ),
    change(
        "reset_exporter",
        "Export again from the start (needs confirm: true)",
        Method::PUT,
        "/exporters/{name}/reset",
        &[NAME],
    ),
    change("delete_exporter", "Delete an exporter (needs confirm: true)", Method::DELETE, "/exporters/{name}", &[NAME]),
    // Client-side field encryption.
    read("list_keks", "The key encryption keys", "/dek-registry/v1/keks", &[DELETED]),
    read("get_kek", "A key encryption key", "/dek-registry/v1/keks/{name}", &[KEK, DELETED]),
    change(
        "create_kek",
        "Create a key encryption key (needs confirm: true)",
        Method::POST,
        "/dek-registry/v1/keks",
        &[
            required("name", "string", Place::Body("name"), "the KEK's name"),
            required("kms_type", "string", Place::Body("kmsType"), "aws-kms, azure-kms, gcp-kms, ..."),
            required("kms_key_id", "string", Place::Body("kmsKeyId"), "the KMS key"),
            arg("kms_props", "object", Place::Body("kmsProps"), "KMS properties"),
            arg("doc", "string", Place::Body("doc"), "a description"),
            arg("shared", "boolean", Place::Body("shared"), "the registry may use the KMS key"),
        ],
    ),
    change(
        "update_kek",
        "Change a key encryption key's properties (needs confirm: true)",
        Method::PUT,
        "/dek-registry/v1/keks/{name}",
        &[
            KEK,
            arg("kms_props", "object", Place::Body("kmsProps"), "KMS properties"),
            arg("doc", "string", Place::Body("doc"), "a description"),
            arg("shared", "boolean", Place::Body("shared"), "the registry may use the KMS key"),
        ],
    ),
    change(
        "delete_kek",
        "Delete a key encryption key: soft, or hard with permanent (needs confirm: true)",
        Method::DELETE,
        "/dek-registry/v1/keks/{name}",
        &[KEK, PERMANENT],
    ),
    change(
        "undelete_kek",
        "Restore a soft-deleted key encryption key (needs confirm: true)",
        Method::POST,
        "/dek-registry/v1/keks/{name}/undelete",
        &[KEK],
    ),
    read("list_deks", "The DEK subjects of a KEK", "/dek-registry/v1/keks/{kek_name}/deks", &[KEK_NAME, DELETED]),
    read(
        "get_dek",
        "A data encryption key (its latest version)",
        "/dek-registry/v1/keks/{kek_name}/deks/{subject}",
        &[KEK_NAME, DEK_SUBJECT, ALGORITHM, DELETED],
    ),
    read(
        "list_dek_versions",
        "The versions of a data encryption key",
        "/dek-registry/v1/keks/{kek_name}/deks/{subject}/versions",
        &[KEK_NAME, DEK_SUBJECT, ALGORITHM, DELETED],
    ),
    change(
        "create_dek",
        "Create a data encryption key under a KEK (needs confirm: true)",
        Method::POST,
        "/dek-registry/v1/keks/{kek_name}/deks/{subject}",
        &[
            KEK_NAME,
            DEK_SUBJECT,
            arg("version", "integer", Place::Body("version"), "the version (default 1)"),
            arg("algorithm", "string", Place::Body("algorithm"), "AES128_GCM, AES256_GCM (default) or AES256_SIV"),
            arg("encrypted_key_material", "string", Place::Body("encryptedKeyMaterial"), "for a KEK not shared"),
        ],
    ),
    change(
        "delete_dek",
        "Delete a data encryption key: soft, or hard with permanent (needs confirm: true)",
        Method::DELETE,
        "/dek-registry/v1/keks/{kek_name}/deks/{subject}",
        &[KEK_NAME, DEK_SUBJECT, ALGORITHM, PERMANENT],
    ),
    change(
        "undelete_dek",
        "Restore a soft-deleted data encryption key (needs confirm: true)",
        Method::POST,
        "/dek-registry/v1/keks/{kek_name}/deks/{subject}/undelete",
        &[KEK_NAME, DEK_SUBJECT, ALGORITHM],
    ),
];

/// `import_schemas`: one registration per schema with its ID and version kept (the registry or the
/// subject must be in IMPORT mode), the only tool that sends more than one request.
pub const IMPORT: Spec = Spec {
    name: "import_schemas",
    description: "Import schemas keeping their IDs and versions (IMPORT mode first; needs confirm: true)",
    method: Method::POST,
    path: "/subjects/{subject}/versions",
    alt_path: None,
    args: &[required(
        "schemas",
        "array",
        Place::WholeBody,
        "[{subject, version, id, schema, schema_type, references}]",
    )],
    effect: Effect::Writes,
};

/// A tool call turned into its REST request.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
}

/// The REST request of `spec` with `arguments`; an error text when an argument is missing or of
/// the wrong kind.
pub fn plan(spec: &Spec, arguments: &JsonObject) -> Result<Planned, String> {
    let mut path_args: Vec<(&str, String)> = Vec::new();
    let mut query: Vec<(&str, String)> = Vec::new();
    let mut body = serde_json::Map::new();
    let mut whole_body = None;
    for arg in spec.args {
        let value = match arguments.get(arg.name) {
            None | Some(Value::Null) if arg.required => return Err(format!("missing argument {}", arg.name)),
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        let fits = match arg.kind {
            "string" => value.is_string() || value.is_number(),
            "integer" => value.is_i64() || value.as_str().is_some_and(|s| s.parse::<i64>().is_ok()),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            _ => value.is_object(),
        };
        if !fits {
            return Err(format!("argument {} must be a {}", arg.name, arg.kind));
        }
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        match arg.place {
            Place::Path => path_args.push((arg.name, text)),
            Place::Query(name) => query.push((name, text)),
            Place::Body(field) => {
                let value = match (arg.kind, value) {
                    ("integer", Value::String(text)) => text.parse::<i64>().map(Value::from).unwrap_or(Value::Null),
                    (_, value) => value.clone(),
                };
                body.insert(field.to_string(), value);
            }
            Place::WholeBody => whole_body = Some(value.clone()),
        }
    }
    let missing_path_arg =
        spec.args.iter().any(|a| a.place == Place::Path && !path_args.iter().any(|(name, _)| *name == a.name));
    let template = match spec.alt_path {
        Some(alt) if missing_path_arg => alt,
        _ => spec.path,
    };
    let mut path = template.to_string();
    for (name, value) in &path_args {
        path = path.replace(&format!("{{{name}}}"), &utf8_percent_encode(value, SEGMENT).to_string());
    }
    for (name, value) in &query {
        path.push(if path.contains('?') { '&' } else { '?' });
        path.push_str(name);
        path.push('=');
        path.push_str(&utf8_percent_encode(value, SEGMENT).to_string());
    }
    if spec.takes_context() {
        match arguments.get("context") {
            None | Some(Value::Null) => {}
            Some(Value::String(context)) if !context.is_empty() => {
                path = format!("/contexts/{}{path}", utf8_percent_encode(context, SEGMENT));
            }
            Some(Value::String(_)) => {}
            Some(_) => return Err("argument context must be a string".into()),
        }
    }
    let body = match whole_body {
        Some(value) => Some(value),
        None => (spec.method == Method::POST || spec.method == Method::PUT).then_some(Value::Object(body)),
    };
    Ok(Planned { method: spec.method.clone(), path, body })
}

/// The requests of an `import_schemas` call: one registration per schema, with its ID and version.
pub fn plan_import(arguments: &JsonObject) -> Result<Vec<Planned>, String> {
    let Some(Value::Array(schemas)) = arguments.get("schemas") else {
        return Err("argument schemas must be an array".into());
    };
    let register = TOOLS.iter().find(|spec| spec.name == "register_schema").ok_or("register_schema missing")?;
    let mut planned = Vec::with_capacity(schemas.len());
    for (index, schema) in schemas.iter().enumerate() {
        let Value::Object(fields) = schema else { return Err(format!("schemas[{index}] must be an object")) };
        // Each schema's own fields are register_schema's arguments (its context included).
        let mut request = plan(register, fields).map_err(|reason| format!("schemas[{index}]: {reason}"))?;
        if let Some(Value::Object(body)) = request.body.as_mut() {
            for (name, field) in [("id", "id"), ("version", "version")] {
                match fields.get(name) {
                    Some(value) if value.is_i64() => {
                        body.insert(field.into(), value.clone());
                    }
                    _ => return Err(format!("schemas[{index}]: {name} must be an integer")),
                }
            }
        }
        planned.push(request);
    }
    Ok(planned)
}

fn input_schema(spec: &Spec) -> JsonObject {
    let mut properties = serde_json::Map::new();
    for arg in spec.args {
        properties.insert(arg.name.to_string(), json!({"type": arg.kind, "description": arg.description}));
    }
    if spec.takes_context() {
        properties.insert(
            "context".to_string(),
            json!({"type": "string", "description": "the registry context (e.g. .team); absent: the default"}),
        );
    }
    if spec.effect != Effect::Reads {
        properties.insert(
            "confirm".to_string(),
            json!({"type": "boolean", "description": "true to run it; otherwise the request is only shown"}),
        );
        properties.insert("dry_run".to_string(), json!({"type": "boolean", "description": "only show the request"}));
    }
    let required: Vec<&str> = spec.args.iter().filter(|a| a.required).map(|a| a.name).collect();
    let mut schema = serde_json::Map::new();
    schema.insert("type".to_string(), json!("object"));
    schema.insert("properties".to_string(), Value::Object(properties));
    schema.insert("required".to_string(), json!(required));
    schema
}

/// The MCP description of `spec`.
pub fn tool(spec: &Spec) -> Tool {
    let annotations = match spec.effect {
        Effect::Reads => ToolAnnotations::new().read_only(true),
        Effect::Writes => ToolAnnotations::new().read_only(false).destructive(false),
        Effect::Deletes => ToolAnnotations::new().read_only(false).destructive(true),
    };
    Tool::new(spec.name, spec.description, input_schema(spec)).annotate(annotations)
}

/// Every tool: the table's and `import_schemas`.
pub fn all() -> impl Iterator<Item = &'static Spec> {
    TOOLS.iter().chain(std::iter::once(&IMPORT))
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Spec> {
    all().find(|spec| spec.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    fn planned(name: &str, value: Value) -> Result<Planned, String> {
        plan(find(name).ok_or("no such tool")?, &arguments(value))
    }

    #[test]
    fn names_are_unique_and_axonops_s() {
        let mut names: Vec<&str> = all().map(|spec| spec.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a tool name is listed twice");
        for name in
            ["list_subjects", "get_latest_schema", "register_schema", "check_compatibility", "find_schemas_by_field"]
        {
            assert!(names.contains(&name), "{name}");
        }
    }

    #[test]
    fn arguments_go_to_the_path_the_query_and_the_body() -> Result<(), String> {
        let lookup = planned("get_schema_version", json!({"subject": "a/b", "version": 2, "deleted": true}))?;
        assert_eq!(lookup.path, "/subjects/a%2Fb/versions/2?deleted=true");
        assert_eq!(lookup.body, None);
        let register = planned("register_schema", json!({"subject": "s", "schema": "\"int\"", "schema_type": "AVRO"}))?;
        assert_eq!(
            (register.method, register.body),
            (Method::POST, Some(json!({"schema": "\"int\"", "schemaType": "AVRO"})))
        );
        let global = planned("get_config", json!({}))?;
        assert_eq!(global.path, "/config");
        let compat = planned("check_compatibility", json!({"subject": "s", "schema": "x"}))?;
        assert_eq!(compat.path, "/compatibility/subjects/s/versions?verbose=true");
        let diff = planned("diff_schemas", json!({"subject": "s", "version_from": "1", "version_to": 3}))?;
        assert_eq!(diff.body, Some(json!({"version1": 1, "version2": 3})));
        Ok(())
    }

    #[test]
    fn a_context_prefixes_the_path_unless_it_is_the_exporters() -> Result<(), String> {
        let listed = planned("list_subjects", json!({"context": ".team"}))?;
        assert_eq!(listed.path, "/contexts/.team/subjects");
        let exporter = planned("create_exporter", json!({"name": "x", "context": ".dst", "context_type": "CUSTOM"}))?;
        assert_eq!(exporter.path, "/exporters");
        assert_eq!(exporter.body, Some(json!({"name": "x", "context": ".dst", "contextType": "CUSTOM"})));
        Ok(())
    }

    #[test]
    fn missing_and_mistyped_arguments_are_refused() {
        assert_eq!(planned("get_latest_schema", json!({})), Err("missing argument subject".into()));
        assert_eq!(planned("get_schema_by_id", json!({"id": "seven"})), Err("argument id must be a integer".into()));
        assert_eq!(planned("list_subjects", json!({"context": 3})), Err("argument context must be a string".into()));
    }

    #[test]
    fn an_import_is_one_registration_per_schema_with_its_id_and_version() -> Result<(), String> {
        let schemas = json!({"schemas": [
            {"subject": "a", "version": 1, "id": 7, "schema": "\"int\""},
            {"subject": "b", "version": 2, "id": 9, "schema": "{}", "schema_type": "JSON", "context": ".c"},
        ]});
        let planned = plan_import(&arguments(schemas))?;
        assert_eq!(planned[0].path, "/subjects/a/versions");
        assert_eq!(planned[0].body, Some(json!({"schema": "\"int\"", "id": 7, "version": 1})));
        assert_eq!(planned[1].path, "/contexts/.c/subjects/b/versions");
        let missing = plan_import(&arguments(json!({"schemas": [{"subject": "a", "schema": "x", "version": 1}]})));
        assert_eq!(missing, Err("schemas[0]: id must be an integer".into()));
        Ok(())
    }
}
