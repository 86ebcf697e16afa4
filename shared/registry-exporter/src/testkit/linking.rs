//! Schema linking as a property, the parts every backend's test shares: a numbered random workload
//! on a source registry (registrations with references, re-registrations, soft and hard deletes of
//! versions and subjects, version numbers reused after a hard delete, config changes, a config on
//! a subject that never had versions) and the oracle that compares source and destination once the
//! exporter is quiet: every exported subject (deleted included) answers the same on both
//! (versions, IDs, bodies, references, metadata, deleted flags, config), and every ID the source
//! holds names the same schema at the destination.
//!
//! Both registries are reached through [`RegistryApi`], so the same workload and oracle run on
//! the embedded store in process and on DynamoDB + S3 behind the stream-driven exporter function.

use crate::engine::{Answer, Method, RegistryApi, segment};
use crate::model::{ContextType, Exporter};
use crate::service::ExporterUpdate;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The subjects the workload registers in.
pub const SUBJECTS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// A subject that only ever gets a config: it never has a version at the source, so the source's
/// `/subjects` never lists it.
pub const CONFIG_ONLY: &str = "f";

/// The numbered random workloads a property test runs: `one` (an environment variable naming one
/// workload to replay) if set, else 1 ..= `count` (one naming how many), else 1 ..= `default`.
pub fn workload_numbers(one: &str, count: &str, default: u64) -> Vec<u64> {
    if let Some(number) = std::env::var(one).ok().and_then(|number| number.parse().ok()) {
        return vec![number];
    }
    let count = std::env::var(count).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    (1..=count).collect()
}

/// SplitMix64: a small generator started from a number, the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0 .. n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.draw() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() { None } else { items.get(self.below(items.len() as u64) as usize) }
    }
}

