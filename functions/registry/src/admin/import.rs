//! `registry import`: applies a [`Snapshot`] (read from a registry or an export file) to a target
//! in IMPORT mode, keeping IDs (each in its context's ID space), versions and deleted flags, then
//! verifies the result.
//!
//! Idempotent and resumable: the target's current rows are read first and only the difference is
//! written (a version already present with the same ID and deleted flag is skipped), so a rerun
//! after a crash finishes the job. Order: IMPORT mode (forced) at the settings scope of every
//! context written into (see [`enter_import`]), versions (references first; a soft-deleted
//! version is registered, then soft-deleted), subject and context configs, global config, subject
//! modes, and last each scope put into IMPORT gets the source's mode for it, or else the mode it
//! had before (none of its own, READWRITE at the top level, when that was IMPORT).

use super::api::{Answer, Api};
use super::contexts::{context_of, settings_subject};
use super::snapshot::{SchemaEntry, Snapshot};
use super::{AdminError, Summary, progress};
use registry_core::model::{Context, QualifiedName};
use std::collections::{BTreeMap, BTreeSet};

/// What the target holds for one (subject, version): its ID and deleted flag.
type Present = BTreeMap<(String, i32), (i32, bool)>;

/// Confluent's error code for a subject (here: a context's settings scope) the target refuses;
/// a store that keeps no settings per context answers it.
const INVALID_SUBJECT: i64 = 42208;

/// A `/mode` scope the import put into IMPORT (`None`: the top level) and the mode it had.
#[derive(Debug)]
struct Entered {
    scope: Option<String>,
    before: Option<String>,
}

