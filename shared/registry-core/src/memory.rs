//! `MemoryStore`: the reference [`Store`], for tests. One mutex over ordered maps; every call is atomic.

use crate::id_rules::{self, Allocation, BindDecision, BindRead};
use crate::model::{
    ConfigRecord, Context, DeletedFilter, Guid, Mode, SchemaBody, SchemaId, Scope, Subject, Version, VersionRow,
};
use crate::store::{
    CommitHints, ConfiguredPage, HardDeletion, IdRowsPage, LayeredContext, Preconditions, Revision, SettingChange,
    SettingKind, SettingSeen, SettingWrite, SettingsAt, SoftDeletion, Store, StoreError, StoreResult, SubjectsPage,
    VersionsPage,
};
use async_trait::async_trait;
use registry_schema::Fingerprint;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};

/// An in-memory store. Cheap to create; nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    bodies: HashMap<Fingerprint, SchemaBody>,
    ids: BTreeMap<Context, IdSpace>,
    fingerprint_by_guid: HashMap<Guid, Fingerprint>,
    rows: BTreeMap<(Subject, Version), VersionRow>,
    configs: HashMap<Scope, ConfigRecord>,
    modes: HashMap<Scope, Mode>,
    used: HashMap<Subject, u32>,
    revisions: HashMap<Subject, u64>,
}

/// One context's IDs: its counter and bindings.
#[derive(Debug, Default)]
struct IdSpace {
    id_by_fingerprint: HashMap<Fingerprint, SchemaId>,
    fingerprint_by_id: BTreeMap<SchemaId, Fingerprint>,
    max_id: Option<SchemaId>,
    /// Listed by `list_contexts` (named contexts only): set by every allocation or binding.
    listed: bool,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-applied write (each call mutates
        // at the end), so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    fn space(&self, context: &Context) -> Option<&IdSpace> {
        self.ids.get(context)
    }

    /// The context's ID space, created (and listed) on first use.
    fn space_mut(&mut self, context: &Context) -> &mut IdSpace {
        let space = self.ids.entry(context.clone()).or_default();
        space.listed = true;
        space
    }

    /// The stored form of a settings item (what [`SettingSeen::stored`] holds for this store).
    fn setting(&self, kind: SettingKind, scope: &Scope) -> Option<String> {
        match kind {
            SettingKind::Config => self.configs.get(scope).map(|c| serde_json::to_string(c).unwrap_or_default()),
            SettingKind::Mode => self.modes.get(scope).map(|m| m.as_str().to_string()),
        }
    }

    /// What [`Store::layered_write_context`] reads at `scope`: the settings of every scope of
    /// [`Scope::settings_read`], as stored, with the subject's revision and usage marker.
    fn layered_context(&self, scope: &Scope) -> LayeredContext {
        let scopes = scope.settings_read();
        let seen = self.seen(&scopes);
        let levels = scopes
            .iter()
            .map(|at| SettingsAt {
                scope: at.clone(),
                config: self.configs.get(at).cloned(),
                mode: self.modes.get(at).copied(),
            })
            .collect();
        let (revision, last_used) = match scope {
            Scope::Subject(subject) => (self.revision(subject), self.used.get(subject).copied()),
            Scope::Global => (Revision::default(), None),
        };
        LayeredContext::every_level(scope, revision, levels, seen, last_used)
    }

    /// The config and mode items at `scopes` as stored, for [`Preconditions::settings`].
    fn seen(&self, scopes: &[Scope]) -> Vec<SettingSeen> {
        [SettingKind::Config, SettingKind::Mode]
            .into_iter()
            .flat_map(|kind| scopes.iter().map(move |scope| (kind, scope)))
            .map(|(kind, scope)| SettingSeen { kind, scope: scope.clone(), stored: self.setting(kind, scope) })
            .collect()
    }

    fn revision(&self, subject: &Subject) -> Revision {
        Revision(self.revisions.get(subject).copied().unwrap_or(0))
    }

