//! A registry's state as the API shows it (every version of every context with its ID, text,
//! references and deleted flag; configs; modes), or the part a [`Selection`] picks, read from any
//! [`Api`], written to and read from JSON lines.
//!
//! Export format: one JSON object per line, `kind` first: a `header`, then the global `config`
//! and `mode`, then every `schema` in apply order (referenced versions before their referrers,
//! then by subject and version), then per-subject `config` and `mode`. Subjects of a named
//! context are qualified (`:.ctx:name`; a version's ID is one of that context's), and a context's
//! own settings are a `config`/`mode` of the subject `:.ctx:`, as the API names them. Reading the
//! file back and exporting again gives the same bytes.

use super::AdminError;
use super::api::Api;
use super::contexts::{Selection, context_of, referenced_subject, settings_subject};
use super::progress;
use registry_core::model::{Context, QualifiedName};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};

/// Format name in the header line.
pub const FORMAT: &str = "registry-export";
/// Format version in the header line.
pub const FORMAT_VERSION: u32 = 1;

/// One version of one subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaEntry {
    pub subject: String,
    pub version: i32,
    pub id: i32,
    #[serde(default = "avro")]
    pub schema_type: String,
    pub schema: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_set: Option<Value>,
    #[serde(default)]
    pub deleted: bool,
}

fn avro() -> String {
    "AVRO".to_string()
}

impl SchemaEntry {
    /// The (subject, version) pairs this entry references (a reference without a context points
    /// into this entry's context).
    pub fn dependencies(&self) -> Vec<(String, i32)> {
        let pair = |r: &Value| {
            let subject = referenced_subject(&self.subject, r.get("subject")?.as_str()?);
            let version = i32::try_from(r.get("version")?.as_i64()?).ok()?;
            Some((subject, version))
        };
        self.references.iter().filter_map(pair).collect()
    }

    /// The IMPORT registration body (explicit id and version).
    pub fn register_body(&self) -> Value {
        let mut body = serde_json::json!({
            "schema": self.schema, "schemaType": self.schema_type, "id": self.id, "version": self.version,
        });
        if let Some(object) = body.as_object_mut() {
            if !self.references.is_empty() {
                object.insert("references".to_string(), Value::Array(self.references.clone()));
            }
            if let Some(metadata) = &self.metadata {
                object.insert("metadata".to_string(), metadata.clone());
            }
            if let Some(rule_set) = &self.rule_set {
                object.insert("ruleSet".to_string(), rule_set.clone());
            }
        }
        body
    }
}

/// One line of the export file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Line {
    Header { format: String, version: u32 },
    Config { subject: Option<String>, config: Value },
    Mode { subject: Option<String>, mode: String },
    Schema(SchemaEntry),
}

/// A registry's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub global_config: Option<Value>,
    pub global_mode: Option<String>,
    /// Every version, in apply order (see [`order`]).
    pub schemas: Vec<SchemaEntry>,
    pub subject_configs: BTreeMap<String, Value>,
    pub subject_modes: BTreeMap<String, String>,
}

impl Snapshot {
    /// Every subject with at least one version, sorted.
    pub fn subjects(&self) -> BTreeSet<&str> {
        self.schemas.iter().map(|s| s.subject.as_str()).collect()
    }

    /// Every context a version is in.
    pub fn contexts(&self) -> BTreeSet<Context> {
        self.schemas.iter().map(|s| context_of(&s.subject)).collect()
    }

