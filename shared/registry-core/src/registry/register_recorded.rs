//! Re-registration without reading the rows: a store may keep, beside a subject's rows, a record
//! of its live version of each schema ([`crate::BindingsSeen::live_version`]) and read it with the
//! write context. When that record names the posted schema, the registration answers it as the
//! normal decision would from the rows (lookup-first: before the mode check, as Confluent's
//! `registerOrForward`), with no read of the rows. The record is written by the registration that
//! creates the version (`CommitHints::sole_live_fingerprint`), or once by a re-registration
//! that had to read the rows ([`crate::Store::record_live_version`]), never while a soft-deleted
//! row carrying the version's ID awaits its purge (a re-registration from the rows completes it).

use super::register::{Parsed, live_match};
use super::usage::Activity;
use super::{NewSchema, RegisterOptions, Registry};
use crate::error::RegistryError;
use crate::metrics::Registration;
use crate::model::{Mode, SchemaId, SchemaRecord, Subject, VersionRow};
use crate::store::{LayeredContext, StoreError};
use registry_schema::Fingerprint;

impl Registry {
    /// The answer to a registration of a schema the store's record says is already a live version
    /// of `subject` (see the module doc); `None` when the rows must decide (no record, IMPORT, an
    /// explicit version, a record of another ID than the one asked for).
    pub(super) async fn registered_already(
        &self,
        subject: &Subject,
        schema: &NewSchema,
        options: RegisterOptions,
        context: &LayeredContext,
        parsed: &mut Parsed,
    ) -> Result<Option<(SchemaRecord, Registration)>, RegistryError> {
        if context.bindings.iter().all(|seen| seen.live_version.is_none())
            || context.effective_mode() == Mode::Import
            || schema.version.is_some_and(|version| version > 0)
        {
            return Ok(None);
        }
        let normalize = options.normalize || self.effective_of(context).normalize;
        let Some((_, body)) = self.posted(subject, schema, false, normalize, parsed).await? else { return Ok(None) };
        let fingerprint = body.fingerprint();
        let explicit_id = schema.id.filter(|id| *id > 0).map(SchemaId);
        let recorded = context
            .bindings
            .iter()
            .filter(|seen| seen.fingerprint == fingerprint)
            .find_map(|seen| seen.live_version.as_ref())
            .filter(|row| explicit_id.is_none_or(|id| row.id == id));
        let Some(recorded) = recorded else { return Ok(None) };
        let row = VersionRow { references: body.references.clone(), ..recorded.clone() };
        let found = self.existing(&row, body, context).await?;
        // The subject's newest row is no older than this one: a marker is never skipped that the
        // rows would have written (at most one more per subject per period).
        self.note_use(subject, Activity { newest_ms: Some(row.registered_at_ms), marked: context.last_used }).await;
        Ok(Some(found))
    }

    /// After a re-registration answered from the rows: records the subject's live version of the
    /// schema for the next one, when the store read its record with the write context and had
    /// none and no soft-deleted row awaits a purge by it. Best effort: a revision moved since the
    /// rows were read (`Conflict`) or a failed write only leaves the next one reading the rows.
    pub(super) async fn record_live_version(&self, rows: &[VersionRow], found: &VersionRow, context: &LayeredContext) {
        let asked =
            context.bindings.iter().any(|seen| seen.fingerprint == found.fingerprint && seen.live_version.is_none());
        let Some(newest) = live_match(rows, &found.fingerprint, None).filter(|_| asked) else { return };
        if rows.iter().any(|r| r.deleted && (r.id == newest.id || r.fingerprint == newest.fingerprint)) {
            return;
        }
        match self.store.record_live_version(newest, context.revision).await {
            Ok(()) | Err(StoreError::Conflict(_)) => {}
            Err(error) => {
                tracing::warn!(subject = %newest.subject, %error, "cannot record the subject's live version of a schema");
            }
        }
    }
}

/// Whether a new row with `fingerprint` and ID `id` (`Some(None)`: a new ID; `None`: not known
/// yet) would be the only row of `rows` with its fingerprint and supersede no soft-deleted row
/// (none carries its ID; with the ID unknown, none is soft-deleted at all).
pub(super) fn sole_live_fingerprint(
    rows: &[VersionRow],
    fingerprint: &Fingerprint,
    id: Option<Option<SchemaId>>,
) -> bool {
    rows.iter().all(|row| {
        let superseded = row.deleted && id.is_none_or(|id| id == Some(row.id));
        row.fingerprint != *fingerprint && !superseded
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Version;

    fn row(version: i32, id: i32, tag: u8, deleted: bool) -> VersionRow {
        VersionRow {
            subject: Subject::new("s").unwrap_or_else(|e| panic!("{e}")),
            version: Version(version),
            id: SchemaId(id),
            fingerprint: Fingerprint([tag; 32]),
            deleted,
            references: Vec::new(),
            registered_at_ms: 0,
        }
    }

    #[test]
    fn a_new_row_is_sole_unless_its_fingerprint_is_there_or_it_supersedes_a_deleted_row() {
        let (fp, other) = (Fingerprint([1; 32]), Fingerprint([2; 32]));
        let live_other = [row(1, 7, 2, false)];
        assert!(sole_live_fingerprint(&live_other, &fp, Some(Some(SchemaId(8)))));
        assert!(sole_live_fingerprint(&live_other, &fp, None), "no soft-deleted row: any ID is sole");
        assert!(!sole_live_fingerprint(&[row(1, 8, 1, true)], &fp, Some(Some(SchemaId(8)))), "a deleted twin");
        assert!(!sole_live_fingerprint(&[row(1, 8, 1, false)], &fp, Some(None)), "a live twin");
        let deleted_other = [row(1, 7, 2, true)];
        assert!(!sole_live_fingerprint(&deleted_other, &fp, Some(Some(SchemaId(7)))), "supersedes by ID");
        assert!(sole_live_fingerprint(&deleted_other, &fp, Some(Some(SchemaId(8)))));
        assert!(sole_live_fingerprint(&deleted_other, &fp, Some(None)), "a new ID supersedes nothing");
        assert!(!sole_live_fingerprint(&deleted_other, &fp, None), "an unknown ID might");
        assert!(sole_live_fingerprint(&[], &other, None));
    }
}
