//! Soft and hard deletes of versions and subjects, with Confluent's order of checks.
//!
//! Each attempt reads the subject's write context (revision, mode) and then its rows, decides,
//! and ends in exactly one store write (one atomic batch) conditioned on that context, so a
//! registration, a referrer or a mode change acknowledged before the delete commits makes it read
//! again and decide again. Nothing fallible follows the write: a crash before it changed nothing,
//! a crash after it leaves the finished state, so a retried request answers as a clean run would.

use super::Registry;
use super::support::{MAX_ATTEMPTS, latest_live, reference_exists, subject_not_found, version_not_found, writable};
use crate::access::Operation;
use crate::error::RegistryError;
use crate::model::{Scope, Subject, Version, VersionRow, VersionSelector};
use crate::store::{LayeredContext, Preconditions, SettingSeen, SoftDeletion, StoreError};
use std::pin::Pin;

impl Registry {
    /// `DELETE /subjects/{s}/versions/{v}`: the deleted version number. Checks in Confluent's
    /// order: 40406 (soft delete of a soft-deleted version), 40401/40402 (missing: no rows at
    /// all / no such version; `latest` is the highest live one), 42205 (read-only), 42206
    /// (referenced by a live schema, or by any when permanent), 40407 (permanent on a live
    /// version). A hard delete of the subject's last row also removes its config and mode, and
    /// the fingerprint → ID binding of an ID no row carries any more.
    pub async fn delete_version(
        &self,
        subject: &str,
        version: VersionSelector,
        permanent: bool,
    ) -> Result<Version, RegistryError> {
        self.delete_with_retries(subject, permanent, move |registry, subject, context, rows| {
            Box::pin(async move {
                let row = match version {
                    VersionSelector::Latest => latest_live(rows),
                    VersionSelector::Number(number) => rows.iter().find(|r| r.version == number),
                };
                let Some(row) = row else {
                    return Err(if rows.is_empty() {
                        subject_not_found(subject)
                    } else {
                        version_not_found(subject, version)
                    });
                };
                if row.deleted && !permanent {
                    return Err(soft_deleted(row));
                }
                writable(context, Some(subject))?;
                let referrers = registry.store.referrers(subject, row.version).await?;
                if referrers.iter().any(|r| permanent || !r.deleted) {
                    return Err(reference_exists(subject, row.version));
                }
                if permanent && !row.deleted {
                    return Err(RegistryError::VersionNotSoftDeleted {
                        subject: subject.to_string(),
                        version: row.version.0,
                    });
                }
                // The last row takes the subject's config and mode with it, in the same atomic write.
                Ok(Removal { versions: vec![row.version], last_rows: rows.len() == 1, answer: row.version })
            })
        })
        .await
    }

    /// `DELETE /subjects/{s}`: the deleted version numbers (soft: the live ones; permanent:
    /// every row). Checks: 40401 (no rows), 40404 (soft on an all-deleted subject), 42205
    /// (read-only), 42206 (another subject references one of its versions: live referrers,
    /// or any when permanent), 40405 (permanent while a version is live). Permanent delete also
    /// removes the subject's config and mode, and the fingerprint → ID binding of every ID no row
    /// carries any more.
    pub async fn delete_subject(&self, subject: &str, permanent: bool) -> Result<Vec<Version>, RegistryError> {
        self.delete_with_retries(subject, permanent, move |registry, subject, context, rows| {
            Box::pin(async move {
                if rows.is_empty() {
                    return Err(subject_not_found(subject));
                }
                let live: Vec<&VersionRow> = rows.iter().filter(|r| !r.deleted).collect();
                if !permanent && live.is_empty() {
                    return Err(RegistryError::SubjectSoftDeleted { subject: subject.to_string() });
                }
                writable(context, Some(subject))?;
                let targets: Vec<Version> = if permanent {
                    rows.iter().map(|r| r.version).collect()
                } else {
                    live.iter().map(|r| r.version).collect()
                };
                for version in &targets {
                    let referrers = registry.store.referrers(subject, *version).await?;
                    if referrers.iter().any(|r| r.subject != *subject && (permanent || !r.deleted)) {
                        return Err(reference_exists(subject, *version));
                    }
                }
                if permanent && !live.is_empty() {
                    return Err(RegistryError::SubjectNotSoftDeleted { subject: subject.to_string() });
                }
                Ok(Removal { answer: targets.clone(), versions: targets, last_rows: true })
            })
        })
        .await
    }

