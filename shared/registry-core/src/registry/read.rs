//! Read operations: lookup, by-ID queries, listings and single versions. Never write.

use super::recent_lookups::{answer_cost, lookup_key};
use super::support::{latest_live, subject_not_found, version_not_found, visible};
use super::usage::Activity;
use super::{Freshness, LookupOptions, NewSchema, Registry, SchemaById, SchemasQuery};
use crate::access::Operation;
use crate::error::RegistryError;
use crate::model::{
    Context, DeletedFilter, QualifiedName, SchemaBody, SchemaId, SchemaRecord, Scope, Subject, Version, VersionRow,
    VersionSelector,
};
use crate::store::{IdRowsPage, LayeredContext, SubjectsPage, VersionsPage};
use crate::subject_scope::{SubjectScope, read_runs};
use registry_schema::Fingerprint;
use std::sync::Arc;

/// Default and maximum page of `GET /schemas` (Confluent's `schema.search.*.limit`).
const SCHEMAS_LIMIT: usize = 1000;

/// A lookup's answer ([`Registry::lookup_shared`]): the record found, shared with the lookup memory,
/// and what a copy kept elsewhere for the same request needs to be given again
/// ([`Registry::lookup_again`]).
#[derive(Debug, Clone)]
pub struct LookupAnswer {
    pub record: Arc<SchemaRecord>,
    /// How long the lookup memory gives this answer; `None` when it does not keep it (a zero TTL,
    /// a forget during the read): a copy of it is never given again.
    freshness: Option<Freshness>,
    /// The posted schema named references.
    references: bool,
}

impl LookupAnswer {
    /// Whether the lookup memory keeps this answer (a copy of it may be given again for a while).
    pub fn is_remembered(&self) -> bool {
        self.freshness.is_some()
    }
}

impl Registry {
    /// `POST /subjects/{s}`: the highest visible version of `subject` whose schema (text,
    /// references, metadata, rule set) matches; a schema posted without metadata and rule set
    /// also matches a version with the same text and references that has them. 40401 when no version is visible under
    /// `include_deleted`, 42201 when the posted schema does not parse, 40403 when nothing matches.
    /// Marks the subject used when found (see `usage`).
    pub async fn lookup(
        &self,
        subject: &str,
        schema: NewSchema,
        options: LookupOptions,
    ) -> Result<SchemaRecord, RegistryError> {
        let answer = self.lookup_shared(subject, schema, options).await?;
        Ok(Arc::unwrap_or_clone(answer.record))
    }

    /// [`Registry::lookup`], answered as the record this process remembers when it does (shared,
    /// not copied: the same `Arc` for every hit until the memory expires or is forgotten), with how
    /// long the memory gives it, for a copy kept elsewhere ([`Registry::lookup_again`]).
    pub async fn lookup_shared(
        &self,
        subject: &str,
        schema: NewSchema,
        options: LookupOptions,
    ) -> Result<LookupAnswer, RegistryError> {
        let key = lookup_key(subject, &schema, options);
        let references = !schema.references.is_empty();
        // An answer remembered for another caller is this one's only when this caller may read
        // every subject it resolved (an alias target or fallback candidate, the references).
        let remembered =
            self.recent_lookups.get_fresh(&key).filter(|(record, _)| self.may_read_answer(record, references));
        let (record, freshness, newest) = match remembered {
            Some((record, freshness)) => (record, Some(freshness), Activity::default()),
            None => {
                let generation = self.recent_lookups.generation();
                // Boxed: an answer from memory does not carry the lookup's state in its future.
                let (record, newest) = Box::pin(self.lookup_once(subject, schema, options)).await?;
                let (cost, ttl) = (answer_cost(&record), self.settings.lookup_ttl);
                let record = Arc::new(record);
                let freshness = self.recent_lookups.remember(key, Arc::clone(&record), cost, generation, ttl);
                (record, freshness, newest)
            }
        };
        self.note_use(&record.subject, newest).await;
        Ok(LookupAnswer { record, freshness, references })
    }