/// Applies `snapshot` to `target` (nothing written when `dry_run`), then verifies unless `dry_run`.
pub async fn apply(snapshot: &Snapshot, target: &Api, dry_run: bool) -> Result<Summary, AdminError> {
    let mut summary = Summary::new(if dry_run { "import (dry run)" } else { "import" });
    let entered = if dry_run { Vec::new() } else { enter_import(target, snapshot).await? };
    let present = present(target, snapshot).await?;
    let bar = progress::bar(snapshot.schemas.len(), "importing versions");
    let writer = (!dry_run).then_some(target);
    for entry in &snapshot.schemas {
        let key = (entry.subject.clone(), entry.version);
        match present.get(&key) {
            Some(&(id, deleted)) if id == entry.id && deleted == entry.deleted => {
                summary.count("versions already present")
            }
            Some(&(id, true)) if id == entry.id && !entry.deleted => {
                write_version(writer, entry, &mut summary).await?;
            }
            Some(&(id, false)) if id == entry.id => {
                soft_delete(writer, entry, &mut summary).await?;
            }
            _ => write_version(writer, entry, &mut summary).await?,
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !dry_run {
        for (subject, config) in &snapshot.subject_configs {
            let answer = target.put_config(Some(subject), config).await?;
            carried(answer, "config", subject, &mut summary)?;
        }
        if let Some(config) = &snapshot.global_config {
            target.set_config(None, config).await?;
        }
        let entered_scopes: BTreeSet<Option<&str>> = entered.iter().map(|e| e.scope.as_deref()).collect();
        for (subject, mode) in &snapshot.subject_modes {
            if !entered_scopes.contains(&Some(subject.as_str())) {
                set_mode(target, Some(subject), mode, &mut summary).await?;
            }
        }
        for scope in entered {
            let source = match &scope.scope {
                None => snapshot.global_mode.as_ref(),
                Some(subject) => snapshot.subject_modes.get(subject),
            };
            match (source.or(scope.before.as_ref()), &scope.scope) {
                (Some(mode), subject) => set_mode(target, subject.as_deref(), mode, &mut summary).await?,
                (None, Some(subject)) => target.delete_mode(subject).await?,
                (None, None) => set_mode(target, None, "READWRITE", &mut summary).await?,
            }
        }
    }
    summary.add("subject configs", snapshot.subject_configs.len());
    summary.add("subject modes", snapshot.subject_modes.len());
    if !dry_run {
        let problems = verify(snapshot, target).await?;
        summary.add("verified ids", ids(snapshot).len());
        summary.add("verified subjects", snapshot.subjects().len());
        summary.problems.extend(problems);
    }
    Ok(summary)
}

/// Puts the settings scope of every context `snapshot` has versions in (`:.ctx:`, or the top
/// level for the default context) into IMPORT, forced: a subject's mode resolves through its
/// context's scope, so the top level alone does not cover a named context. Returns what was
/// entered, with the mode each scope had before; IMPORT found there is what an interrupted run
/// left, and counts as no mode of its own (a scope left in IMPORT refuses every producer).
async fn enter_import(target: &Api, snapshot: &Snapshot) -> Result<Vec<Entered>, AdminError> {
    let mut entered = Vec::new();
    for context in snapshot.contexts() {
        let scope = settings_subject(&context);
        let before = target.mode(scope.as_deref()).await?.filter(|mode| mode != "IMPORT");
        target.set_mode(scope.as_deref(), "IMPORT").await?;
        entered.push(Entered { scope, before });
    }
    Ok(entered)
}

/// Sets `mode` at `subject` (or the top level), as [`carried`] judges the answer.
async fn set_mode(target: &Api, subject: Option<&str>, mode: &str, summary: &mut Summary) -> Result<(), AdminError> {
    match subject {
        Some(subject) => carried(target.put_mode(Some(subject), mode).await?, "mode", subject, summary),
        None => target.set_mode(None, mode).await,
    }
}

/// Judges the answer to a setting written at `subject`: a context's settings refused by a target
/// that keeps none per context (42208) are a problem, not a stop; any other refusal stops.
fn carried(answer: Answer, kind: &str, subject: &str, summary: &mut Summary) -> Result<(), AdminError> {
    if answer.error_code() == Some(INVALID_SUBJECT) && QualifiedName::split(subject).is_context_only() {
        summary.problems.push(format!("{kind} of {subject} not carried: the target refuses it ({})", answer.body));
        return Ok(());
    }
    answer.ok(&format!("PUT /{kind}/{subject}"))?;
    Ok(())
}

/// Registers `entry` with its ID and version (IMPORT) in `target` (`None`: a dry run, which only
/// counts), then soft-deletes it if it was deleted.
async fn write_version(target: Option<&Api>, entry: &SchemaEntry, summary: &mut Summary) -> Result<(), AdminError> {
    summary.count("versions registered");
    let Some(target) = target else { return soft_delete(None, entry, summary).await };
    let path = format!("/subjects/{}/versions", super::api::segment(&entry.subject));
    let answer = target.call("POST", &path, Some(&entry.register_body())).await?;
    let body = answer.ok(&format!("import {} version {} (id {})", entry.subject, entry.version, entry.id))?;
    if body.get("id").and_then(serde_json::Value::as_i64) != Some(i64::from(entry.id)) {
        summary.problems.push(format!("{} version {}: target answered id {body}", entry.subject, entry.version));
    }
    soft_delete(Some(target), entry, summary).await
}

/// Soft-deletes `entry` in `target` if it was deleted (`None`: a dry run, which only counts).
async fn soft_delete(target: Option<&Api>, entry: &SchemaEntry, summary: &mut Summary) -> Result<(), AdminError> {
    if !entry.deleted {
        return Ok(());
    }
    summary.count("versions soft-deleted");
    let Some(target) = target else { return Ok(()) };
    let answer = target.delete_version(&entry.subject, entry.version, false).await?;
    if answer.status >= 300 {
        summary.problems.push(format!(
            "{} version {}: soft delete refused: HTTP {} {}",
            entry.subject, entry.version, answer.status, answer.body
        ));
    }
    Ok(())
}

/// The target's rows for the snapshot's subjects.
async fn present(target: &Api, snapshot: &Snapshot) -> Result<Present, AdminError> {
    let existing: BTreeSet<String> = target.subjects().await?.into_iter().collect();
    let mut present = Present::new();
    for subject in snapshot.subjects().into_iter().filter(|s| existing.contains(*s)) {
        let live: BTreeSet<i32> = target.versions(subject, false).await?.into_iter().collect();
        for version in target.versions(subject, true).await? {
            let answer = target.version(subject, version).await?;
            let id = answer.get("id").and_then(serde_json::Value::as_i64).and_then(|id| i32::try_from(id).ok());
            if let Some(id) = id {
                present.insert((subject.to_string(), version), (id, !live.contains(&version)));
            }
        }
    }
    Ok(present)
}

/// Every ID the snapshot's versions carry, with its context (IDs are unique per context).
pub fn ids(snapshot: &Snapshot) -> BTreeMap<(Context, i32), &str> {
    snapshot.schemas.iter().map(|e| ((context_of(&e.subject), e.id), e.schema.as_str())).collect()
}

/// Problems found comparing `target` with `snapshot`: every ID must resolve in its context to
/// byte-identical text and every subject must have the same versions (all, and live).
pub async fn verify(snapshot: &Snapshot, target: &Api) -> Result<Vec<String>, AdminError> {
    let mut problems = Vec::new();
    let ids = ids(snapshot);
    let bar = progress::bar(ids.len(), "verifying ids");
    for ((context, id), text) in &ids {
        let path = match settings_subject(context) {
            Some(scope) => format!("/schemas/ids/{id}?subject={}", super::api::segment(&scope)),
            None => format!("/schemas/ids/{id}"),
        };
        let answer = target.call("GET", &path, None).await?;
        let at = if context.is_default() { String::new() } else { format!(" in {context}") };
        match answer.body.get("schema").and_then(serde_json::Value::as_str) {
            Some(found) if found == *text => {}
            Some(_) => problems.push(format!("id {id}{at}: text differs")),
            None => problems.push(format!("id {id}{at}: HTTP {} {}", answer.status, answer.body)),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    for subject in snapshot.subjects() {
        let versions = |deleted: bool| -> Vec<i32> {
            let keep = |e: &&SchemaEntry| e.subject == subject && (deleted || !e.deleted);
            let mut v: Vec<i32> = snapshot.schemas.iter().filter(keep).map(|e| e.version).collect();
            v.sort_unstable();
            v
        };
        for deleted in [true, false] {
            let found = target.versions(subject, deleted).await?;
            if found != versions(deleted) {
                problems.push(format!(
                    "{subject} (deleted={deleted}): versions {found:?}, expected {:?}",
                    versions(deleted)
                ));
            }
        }
    }
    Ok(problems)
}
