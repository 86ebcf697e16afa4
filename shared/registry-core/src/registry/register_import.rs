//! The IMPORT decision of a registration: the schema is stored as given (no normalization, no
//! strict validation, no data-contract merge, no compatibility check, Confluent §9) under the ID
//! and version the request names; a taken version number is replaced. It shares the retry loop,
//! the staging and the commit with the normal path (`register`). Explicit IDs are at most
//! [`SchemaId::MAX_IMPORTED`], so an import never exhausts the context's counter.

use super::Registry;
use super::register::{Attempt, Candidate, Decision, Parsed, live_match, new_row, next_version, referenced_rows};
use super::support::not_read_write;
use crate::error::RegistryError;
use crate::model::{Context, SchemaId, Version};
use crate::store::{CommitHints, StoreError};
use registry_schema::Fingerprint;

impl Registry {
    /// Lookup-first by fingerprint and explicit ID; 42205 without an explicit ID or with one above
    /// [`SchemaId::MAX_IMPORTED`]; binds the ID (42205 when it names another schema); a taken
    /// version number is replaced by the commit itself ([`crate::store::Preconditions::replaces`]).
    pub(super) async fn decide_import<'a>(
        &self,
        attempt: &Attempt<'a>,
        parsed: &mut Parsed,
    ) -> Result<Decision<'a>, RegistryError> {
        let Attempt { subject, schema, rows, .. } = *attempt;
        let explicit_id = schema.id.filter(|id| *id > 0).map(SchemaId);
        let posted = self.posted(subject, schema, true, false, parsed).await?;
        if let Some((_, body)) = &posted
            && let Some(row) = live_match(rows, &body.fingerprint(), explicit_id)
        {
            return Ok(Decision::Existing(row, body.clone()));
        }
        let Some(id) = explicit_id else {
            return Err(not_read_write(subject));
        };
        if id > SchemaId::MAX_IMPORTED {
            return Err(above_imported_ids(id, &subject.context()));
        }
        let (body, references_checked) = match posted {
            Some((_, body)) => (body, true),
            None => {
                let (_, body) = self.reuse_latest(rows, schema).await?;
                if let Some(row) = live_match(rows, &body.fingerprint(), explicit_id) {
                    return Ok(Decision::Existing(row, body));
                }
                (body, false)
            }
        };
        let fingerprint = body.fingerprint();
        let version = schema.version.filter(|v| *v > 0).map_or_else(|| next_version(rows), Version);
        self.stage(&body, &fingerprint).await?;
        self.bind_import_id(&subject.context(), id, &fingerprint).await?;
        let mut preconditions = attempt.unchanged();
        // IMPORT replaces a taken version number, as Confluent's log keyed by (subject, version):
        // the old row goes in the new row's own atomic write, so a failed import removes nothing.
        preconditions.replaces = rows.iter().find(|r| r.version == version).cloned();
        if references_checked {
            preconditions.live_rows = referenced_rows(subject, &body)?;
        }
        // The ID may be rebound (an ID whose schema was hard-deleted): commit only while it names ours.
        preconditions.id_binding = Some((id, fingerprint));
        let row = new_row(subject, version, fingerprint, &body)?;
        Ok(Decision::New(Box::new(Candidate {
            row,
            id: Some(id),
            body,
            import: true,
            preconditions,
            hints: CommitHints::default(),
        })))
    }

    /// IMPORT: binds the explicit ID in `context`; 42205 when a row there carries it with another
    /// schema (Confluent's `checkIfSchemaWithIdExist`). An ID whose schema was hard-deleted from
    /// every subject of the context is free again and is rebound (a wiped registry restored from a
    /// backup), once every answer memory of the old binding has expired
    /// ([`Registry::await_rebind_quiet`]); what this process remembers of IDs is forgotten then,
    /// as after a hard delete.
    async fn bind_import_id(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<(), RegistryError> {
        self.await_rebind_quiet(context, id, fingerprint).await?;
        match self.store.bind_id_in(context, id, fingerprint).await {
            Ok(()) => {
                self.forget_live_ids();
                Ok(())
            }
            Err(StoreError::Conflict(_)) => Err(RegistryError::OperationNotPermitted {
                message: format!("Overwrite new schema with id {id} in context {context} is not permitted."),
            }),
            Err(e) => Err(e.into()),
        }
    }
}

/// 42205: an explicit ID above [`SchemaId::MAX_IMPORTED`]. It would raise the context's counter
/// (shared by every subject there) so close to the top of the ID space that allocation would run
/// out; Confluent accepts it and wraps to negative IDs.
fn above_imported_ids(id: SchemaId, context: &Context) -> RegistryError {
    let max = SchemaId::MAX_IMPORTED;
    RegistryError::OperationNotPermitted {
        message: format!(
            "Import of schema id {id} in context {context} is not permitted: imported ids must be at most {max}, the ids above are left for the registry to allocate"
        ),
    }
}
