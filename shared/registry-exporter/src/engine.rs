//! One synchronisation pass of an exporter: makes the destination hold, for every exported
//! subject, what the source holds, through two [`RegistryApi`] ports speaking Confluent's REST API
//! (the source is this registry's own router in process, the destination any Confluent-compatible
//! registry).
//!
//! A pass compares instead of replaying a log, so it never skips a change and is idempotent: a
//! pass interrupted anywhere (crash, destination down) is simply run again, and the destination
//! ends identical. Per exported subject (matching names, and every subject their versions
//! reference, renamed the same way):
//! - the destination context (or, for `contextType` NONE, the destination subject) is put in
//!   IMPORT mode, as Confluent's exporter does;
//! - each source version missing at the destination is registered with its ID and version,
//!   schema type, references, metadata and rule set (referenced subjects first), then
//!   soft-deleted if it is soft-deleted at the source;
//! - a version soft-deleted at the source is soft-deleted at the destination; one hard-deleted at
//!   the source (gone) is hard-deleted there; a destination version with another ID than the
//!   source's is replaced (registrations referenced first, deletes referrers first);
//! - the subject's own config (`/config/{subject}`) is copied, or removed when the source has none.
//!
//! A source subject in IMPORT mode of its own is a copy another exporter writes and is not exported
//! on (this bounds two registries exporting to each other); it is still exported as the reference
//! of a subject that is.
//!
//! In a named destination context (AUTO, CUSTOM), the exporter owns the context: a destination
//! subject whose source subject is gone altogether is hard-deleted too. With NONE the destination
//! default context may hold the destination's own subjects, so those are left alone.

use crate::destination::DestinationPolicy;
use crate::model::Exporter;
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The HTTP methods a pass uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// An answer: the status and the JSON body (`Null` when empty or not JSON).
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    /// The Confluent `error_code` of a refusal.
    pub fn error_code(&self) -> Option<i64> {
        self.body.get("error_code").and_then(Value::as_i64)
    }

    fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A registry spoken to through Confluent's REST API. `Err` is a transport failure (connection
/// refused, timeout): the registry did not answer.
#[async_trait]
pub trait RegistryApi: Send + Sync {
    /// `method path` (path and query, from `/`) with `body` as JSON.
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, String>;

    /// Where this registry is, for messages.
    fn describe(&self) -> String;

    /// The subjects holding a config of their own here, versions or none: those without versions
    /// are what a source's `/subjects` listing leaves out and a pass still copies. No Confluent
    /// endpoint answers it, so only this registry's own router in process can ([`RegistryApi`] of
    /// the source); a destination is never asked, and by default answers none.
    async fn subjects_with_config(&self) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}

/// Opens exporters' destinations: the host's transport (HTTP in every binary, `registry-exporter-http`),
/// so that this crate holds what a pass does and not how it reaches a destination.
pub trait Connect: Send + Sync {
    /// The destination `config` names (credentials opened) for exporter `exporter`, once `policy`
    /// allowed its URL; every address a name resolves to is checked against `policy` as well.
    fn connect(
        &self,
        exporter: &str,
        config: &BTreeMap<String, String>,
        policy: &Arc<DestinationPolicy>,
    ) -> Result<Box<dyn RegistryApi>, String>;
}

/// Why a pass stopped: the text that goes into the exporter's `trace`. It names the call and the
/// destination's status and `error_code`, never the destination's answer body (an internal
/// service's answer must not be shown to whoever defined the exporter).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PassError(pub String);

impl PassError {
    /// `text` cut to [`crate::model::MAX_TRACE_BYTES`].
    pub fn new(text: impl Into<String>) -> Self {
        PassError(crate::model::bounded_trace(text.into()))
    }
}

/// A path segment: everything but unreserved characters percent-encoded.
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One source version as the pass needs it.
#[derive(Clone, Debug)]
struct SourceVersion {
    version: i64,
    id: i64,
    deleted: bool,
    /// The register body (schema, type, references renamed, metadata, rule set, id, version).
    body: Value,
    /// The subjects the version references (source names).
    referenced: Vec<String>,
    /// The versions it references: (source subject, version number).
    references: Vec<(String, i64)>,
}

/// The pass's link to the exporter's record. Checked before every write at the destination: `Err`
/// when the exporter is no longer what the pass was started for (paused, reset, redefined,
/// deleted), which ends the pass at once.
#[async_trait]
pub trait Fence: Send + Sync {
    async fn check(&self) -> Result<(), PassError>;

