//! Data-contract reads: the latest version by metadata, schemas by `guid`, and the per-subject
//! facts `registry report` lists (owner, last registration, last use, version count).

use super::contracts::property;
use super::support::visible;
use super::{Registry, SchemaById};
use crate::error::RegistryError;
use crate::model::{DeletedFilter, Guid, SchemaBody, SchemaRecord, Subject};
use crate::store::SubjectsPage;

/// One subject's governance facts (see [`Registry::subject_report`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectReport {
    pub subject: Subject,
    /// The latest live version's value of the owner property, if any.
    pub owner: Option<String>,
    /// Registration time of the newest version (ms since the Unix epoch).
    pub last_registered_ms: Option<i64>,
    /// The last-used marker day (days since the Unix epoch), if ever marked.
    pub last_used_day: Option<u32>,
    /// Live versions.
    pub versions: usize,
}

/// The guid of a stored body (Confluent's MD5 identity printed as a UUID); [`Guid::of`] as text.
pub fn body_guid(body: &SchemaBody) -> String {
    Guid::of(body).to_string()
}

impl Registry {
    /// `GET /subjects/{s}/metadata?key=K&value=V`: the highest version (live, or any with
    /// `include_deleted`) whose metadata properties contain every (key, value) pair of `filter`.
    /// 40401 when the subject has no visible version; 40403 `Schema not found` when none matches.
    pub async fn latest_with_metadata(
        &self,
        subject: &str,
        filter: &[(String, String)],
        include_deleted: bool,
    ) -> Result<SchemaRecord, RegistryError> {
        let (_, rows) = self.visible_subject(subject, include_deleted).await?;
        let candidates: Vec<_> = visible(&rows, include_deleted).collect();
        for row in candidates.into_iter().rev() {
            let record = self.record(row).await?;
            let metadata = record.body.metadata.as_ref();
            if filter.iter().all(|(key, value)| property(metadata, key) == Some(value.as_str())) {
                return Ok(record);
            }
        }
        Err(RegistryError::SchemaNotFound)
    }

    /// `GET /schemas/guids/{guid}`: the schema whose body has `guid`, under the ID its
    /// fingerprint is bound to now, through the guid index (guid → fingerprint → ID while a row
    /// carries it: [`crate::Store::carried_id_for_guid`], point reads, never a scan). 40403
    /// `Schema not found` when the text is not a guid, the guid is not indexed, the fingerprint
    /// has no ID any more (every row carrying it was hard-deleted), or no
    /// row carries that ID (a registration that crashed before its commit). A schema hard-deleted
    /// and registered again resolves to its new ID.
    ///
    /// The index is written by registration ([`Registry::register`], IMPORT included). Data
    /// written before the index existed has no entries: registering the schema again (a
    /// lookup-first hit repairs the entry) or `registry import` into the store creates them;
    /// there is no backfill scan.
    pub async fn schema_by_guid(&self, wanted: &str) -> Result<SchemaById, RegistryError> {
        let Some(guid) = Guid::parse(wanted) else {
            return Err(RegistryError::SchemaNotFound);
        };
        if let Some((fingerprint, context, id)) = self.live_guids.get(&guid) {
            return Ok(SchemaById { id, body: self.body(&fingerprint).await?, context });
        }
        // The guid is one across contexts; its ID is the default context's, else the first
        // listed context's that carries it (Confluent's `getIdUsingContexts`).
        let generation = self.live_guids.generation();
        if let Some(found) = self.store.carried_id_for_guid(&guid).await? {
            let remembered = (found.fingerprint, found.context.clone(), found.id);
            self.live_guids.remember(guid, remembered, 1, generation, self.settings.live_id_ttl);
            return Ok(SchemaById { id: found.id, body: self.body(&found.fingerprint).await?, context: found.context });
        }
        Err(RegistryError::SchemaNotFound)
    }

    /// Governance facts for every subject with a row (soft-deleted ones too), ascending by name;
    /// `owner_property` names the metadata property that holds the owner.
    pub async fn subject_report(&self, owner_property: &str) -> Result<Vec<SubjectReport>, RegistryError> {
        let mut out = Vec::new();
        let mut after: Option<Subject> = None;
        loop {
            let page =
                SubjectsPage { prefix: "", filter: DeletedFilter::IncludeDeleted, after: after.as_ref(), limit: 1000 };
            let page = self.store.list_subjects(page).await?;
            let Some(last) = page.last().cloned() else {
                return Ok(out);
            };
            for subject in page {
                let rows = self.rows(&subject).await?;
                let latest = rows.iter().rev().find(|r| !r.deleted).or(rows.last());
                let owner = match latest {
                    Some(row) => property(self.body(&row.fingerprint).await?.metadata.as_ref(), owner_property)
                        .map(str::to_string),
                    None => None,
                };
                out.push(SubjectReport {
                    last_registered_ms: rows.iter().map(|r| r.registered_at_ms).max(),
                    last_used_day: self.store.last_used(&subject).await?,
                    versions: rows.iter().filter(|r| !r.deleted).count(),
                    owner,
                    subject,
                });
            }
            after = Some(last);
        }
    }
}