    /// Whether a copy of `answer` (an answer of [`Registry::lookup_shared`] kept elsewhere, for
    /// the same request) is still this caller's answer: the lookup memory would still give it
    /// (nothing forgotten since, not expired) and the caller may read every subject it resolved.
    /// Then the subject is marked used, as by a lookup.
    pub async fn lookup_again(&self, answer: &LookupAnswer) -> bool {
        let holds = answer.freshness.is_some_and(|freshness| self.recent_lookups.is_fresh(&freshness));
        if !holds || !self.may_read_answer(&answer.record, answer.references) {
            return false;
        }
        self.note_use(&answer.record.subject, Activity::default()).await;
        true
    }

    /// The lookup in `subject`, else (an unqualified subject with no match) in the same name in
    /// each listed context, as Confluent's `lookUpSchemaUnderSubjectUsingContexts`; with the
    /// registration time of the found subject's newest row.
    async fn lookup_once(
        &self,
        subject: &str,
        schema: NewSchema,
        options: LookupOptions,
    ) -> Result<(SchemaRecord, Activity), RegistryError> {
        let found = self.lookup_in_subject(subject, &schema, options).await;
        if !matches!(found, Err(RegistryError::SubjectNotFound { .. } | RegistryError::SchemaNotFound)) {
            return found;
        }
        for qualified in self.in_named_contexts(subject).await? {
            if let Ok(record) = self.lookup_in_subject(qualified.as_str(), &schema, options).await {
                return Ok(record);
            }
        }
        found
    }

    /// Whether the caller may read what a remembered lookup answer `record` resolved: the subject
    /// it names and, when the posted schema had `references`, every subject they reach.
    fn may_read_answer(&self, record: &SchemaRecord, references: bool) -> bool {
        // References may lead on to references of their own, known only by reading them again:
        // a caller that may not read everything resolves them itself.
        self.access.allows(Operation::Read, &record.subject) && (!references || self.access.reads_every_subject())
    }

    /// `subject` (unqualified, in the default context) qualified with each listed named context,
    /// in order: where Confluent's `...UsingContexts` reads look next. Only the candidates the
    /// caller may read: the others are skipped as if absent. Empty for a qualified or invalid
    /// subject.
    async fn in_named_contexts(&self, subject: &str) -> Result<Vec<Subject>, RegistryError> {
        match Subject::new(subject) {
            Ok(subject) if subject.context().is_default() => {
                let named = self.store.list_contexts().await?;
                let candidates =
                    named.iter().filter_map(|context| Subject::new(context.qualify(subject.as_str())).ok());
                Ok(candidates.filter(|candidate| self.access.allows(Operation::Read, candidate)).collect())
            }
            _ => Ok(Vec::new()),
        }
    }

    /// [`Registry::lookup_once`] in one subject.
    async fn lookup_in_subject(
        &self,
        subject: &str,
        schema: &NewSchema,
        options: LookupOptions,
    ) -> Result<(SchemaRecord, Activity), RegistryError> {
        let subject = Subject::new(subject)?;
        let (mut context, mut rows) = self.settings_and_rows(&subject).await?;
        let mut subject = subject;
        if let Some(target) = self.follow_alias(&subject, &context, &mut false, Operation::Read)? {
            (context, rows) = self.settings_and_rows(&target).await?;
            subject = target;
        }
        if visible(&rows, options.include_deleted).next().is_none() {
            return Err(subject_not_found(&subject));
        }
        let record = self.match_in_rows(&subject, &rows, schema, options, &context).await?;
        Ok((record, Activity { newest_ms: rows.last().map(|row| row.registered_at_ms), marked: context.last_used }))
    }

    /// `subject`'s settings (its decision read) and rows, read at once.
    async fn settings_and_rows(&self, subject: &Subject) -> Result<(LayeredContext, Vec<VersionRow>), RegistryError> {
        let scope = Scope::Subject(subject.clone());
        let (context, rows) = futures::future::join(self.decision_context(&scope), self.rows(subject)).await;
        Ok((context?, rows?))
    }