    /// Reads what `api` shows of the `selection`, with a progress bar over subjects: the selected
    /// subjects' versions and settings, the versions they reference (selected or not), and the
    /// own settings of every selected context (the default context's are the global ones). The
    /// subjects are those listed without a prefix and those listed per context.
    pub async fn read(api: &Api, selection: &Selection) -> Result<Snapshot, AdminError> {
        let mut snapshot = Snapshot::default();
        let mut listed: BTreeSet<String> = api.subjects().await?.into_iter().collect();
        for context in api.contexts().await?.iter().filter(|c| selection.context(c)) {
            if !context.is_default() && context.name() != Context::GLOBAL_NAME {
                listed.extend(api.subjects_in(context).await?);
            }
            match settings_subject(context) {
                None => {
                    snapshot.global_config = api.config(None).await?;
                    snapshot.global_mode = api.mode(None).await?;
                }
                Some(scope) if context.name() != Context::GLOBAL_NAME => {
                    if let Some(config) = api.config(Some(&scope)).await? {
                        snapshot.subject_configs.insert(scope.clone(), config);
                    }
                    if let Some(mode) = api.mode(Some(&scope)).await? {
                        snapshot.subject_modes.insert(scope, mode);
                    }
                }
                Some(_) => {}
            }
        }
        let subjects: Vec<String> = listed.into_iter().filter(|s| selection.subject(s)).collect();
        let bar = progress::bar(subjects.len(), "reading subjects");
        let mut without_versions = Vec::new();
        for subject in &subjects {
            let live: BTreeSet<i32> = api.versions(subject, false).await?.into_iter().collect();
            let versions = api.versions(subject, true).await?;
            if versions.is_empty() {
                without_versions.push(subject.as_str());
            }
            for version in versions {
                snapshot.schemas.push(read_version(api, subject, version, &live).await?);
            }
            if let Some(config) = api.config(Some(subject)).await? {
                snapshot.subject_configs.insert(subject.clone(), config);
            }
            if let Some(mode) = api.mode(Some(subject)).await? {
                snapshot.subject_modes.insert(subject.clone(), mode);
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        // A subject deleted while it was read has no versions; a registry that lists subjects and
        // answers no version of any is not one to copy from (nothing would be, and nothing said).
        if let Some(first) = without_versions.first()
            && snapshot.schemas.is_empty()
        {
            return Err(format!(
                "{} lists {} subject(s) but answers no version of any (GET /subjects/{}/versions?deleted=true: none)",
                api.describe(),
                without_versions.len(),
                super::api::segment(first)
            )
            .into());
        }
        if !without_versions.is_empty() {
            tracing::warn!(subjects = ?without_versions, "listed subjects without versions (deleted while read?)");
        }
        let mut unknown = BTreeSet::new();
        loop {
            let missing: Vec<(String, i32)> =
                snapshot.missing_references().into_iter().filter(|m| !unknown.contains(m)).collect();
            if missing.is_empty() {
                break;
            }
            for (subject, version) in missing {
                let live: BTreeSet<i32> = api.versions(&subject, false).await?.into_iter().collect();
                if api.versions(&subject, true).await?.contains(&version) {
                    snapshot.schemas.push(read_version(api, &subject, version, &live).await?);
                } else {
                    unknown.insert((subject, version));
                }
            }
        }
        snapshot.schemas = order(std::mem::take(&mut snapshot.schemas));
        Ok(snapshot)
    }

    /// The part of this snapshot `selection` picks, with the versions it references (as
    /// [`Snapshot::read`] reads it from a registry).
    pub fn select(self, selection: &Selection) -> Snapshot {
        if selection.is_everything() {
            return self;
        }
        let setting = |key: &String| match QualifiedName::split(key) {
            name if name.is_context_only() => selection.context(&context_of(key)),
            _ => selection.subject(key),
        };
        let default = selection.context(&Context::DEFAULT);
        let (mut schemas, mut rest): (Vec<_>, Vec<_>) =
            self.schemas.into_iter().partition(|e| selection.subject(&e.subject));
        let mut selected = Snapshot {
            global_config: self.global_config.filter(|_| default),
            global_mode: self.global_mode.filter(|_| default),
            schemas: Vec::new(),
            subject_configs: self.subject_configs.into_iter().filter(|(key, _)| setting(key)).collect(),
            subject_modes: self.subject_modes.into_iter().filter(|(key, _)| setting(key)).collect(),
        };
        loop {
            selected.schemas.append(&mut schemas);
            let missing = selected.missing_references();
            (schemas, rest) = rest.into_iter().partition(|e| missing.contains(&(e.subject.clone(), e.version)));
            if schemas.is_empty() {
                break;
            }
        }
        selected.schemas = order(selected.schemas);
        selected
    }

    /// The (subject, version) pairs referenced by a version but not in the snapshot.
    fn missing_references(&self) -> BTreeSet<(String, i32)> {
        let present: BTreeSet<(&str, i32)> = self.schemas.iter().map(|e| (e.subject.as_str(), e.version)).collect();
        let dependencies = self.schemas.iter().flat_map(SchemaEntry::dependencies);
        dependencies.filter(|(s, v)| !present.contains(&(s.as_str(), *v))).collect()
    }

    /// Writes the export lines (see the module doc).
    pub fn write_lines(&self, out: &mut impl Write) -> Result<(), AdminError> {
        let mut line = |line: &Line| -> Result<(), AdminError> {
            serde_json::to_writer(&mut *out, line)?;
            out.write_all(b"\n")?;
            Ok(())
        };
        line(&Line::Header { format: FORMAT.to_string(), version: FORMAT_VERSION })?;
        if let Some(config) = &self.global_config {
            line(&Line::Config { subject: None, config: config.clone() })?;
        }
        if let Some(mode) = &self.global_mode {
            line(&Line::Mode { subject: None, mode: mode.clone() })?;
        }
        for entry in &self.schemas {
            line(&Line::Schema(entry.clone()))?;
        }
        for (subject, config) in &self.subject_configs {
            line(&Line::Config { subject: Some(subject.clone()), config: config.clone() })?;
        }
        for (subject, mode) in &self.subject_modes {
            line(&Line::Mode { subject: Some(subject.clone()), mode: mode.clone() })?;
        }
        Ok(())
    }

    /// Reads export lines; refuses a file without our header or with an unknown line.
    pub fn read_lines(input: impl BufRead) -> Result<Snapshot, AdminError> {
        let mut snapshot = Snapshot::default();
        let mut header = false;
        for (number, text) in input.lines().enumerate() {
            let text = text?;
            if text.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(&text).map_err(|e| format!("line {}: {e}", number + 1))?;
            match line {
                Line::Header { format, version } if format == FORMAT && version == FORMAT_VERSION => header = true,
                Line::Header { format, version } => {
                    return Err(format!("unsupported export {format} v{version}").into());
                }
                _ if !header => return Err("not a registry export: the first line is not its header".into()),
                Line::Config { subject: None, config } => snapshot.global_config = Some(config),
                Line::Config { subject: Some(subject), config } => {
                    snapshot.subject_configs.insert(subject, config);
                }
                Line::Mode { subject: None, mode } => snapshot.global_mode = Some(mode),
                Line::Mode { subject: Some(subject), mode } => {
                    snapshot.subject_modes.insert(subject, mode);
                }
                Line::Schema(entry) => snapshot.schemas.push(entry),
            }
        }
        if !header {
            return Err("empty file: not a registry export".into());
        }
        snapshot.schemas = order(std::mem::take(&mut snapshot.schemas));
        Ok(snapshot)
    }
}

/// Version `version` of `subject` as `api` answers it; deleted unless in `live`.
async fn read_version(api: &Api, subject: &str, version: i32, live: &BTreeSet<i32>) -> Result<SchemaEntry, AdminError> {
    let mut answer = api.version(subject, version).await?;
    if let Some(object) = answer.as_object_mut() {
        object.remove("ts");
        object.remove("guid");
        object.insert("deleted".to_string(), Value::Bool(!live.contains(&version)));
        // The subject as listed (qualified in a named context), whatever form the answer uses.
        object.insert("subject".to_string(), Value::String(subject.to_string()));
    }
    serde_json::from_value(answer).map_err(|e| {
        let path = format!("/subjects/{}/versions/{version}?deleted=true", super::api::segment(subject));
        format!("version {version} of {subject}: GET {}{path}: unexpected answer: {e}", api.describe()).into()
    })
}

/// Apply order: by (subject, version), except that every referenced version comes before its
/// referrers (depth-first; a reference to a version not in the set is ignored).
pub fn order(mut entries: Vec<SchemaEntry>) -> Vec<SchemaEntry> {
    entries.sort_by(|a, b| (&a.subject, a.version).cmp(&(&b.subject, b.version)));
    let index: BTreeMap<(String, i32), usize> =
        entries.iter().enumerate().map(|(i, e)| ((e.subject.clone(), e.version), i)).collect();
    let mut placed = vec![false; entries.len()];
    let mut sequence = Vec::with_capacity(entries.len());
    for start in 0..entries.len() {
        // Iterative DFS: (entry, dependencies already pushed).
        let mut stack = vec![(start, false)];
        while let Some((at, expanded)) = stack.pop() {
            if placed[at] {
                continue;
            }
            if expanded {
                placed[at] = true;
                sequence.push(at);
                continue;
            }
            stack.push((at, true));
            for dependency in entries[at].dependencies().iter().rev() {
                if let Some(&next) = index.get(dependency)
                    && !placed[next]
                    && !stack.iter().any(|(i, in_progress)| *i == next && *in_progress)
                {
                    stack.push((next, false));
                }
            }
        }
    }
    let mut slots: Vec<Option<SchemaEntry>> = entries.into_iter().map(Some).collect();
    sequence.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(subject: &str, version: i32, id: i32, refs: &[(&str, i32)]) -> SchemaEntry {
        SchemaEntry {
            subject: subject.to_string(),
            version,
            id,
            schema_type: avro(),
            schema: format!("\"{subject}{version}\""),
            references: refs
                .iter()
                .map(|(s, v)| serde_json::json!({"name": format!("{s}.avsc"), "subject": s, "version": v}))
                .collect(),
            metadata: None,
            rule_set: None,
            deleted: false,
        }
    }

    #[test]
    fn referenced_versions_come_before_their_referrers() {
        let entries = vec![
            entry("a-order", 1, 10, &[("z-customer", 2), ("m-address", 1)]),
            entry("m-address", 1, 5, &[]),
            entry("z-customer", 1, 3, &[]),
            entry("z-customer", 2, 4, &[("m-address", 1)]),
        ];
        let ordered: Vec<(String, i32)> = order(entries).into_iter().map(|e| (e.subject, e.version)).collect();
        let at = |s: &str, v: i32| ordered.iter().position(|(a, b)| a == s && *b == v).unwrap_or(usize::MAX);
        assert_eq!(ordered.len(), 4);
        assert!(at("m-address", 1) < at("z-customer", 2));
        assert!(at("z-customer", 2) < at("a-order", 1));
        assert!(at("m-address", 1) < at("a-order", 1));
    }

    #[test]
    fn lines_round_trip_byte_for_byte() {
        let snapshot = Snapshot {
            global_config: Some(serde_json::json!({"compatibilityLevel": "FULL"})),
            global_mode: Some("READWRITE".to_string()),
            schemas: order(vec![entry("b", 1, 7, &[]), entry("a", 2, 9, &[("b", 1)])]),
            subject_configs: BTreeMap::from([("a".to_string(), serde_json::json!({"compatibilityLevel": "NONE"}))]),
            subject_modes: BTreeMap::from([("b".to_string(), "READONLY".to_string())]),
        };
        let mut first = Vec::new();
        snapshot.write_lines(&mut first).unwrap_or_else(|e| panic!("{e}"));
        let back = Snapshot::read_lines(first.as_slice()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, snapshot);
        let mut second = Vec::new();
        back.write_lines(&mut second).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first, second);
    }

    fn selection(contexts: &[&str], prefix: Option<&str>) -> Selection {
        let args = crate::config::SelectionArgs {
            context: contexts.iter().map(|c| c.to_string()).collect(),
            subject_prefix: prefix.map(str::to_string),
        };
        Selection::new(&args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_selection_keeps_its_subjects_what_they_reference_and_its_contexts_settings() {
        let none = serde_json::json!({"compatibilityLevel": "NONE"});
        let snapshot = Snapshot {
            global_config: Some(serde_json::json!({"compatibilityLevel": "FULL"})),
            global_mode: Some("READWRITE".to_string()),
            schemas: order(vec![
                entry("address", 1, 1, &[]),
                entry(":.a:address", 1, 1, &[]),
                entry(":.a:orders", 1, 2, &[("address", 1)]),
                entry(":.b:orders", 1, 1, &[]),
            ]),
            subject_configs: BTreeMap::from([(":.a:".to_string(), none.clone()), ("address".to_string(), none)]),
            subject_modes: BTreeMap::from([(":.b:".to_string(), "READONLY".to_string())]),
        };
        let subjects = |s: &Snapshot| s.schemas.iter().map(|e| e.subject.clone()).collect::<Vec<_>>();

        let team = snapshot.clone().select(&selection(&["a"], None));
        assert_eq!(subjects(&team), [":.a:address", ":.a:orders"], "a reference without a context stays in it");
        assert_eq!((team.global_config, team.global_mode), (None, None), "the default context is not selected");
        assert_eq!(team.subject_configs.keys().collect::<Vec<_>>(), [":.a:"]);
        assert!(team.subject_modes.is_empty());

        let orders = snapshot.clone().select(&selection(&[], Some("ord")));
        assert_eq!(subjects(&orders), [":.a:address", ":.a:orders", ":.b:orders"], "referenced versions come along");
        assert!(orders.global_config.is_some() && orders.subject_modes.contains_key(":.b:"));
        assert!(!orders.subject_configs.contains_key("address"), "a subject's settings follow the subject");

        assert_eq!(snapshot.clone().select(&selection(&[], None)), snapshot);
    }

    #[test]
    fn files_without_the_header_are_refused() {
        assert!(Snapshot::read_lines("".as_bytes()).is_err());
        assert!(Snapshot::read_lines(r#"{"kind":"mode","subject":null,"mode":"READONLY"}"#.as_bytes()).is_err());
        let other = r#"{"kind":"header","format":"registry-export","version":99}"#;
        assert!(Snapshot::read_lines(other.as_bytes()).is_err());
    }
}