    /// Told, before the pass writes anything, the source subjects holding a config and no version
    /// that it exports, so that the record remembers them whatever becomes of the pass (a config
    /// removed later is no longer listed anywhere at the source). The default remembers nothing.
    async fn remember(&self, subjects: &BTreeSet<String>) -> Result<(), PassError> {
        let _ = subjects;
        Ok(())
    }
}

/// No fence: the pass always goes on.
pub struct Unfenced;

#[async_trait]
impl Fence for Unfenced {
    async fn check(&self) -> Result<(), PassError> {
        Ok(())
    }
}

/// One pass of `exporter` from `source` to `destination`; the number of writes made at the
/// destination (0 when it was already current).
pub async fn sync_pass(
    exporter: &Exporter,
    source: &dyn RegistryApi,
    destination: &dyn RegistryApi,
) -> Result<u64, PassError> {
    let report = sync_pass_fenced(exporter, &BTreeSet::new(), source, destination, &Unfenced).await?;
    Ok(report.writes)
}

/// What a pass did: the writes it made at the destination, and the source subjects without
/// versions whose config it found and copied (the next pass is given them back as `remembered`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    pub writes: u64,
    pub configured: BTreeSet<String>,
}

/// [`sync_pass`], `fence` checked before every write at the destination, and the subjects in
/// `remembered` (the previous pass's [`PassReport::configured`]) exported whatever the source
/// lists: a config removed from a subject without versions is removed at the destination too.
pub async fn sync_pass_fenced(
    exporter: &Exporter,
    remembered: &BTreeSet<String>,
    source: &dyn RegistryApi,
    destination: &dyn RegistryApi,
    fence: &dyn Fence,
) -> Result<PassReport, PassError> {
    let mut pass = Pass {
        exporter,
        source,
        destination,
        fence,
        writes: 0,
        done: BTreeSet::new(),
        held_at_destination: BTreeMap::new(),
        import_set: false,
        unreachable: AtomicBool::new(false),
        listed: BTreeSet::new(),
        config_only: BTreeSet::new(),
    };
    pass.run(remembered).await?;
    Ok(PassReport { writes: pass.writes, configured: pass.config_only })
}

/// How a fenced pass's reason begins.
pub const FENCED: &str = "the exporter changed during the pass";

/// Most subjects a failed pass names in its reason.
const NAMED_FAILURES: usize = 3;

struct Pass<'a> {
    exporter: &'a Exporter,
    source: &'a dyn RegistryApi,
    destination: &'a dyn RegistryApi,
    fence: &'a dyn Fence,
    writes: u64,
    /// Source subjects taken into this pass (exported, or referenced by one that is).
    done: BTreeSet<String>,
    /// What this pass knows of destination subjects' versions (version → (ID, soft-deleted)), read
    /// once per subject and kept current with this pass's own writes.
    held_at_destination: BTreeMap<String, BTreeMap<i64, (i64, bool)>>,
    /// Whether the destination context's IMPORT mode was checked in this pass.
    import_set: bool,
    /// The destination did not answer a call: the pass ends at once.
    unreachable: AtomicBool,
    /// The subjects the source lists (deleted included).
    listed: BTreeSet<String>,
    /// The exported subjects the source does not list whose config this pass found and copied.
    config_only: BTreeSet<String>,
}

/// A source subject with its versions.
type SourceSubject = (String, Vec<SourceVersion>);

/// A destination subject and one of its version numbers.
type DestinationVersion = (String, i64);