    fn bump(&mut self, subject: &Subject) {
        *self.revisions.entry(subject.clone()).or_insert(0) += 1;
    }

    /// `Conflict` unless every precondition holds for a write to `subject`.
    fn check(&self, subject: &Subject, preconditions: &Preconditions) -> StoreResult<()> {
        let conflict = |what: String| Err(StoreError::Conflict(format!("{subject}: {what}")));
        if let Some(revision) = preconditions.revision
            && self.revision(subject) != revision
        {
            return conflict(format!("revision is no longer {}", revision.0));
        }
        self.check_settings(preconditions).map_err(|e| StoreError::Conflict(format!("{subject}: {e}")))?;
        for (referenced, version) in &preconditions.live_rows {
            if self.rows.get(&(referenced.clone(), *version)).is_none_or(|row| row.deleted) {
                return conflict(format!("referenced {referenced} version {version} is not live"));
            }
        }
        if let Some((fingerprint, id)) = &preconditions.binding
            && self.space(&subject.context()).and_then(|space| space.id_by_fingerprint.get(fingerprint)) != Some(id)
        {
            return conflict(format!("fingerprint {fingerprint} no longer names id {id}"));
        }
        if let Some((id, fingerprint)) = &preconditions.id_binding
            && self.space(&subject.context()).and_then(|space| space.fingerprint_by_id.get(id)) != Some(fingerprint)
        {
            return conflict(format!("id {id} no longer names fingerprint {fingerprint}"));
        }
        Ok(())
    }

    /// `Conflict` unless every settings item is as `preconditions` saw it.
    fn check_settings(&self, preconditions: &Preconditions) -> StoreResult<()> {
        match preconditions.settings.iter().find(|seen| self.setting(seen.kind, &seen.scope) != seen.stored) {
            Some(seen) => Err(StoreError::Conflict(format!("{:?} at {:?} changed", seen.kind, seen.scope))),
            None => Ok(()),
        }
    }

    /// Raises the revision of every subject whose versions a new row references.
    fn bump_referenced(&mut self, subject: &Subject, preconditions: &Preconditions) {
        let referenced: std::collections::BTreeSet<&Subject> =
            preconditions.live_rows.iter().map(|(s, _)| s).filter(|s| *s != subject).collect();
        for referenced in referenced.into_iter().cloned().collect::<Vec<_>>() {
            self.bump(&referenced);
        }
    }

    /// Unbinds the fingerprint of `removed` (a row just removed) as [`id_rules::unbinds_on_removal`]
    /// decides: when its side names the row's ID and no row of its context carries that ID any more.
    fn unbind_if_orphaned(&mut self, removed: &VersionRow) {
        let context = removed.subject.context();
        let carried = self.rows.values().any(|other| other.id == removed.id && other.subject.context() == context);
        if let Some(space) = self.ids.get_mut(&context)
            && id_rules::unbinds_on_removal(
                space.id_by_fingerprint.get(&removed.fingerprint).copied(),
                removed.id,
                carried,
            )
        {
            space.id_by_fingerprint.remove(&removed.fingerprint);
        }
    }

