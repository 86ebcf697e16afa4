//! Schema linking as a property: a seeded random workload on a source registry (registrations
//! with references, re-registrations, soft and hard deletes of versions and subjects, version
//! numbers reused after a hard delete, config changes) with exporter passes at random points
//! under faults (destination calls failing mid-pass, the destination down for a while, the
//! destination wiped), then passes without faults until one changes nothing, then an oracle:
//! every exported subject (deleted included) answers the same at the source and the destination
//! (versions, IDs, bodies, references, metadata, deleted flags, config), and every ID the source
//! holds names the same schema at the destination.
//!
//! Source and destination are embedded (SQLite) registries called through their routers in
//! process, the passes those of `registry serve`'s runner and of the exporter function
//! ([`registry_exporter::engine::sync_pass`]). `EXPORTER_PROPERTY_SEEDS` (default [`DEFAULT_SEEDS`]) sets how
//! many seeds run; `EXPORTER_PROPERTY_SEED` replays one (a failure names its seed).

use registry_core::{Registry, RegistrySettings};
use registry_exporter::engine::{Answer, Method, RegistryApi, sync_pass};
use registry_exporter::{ContextType, Exporter};
use registry_exporter_http::RouterApi;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const SUBJECTS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// Seeds `make test` runs (each a few hundred operations and passes in process, well under a
/// second or two each).
const DEFAULT_SEEDS: u64 = 24;

/// SplitMix64: a small seeded generator, the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() { None } else { items.get(self.below(items.len() as u64) as usize) }
    }
}

fn embedded(dir: &std::path::Path) -> RouterApi {
    let store = registry_store_local::LocalStore::open(dir).unwrap_or_else(|error| panic!("store: {error}"));
    RouterApi::new(registry_http::app(
        Registry::new(Arc::new(store), RegistrySettings::default()),
        registry_http::AppOptions::default(),
    ))
}

/// The destination: an embedded registry whose calls fail while `down`, or when the fault
/// generator says so (a pass cut anywhere, as a crash or a reset connection cuts it).
struct Faulty {
    inner: std::sync::Mutex<RouterApi>,
    /// Out of 1000 calls, how many fail.
    fault_per_mille: AtomicU64,
    down: std::sync::atomic::AtomicBool,
    faults: std::sync::Mutex<Rng>,
    injected: AtomicU64,
}

impl RegistryApi for Faulty {
    fn call<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        method: Method,
        path: &'life1 str,
        body: Option<&'life2 Value>,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, String>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            let rate = self.fault_per_mille.load(Ordering::Relaxed);
            let fault = self.down.load(Ordering::Relaxed)
                || (rate > 0 && self.faults.lock().unwrap_or_else(|e| e.into_inner()).below(1000) < rate);
            if fault {
                self.injected.fetch_add(1, Ordering::Relaxed);
                return Err("injected fault: connection reset".to_owned());
            }
            let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
            inner.call(method, path, body).await
        })
    }

    fn describe(&self) -> String {
        "the faulty destination".to_owned()
    }
}

