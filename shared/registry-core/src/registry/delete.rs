//! Soft and hard deletes of versions and subjects, with Confluent's order of checks.
//!
//! Every delete ends in exactly one store write (a conditional soft delete, or one atomic batch),
//! and nothing fallible follows it: a crash before that write changed nothing, a crash after it
//! leaves the finished state, so a retried request answers as a clean run would.

use super::Registry;
use super::support::{MAX_ATTEMPTS, latest_live, reference_exists, subject_not_found, version_not_found};
use crate::error::RegistryError;
use crate::model::{SchemaId, Subject, Version, VersionRow, VersionSelector};
use crate::store::StoreError;
use std::collections::BTreeSet;

impl Registry {
    /// `DELETE /subjects/{s}/versions/{v}`: the deleted version number. Checks in Confluent's
    /// order: 40406 (soft delete of a soft-deleted version), 40401/40402 (missing: no rows at
    /// all / no such version; `latest` is the highest live one), 42205 (read-only), 42206
    /// (referenced by a live schema, or by any when permanent), 40407 (permanent on a live
    /// version). A hard delete of the subject's last row also removes its config and mode.
    pub async fn delete_version(
        &self,
        subject: &str,
        version: VersionSelector,
        permanent: bool,
    ) -> Result<Version, RegistryError> {
        let subject = Subject::new(subject)?;
        let rows = self.rows(&subject).await?;
        let row = match version {
            VersionSelector::Latest => latest_live(&rows),
            VersionSelector::Number(number) => rows.iter().find(|r| r.version == number),
        };
        let Some(row) = row else {
            return Err(if rows.is_empty() {
                subject_not_found(&subject)
            } else {
                version_not_found(&subject, version)
            });
        };
        if row.deleted && !permanent {
            return Err(soft_deleted(row));
        }
        self.ensure_writable(Some(&subject)).await?;
        let referrers = self.store.referrers(&subject, row.version).await?;
        if referrers.iter().any(|r| permanent || !r.deleted) {
            return Err(reference_exists(&subject, row.version));
        }
        if permanent && !row.deleted {
            return Err(RegistryError::VersionNotSoftDeleted { subject: subject.to_string(), version: row.version.0 });
        }
        if permanent {
            // The last row takes the subject's config and mode with it, in the same atomic write.
            // A registration racing with it may lose its subject config; it keeps its rows.
            let last = rows.len() == 1;
            self.unbind_orphaned_ids(&subject, &[row]).await?;
            self.hard_delete(&subject, &[row.version], last).await?;
        } else {
            let deleted = self.store.set_version_deleted(&subject, row.version, true).await;
            self.forget_lookups();
            match deleted {
                Ok(()) => {}
                // Lost to a concurrent delete: answer as if it had come first.
                Err(StoreError::Conflict(_)) => {
                    return Err(match self.store.get_version(&subject, row.version).await? {
                        Some(now) => soft_deleted(&now),
                        None => version_not_found(&subject, VersionSelector::Number(row.version)),
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(row.version)
    }

    /// `DELETE /subjects/{s}`: the deleted version numbers (soft: the live ones; permanent:
    /// every row). Checks: 40401 (no rows), 40404 (soft on an all-deleted subject), 42205
    /// (read-only), 42206 (another subject references one of its versions: live referrers,
    /// or any when permanent), 40405 (permanent while a version is live). Permanent delete also
    /// removes the subject's config and mode.
    pub async fn delete_subject(&self, subject: &str, permanent: bool) -> Result<Vec<Version>, RegistryError> {
        let subject = Subject::new(subject)?;
        for _ in 0..MAX_ATTEMPTS {
            let rows = self.rows(&subject).await?;
            if rows.is_empty() {
                return Err(subject_not_found(&subject));
            }
            let live: Vec<&VersionRow> = rows.iter().filter(|r| !r.deleted).collect();
            if !permanent && live.is_empty() {
                return Err(RegistryError::SubjectSoftDeleted { subject: subject.to_string() });
            }
            self.ensure_writable(Some(&subject)).await?;
            let targets: Vec<Version> = if permanent {
                rows.iter().map(|r| r.version).collect()
            } else {
                live.iter().map(|r| r.version).collect()
            };
            for version in &targets {
                let referrers = self.store.referrers(&subject, *version).await?;
                if referrers.iter().any(|r| r.subject != subject && (permanent || !r.deleted)) {
                    return Err(reference_exists(&subject, *version));
                }
            }
            if permanent && !live.is_empty() {
                return Err(RegistryError::SubjectNotSoftDeleted { subject: subject.to_string() });
            }
            let written = if permanent {
                let doomed: Vec<&VersionRow> = rows.iter().collect();
                self.unbind_orphaned_ids(&subject, &doomed).await?;
                self.hard_delete(&subject, &targets, true).await
            } else {
                let deleted = self.store.soft_delete_versions(&subject, &targets).await;
                self.forget_lookups();
                deleted
            };
            match written {
                Ok(()) => return Ok(targets),
                // A concurrent delete or registration changed the rows: re-read and decide again.
                Err(StoreError::Conflict(_)) => tokio::task::yield_now().await,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Unavailable(format!("delete of {subject}: too many concurrent writers")).into())
    }
}

impl Registry {
    /// Unbinds the fingerprint of every ID that no row keeps once `doomed` (rows of `subject`)
    /// are hard-deleted, so the same schema registered again gets a new ID: Confluent drops an
    /// ID's mapping with its last row. The ID itself stays bound to its body and is never
    /// handed out again. Runs before the delete: a crash in between leaves soft-deleted rows
    /// whose ID still resolves, and the retried delete unbinds again (a no-op) and finishes.
    async fn unbind_orphaned_ids(&self, subject: &Subject, doomed: &[&VersionRow]) -> Result<(), RegistryError> {
        let mut seen: BTreeSet<SchemaId> = BTreeSet::new();
        for row in doomed.iter().filter(|row| seen.insert(row.id)) {
            // One more carrier than the doomed rows of this ID is enough to know whether another
            // row keeps it (a schema shared by a million subjects is not read a million times).
            let doomed_with_id = doomed.iter().filter(|d| d.id == row.id).count();
            let carriers = self.store.rows_with_id_page(row.id, None, doomed_with_id + 1).await?;
            let kept = carriers.len() > doomed_with_id
                || carriers.iter().any(|c| &c.subject != subject || !doomed.iter().any(|d| d.version == c.version));
            if !kept {
                self.store.unbind_fingerprint(&row.fingerprint, row.id).await?;
            }
        }
        Ok(())
    }
}

fn soft_deleted(row: &VersionRow) -> RegistryError {
    RegistryError::VersionSoftDeleted { subject: row.subject.to_string(), version: row.version.0 }
}