    fn subject_rows<'a>(&'a self, subject: &'a Subject) -> impl Iterator<Item = &'a VersionRow> + 'a {
        self.rows.range((subject.clone(), Version(i32::MIN))..=(subject.clone(), Version(i32::MAX))).map(|(_, row)| row)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()> {
        self.state().bodies.entry(*fingerprint).or_insert_with(|| body.clone());
        Ok(())
    }

    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        Ok(self.state().bodies.get(fingerprint).cloned())
    }

    async fn id_for_fingerprint_in(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> StoreResult<Option<SchemaId>> {
        Ok(self.state().space(context).and_then(|space| space.id_by_fingerprint.get(fingerprint).copied()))
    }

    async fn fingerprint_for_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        Ok(self.state().space(context).and_then(|space| space.fingerprint_by_id.get(&id).copied()))
    }

    async fn allocate_id_in(&self, context: &Context, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        let mut state = self.state();
        let space = state.space_mut(context);
        let exhausted = |_| StoreError::ids_exhausted(context);
        let next = match id_rules::allocation(space.id_by_fingerprint.get(fingerprint).copied(), space.max_id) {
            Allocation::AlreadyBound(_) => {
                return Err(StoreError::Conflict(format!("fingerprint {fingerprint} already has an id in {context}")));
            }
            // Lowered and allocated in the same step.
            Allocation::LowerCounter => {
                let floor = id_rules::lowering_floor(space.fingerprint_by_id.keys().copied());
                id_rules::next_id(id_rules::counter_after_lowering(floor).map_err(exhausted)?).map_err(exhausted)?
            }
            Allocation::Take(next) => next,
        };
        if space.fingerprint_by_id.contains_key(&next) {
            return Err(StoreError::Corrupt(format!("id {next} is bound in {context} but above the counter")));
        }
        space.max_id = Some(next);
        space.id_by_fingerprint.insert(*fingerprint, next);
        space.fingerprint_by_id.insert(next, *fingerprint);
        Ok(next)
    }

    async fn bind_id_in(&self, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        let mut state = self.state();
        let carried = state.rows.values().any(|row| row.id == id && row.subject.context() == *context);
        let space = state.space_mut(context);
        let id_bound_to = space.fingerprint_by_id.get(&id).copied();
        let read = BindRead {
            id_bound_to,
            carried,
            old_side: id_bound_to.and_then(|old| space.id_by_fingerprint.get(&old).copied()),
            fingerprint_side: space.id_by_fingerprint.get(fingerprint).copied(),
        };
        let decision = id_rules::bind_decision(id, fingerprint, &read);
        match decision {
            BindDecision::Conflict { bound } => {
                return Err(StoreError::Conflict(format!("id {id} is bound to {bound} in {context}")));
            }
            BindDecision::AlreadyBound { .. } => {}
            BindDecision::Bind { .. } => drop(space.fingerprint_by_id.insert(id, *fingerprint)),
            BindDecision::Rebind { old, unbind_old, .. } => {
                if unbind_old {
                    space.id_by_fingerprint.remove(&old);
                }
                space.fingerprint_by_id.insert(id, *fingerprint);
            }
        }
        if decision.bind_reverse() {
            space.id_by_fingerprint.insert(*fingerprint, id);
        }
        space.max_id = Some(id_rules::counter_after_binding(space.max_id, id));
        Ok(())
    }

    async fn max_id_in(&self, context: &Context) -> StoreResult<Option<SchemaId>> {
        Ok(self.state().space(context).and_then(|space| space.max_id))
    }

    async fn list_contexts(&self) -> StoreResult<Vec<Context>> {
        let state = self.state();
        let listed = state.ids.iter().filter(|(context, space)| space.listed && !context.is_default());
        Ok(listed.map(|(context, _)| context.clone()).collect())
    }

    async fn unlist_context(&self, context: &Context) -> StoreResult<()> {
        let mut state = self.state();
        if state.rows.keys().any(|(subject, _)| subject.context() == *context) {
            return Err(StoreError::Conflict(format!("a subject of {context} has versions")));
        }
        if let Some(space) = state.ids.get_mut(context) {
            space.listed = false;
        }
        Ok(())
    }

    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        match *self.state().fingerprint_by_guid.entry(*guid).or_insert(*fingerprint) {
            bound if bound == *fingerprint => Ok(()),
            bound => Err(StoreError::Conflict(format!("guid {guid} is bound to {bound}"))),
        }
    }

    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        Ok(self.state().fingerprint_by_guid.get(guid).copied())
    }

    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        Ok(self.state().subject_rows(subject).cloned().collect())
    }

    async fn versions_page(&self, page: VersionsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        let VersionsPage { subject, after, limit } = page;
        let state = self.state();
        let rows = state.subject_rows(subject).filter(|row| after.is_none_or(|a| row.version > a)).take(limit);
        Ok(rows.cloned().collect())
    }

    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>> {
        Ok(self.state().rows.get(&(subject.clone(), version)).cloned())
    }

    async fn layered_write_context(
        &self,
        scope: &Scope,
        _schemas: &[(Fingerprint, Guid)],
    ) -> StoreResult<LayeredContext> {
        Ok(self.state().layered_context(scope))
    }

    async fn create_version(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        _: &CommitHints,
    ) -> StoreResult<()> {
        let mut state = self.state();
        let key = (row.subject.clone(), row.version);
        if state.rows.get(&key)
            != preconditions.replaces.as_ref().filter(|old| (&old.subject, old.version) == (&key.0, key.1))
        {
            return Err(StoreError::Conflict(format!("{} version {} is not as read", row.subject, row.version)));
        }
        state.check(&row.subject, preconditions)?;
        if let Some(replaced) = state.rows.insert(key, row.clone()) {
            state.unbind_if_orphaned(&replaced);
        }
        state.bump(&row.subject);
        for raised in &preconditions.raises {
            state.bump(raised);
            state.space_mut(&raised.context());
        }
        state.bump_referenced(&row.subject, preconditions);
        Ok(())
    }

    async fn soft_delete_versions(&self, deletion: SoftDeletion<'_>) -> StoreResult<()> {
        let SoftDeletion { subject, versions, preconditions } = deletion;
        let mut state = self.state();
        let all_live = versions.iter().all(|v| state.rows.get(&(subject.clone(), *v)).is_some_and(|row| !row.deleted));
        if !all_live {
            return Err(StoreError::Conflict(format!("{subject}: a version to soft-delete is missing or deleted")));
        }
        state.check(subject, preconditions)?;
        for version in versions {
            if let Some(row) = state.rows.get_mut(&(subject.clone(), *version)) {
                row.deleted = true;
            }
        }
        state.bump(subject);
        Ok(())
    }

    async fn hard_delete_versions(&self, deletion: HardDeletion<'_>) -> StoreResult<()> {
        let HardDeletion { subject, versions, remove_subject_settings, preconditions } = deletion;
        let mut state = self.state();
        state.check(subject, preconditions)?;
        let mut removed = Vec::new();
        for version in versions {
            removed.extend(state.rows.remove(&(subject.clone(), *version)));
        }
        for row in &removed {
            state.unbind_if_orphaned(row);
        }
        if remove_subject_settings {
            let scope = Scope::Subject(subject.clone());
            state.configs.remove(&scope);
            state.modes.remove(&scope);
        }
        state.bump(subject);
        Ok(())
    }

    async fn rows_with_id_page_in(&self, context: &Context, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        let IdRowsPage { id, prefix, after, limit } = page;
        // Rows are keyed by (subject, version), so the map's order is the page order.
        let state = self.state();
        let later = state.rows.iter().filter(|(key, _)| after.is_none_or(|(s, v)| (&key.0, key.1) > (s, v)));
        let carriers = later.map(|(_, row)| row).filter(|row| {
            row.id == id && row.subject.as_str().starts_with(prefix) && row.subject.context() == *context
        });
        Ok(carriers.take(limit).cloned().collect())
    }

    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>> {
        let state = self.state();
        let mut rows: Vec<VersionRow> = state
            .rows
            .values()
            .filter(|row| row.references.iter().any(|r| r.subject == subject.as_str() && r.version == version.0))
            .cloned()
            .collect();
        rows.sort_by_key(|row| (row.id, row.subject.clone(), row.version));
        Ok(rows)
    }

    async fn list_subjects(&self, page: SubjectsPage<'_>) -> StoreResult<Vec<Subject>> {
        let SubjectsPage { prefix, filter, after, limit } = page;
        let state = self.state();
        let mut page: Vec<Subject> = Vec::new();
        let mut current: Option<(&Subject, bool)> = None; // (subject, has a live row)
        let flush = |entry: Option<(&Subject, bool)>, page: &mut Vec<Subject>| {
            if let Some((subject, live)) = entry {
                let keep = match filter {
                    DeletedFilter::LiveOnly => live,
                    DeletedFilter::IncludeDeleted => true,
                    DeletedFilter::DeletedOnly => !live,
                };
                if keep {
                    page.push(subject.clone());
                }
            }
        };
        for ((subject, _), row) in state.rows.iter() {
            if !subject.as_str().starts_with(prefix) || after.is_some_and(|a| subject <= a) {
                continue;
            }
            match current {
                Some((s, live)) if s == subject => current = Some((s, live || !row.deleted)),
                _ => {
                    flush(current.take(), &mut page);
                    if page.len() >= limit {
                        return Ok(page);
                    }
                    current = Some((subject, !row.deleted));
                }
            }
        }
        flush(current, &mut page);
        page.truncate(limit);
        Ok(page)
    }

    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        Ok(self.state().configs.get(scope).cloned())
    }

    async fn subjects_with_config(&self, page: ConfiguredPage<'_>) -> StoreResult<Vec<Subject>> {
        let ConfiguredPage { prefix, after, limit } = page;
        let mut subjects: Vec<Subject> = (self.state().configs.keys())
            .filter_map(|scope| match scope {
                // A context's own scope is stored at a name that is no subject.
                Scope::Subject(subject) if Subject::new(subject.as_str()).is_ok() => Some(subject),
                _ => None,
            })
            .filter(|subject| subject.as_str().starts_with(prefix) && after.is_none_or(|after| *subject > after))
            .cloned()
            .collect();
        subjects.sort();
        subjects.truncate(limit);
        Ok(subjects)
    }

    async fn write_setting(&self, write: SettingWrite<'_>) -> StoreResult<()> {
        let SettingWrite { scope, change, preconditions } = write;
        let mut state = self.state();
        match scope {
            Scope::Subject(subject) => state.check(subject, preconditions)?,
            Scope::Global => state.check_settings(preconditions)?,
        }
        match change {
            SettingChange::Config(Some(config)) => drop(state.configs.insert(scope.clone(), (**config).clone())),
            SettingChange::Config(None) => drop(state.configs.remove(scope)),
            SettingChange::Mode(Some(mode)) => drop(state.modes.insert(scope.clone(), *mode)),
            SettingChange::Mode(None) => drop(state.modes.remove(scope)),
        }
        Ok(())
    }

    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>> {
        Ok(self.state().used.get(subject).copied())
    }

    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()> {
        let mut state = self.state();
        let stored = state.used.entry(subject.clone()).or_insert(day);
        *stored = (*stored).max(day);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A counter pushed to the top again after a lowering restarts past the IDs allocated right
    /// above the import bound ([`id_rules::lowering_floor`]), not at one of them.
    #[tokio::test]
    async fn a_second_lowering_restarts_past_the_ids_the_first_one_issued() {
        let (store, context) = (MemoryStore::new(), Context::parse(".lowered").unwrap());
        let (imported, top, first, second) =
            (Fingerprint([1; 32]), Fingerprint([2; 32]), Fingerprint([3; 32]), Fingerprint([4; 32]));
        store.bind_id_in(&context, SchemaId::MAX_IMPORTED, &imported).await.unwrap();
        store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.unwrap();
        let after_bound = SchemaId(SchemaId::MAX_IMPORTED.0 + 1);
        assert_eq!(store.allocate_id_in(&context, &first).await.unwrap(), after_bound);
        store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.unwrap();
        assert_eq!(store.max_id_in(&context).await.unwrap(), Some(SchemaId(i32::MAX)), "at the top again");
        assert_eq!(store.allocate_id_in(&context, &second).await.unwrap(), SchemaId(after_bound.0 + 1));
    }
}