impl Pass<'_> {
    /// Two phases over the versions of the exported subjects and of those they reference, ordered
    /// version by version so that the destination accepts each change whatever happened at the
    /// source since the last pass (two subjects may reference each other through different
    /// versions; versions never form a cycle, since a reference names a version that existed
    /// first): registrations (and replacements of a version number the source reused) with every
    /// referenced version before its referrers, then soft deletes with referrers first, hard
    /// deletes of what the source no longer holds (newest IDs first) and configs. Every version is
    /// registered live, so a soft-deleted chain is exported whole before it is deleted again. A
    /// subject the destination refuses does not stop the others: the pass goes on (skipping only
    /// what depends on it) and fails at the end naming it (the runner retries with backoff).
    async fn run(&mut self, remembered: &BTreeSet<String>) -> Result<(), PassError> {
        let subjects = self.exported_subjects(remembered).await?;
        let mut order: Vec<SourceSubject> = Vec::new();
        for subject in &subjects {
            if self.is_a_copy(subject).await? {
                continue;
            }
            self.collect(subject, 0, &mut order).await?;
        }
        let by_subject: BTreeMap<String, Vec<SourceVersion>> = order.iter().cloned().collect();
        let plan = version_order(&order);
        let mut failed: BTreeMap<String, PassError> = BTreeMap::new();
        for (subject, versions) in &order {
            if versions.is_empty() {
                continue;
            }
            let target = self.exporter.destination_subject(subject);
            let outcome = self.ensure_import_mode(&target).await;
            self.note(subject, outcome, &mut failed)?;
        }
        self.remove_replaced(&order, &mut failed).await?;
        for &(s, v) in &plan {
            let (subject, versions) = &order[s];
            let version = &versions[v];
            if failed.contains_key(subject) {
                continue;
            }
            let blocked = version.referenced.iter().find(|referenced| failed.contains_key(*referenced));
            let outcome = match blocked {
                Some(referenced) => Err(PassError::new(format!("its reference '{referenced}' is not exported"))),
                None => self.register_version(subject, version, &by_subject).await,
            };
            self.note(subject, outcome, &mut failed)?;
        }
        // A version still referenced by one not deleted (or not exported) is not deleted.
        let mut held: BTreeSet<(String, i64)> = BTreeSet::new();
        for &(s, v) in plan.iter().rev() {
            let (subject, versions) = &order[s];
            let version = &versions[v];
            let key = (subject.clone(), version.version);
            if failed.contains_key(subject) || held.contains(&key) {
                held.extend(version.references.iter().cloned());
                continue;
            }
            if !version.deleted {
                continue;
            }
            let outcome = self.soft_delete_if_live(subject, version.version).await;
            if outcome.is_err() {
                held.extend(version.references.iter().cloned());
            }
            self.note(subject, outcome, &mut failed)?;
        }
        let mut vanished: Vec<(i64, String, i64, bool)> = Vec::new();
        for (subject, versions) in &order {
            if failed.contains_key(subject) {
                continue;
            }
            let target = self.exporter.destination_subject(subject);
            let kept: BTreeSet<i64> = versions.iter().map(|version| version.version).collect();
            match self.destination_versions(&target).await {
                Ok(existing) => vanished.extend(
                    existing
                        .into_iter()
                        .filter(|(number, _)| !kept.contains(number))
                        .map(|(number, (id, deleted))| (id, subject.clone(), number, deleted)),
                ),
                Err(error) => self.note(subject, Err(error), &mut failed)?,
            }
        }
        vanished.sort_by(|a, b| b.cmp(a));
        for (_, subject, number, deleted) in vanished {
            if failed.contains_key(&subject) {
                continue;
            }
            let target = self.exporter.destination_subject(&subject);
            let mut outcome = Ok(());
            if !deleted {
                outcome = self.delete_version(&target, number, false).await;
            }
            if outcome.is_ok() {
                outcome = self.delete_version(&target, number, true).await;
            }
            self.note(&subject, outcome, &mut failed)?;
        }
        for (subject, _) in &order {
            if failed.contains_key(subject) {
                continue;
            }
            let target = self.exporter.destination_subject(subject);
            let outcome = self.sync_config(subject, &target).await;
            self.note(subject, outcome, &mut failed)?;
        }
        if let Some(context) = self.exporter.destination_context() {
            let outcome = self.remove_vanished(&context).await;
            self.note("(subjects gone at the source)", outcome, &mut failed)?;
        }
        if failed.is_empty() {
            return Ok(());
        }
        let named: Vec<String> =
            failed.iter().take(NAMED_FAILURES).map(|(subject, error)| format!("'{subject}': {error}")).collect();
        Err(PassError::new(format!("{} subject(s) not exported: {}", failed.len(), named.join("; "))))
    }

    /// The source subjects this pass exports: those the source lists (deleted included), holds a
    /// config for without a version (remembered by the fence before any write), or `remembered`
    /// says held one, that the exporter matches; the
    /// subjects it names literally; and, in a named destination context, the source subjects of
    /// what the destination holds there (a subject whose versions were all hard-deleted may keep
    /// its config).
    async fn exported_subjects(&mut self, remembered: &BTreeSet<String>) -> Result<BTreeSet<String>, PassError> {
        let listed = self.get_ok(Side::Source, "/subjects?deleted=true").await?;
        self.listed = strings(&listed).into_iter().collect();
        let mut subjects = self.listed.clone();
        let configured = self.source.subjects_with_config().await.map_err(|error| {
            PassError::new(format!("the source's configured subjects could not be listed: {error}"))
        })?;
        let config_only: BTreeSet<String> = (configured.into_iter())
            .filter(|subject| !self.listed.contains(subject) && self.exports(subject))
            .collect();
        self.fence.remember(&config_only).await?;
        subjects.extend(config_only);
        subjects.extend(remembered.iter().cloned());
        subjects.extend(
            self.exporter.subjects.iter().filter(|pattern| !pattern.contains('*') && !pattern.is_empty()).cloned(),
        );
        if let Some(context) = self.exporter.destination_context() {
            let prefix = format!(":{context}:");
            let path = format!("/subjects?deleted=true&subjectPrefix={}", segment(&prefix));
            let held = self.get_ok(Side::Destination, &path).await?;
            subjects.extend(
                strings(&held)
                    .iter()
                    .filter_map(|target| target.strip_prefix(&prefix))
                    .filter_map(|renamed| self.source_name(renamed)),
            );
        }
        Ok(subjects.into_iter().filter(|subject| self.exports(subject)).collect())
    }

    /// Whether the exporter exports the source subject `subject` (the source's default context).
    fn exports(&self, subject: &str) -> bool {
        !subject.starts_with(':') && self.exporter.matches(subject)
    }

    /// Records a subject's failure; a fence or an unreachable destination ends the pass at once.
    fn note(
        &self,
        subject: &str,
        outcome: Result<(), PassError>,
        failed: &mut BTreeMap<String, PassError>,
    ) -> Result<(), PassError> {
        match outcome {
            Ok(()) => Ok(()),
            Err(error) if self.unreachable.load(Ordering::Relaxed) || error.0.starts_with(FENCED) => Err(error),
            Err(error) => {
                failed.insert(subject.to_owned(), error);
                Ok(())
            }
        }
    }

    /// Whether `subject` is held in IMPORT mode of its own at the source: a copy another registry's
    /// exporter writes (exporters put what they write in IMPORT mode), which is not exported on.
    /// Two registries exporting to each other (with a rename, in the default context) would
    /// otherwise copy each other's copies for ever, each round under a longer name.
    async fn is_a_copy(&self, subject: &str) -> Result<bool, PassError> {
        let path = format!("/mode/{}", segment(subject));
        let answer = self.call(Side::Source, Method::Get, &path, None).await?;
        Ok(answer.is_success() && answer.body.get("mode").and_then(Value::as_str) == Some("IMPORT"))
    }

    /// Appends `subject` (with its versions) to `order` after every subject it references.
    async fn collect(&mut self, subject: &str, depth: usize, order: &mut Vec<SourceSubject>) -> Result<(), PassError> {
        if depth > 64 {
            return Err(PassError::new(format!("references of subject '{subject}' nest deeper than 64")));
        }
        if !self.done.insert(subject.to_owned()) {
            return Ok(());
        }
        let versions = self.source_versions(subject).await?;
        for referenced in versions.iter().flat_map(|version| version.referenced.clone()).collect::<BTreeSet<_>>() {
            Box::pin(self.collect(&referenced, depth + 1, order)).await?;
        }
        order.push((subject.to_owned(), versions));
        Ok(())
    }

    /// Registers one source version unless the destination holds it under the same ID, with its
    /// ID and number; a number the destination holds with another ID (the source hard-deleted its
    /// version and reused the number) is replaced: hard-deleted at the destination, then
    /// registered, as IMPORT allows.
    async fn register_version(
        &mut self,
        subject: &str,
        version: &SourceVersion,
        by_subject: &BTreeMap<String, Vec<SourceVersion>>,
    ) -> Result<(), PassError> {
        let target = self.exporter.destination_subject(subject);
        let existing = self.destination_versions(&target).await?;
        match existing.get(&version.version) {
            Some(&(id, _)) if id == version.id => return Ok(()),
            Some(&(_, deleted)) => {
                if !deleted {
                    self.delete_version(&target, version.version, false).await?;
                }
                self.delete_version(&target, version.version, true).await?;
            }
            None => {}
        }
        let path = format!("/subjects/{}/versions?normalize=false", segment(&target));
        self.fence.check().await?;
        let answer = self.call(Side::Destination, Method::Post, &path, Some(&version.body)).await?;
        if answer.is_success() {
            self.registered(&target, version);
            return Ok(());
        }
        if answer.error_code() == Some(42201) && self.revive_references(version, by_subject).await? {
            self.write(Method::Post, &path, Some(&version.body), &target).await?;
            self.registered(&target, version);
            return Ok(());
        }
        Err(refused(Side::Destination, Method::Post, &path, &answer, self.destination))
    }

    /// Hard-deletes, before any registration, every destination version whose number the source
    /// holds under another ID (the source hard-deleted it and reused the number), referrers
    /// first. Such versions may reference each other (the source deleted a referrer and what it
    /// referenced, then reused both numbers), and the replacement of one is refused (42206)
    /// while another still references it; deleted in registration order, the first replacement
    /// would wait for a referrer whose subject in turn waits for it. A version no replaced one
    /// references goes first; what stays referenced otherwise fails its subject as before.
    async fn remove_replaced(
        &mut self,
        order: &[SourceSubject],
        failed: &mut BTreeMap<String, PassError>,
    ) -> Result<(), PassError> {
        // Per destination version: its source subject, and what it references at the destination.
        let mut replaced: BTreeMap<DestinationVersion, (String, BTreeSet<DestinationVersion>)> = BTreeMap::new();
        for (subject, versions) in order {
            let target = self.exporter.destination_subject(subject);
            let existing = match self.destination_versions(&target).await {
                Ok(existing) => existing,
                Err(error) => {
                    self.note(subject, Err(error), failed)?;
                    continue;
                }
            };
            for version in versions {
                if existing.get(&version.version).is_some_and(|&(id, _)| id != version.id) {
                    let path = format!("/subjects/{}/versions/{}?deleted=true", segment(&target), version.version);
                    let record = self.get_ok(Side::Destination, &path).await?;
                    let references = destination_references(&record, &target);
                    replaced.insert((target.clone(), version.version), (subject.clone(), references));
                }
            }
        }
        while !replaced.is_empty() {
            let referenced: BTreeSet<DestinationVersion> =
                replaced.values().flat_map(|(_, references)| references.iter().cloned()).collect();
            let ready: Vec<DestinationVersion> =
                replaced.keys().filter(|key| !referenced.contains(*key)).cloned().collect();
            if ready.is_empty() {
                return Ok(()); // versions never reference each other in a cycle
            }
            for (target, number) in ready {
                let Some((subject, _)) = replaced.remove(&(target.clone(), number)) else { continue };
                if failed.contains_key(&subject) {
                    continue;
                }
                let live = self.destination_versions(&target).await?.get(&number).is_some_and(|&(_, deleted)| !deleted);
                let mut outcome = Ok(());
                if live {
                    outcome = self.delete_version(&target, number, false).await;
                }
                if outcome.is_ok() {
                    outcome = self.delete_version(&target, number, true).await;
                }
                self.note(&subject, outcome, failed)?;
            }
        }
        Ok(())
    }

    /// Counts a registration at the destination and remembers it live.
    fn registered(&mut self, target: &str, version: &SourceVersion) {
        self.writes += 1;
        if let Some(held) = self.held_at_destination.get_mut(target) {
            held.insert(version.version, (version.id, false));
        }
    }

    /// Soft-deletes `number` of `subject`'s destination subject when the destination holds it live.
    async fn soft_delete_if_live(&mut self, subject: &str, number: i64) -> Result<(), PassError> {
        let target = self.exporter.destination_subject(subject);
        let existing = self.destination_versions(&target).await?;
        if existing.get(&number).is_some_and(|&(_, deleted)| !deleted) {
            self.delete_version(&target, number, false).await?;
        }
        Ok(())
    }

    /// A version whose reference the destination holds soft-deleted cannot be registered (42201):
    /// the referenced version was deleted there in an earlier pass, before this referrer arrived.
    /// It is registered again live (hard-deleted, then registered with its ID and number), so
    /// the referrer can be; the deletes of this pass delete it again, after the referrer. Whether
    /// any reference was revived.
    async fn revive_references(
        &mut self,
        version: &SourceVersion,
        by_subject: &BTreeMap<String, Vec<SourceVersion>>,
    ) -> Result<bool, PassError> {
        let mut revived = false;
        for (referenced, number) in &version.references {
            let number = *number;
            let Some(source) = by_subject.get(referenced).and_then(|vs| vs.iter().find(|v| v.version == number)) else {
                continue;
            };
            let target = self.exporter.destination_subject(referenced);
            let existing = self.destination_versions(&target).await?;
            if existing.get(&number).is_some_and(|&(_, deleted)| deleted) {
                self.delete_version(&target, number, true).await?;
                let path = format!("/subjects/{}/versions?normalize=false", segment(&target));
                self.write(Method::Post, &path, Some(&source.body), &target).await?;
                if let Some(held) = self.held_at_destination.get_mut(&target) {
                    held.insert(number, (source.id, false));
                }
                revived = true;
            }
        }
        Ok(revived)
    }

    /// Hard-deletes the destination subjects of `context` whose source subject is gone.
    async fn remove_vanished(&mut self, context: &str) -> Result<(), PassError> {
        let prefix = format!(":{context}:");
        let path = format!("/subjects?deleted=true&subjectPrefix={}", segment(&prefix));
        let listed = self.get_ok(Side::Destination, &path).await?;
        for target in strings(&listed) {
            let Some(renamed) = target.strip_prefix(&prefix) else { continue };
            let Some(subject) = self.source_name(renamed) else { continue };
            if self.done.contains(&subject) || !self.exporter.matches(&subject) {
                continue;
            }
            for (number, (_, deleted)) in self.destination_versions(&target).await? {
                if !deleted {
                    self.delete_version(&target, number, false).await?;
                }
                self.delete_version(&target, number, true).await?;
            }
        }
        Ok(())
    }

    /// The source subject a renamed destination subject came from, when the rename format tells.
    fn source_name(&self, renamed: &str) -> Option<String> {
        let format = &self.exporter.subject_rename_format;
        let (before, after) = format.split_once(crate::model::SUBJECT_PLACEHOLDER)?;
        let subject = renamed.strip_prefix(before)?.strip_suffix(after)?;
        Some(subject.to_owned())
    }

    async fn source_versions(&self, subject: &str) -> Result<Vec<SourceVersion>, PassError> {
        let path = format!("/subjects/{}/versions?deleted=true", segment(subject));
        let answer = self.call(Side::Source, Method::Get, &path, None).await?;
        if answer.status == 404 {
            return Ok(Vec::new());
        }
        let listed = expect_ok(answer, Side::Source, &path)?;
        let mut versions = Vec::new();
        for number in listed.as_array().into_iter().flatten().filter_map(Value::as_i64) {
            let path = format!("/subjects/{}/versions/{number}?deleted=true", segment(subject));
            let answer = self.call(Side::Source, Method::Get, &path, None).await?;
            if answer.status == 404 {
                continue; // hard-deleted since the listing
            }
            let record = expect_ok(answer, Side::Source, &path)?;
            versions.push(self.source_version(&record)?);
        }
        Ok(versions)
    }

    fn source_version(&self, record: &Value) -> Result<SourceVersion, PassError> {
        let number = |field: &str| {
            record
                .get(field)
                .and_then(Value::as_i64)
                .ok_or_else(|| PassError::new(format!("source answered no {field}")))
        };
        let (version, id) = (number("version")?, number("id")?);
        let mut referenced = Vec::new();
        let mut pairs = Vec::new();
        let mut references = Vec::new();
        for reference in record.get("references").and_then(Value::as_array).into_iter().flatten() {
            let mut reference = reference.clone();
            if let Some(subject) = reference.get("subject").and_then(Value::as_str).map(str::to_owned) {
                let renamed = self.exporter.subject_rename_format.replace(crate::model::SUBJECT_PLACEHOLDER, &subject);
                reference["subject"] = Value::String(renamed);
                if let Some(number) = reference.get("version").and_then(Value::as_i64) {
                    pairs.push((subject.clone(), number));
                }
                referenced.push(subject);
            }
            references.push(reference);
        }
        let mut body = Map::new();
        for field in ["schema", "schemaType", "metadata", "ruleSet"] {
            if let Some(value) = record.get(field).filter(|value| !value.is_null()) {
                body.insert(field.to_owned(), value.clone());
            }
        }
        if !references.is_empty() {
            body.insert("references".to_owned(), Value::Array(references));
        }
        body.insert("id".to_owned(), json!(id));
        body.insert("version".to_owned(), json!(version));
        let deleted = record.get("deleted").and_then(Value::as_bool).unwrap_or(false);
        Ok(SourceVersion { version, id, deleted, body: Value::Object(body), referenced, references: pairs })
    }

    /// The destination subject's versions: version → (ID, soft-deleted), read once per pass.
    async fn destination_versions(&mut self, target: &str) -> Result<BTreeMap<i64, (i64, bool)>, PassError> {
        if let Some(held) = self.held_at_destination.get(target) {
            return Ok(held.clone());
        }
        let versions = self.read_destination_versions(target).await?;
        self.held_at_destination.insert(target.to_owned(), versions.clone());
        Ok(versions)
    }

    async fn read_destination_versions(&self, target: &str) -> Result<BTreeMap<i64, (i64, bool)>, PassError> {
        let path = format!("/subjects/{}/versions?deleted=true", segment(target));
        let answer = self.call(Side::Destination, Method::Get, &path, None).await?;
        if answer.status == 404 {
            return Ok(BTreeMap::new());
        }
        let listed = expect_ok(answer, Side::Destination, &path)?;
        let live_path = format!("/subjects/{}/versions", segment(target));
        let live_answer = self.call(Side::Destination, Method::Get, &live_path, None).await?;
        let live: BTreeSet<i64> = if live_answer.status == 404 {
            BTreeSet::new()
        } else {
            expect_ok(live_answer, Side::Destination, &live_path)?
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_i64)
                .collect()
        };
        let mut versions = BTreeMap::new();
        for number in listed.as_array().into_iter().flatten().filter_map(Value::as_i64) {
            let path = format!("/subjects/{}/versions/{number}?deleted=true", segment(target));
            let answer = self.call(Side::Destination, Method::Get, &path, None).await?;
            if answer.status == 404 {
                continue;
            }
            let record = expect_ok(answer, Side::Destination, &path)?;
            let id = record.get("id").and_then(Value::as_i64).unwrap_or(-1);
            versions.insert(number, (id, !live.contains(&number)));
        }
        Ok(versions)
    }

    /// IMPORT mode on the destination context (once per pass), or on the subject for NONE.
    async fn ensure_import_mode(&mut self, target: &str) -> Result<(), PassError> {
        let scope = match self.exporter.destination_context() {
            Some(_) if self.import_set => return Ok(()),
            Some(context) => format!(":{context}:"),
            None => target.to_owned(),
        };
        let path = format!("/mode/{}", segment(&scope));
        let answer = self.call(Side::Destination, Method::Get, &path, None).await?;
        let current = answer.body.get("mode").and_then(Value::as_str).map(str::to_owned);
        if !(answer.is_success() && current.as_deref() == Some("IMPORT")) {
            let path = format!("{path}?force=true");
            self.write(Method::Put, &path, Some(&json!({ "mode": "IMPORT" })), target).await?;
        }
        self.import_set = true;
        Ok(())
    }

    async fn delete_version(&mut self, target: &str, version: i64, permanent: bool) -> Result<(), PassError> {
        self.fence.check().await?;
        let path = format!("/subjects/{}/versions/{version}?permanent={permanent}", segment(target));
        let answer = self.call(Side::Destination, Method::Delete, &path, None).await?;
        // Already gone (or already soft-deleted) is done: a retried pass repeats deletes.
        if answer.is_success() || matches!(answer.error_code(), Some(40401 | 40402 | 40406)) {
            self.writes += 1;
            if let Some(held) = self.held_at_destination.get_mut(target) {
                if permanent {
                    held.remove(&version);
                } else if let Some(entry) = held.get_mut(&version) {
                    entry.1 = true;
                }
            }
            return Ok(());
        }
        Err(refused(Side::Destination, Method::Delete, &path, &answer, self.destination))
    }

    /// Copies the subject's own config, or removes the destination's when the source has none.
    async fn sync_config(&mut self, subject: &str, target: &str) -> Result<(), PassError> {
        let source_path = format!("/config/{}", segment(subject));
        let source = self.call(Side::Source, Method::Get, &source_path, None).await?;
        let target_path = format!("/config/{}", segment(target));
        let current = self.call(Side::Destination, Method::Get, &target_path, None).await?;
        let source_config = if source.is_success() { Some(source.body) } else { None };
        let target_config = if current.is_success() { Some(current.body) } else { None };
        if source_config.is_some() && !self.listed.contains(subject) {
            self.config_only.insert(subject.to_owned());
        }
        if source_config == target_config {
            return Ok(());
        }
        match source_config {
            Some(Value::Object(fields)) => {
                let update: Map<String, Value> =
                    fields
                        .into_iter()
                        .map(|(key, value)| {
                            if key == "compatibilityLevel" { ("compatibility".to_owned(), value) } else { (key, value) }
                        })
                        .collect();
                self.write(Method::Put, &target_path, Some(&Value::Object(update)), target).await
            }
            _ => {
                self.fence.check().await?;
                let answer = self.call(Side::Destination, Method::Delete, &target_path, None).await?;
                if answer.is_success() || answer.status == 404 {
                    self.writes += 1;
                    Ok(())
                } else {
                    Err(refused(Side::Destination, Method::Delete, &target_path, &answer, self.destination))
                }
            }
        }
    }

    /// A write at the destination that must succeed.
    async fn write(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        _target: &str,
    ) -> Result<(), PassError> {
        self.fence.check().await?;
        let answer = self.call(Side::Destination, method, path, body).await?;
        if !answer.is_success() {
            return Err(refused(Side::Destination, method, path, &answer, self.destination));
        }
        self.writes += 1;
        Ok(())
    }

    async fn get_ok(&self, side: Side, path: &str) -> Result<Value, PassError> {
        let answer = self.call(side, Method::Get, path, None).await?;
        expect_ok(answer, side, path)
    }

    async fn call(&self, side: Side, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, PassError> {
        let api = match side {
            Side::Source => self.source,
            Side::Destination => self.destination,
        };
        let answer = api.call(method, path, body).await;
        if answer.is_err() && matches!(side, Side::Destination) {
            self.unreachable.store(true, Ordering::Relaxed);
        }
        answer.map_err(|error| {
            PassError::new(format!("{} {} {} {path}: {error}", side.name(), api.describe(), method.as_str()))
        })
    }
}