    /// The version of `subject` (its `rows`, its settings `context`) the posted schema matches.
    async fn match_in_rows(
        &self,
        subject: &Subject,
        rows: &[VersionRow],
        schema: &NewSchema,
        options: LookupOptions,
        context: &LayeredContext,
    ) -> Result<SchemaRecord, RegistryError> {
        let candidates: Vec<&VersionRow> = visible(rows, options.include_deleted).collect();
        // An empty schema matches nothing (Confluent's canonicalizeSchema gives it no parse): 40403
        // in a subject that exists, as the caller's subject check answered 40401 otherwise.
        let text = schema.schema.as_deref().filter(|s| !s.trim().is_empty());
        let Some(text) = text else {
            return Err(RegistryError::SchemaNotFound);
        };
        let normalize = options.normalize || self.effective_of(context).normalize;
        let body = self.canonical_body(&subject.context(), schema, text, normalize).await?;
        let fingerprint = body.fingerprint();
        if let Some(row) = candidates.iter().rev().find(|r| r.fingerprint == fingerprint) {
            // Same fingerprint, same body: the answer needs no body read.
            return self.record_with(row, body).await;
        }
        match self.match_without_fingerprint(subject, &candidates, schema, text, &body).await? {
            Some(record) => Ok(record),
            None => Err(RegistryError::SchemaNotFound),
        }
    }

    /// `GET /schemas/ids/{id}` in the default context; see [`Registry::schema_by_id_in`].
    pub async fn schema_by_id(&self, id: i32) -> Result<SchemaById, RegistryError> {
        self.schema_by_id_in(&Context::DEFAULT, id).await
    }

    /// `GET /schemas/ids/{id}` in `context`: resolvable while any row of the context (live or
    /// soft-deleted) carries it; 40403 `Schema N not found` otherwise (also after every such row
    /// was hard-deleted).
    pub async fn schema_by_id_in(&self, context: &Context, id: i32) -> Result<SchemaById, RegistryError> {
        let fingerprint = self.fingerprint_of_id_in(context, id).await?;
        Ok(SchemaById { id: SchemaId(id), body: self.body(&fingerprint).await?, context: context.clone() })
    }

    /// The fingerprint of the body `id` names in `context`, under the same rule as
    /// [`Registry::schema_by_id_in`] (40403 once no row carries it), from the live-ID memory when
    /// it was seen recently: all a by-ID answer depends on, since a fingerprint names one body for
    /// ever ([`Registry::schema_body`]).
    pub async fn fingerprint_of_id_in(&self, context: &Context, id: i32) -> Result<Fingerprint, RegistryError> {
        if id < 1 {
            return Err(RegistryError::SchemaIdNotFound { id });
        }
        match self.carried_fingerprint(context, SchemaId(id)).await? {
            Some(fingerprint) => Ok(fingerprint),
            None => Err(RegistryError::SchemaIdNotFound { id }),
        }
    }

    /// The body `fingerprint` addresses (content-addressed: the same body whenever it is read).
    pub async fn schema_body(&self, fingerprint: &Fingerprint) -> Result<SchemaBody, RegistryError> {
        self.body(fingerprint).await
    }

    /// The context a by-ID request resolves `id` in, as Confluent's `getSchemaKeyUsingContexts`:
    /// a qualified `subject` (`:.ctx:name`, or `:.ctx:` alone as the base-URL form sends) names its
    /// context; an unqualified one is the default context when a row of it carries `id` there,
    /// else the first listed context where `:.ctx:subject` carries `id`, else the default context
    /// again. No `subject` (or an invalid one): the default context. A `subject` the caller may
    /// not read is refused (403), as a path naming it would be; a context alone (`:.ctx:`) names
    /// no subject.
    pub async fn context_for_id(&self, id: i32, subject: Option<&str>) -> Result<Context, RegistryError> {
        match subject {
            None => Ok(Context::DEFAULT),
            // Boxed: a request without `subject` does not carry this search's state in its future.
            Some(subject) => Box::pin(self.context_of_subject_for_id(id, subject)).await,
        }
    }