async fn call(api: &dyn RegistryApi, method: Method, path: &str, body: Option<Value>) -> Answer {
    api.call(method, path, body.as_ref()).await.unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn numbers(value: &Value) -> Vec<i64> {
    value.as_array().into_iter().flatten().filter_map(Value::as_i64).collect()
}

/// What the workload knows of the source: per subject, its versions (number, type name, deleted).
#[derive(Default)]
struct Model {
    versions: BTreeMap<String, Vec<(i64, String, bool)>>,
    next_type: u64,
}

/// One random operation at the source; refusals (a referenced version, a compatibility level)
/// are part of the workload and change nothing.
async fn operate(source: &RouterApi, model: &mut Model, rng: &mut Rng) {
    let subject = (*rng.pick(&SUBJECTS).unwrap_or(&"a")).to_owned();
    let path = format!("/subjects/{subject}/versions");
    match rng.below(100) {
        0..=39 => {
            // A new schema, half the time referencing a live version of another subject.
            model.next_type += 1;
            let name = format!("T{}", model.next_type);
            let live: Vec<(String, i64, String)> = model
                .versions
                .iter()
                .filter(|(other, _)| **other != subject)
                .flat_map(|(other, versions)| {
                    versions.iter().filter(|(_, _, deleted)| !deleted).map(|(v, t, _)| (other.clone(), *v, t.clone()))
                })
                .collect();
            let reference = if rng.below(2) == 0 { rng.pick(&live).cloned() } else { None };
            let body = match &reference {
                Some((other, version, referenced_type)) => json!({
                    "schema": json!({ "type": "record", "name": name, "namespace": "p",
                        "fields": [{ "name": "r", "type": format!("p.{referenced_type}") }] }).to_string(),
                    "references": [{ "name": format!("p.{referenced_type}"), "subject": other, "version": version }],
                }),
                None => json!({ "schema": json!({ "type": "record", "name": name, "namespace": "p",
                    "fields": [{ "name": "f", "type": "string" }] }).to_string() }),
            };
            let answer = call(source, Method::Post, &path, Some(body)).await;
            if answer.status == 200 {
                let listed = call(source, Method::Get, &format!("{path}?deleted=true"), None).await;
                let latest = numbers(&listed.body).into_iter().max().unwrap_or(1);
                model.versions.entry(subject).or_default().push((latest, name, false));
            }
        }
        40..=49 => {
            // A re-registration of a live schema: the same ID and version, nothing new.
            let live: Vec<String> = model
                .versions
                .get(&subject)
                .into_iter()
                .flatten()
                .filter(|(_, _, deleted)| !deleted)
                .map(|(_, t, _)| t.clone())
                .collect();
            if let Some(name) = rng.pick(&live) {
                let version = model.versions[&subject].iter().find(|(_, t, _)| t == name).map_or(1, |v| v.0);
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
            let live: Vec<i64> = model
                .versions
                .get(&subject)
                .into_iter()
                .flatten()
                .filter(|(_, _, deleted)| !deleted)
                .map(|(v, _, _)| *v)
                .collect();
            let version = if rng.below(2) == 0 { live.iter().max().copied() } else { rng.pick(&live).copied() };
            if let Some(version) = version
                && call(source, Method::Delete, &format!("{path}/{version}"), None).await.status == 200
                && let Some(entry) =
                    model.versions.get_mut(&subject).and_then(|vs| vs.iter_mut().find(|e| e.0 == version))
            {
                entry.2 = true;
            }
        }
        65..=79 => {
            // A hard delete of a soft-deleted version: its number may be reused by the next one.
            let deleted: Vec<i64> = model
                .versions
                .get(&subject)
                .into_iter()
                .flatten()
                .filter(|(_, _, deleted)| *deleted)
                .map(|(v, _, _)| *v)
                .collect();
            if let Some(&version) = rng.pick(&deleted)
                && call(source, Method::Delete, &format!("{path}/{version}?permanent=true"), None).await.status == 200
                && let Some(versions) = model.versions.get_mut(&subject)
            {
                versions.retain(|entry| entry.0 != version);
            }
        }
        80..=86 => {
            // The whole subject soft-deleted, then (half the time) hard-deleted.
            if call(source, Method::Delete, &format!("/subjects/{subject}"), None).await.status == 200 {
                for entry in model.versions.get_mut(&subject).into_iter().flatten() {
                    entry.2 = true;
                }
                if rng.below(2) == 0
                    && call(source, Method::Delete, &format!("/subjects/{subject}?permanent=true"), None).await.status
                        == 200
                {
                    model.versions.remove(&subject);
                }
            }
        }
        87..=93 => {
            let level = *rng.pick(&["NONE", "FORWARD", "BACKWARD_TRANSITIVE"]).unwrap_or(&"NONE");
            call(source, Method::Put, &format!("/config/{subject}"), Some(json!({ "compatibility": level }))).await;
        }
        _ => {
            call(source, Method::Delete, &format!("/config/{subject}"), None).await;
        }
    }
}

/// Every exported subject's state at `api` (`prefix`: the destination context's): per subject
/// (source name), its versions with id, schema, type, references, metadata, rule set, deleted;
/// and its config.
async fn state(api: &dyn RegistryApi, prefix: &str, rename: &str, subjects: &BTreeSet<String>) -> Value {
    let mut out = serde_json::Map::new();
    for subject in subjects {
        let target = format!("{prefix}{}", rename.replace("${subject}", subject));
        let enc = registry_exporter::engine::segment(&target);
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

/// Every ID the source state names, with the schema the ID names at `api` (`context`: the
/// destination context to look IDs up in).
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

/// One seed: the workload with passes under faults, quiescence, the oracle. `Err` describes the
/// divergence or the wedged pass.
async fn run_seed(seed: u64) -> Result<String, String> {
    let mut rng = Rng(seed);
    let (source_dir, destination_dir) =
        (tempfile::tempdir().map_err(|e| e.to_string())?, tempfile::tempdir().map_err(|e| e.to_string())?);
    let source = embedded(source_dir.path());
    let destination = Faulty {
        inner: std::sync::Mutex::new(embedded(destination_dir.path())),
        fault_per_mille: AtomicU64::new(0),
        down: std::sync::atomic::AtomicBool::new(false),
        faults: std::sync::Mutex::new(Rng(seed ^ 0xFA17)),
        injected: AtomicU64::new(0),
    };
    let mut wiped_dirs = Vec::new();
    call(&source, Method::Put, "/config", Some(json!({ "compatibility": "NONE" }))).await;
    let (context_type, context, rename) = match rng.below(3) {
        0 => (ContextType::Auto, None, "${subject}"),
        1 => (ContextType::Custom, Some(".linked".to_owned()), "copy-${subject}"),
        _ => (ContextType::None, None, "${subject}-copy"),
    };
    // Named subjects export their configs even without versions; under `*` a subject the source
    // does not list (no versions, deleted ones included) is found only by what the destination
    // holds of it, so its config is compared only when the source lists it.
    let named_subjects = rng.below(2) == 0;
    let exporter = Exporter {
        name: "prop".to_owned(),
        context_type,
        context,
        subjects: if named_subjects {
            SUBJECTS.iter().map(|subject| (*subject).to_owned()).collect()
        } else {
            vec!["*".to_owned()]
        },
        subject_rename_format: rename.to_owned(),
        config: BTreeMap::new(),
    };
    let operations = 60 + rng.below(91);
    let mut faults = Vec::new();
    let mut model = Model::default();
    for _ in 0..operations {
        model_of(&source, &mut model).await;
        operate(&source, &mut model, &mut rng).await;
        match rng.below(100) {
            0..=14 => {
                destination.fault_per_mille.store(if rng.below(3) == 0 { 150 } else { 0 }, Ordering::Relaxed);
                let _ = sync_pass(&exporter, &source, &destination).await;
            }
            15..=16 => {
                let down = !destination.down.load(Ordering::Relaxed);
                destination.down.store(down, Ordering::Relaxed);
                faults.push(if down { "destination down" } else { "destination back" });
            }
            17 if rng.below(4) == 0 => {
                // The destination loses its data: a fresh registry at the same place.
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                *destination.inner.lock().unwrap_or_else(|e| e.into_inner()) = embedded(dir.path());
                wiped_dirs.push(dir);
                faults.push("destination wiped");
            }
            _ => {}
        }
    }
    destination.down.store(false, Ordering::Relaxed);
    destination.fault_per_mille.store(0, Ordering::Relaxed);
    let mut last = Err("no pass".to_owned());
    for _ in 0..8 {
        last = sync_pass(&exporter, &source, &destination).await.map_err(|error| error.0);
        if last == Ok(0) {
            break;
        }
    }
    if last != Ok(0) {
        let dangling = dangling_references(&source).await;
        return Err(format!(
            "the exporter does not settle: the last pass gave {last:?}; dangling at the source: {dangling:?}"
        ));
    }
    let listed = call(&source, Method::Get, "/subjects?deleted=true", None).await;
    let listed_subjects: BTreeSet<String> =
        listed.body.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let mut subjects = listed_subjects.clone();
    subjects.extend(SUBJECTS.iter().map(|s| (*s).to_owned()));
    let prefix = exporter.destination_context().map_or_else(String::new, |context| format!(":{context}:"));
    let at_source = state(&source, "", "${subject}", &subjects).await;
    let at_destination = state(&destination, &prefix, rename, &subjects).await;
    for subject in &subjects {
        let (here, there) = (&at_source[subject.as_str()], &at_destination[subject.as_str()]);
        // NONE writes into the destination's default context, which may hold the destination's
        // own subjects: a subject gone at the source altogether is left there by design, unless
        // the exporter names it.
        let left_by_design =
            matches!(exporter.context_type, ContextType::None) && !named_subjects && !listed_subjects.contains(subject);
        if left_by_design {
            continue;
        }
        if here["versions"] != there["versions"] {
            return Err(format!(
                "subject '{subject}' differs:\nsource      {}\ndestination {}",
                here["versions"], there["versions"]
            ));
        }
        if (named_subjects || listed_subjects.contains(subject)) && here["config"] != there["config"] {
            return Err(format!("subject '{subject}' config differs: {} vs {}", here["config"], there["config"]));
        }
    }
    let context = exporter.destination_context().map_or_else(String::new, |context| format!(":{context}:"));
    let (source_ids, destination_ids) =
        (ids(&source, &at_source, "").await, ids(&destination, &at_source, &context).await);
    for (id, schema) in &source_ids {
        if destination_ids.get(id) != Some(schema) {
            return Err(format!("ID {id}: source {schema}, destination {:?}", destination_ids.get(id)));
        }
    }
    drop(wiped_dirs);
    Ok(format!(
        "{operations} operations, {} versions, {} injected call faults, {:?}",
        source_ids.len(),
        destination.injected.load(Ordering::Relaxed),
        faults
    ))
}

/// The model of the source as it is (read back): the workload works on what the source holds.
async fn model_of(source: &RouterApi, model: &mut Model) {
    model.versions.clear();
    for subject in SUBJECTS {
        let listed = call(source, Method::Get, &format!("/subjects/{subject}/versions?deleted=true"), None).await;
        let live = numbers(&call(source, Method::Get, &format!("/subjects/{subject}/versions"), None).await.body);
        for number in numbers(&listed.body) {
            let record =
                call(source, Method::Get, &format!("/subjects/{subject}/versions/{number}?deleted=true"), None).await;
            let schema: Value =
                serde_json::from_str(record.body["schema"].as_str().unwrap_or("{}")).unwrap_or(Value::Null);
            let name = schema["name"].as_str().unwrap_or_default().to_owned();
            if let Some(n) = name.strip_prefix('T').and_then(|n| n.parse::<u64>().ok()) {
                model.next_type = model.next_type.max(n);
            }
            model.versions.entry(subject.to_owned()).or_default().push((number, name, !live.contains(&number)));
        }
    }
}

/// The source's versions whose reference names a version the source no longer holds.
async fn dangling_references(source: &RouterApi) -> Vec<String> {
    let mut out = Vec::new();
    for subject in SUBJECTS {
        let listed = call(source, Method::Get, &format!("/subjects/{subject}/versions?deleted=true"), None).await;
        for number in numbers(&listed.body) {
            let record =
                call(source, Method::Get, &format!("/subjects/{subject}/versions/{number}?deleted=true"), None).await;
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

/// `make test` runs the default seeds; more with `EXPORTER_PROPERTY_SEEDS=200 cargo nextest run -p
/// api-tests -E 'test(/exporter_property/)'`, one replayed with `EXPORTER_PROPERTY_SEED=N`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_workloads_with_faults_converge_on_embedded() {
    let seeds: Vec<u64> = match std::env::var("EXPORTER_PROPERTY_SEED") {
        Ok(seed) => vec![seed.parse().unwrap_or_else(|error| panic!("EXPORTER_PROPERTY_SEED: {error}"))],
        Err(_) => {
            let count =
                std::env::var("EXPORTER_PROPERTY_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(DEFAULT_SEEDS);
            (1..=count).collect()
        }
    };
    let mut failures = Vec::new();
    for seed in &seeds {
        match run_seed(*seed).await {
            Ok(summary) => eprintln!("seed {seed}: converged ({summary})"),
            Err(divergence) => {
                eprintln!("seed {seed}: FAILED: {divergence}");
                failures.push(format!("seed {seed} (replay: EXPORTER_PROPERTY_SEED={seed}): {divergence}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} seeds failed:\n{}", failures.len(), seeds.len(), failures.join("\n"));
}