/// The registration order of every version of `subjects`: (subject index, version index), each
/// version after the versions it references (among those listed), lowest ID first among those
/// ready. Versions cannot reference each other in a cycle (a reference names a version that
/// existed first); should the source answer one anyway, what is left follows by ID.
fn version_order(subjects: &[SourceSubject]) -> Vec<(usize, usize)> {
    let mut index: BTreeMap<(&str, i64), (usize, usize)> = BTreeMap::new();
    for (s, (subject, versions)) in subjects.iter().enumerate() {
        for (v, version) in versions.iter().enumerate() {
            index.insert((subject.as_str(), version.version), (s, v));
        }
    }
    let mut waiting: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut referrers: BTreeMap<(usize, usize), Vec<(usize, usize)>> = BTreeMap::new();
    let mut ready: BTreeSet<(i64, usize, usize)> = BTreeSet::new();
    for (s, (_, versions)) in subjects.iter().enumerate() {
        for (v, version) in versions.iter().enumerate() {
            let needs: BTreeSet<(usize, usize)> = version
                .references
                .iter()
                .filter_map(|(subject, number)| index.get(&(subject.as_str(), *number)).copied())
                .filter(|&needed| needed != (s, v))
                .collect();
            for &needed in &needs {
                referrers.entry(needed).or_default().push((s, v));
            }
            if needs.is_empty() {
                ready.insert((version.id, s, v));
            } else {
                waiting.insert((s, v), needs.len());
            }
        }
    }
    let mut plan = Vec::with_capacity(index.len());
    while let Some((_, s, v)) = ready.pop_first() {
        plan.push((s, v));
        for &referrer in referrers.get(&(s, v)).into_iter().flatten() {
            if let Some(count) = waiting.get_mut(&referrer) {
                *count -= 1;
                if *count == 0 {
                    waiting.remove(&referrer);
                    ready.insert((subjects[referrer.0].1[referrer.1].id, referrer.0, referrer.1));
                }
            }
        }
    }
    let mut rest: Vec<(i64, usize, usize)> = waiting.into_keys().map(|(s, v)| (subjects[s].1[v].id, s, v)).collect();
    rest.sort_unstable();
    plan.extend(rest.into_iter().map(|(_, s, v)| (s, v)));
    plan
}