    /// [`Registry::context_for_id`] with a `subject`.
    async fn context_of_subject_for_id(&self, id: i32, subject: &str) -> Result<Context, RegistryError> {
        let name = match QualifiedName::split(subject) {
            QualifiedName::In { context, name } if context != "." => {
                if let (false, Ok(subject)) = (name.is_empty(), Subject::new(subject)) {
                    self.access.require(Operation::Read, &subject)?;
                }
                return Ok(Context::parse(context).unwrap_or(Context::DEFAULT));
            }
            QualifiedName::In { name, .. } => name,
            QualifiedName::Wildcard { .. } => return Ok(Context::DEFAULT),
        };
        let Ok(subject) = Subject::new(name) else {
            return Ok(Context::DEFAULT);
        };
        self.access.require(Operation::Read, &subject)?;
        let (subject, rows) = self.rows_following_alias(subject).await?;
        if !subject.context().is_default() {
            // An alias naming a subject of another context.
            return Ok(subject.context());
        }
        if rows.iter().any(|row| row.id == SchemaId(id)) {
            return Ok(Context::DEFAULT);
        }
        for qualified in self.in_named_contexts(subject.as_str()).await? {
            if self.carries(&qualified, id).await? {
                return Ok(qualified.context());
            }
        }
        Ok(Context::DEFAULT)
    }

    /// Whether some row of `subject` (live or soft-deleted) carries `id`.
    async fn carries(&self, subject: &Subject, id: i32) -> Result<bool, RegistryError> {
        Ok(self.rows(subject).await?.iter().any(|row| row.id == SchemaId(id)))
    }

    /// `GET /contexts`: the default context `.` then every listed named context, ascending.
    pub async fn contexts(&self) -> Result<Vec<String>, RegistryError> {
        let named = self.store.list_contexts().await?;
        Ok(std::iter::once(Context::DEFAULT).chain(named).map(|context| context.name().to_string()).collect())
    }

    /// The greatest ID ever allocated or imported in `context` (`fetchMaxId`).
    pub async fn max_id_in(&self, context: &Context) -> Result<Option<SchemaId>, RegistryError> {
        Ok(self.store.max_id_in(context).await?)
    }

    /// `GET /schemas/ids/{id}/subjects`: sorted, distinct. 40403 `Schema not found` for an
    /// unknown ID; `[]` when every row is soft-deleted and `include_deleted` is false.
    pub async fn subjects_for_id(&self, id: i32, include_deleted: bool) -> Result<Vec<Subject>, RegistryError> {
        let mut subjects: Vec<Subject> =
            self.versions_for_id(id, include_deleted).await?.into_iter().map(|(s, _)| s).collect();
        subjects.dedup();
        Ok(subjects)
    }

    /// `GET /schemas/ids/{id}/versions`: (subject, version) pairs sorted; errors as
    /// [`Registry::subjects_for_id`]. The HTTP answer streams the same pages
    /// ([`Registry::rows_with_id_page`]) instead.
    pub async fn versions_for_id(
        &self,
        id: i32,
        include_deleted: bool,
    ) -> Result<Vec<(Subject, Version)>, RegistryError> {
        const PAGE: usize = 1000;
        let (mut pairs, mut any_row) = (Vec::new(), false);
        let mut after: Option<(Subject, Version)> = None;
        loop {
            let cursor = after.as_ref().map(|(subject, version)| (subject, *version));
            let rows = self.rows_with_id_page(&Context::DEFAULT, id, &SubjectScope::All, cursor, PAGE).await?;
            any_row |= !rows.is_empty();
            pairs.extend(visible(&rows, include_deleted).map(|r| (r.subject.clone(), r.version)));
            match rows.last() {
                Some(last) if rows.len() == PAGE => after = Some((last.subject.clone(), last.version)),
                _ => break,
            }
        }
        if !any_row {
            return Err(RegistryError::SchemaNotFound);
        }
        Ok(pairs)
    }