/// A call that must reach the registry (the workload's and the oracle's): a transport failure is
/// the test's own failure.
pub async fn call(api: &dyn RegistryApi, method: Method, path: &str, body: Option<Value>) -> Answer {
    api.call(method, path, body.as_ref()).await.unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn numbers(value: &Value) -> Vec<i64> {
    value.as_array().into_iter().flatten().filter_map(Value::as_i64).collect()
}

/// A random exporter: its context type (AUTO, CUSTOM with a rename, NONE with a rename), and
/// whether it names the subjects literally or takes `*`.
pub fn random_exporter(rng: &mut Rng, name: &str) -> Exporter {
    let (context_type, context, rename) = match rng.below(3) {
        0 => (ContextType::Auto, None, "${subject}"),
        1 => (ContextType::Custom, Some(".linked".to_owned()), "copy-${subject}"),
        _ => (ContextType::None, None, "${subject}-copy"),
    };
    let subjects = if rng.below(2) == 0 {
        SUBJECTS.iter().chain([&CONFIG_ONLY]).map(|subject| (*subject).to_owned()).collect()
    } else {
        vec!["*".to_owned()]
    };
    Exporter {
        name: name.to_owned(),
        context_type,
        context,
        subjects,
        subject_rename_format: rename.to_owned(),
        config: BTreeMap::new(),
    }
}

/// The request that defines `exporter` through the API, its destination at `url` with `config`
/// (credentials included) beside it.
pub fn definition(exporter: &Exporter, url: &str, mut config: BTreeMap<String, String>) -> ExporterUpdate {
    config.insert(crate::model::DESTINATION_URL.to_owned(), url.to_owned());
    let context_type = match exporter.context_type {
        ContextType::Auto => "AUTO",
        ContextType::Custom => "CUSTOM",
        ContextType::None => "NONE",
    };
    ExporterUpdate {
        name: Some(exporter.name.clone()),
        context_type: Some(context_type.to_owned()),
        context: exporter.context.clone(),
        subjects: Some(exporter.subjects.clone()),
        subject_rename_format: Some(exporter.subject_rename_format.clone()),
        config: Some(config),
    }
}

/// The workload: what it knows of the source (read back before each operation) and its generator.
pub struct Workload {
    pub rng: Rng,
    /// Per subject, its versions (number, type name, deleted).
    versions: BTreeMap<String, Vec<(i64, String, bool)>>,
    next_type: u64,
}

impl Workload {
    pub fn new(number: u64) -> Self {
        Workload { rng: Rng(number), versions: BTreeMap::new(), next_type: 0 }
    }

    /// Reads the source back, then makes one random operation there. Refusals (a referenced
    /// version, a compatibility level) are part of the workload and change nothing.
    pub async fn step(&mut self, source: &dyn RegistryApi) {
        self.read_back(source).await;
        self.operate(source).await;
    }

    async fn operate(&mut self, source: &dyn RegistryApi) {
        let subject = (*self.rng.pick(&SUBJECTS).unwrap_or(&"a")).to_owned();
        let path = format!("/subjects/{subject}/versions");
        match self.rng.below(100) {
            0..=39 => self.register_new(source, &subject).await,
            40..=49 => {
                // A re-registration of a live schema: the same ID and version, nothing new.
                let live = self.live(&subject, |(_, name, _)| name.clone());
                if let Some(name) = self.rng.pick(&live) {
                    let version = self.versions[&subject].iter().find(|(_, t, _)| t == name).map_or(1, |v| v.0);
                    let record = call(source, Method::Get, &format!("{path}/{version}"), None).await;
                    if record.status == 200 {
                        let mut body = json!({ "schema": record.body["schema"] });
                        if let Some(references) = record.body.get("references") {
                            body["references"] = references.clone();
                        }
                        call(source, Method::Post, &path, Some(body)).await;
                    }
                }
            }
            50..=64 => {
                // A soft delete of a live version (the latest half the time, to reuse its number next).
                let live = self.live(&subject, |(version, _, _)| *version);
                let version =
                    if self.rng.below(2) == 0 { live.iter().max().copied() } else { self.rng.pick(&live).copied() };
                if let Some(version) = version {
                    call(source, Method::Delete, &format!("{path}/{version}"), None).await;
                }
            }
            65..=79 => {
                // A hard delete of a soft-deleted version: its number may be reused by the next one.
                let deleted: Vec<i64> = (self.versions.get(&subject).into_iter().flatten())
                    .filter(|(_, _, deleted)| *deleted)
                    .map(|(version, _, _)| *version)
                    .collect();
                if let Some(&version) = self.rng.pick(&deleted) {
                    call(source, Method::Delete, &format!("{path}/{version}?permanent=true"), None).await;
                }
            }
            80..=86 => {
                // The whole subject soft-deleted, then (half the time) hard-deleted.
                let hard = self.rng.below(2) == 0;
                if call(source, Method::Delete, &format!("/subjects/{subject}"), None).await.status == 200 && hard {
                    call(source, Method::Delete, &format!("/subjects/{subject}?permanent=true"), None).await;
                }
            }
            87..=93 => {
                // A config, now and then on the subject that never has versions.
                let level = *self.rng.pick(&["NONE", "FORWARD", "BACKWARD_TRANSITIVE"]).unwrap_or(&"NONE");
                let target = if self.rng.below(3) == 0 { CONFIG_ONLY } else { subject.as_str() };
                let body = json!({ "compatibility": level });
                call(source, Method::Put, &format!("/config/{target}"), Some(body)).await;
            }
            _ => {
                let target = if self.rng.below(3) == 0 { CONFIG_ONLY } else { subject.as_str() };
                call(source, Method::Delete, &format!("/config/{target}"), None).await;
            }
        }
    }

    /// A new schema under `subject`, half the time referencing a live version of another subject.
    async fn register_new(&mut self, source: &dyn RegistryApi, subject: &str) {
        self.next_type += 1;
        let name = format!("T{}", self.next_type);
        let live: Vec<(String, i64, String)> = (self.versions.iter())
            .filter(|(other, _)| *other != subject)
            .flat_map(|(other, versions)| {
                (versions.iter().filter(|(_, _, deleted)| !deleted)).map(|(v, t, _)| (other.clone(), *v, t.clone()))
            })
            .collect();
        let reference = if self.rng.below(2) == 0 { self.rng.pick(&live).cloned() } else { None };
        let body = match &reference {
            Some((other, version, referenced_type)) => json!({
                "schema": json!({ "type": "record", "name": name, "namespace": "p",
                    "fields": [{ "name": "r", "type": format!("p.{referenced_type}") }] }).to_string(),
                "references": [{ "name": format!("p.{referenced_type}"), "subject": other, "version": version }],
            }),
            None => json!({ "schema": json!({ "type": "record", "name": name, "namespace": "p",
                "fields": [{ "name": "f", "type": "string" }] }).to_string() }),
        };
        call(source, Method::Post, &format!("/subjects/{subject}/versions"), Some(body)).await;
    }

    fn live<T>(&self, subject: &str, take: impl Fn(&(i64, String, bool)) -> T) -> Vec<T> {
        (self.versions.get(subject).into_iter().flatten()).filter(|(_, _, deleted)| !deleted).map(take).collect()
    }

    /// The source as it is: the workload works on what the source holds.
    async fn read_back(&mut self, source: &dyn RegistryApi) {
        self.versions.clear();
        for subject in SUBJECTS {
            let listed = call(source, Method::Get, &format!("/subjects/{subject}/versions?deleted=true"), None).await;
            let live = numbers(&call(source, Method::Get, &format!("/subjects/{subject}/versions"), None).await.body);
            for number in numbers(&listed.body) {
                let path = format!("/subjects/{subject}/versions/{number}?deleted=true");
                let record = call(source, Method::Get, &path, None).await;
                let schema: Value =
                    serde_json::from_str(record.body["schema"].as_str().unwrap_or("{}")).unwrap_or(Value::Null);
                let name = schema["name"].as_str().unwrap_or_default().to_owned();
                if let Some(n) = name.strip_prefix('T').and_then(|n| n.parse::<u64>().ok()) {
                    self.next_type = self.next_type.max(n);
                }
                self.versions.entry(subject.to_owned()).or_default().push((number, name, !live.contains(&number)));
            }
        }
    }
}

/// The oracle, once the exporter is quiet: `Ok(IDs compared)`, or the first divergence.
///
/// Compared: every subject the workload touches, versions, IDs and config. Left out by design:
/// with NONE under `*`, what the destination keeps of a subject gone from the source altogether
/// (the destination's default context may hold its own subjects), unless the source holds a
/// config for it again.
pub async fn compare(
    exporter: &Exporter,
    source: &dyn RegistryApi,
    destination: &dyn RegistryApi,
) -> Result<usize, String> {
    let listed = call(source, Method::Get, "/subjects?deleted=true", None).await;
    let listed: BTreeSet<String> =
        listed.body.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let named = !exporter.subjects.iter().any(|pattern| pattern.contains('*'));
    let mut subjects = listed.clone();
    subjects.extend(SUBJECTS.iter().chain([&CONFIG_ONLY]).map(|s| (*s).to_owned()));
    let prefix = exporter.destination_context().map_or_else(String::new, |context| format!(":{context}:"));
    let rename = exporter.subject_rename_format.as_str();
    let at_source = state(source, "", "${subject}", &subjects).await;
    let at_destination = state(destination, &prefix, rename, &subjects).await;
    for subject in &subjects {
        let (here, there) = (&at_source[subject.as_str()], &at_destination[subject.as_str()]);
        // Gone: the source no longer lists it and the exporter does not name it.
        let gone = !named && !listed.contains(subject);
        let left_alone = gone && matches!(exporter.context_type, ContextType::None);
        if !left_alone && here["versions"] != there["versions"] {
            return Err(format!(
                "subject '{subject}' differs:\nsource      {}\ndestination {}",
                here["versions"], there["versions"]
            ));
        }
        if !(left_alone && here["config"].is_null()) && here["config"] != there["config"] {
            return Err(format!("subject '{subject}' config differs: {} vs {}", here["config"], there["config"]));
        }
    }
    let (source_ids, destination_ids) =
        (ids(source, &at_source, "").await, ids(destination, &at_source, &prefix).await);
    for (id, schema) in &source_ids {
        if destination_ids.get(id) != Some(schema) {
            return Err(format!("ID {id}: source {schema}, destination {:?}", destination_ids.get(id)));
        }
    }
    Ok(source_ids.len())
}

/// Every subject's state at `api` (`prefix`: the destination context's; `rename`: the exporter's
/// rename format): per subject (source name), its versions with id, schema, type, references,
/// metadata, rule set, deleted; and its config.
async fn state(api: &dyn RegistryApi, prefix: &str, rename: &str, subjects: &BTreeSet<String>) -> Value {
    let mut out = serde_json::Map::new();
    for subject in subjects {
        let target = format!("{prefix}{}", rename.replace("${subject}", subject));
        let enc = segment(&target);
        let all = call(api, Method::Get, &format!("/subjects/{enc}/versions?deleted=true"), None).await;
        let live = numbers(&call(api, Method::Get, &format!("/subjects/{enc}/versions"), None).await.body);
        let mut versions = Vec::new();
        for number in numbers(&all.body) {
            let record = call(api, Method::Get, &format!("/subjects/{enc}/versions/{number}?deleted=true"), None).await;
            let mut references = record.body.get("references").cloned().unwrap_or(json!([]));
            // Compared by source names: the destination's are renamed.
            for reference in references.as_array_mut().into_iter().flatten() {
                if let Some(name) = reference.get("subject").and_then(Value::as_str) {
                    let (before, after) = rename.split_once("${subject}").unwrap_or(("", ""));
                    let source = name.strip_prefix(before).and_then(|n| n.strip_suffix(after)).unwrap_or(name);
                    reference["subject"] = json!(source);
                }
            }
            versions.push(json!({
                "version": number, "id": record.body["id"], "schema": record.body["schema"],
                "schemaType": record.body.get("schemaType"), "references": references,
                "metadata": record.body.get("metadata"), "ruleSet": record.body.get("ruleSet"),
                "deleted": !live.contains(&number),
            }));
        }
        let config = call(api, Method::Get, &format!("/config/{enc}"), None).await;
        let config = if config.status == 200 { config.body } else { Value::Null };
        out.insert(subject.clone(), json!({ "versions": versions, "config": config }));
    }
    Value::Object(out)
}

/// Every ID `state` names, with the schema the ID names at `api` (`context`: the destination
/// context's prefix to look IDs up in).
async fn ids(api: &dyn RegistryApi, state: &Value, context: &str) -> BTreeMap<i64, Value> {
    let mut out = BTreeMap::new();
    for subject in state.as_object().into_iter().flat_map(|o| o.values()) {
        for version in subject["versions"].as_array().into_iter().flatten() {
            if let Some(id) = version["id"].as_i64() {
                let query = if context.is_empty() { String::new() } else { format!("?subject={context}") };
                let answer = call(api, Method::Get, &format!("/schemas/ids/{id}{query}"), None).await;
                out.insert(id, json!([answer.status, answer.body.get("schema")]));
            }
        }
    }
    out
}

/// The source's versions whose reference names a version the source no longer holds (named in a
/// failure: a pass that does not settle may be stuck on one).
pub async fn dangling_references(source: &dyn RegistryApi) -> Vec<String> {
    let mut out = Vec::new();
    for subject in SUBJECTS {
        let listed = call(source, Method::Get, &format!("/subjects/{subject}/versions?deleted=true"), None).await;
        for number in numbers(&listed.body) {
            let path = format!("/subjects/{subject}/versions/{number}?deleted=true");
            let record = call(source, Method::Get, &path, None).await;
            for reference in record.body.get("references").and_then(Value::as_array).into_iter().flatten() {
                let (Some(other), Some(version)) = (reference["subject"].as_str(), reference["version"].as_i64())
                else {
                    continue;
                };
                let path = format!("/subjects/{other}/versions/{version}?deleted=true");
                if call(source, Method::Get, &path, None).await.status != 200 {
                    out.push(format!("{subject} v{number} -> {other} v{version}"));
                }
            }
        }
    }
    out
}