#[derive(Clone, Copy, Debug)]
enum Side {
    Source,
    Destination,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Destination => "destination",
        }
    }
}

fn expect_ok(answer: Answer, side: Side, path: &str) -> Result<Value, PassError> {
    if answer.is_success() {
        Ok(answer.body)
    } else {
        Err(PassError::new(format!("{} GET {path} answered HTTP {}{}", side.name(), answer.status, code_of(&answer))))
    }
}

fn refused(side: Side, method: Method, path: &str, answer: &Answer, api: &dyn RegistryApi) -> PassError {
    PassError::new(format!(
        "{} {} refused {} {path}: HTTP {}{}",
        side.name(),
        api.describe(),
        method.as_str(),
        answer.status,
        code_of(answer)
    ))
}

/// `, error_code N` when the answer carries a Confluent error code: all of an answer a trace shows.
fn code_of(answer: &Answer) -> String {
    answer.error_code().map_or_else(String::new, |code| format!(", error_code {code}"))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// The (destination subject, version) pairs a destination version's `record` references, each
/// subject qualified with the context of `target` (the referrer's destination subject) when the
/// reference names none.
fn destination_references(record: &Value, target: &str) -> BTreeSet<DestinationVersion> {
    let context = match target.strip_prefix(':').and_then(|rest| rest.split_once(':')) {
        Some((context, _)) => format!(":{context}:"),
        None => String::new(),
    };
    let references = record.get("references").and_then(Value::as_array).into_iter().flatten();
    references
        .filter_map(|reference| {
            let subject = reference.get("subject").and_then(Value::as_str)?;
            let version = reference.get("version").and_then(Value::as_i64)?;
            let subject = if subject.starts_with(':') { subject.to_owned() } else { format!("{context}{subject}") };
            Some((subject, version))
        })
        .collect()
}