    /// One page of the rows of `context` carrying schema `id` in subjects inside `scope`, live and
    /// soft-deleted (the caller filters), sorted by (subject, version), after `after`; fewer than
    /// `limit` means the last page. An ID below 1 has no rows.
    pub async fn rows_with_id_page(
        &self,
        context: &Context,
        id: i32,
        scope: &SubjectScope,
        after: Option<(&Subject, Version)>,
        limit: usize,
    ) -> Result<Vec<VersionRow>, RegistryError> {
        if id < 1 {
            return Ok(Vec::new());
        }
        let store = &self.store;
        let cursor = after.map(|(subject, _)| subject.as_str());
        let read = |range: String, wanted| async move {
            let page = IdRowsPage { id: SchemaId(id), prefix: &range, after, limit: wanted };
            store.rows_with_id_page_in(context, page).await
        };
        Ok(read_runs(scope.ranges(""), cursor, limit, read).await?)
    }

    /// `GET /schemas` as one list: versions of subjects starting with `subject_prefix`, sorted by
    /// subject then version; soft-deleted ones only with `include_deleted`; with `latest_only` the
    /// highest included version per subject. `offset` skips, `limit` 0 or above 1000 means 1000.
    /// The HTTP answer streams the same pages ([`Registry::schema_rows_page`]) instead.
    pub async fn schemas(&self, query: &SchemasQuery) -> Result<Vec<SchemaRecord>, RegistryError> {
        let limit = if query.limit == 0 || query.limit > SCHEMAS_LIMIT { SCHEMAS_LIMIT } else { query.limit };
        let mut skipped = 0usize;
        let mut out = Vec::new();
        let mut after: Option<Subject> = None;
        loop {
            let (rows, last) = self.schema_rows_page(query, after.as_ref(), SCHEMAS_LIMIT).await?;
            for row in &rows {
                if skipped < query.offset {
                    skipped += 1;
                    continue;
                }
                out.push(self.record(row).await?);
                if out.len() >= limit {
                    return Ok(out);
                }
            }
            match last {
                Some(last) => after = Some(last),
                None => return Ok(out),
            }
        }
    }

    /// One page of `GET /schemas`: the rows listed for the next `subjects` subjects after `after`
    /// (in [`Registry::schemas`]' order and filters, before `offset`/`limit`), and the cursor for
    /// the next page: the last subject read, or `None` when the store has no more.
    pub async fn schema_rows_page(
        &self,
        query: &SchemasQuery,
        after: Option<&Subject>,
        subjects: usize,
    ) -> Result<(Vec<VersionRow>, Option<Subject>), RegistryError> {
        let filter = if query.include_deleted { DeletedFilter::IncludeDeleted } else { DeletedFilter::LiveOnly };
        let page = self.subjects_page(&query.scope, &query.subject_prefix, filter, after, subjects).await?;
        let mut listed = Vec::new();
        for subject in &page {
            let rows = self.rows(subject).await?;
            let mut included: Vec<&VersionRow> = visible(&rows, query.include_deleted).collect();
            if query.latest_only {
                included = included.pop().into_iter().collect();
            }
            listed.extend(included.into_iter().cloned());
        }
        let next = if page.len() < subjects { None } else { page.last().cloned() };
        Ok((listed, next))
    }

    /// A listed row with its schema body (for answers built row by row).
    pub async fn schema_record(&self, row: &VersionRow) -> Result<SchemaRecord, RegistryError> {
        self.record(row).await
    }

    /// `GET /subjects`: one page of the names starting with `prefix` inside `scope` (ascending,
    /// after `after`, at most `limit`; fewer means the last page). A subject exists while it has a
    /// row; `filter` chooses live, all, or all-deleted ones.
    pub async fn subjects_page(
        &self,
        scope: &SubjectScope,
        prefix: &str,
        filter: DeletedFilter,
        after: Option<&Subject>,
        limit: usize,
    ) -> Result<Vec<Subject>, RegistryError> {
        let store = &self.store;
        let read = |range: String, wanted| async move {
            store.list_subjects(SubjectsPage { prefix: &range, filter, after, limit: wanted }).await
        };
        Ok(read_runs(scope.ranges(prefix), after.map(Subject::as_str), limit, read).await?)
    }