    /// The attempts of one delete: each reads the subject's write context and rows (following an
    /// alias), lets `decide` check them in the endpoint's order and pick the versions, and writes
    /// that removal conditioned on what it read. A lost commit (a concurrent registration, delete
    /// or mode change) starts a new attempt, which reads and decides again as if it came first.
    async fn delete_with_retries<T>(
        &self,
        subject: &str,
        permanent: bool,
        decide: impl for<'a> Fn(&'a Registry, &'a Subject, &'a LayeredContext, &'a [VersionRow]) -> Decision<'a, T>,
    ) -> Result<T, RegistryError> {
        let requested = Subject::new(subject)?;
        let mut reached = Reached::at(&requested);
        for attempt in 0..MAX_ATTEMPTS {
            let Some((context, rows)) = self.delete_reads(&mut reached, permanent).await? else {
                continue;
            };
            let subject = reached.subject.clone();
            let removal = decide(self, &subject, &context, &rows).await?;
            let preconditions = reached.unchanged(&context);
            let written = if permanent {
                self.hard_delete(&subject, &removal.versions, removal.last_rows, &preconditions).await
            } else {
                let deletion =
                    SoftDeletion { subject: &subject, versions: &removal.versions, preconditions: &preconditions };
                let deleted = self.store.soft_delete_versions(deletion).await;
                self.forget_lookups();
                deleted
            };
            match written {
                Ok(()) => return Ok(removal.answer),
                // A concurrent write changed the subject: read again and answer as if it came first.
                Err(StoreError::Conflict(_)) => {
                    reached = Reached::at(&requested);
                    self.after_conflict(attempt).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Unavailable(format!("delete of {requested}: too many concurrent writers")).into())
    }
}

/// One delete attempt's checks over what it read, in the endpoint's order: what it removes, or the
/// error to answer. Boxed as `Send`, so the registry's futures stay `Send` for any borrow.
type Decision<'a, T> = Pin<Box<dyn Future<Output = Result<Removal<T>, RegistryError>> + Send + 'a>>;

/// What one delete attempt removes, and what the endpoint answers once it is written.
struct Removal<T> {
    versions: Vec<Version>,
    /// Whether these are the subject's last rows: a hard delete then takes its config and mode too.
    last_rows: bool,
    answer: T,
}

/// The subject a delete attempt acts on: the requested one, or the target of its alias with the
/// aliasing subject's config as read (a condition of the delete). Every attempt after a lost
/// commit starts again at the requested subject, so an alias changed meanwhile is followed anew.
struct Reached {
    subject: Subject,
    aliased: bool,
    alias: Vec<SettingSeen>,
}

impl Reached {
    fn at(requested: &Subject) -> Reached {
        Reached { subject: requested.clone(), aliased: false, alias: Vec::new() }
    }

    /// Conditions that hold while nothing the delete decided on changed: the subject's write
    /// context and the alias it was reached through.
    fn unchanged(&self, context: &LayeredContext) -> Preconditions {
        let mut preconditions = context.unchanged();
        preconditions.settings.extend(self.alias.iter().cloned());
        preconditions
    }
}

impl Registry {
    /// One delete attempt's reads: the subject's write context, then its rows; `None` when the
    /// subject is an alias, after `reached` was moved to its target (the attempt reads again).
    async fn delete_reads(
        &self,
        reached: &mut Reached,
        permanent: bool,
    ) -> Result<Option<(LayeredContext, Vec<VersionRow>)>, RegistryError> {
        let context = self.decision_context(&Scope::Subject(reached.subject.clone())).await?;
        let operation = if permanent { Operation::HardDelete } else { Operation::SoftDelete };
        if let Some(target) = self.follow_alias(&reached.subject, &context, &mut reached.aliased, operation)? {
            reached.alias = super::alias::alias_seen(&reached.subject, &context);
            reached.subject = target;
            return Ok(None);
        }
        let rows = self.rows(&reached.subject).await?;
        Ok(Some((context, rows)))
    }
}

fn soft_deleted(row: &VersionRow) -> RegistryError {
    RegistryError::VersionSoftDeleted { subject: row.subject.to_string(), version: row.version.0 }
}
