//! `registry import`: applies a [`Snapshot`] (read from a registry or an export file) to a target
//! in IMPORT mode, keeping IDs, versions and deleted flags, then verifies the result.
//!
//! Idempotent and resumable: the target's current rows are read first and only the difference is
//! written (a version already present with the same ID and deleted flag is skipped), so a rerun
//! after a crash finishes the job. Order: global mode IMPORT (forced), versions (references
//! first; a soft-deleted version is registered, then soft-deleted), subject configs, global
//! config, subject modes, and last the source's global mode (READWRITE when it had none).

use super::api::Api;
use super::snapshot::{SchemaEntry, Snapshot};
use super::{AdminError, Summary, progress};
use std::collections::{BTreeMap, BTreeSet};

/// What the target holds for one (subject, version): its ID and deleted flag.
type Present = BTreeMap<(String, i32), (i32, bool)>;

/// Applies `snapshot` to `target` (nothing written when `dry_run`), then verifies unless `dry_run`.
pub async fn apply(snapshot: &Snapshot, target: &Api, dry_run: bool) -> Result<Summary, AdminError> {
    let mut summary = Summary::new(if dry_run { "import (dry run)" } else { "import" });
    if !dry_run {
        target.set_mode(None, "IMPORT").await?;
    }
    let present = present(target, snapshot).await?;
    let bar = progress::bar(snapshot.schemas.len(), "importing versions");
    for entry in &snapshot.schemas {
        let key = (entry.subject.clone(), entry.version);
        match present.get(&key) {
            Some(&(id, deleted)) if id == entry.id && deleted == entry.deleted => {
                summary.count("versions already present")
            }
            Some(&(id, true)) if id == entry.id && !entry.deleted => {
                write_version(target, entry, dry_run, &mut summary).await?;
            }
            Some(&(id, false)) if id == entry.id => {
                soft_delete(target, entry, dry_run, &mut summary).await?;
            }
            _ => write_version(target, entry, dry_run, &mut summary).await?,
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !dry_run {
        for (subject, config) in &snapshot.subject_configs {
            target.set_config(Some(subject), config).await?;
        }
        if let Some(config) = &snapshot.global_config {
            target.set_config(None, config).await?;
        }
        for (subject, mode) in &snapshot.subject_modes {
            target.set_mode(Some(subject), mode).await?;
        }
        target.set_mode(None, snapshot.global_mode.as_deref().unwrap_or("READWRITE")).await?;
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

/// Registers `entry` with its ID and version (IMPORT), then soft-deletes it if it was deleted.
async fn write_version(
    target: &Api,
    entry: &SchemaEntry,
    dry_run: bool,
    summary: &mut Summary,
) -> Result<(), AdminError> {
    summary.count("versions registered");
    if dry_run {
        if entry.deleted {
            summary.count("versions soft-deleted");
        }
        return Ok(());
    }
    let path = format!("/subjects/{}/versions", super::api::segment(&entry.subject));
    let answer = target.call("POST", &path, Some(&entry.register_body())).await?;
    let body = answer.ok(&format!("import {} version {} (id {})", entry.subject, entry.version, entry.id))?;
    if body.get("id").and_then(serde_json::Value::as_i64) != Some(i64::from(entry.id)) {
        summary.problems.push(format!("{} version {}: target answered id {body}", entry.subject, entry.version));
    }
    if entry.deleted {
        soft_delete(target, entry, dry_run, summary).await?;
    }
    Ok(())
}

async fn soft_delete(
    target: &Api,
    entry: &SchemaEntry,
    dry_run: bool,
    summary: &mut Summary,
) -> Result<(), AdminError> {
    summary.count("versions soft-deleted");
    if dry_run {
        return Ok(());
    }
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

/// Every ID the snapshot's versions carry.
pub fn ids(snapshot: &Snapshot) -> BTreeMap<i32, &str> {
    snapshot.schemas.iter().map(|e| (e.id, e.schema.as_str())).collect()
}

/// Problems found comparing `target` with `snapshot`: every ID must resolve to byte-identical
/// text and every subject must have the same versions (all, and live).
pub async fn verify(snapshot: &Snapshot, target: &Api) -> Result<Vec<String>, AdminError> {
    let mut problems = Vec::new();
    let ids = ids(snapshot);
    let bar = progress::bar(ids.len(), "verifying ids");
    for (id, text) in &ids {
        let answer = target.call("GET", &format!("/schemas/ids/{id}"), None).await?;
        match answer.body.get("schema").and_then(serde_json::Value::as_str) {
            Some(found) if found == *text => {}
            Some(_) => problems.push(format!("id {id}: text differs")),
            None => problems.push(format!("id {id}: HTTP {} {}", answer.status, answer.body)),
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