    /// `GET /subjects/{s}/versions`: ascending version numbers visible under `filter`
    /// (live, all, or only soft-deleted). 40401 when none is visible.
    pub async fn version_numbers(&self, subject: &str, filter: DeletedFilter) -> Result<Vec<Version>, RegistryError> {
        let (subject, rows) = self.rows_following_alias(Subject::new(subject)?).await?;
        let numbers: Vec<Version> = rows.iter().filter(|r| filter.includes(r.deleted)).map(|r| r.version).collect();
        if numbers.is_empty() {
            return Err(subject_not_found(&subject));
        }
        Ok(numbers)
    }

    /// One page of `GET /subjects/{s}/versions`: at most `limit` of `subject`'s rows after `after`,
    /// live and soft-deleted (the caller filters), ascending; fewer than `limit` means the last page.
    pub async fn versions_page(
        &self,
        subject: &Subject,
        after: Option<Version>,
        limit: usize,
    ) -> Result<Vec<VersionRow>, RegistryError> {
        Ok(self.store.versions_page(VersionsPage { subject, after, limit }).await?)
    }

    /// `GET /subjects/{s}/versions/{v}`. 40401 when the subject has no version visible under
    /// `include_deleted`; 40402 when the version is missing (or soft-deleted without
    /// `include_deleted`). `latest` is the highest live version even with `include_deleted`,
    /// so an all-deleted subject answers 40402 `Version -1 not found.` there.
    pub async fn version(
        &self,
        subject: &str,
        version: VersionSelector,
        include_deleted: bool,
    ) -> Result<SchemaRecord, RegistryError> {
        let found = self.version_in_subject(subject, version, include_deleted).await;
        if !matches!(found, Err(RegistryError::SubjectNotFound { .. } | RegistryError::VersionNotFound { .. })) {
            return found;
        }
        // Confluent's `getUsingContexts`: the same name in each listed context, in order.
        for qualified in self.in_named_contexts(subject).await? {
            if let Ok(record) = self.version_in_subject(qualified.as_str(), version, include_deleted).await {
                return Ok(record);
            }
        }
        found
    }

    async fn version_in_subject(
        &self,
        subject: &str,
        version: VersionSelector,
        include_deleted: bool,
    ) -> Result<SchemaRecord, RegistryError> {
        let (subject, rows) = self.visible_subject(subject, include_deleted).await?;
        let row = match version {
            VersionSelector::Latest => latest_live(&rows),
            VersionSelector::Number(number) => visible(&rows, include_deleted).find(|r| r.version == number),
        };
        match row {
            Some(row) => self.record(row).await,
            None => Err(version_not_found(&subject, version)),
        }
    }

    /// `GET /subjects/{s}/versions/{v}/referencedby`: IDs of schemas referencing that version,
    /// ascending and distinct. The target resolves as with `deleted=true` (40401 without rows,
    /// 40402 missing); referrers that are soft-deleted count only with `include_deleted`.
    pub async fn referenced_by(
        &self,
        subject: &str,
        version: VersionSelector,
        include_deleted: bool,
    ) -> Result<Vec<SchemaId>, RegistryError> {
        let (subject, rows) = self.visible_subject(subject, true).await?;
        let target = match version {
            VersionSelector::Latest => latest_live(&rows),
            VersionSelector::Number(number) => rows.iter().find(|r| r.version == number),
        };
        let Some(target) = target else {
            return Err(version_not_found(&subject, version));
        };
        let referrers = self.store.referrers(&subject, target.version).await?;
        let mut ids: Vec<SchemaId> = visible(&referrers, include_deleted).map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }
}
