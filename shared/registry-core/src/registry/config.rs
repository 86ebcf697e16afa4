//! Compatibility config, modes and contexts, per subject and global.

use super::Registry;
use super::support::{MAX_ATTEMPTS, subject_not_found, writable};
use crate::error::RegistryError;
use crate::model::{ConfigRecord, ConfigUpdate, Context, DeletedFilter, Mode, Scope, Subject, Version};
use crate::store::{
    ConfiguredPage, LayeredContext, Preconditions, SettingChange, SettingWrite, StoreError, SubjectsPage,
};

impl Registry {
    /// `GET /config[/{s}]`, as Confluent's `getConfig`/`getConfigInScope`. Global: the stored
    /// config (with `default_to_global`, else the registry-wide one) with the server default
    /// level filled in; the registry-wide `:.__GLOBAL:` likewise. A subject's or context's own
    /// config as stored; without one 40408, or with `default_to_global` the effective config (own
    /// fields over global, else the first config of its context, or of the registry, else the
    /// server default).
    pub async fn config(&self, scope: &Scope, default_to_global: bool) -> Result<ConfigRecord, RegistryError> {
        let layers = self.decision_context(scope).await?;
        let filled = |config: ConfigRecord| ConfigRecord {
            compatibility_level: config.compatibility_level.or(Some(self.settings.default_compatibility)),
            ..config
        };
        match scope {
            Scope::Global if default_to_global => Ok(filled(layers.merged_config())),
            Scope::Global => Ok(filled(layers.own_config().unwrap_or_default())),
            _ if scope.is_registry_wide() => Ok(filled(layers.own_config().unwrap_or_default())),
            Scope::Subject(subject) => match layers.own_config() {
                _ if default_to_global => Ok(filled(layers.merged_config())),
                Some(own) => Ok(own),
                None => Err(RegistryError::SubjectConfigNotFound { subject: subject.to_string() }),
            },
        }
    }

    /// `PUT /config[/{s}]`: replaces the config at `scope` and returns it. Allowed for subjects
    /// without versions; 42205 while the scope is read-only (as read in the same step as the write:
    /// a `PUT /mode READONLY` acknowledged first is never overtaken).
    /// Data-contract defaults and overrides are stored in normal form; an invalid rule set is 42210.
    pub async fn set_config(&self, scope: &Scope, config: ConfigRecord) -> Result<ConfigRecord, RegistryError> {
        self.check_alias(scope, &config)?;
        let config = super::contracts::normalize_config(config)?;
        let change = SettingChange::Config(Some(Box::new(config.clone())));
        self.write_setting(scope, |context| writable(context, scope_subject(scope)).map(|()| change.clone())).await?;
        Ok(config)
    }

    /// `PUT /config[/{s}]` as Confluent applies it (`ConfigValue.update`): the fields `update`
    /// names replace the stored ones (`null` clears one), the others keep their stored value, so
    /// `{}` answers the config as it is. The stored config it merges with is the one read in the
    /// same step as the conditional write, so two concurrent updates of different fields both
    /// hold. Otherwise as [`Registry::set_config`].
    pub async fn update_config(&self, scope: &Scope, update: ConfigUpdate) -> Result<ConfigRecord, RegistryError> {
        if let Some(Some(alias)) = &update.alias {
            self.check_alias(scope, &ConfigRecord { alias: Some(alias.clone()), ..ConfigRecord::default() })?;
        }
        let merged =
            |context: &LayeredContext| super::contracts::normalize_config(update.clone().apply(context.own_config()));
        let context = self
            .write_setting(scope, |context| {
                writable(context, scope_subject(scope))?;
                Ok(SettingChange::Config(Some(Box::new(merged(context)?))))
            })
            .await?;
        merged(&context)
    }

    /// `DELETE /config[/{s}]`: the removed config. A subject or context without one is 40401; the
    /// global and registry-wide configs revert to the server default (the previous one, or the
    /// default, is returned). 42205 while the scope is read-only.
    pub async fn delete_config(&self, scope: &Scope) -> Result<ConfigRecord, RegistryError> {
        let change = SettingChange::Config(None);
        let context = self
            .write_setting(scope, |context| writable(context, scope_subject(scope)).map(|()| change.clone()))
            .await?;
        removed(scope, context.own_config(), || ConfigRecord {
            compatibility_level: Some(self.settings.default_compatibility),
            ..ConfigRecord::default()
        })
    }

    /// Every subject holding a config of its own, versions or none, in ascending order: an
    /// exporter copies the configs of those without versions, which `GET /subjects` does not list
    /// (no Confluent endpoint answers it). One Query per 500 configs on DynamoDB.
    pub async fn subjects_with_config(&self) -> Result<Vec<Subject>, RegistryError> {
        const PAGE: usize = 1000;
        let mut configured: Vec<Subject> = Vec::new();
        loop {
            let page = ConfiguredPage { prefix: "", after: configured.last(), limit: PAGE };
            let next = self.store.subjects_with_config(page).await?;
            let done = next.len() < PAGE;
            configured.extend(next);
            if done {
                return Ok(configured);
            }
        }
    }

    /// `GET /mode[/{s}]`, as Confluent's `getMode`/`getModeInScope`. Global and registry-wide:
    /// the stored mode or READWRITE (the global one with `default_to_global`: the effective mode).
    /// A subject's or context's own mode; without one 40409, or with `default_to_global` the
    /// effective mode.
    pub async fn mode(&self, scope: &Scope, default_to_global: bool) -> Result<Mode, RegistryError> {
        let layers = self.decision_context(scope).await?;
        match scope {
            _ if default_to_global => Ok(layers.effective_mode()),
            Scope::Global => Ok(layers.own_mode().unwrap_or_default()),
            _ if scope.is_registry_wide() => Ok(layers.own_mode().unwrap_or_default()),
            Scope::Subject(subject) => {
                layers.own_mode().ok_or_else(|| RegistryError::SubjectModeNotFound { subject: subject.to_string() })
            }
        }
    }

    /// `PUT /mode[/{s}]`: stores and returns `mode`. Entering IMPORT (from another mode,
    /// without `force`) is refused with 42205 `Cannot import since found existing subjects`
    /// while the scope has live versions (a context: its subjects; the global and registry-wide
    /// scopes: every subject); when allowed, the scope's leftover soft-deleted rows
    /// are hard-deleted first, as Confluent's `ClearSubjectKey` (imports bring their own), but for
    /// those another subject's row still references (their hard delete is refused with 42206).
    /// For a subject the mode write is conditioned on its revision as read before its rows, so a
    /// registration racing it either commits first (and IMPORT is refused) or reads IMPORT.
    pub async fn set_mode(&self, scope: &Scope, mode: Mode, force: bool) -> Result<Mode, RegistryError> {
        for attempt in 0..MAX_ATTEMPTS {
            let context = self.decision_context(scope).await?;
            let current = context.effective_mode();
            let mut preconditions = Preconditions { settings: context.seen.clone(), ..Preconditions::default() };
            if mode == Mode::Import && !force && current != Mode::Import {
                if self.has_live_versions(scope).await? {
                    return Err(RegistryError::OperationNotPermitted {
                        message: "Cannot import since found existing subjects".to_string(),
                    });
                }
                if self.clear_deleted(scope).await? {
                    continue;
                }
                preconditions.revision = Some(context.revision);
            }
            if self.commit_setting(scope, &SettingChange::Mode(Some(mode)), &preconditions, attempt).await? {
                return Ok(mode);
            }
        }
        Err(too_many_writers(scope))
    }

    /// `DELETE /mode[/{s}]`: the removed mode (allowed while read-only). A subject or context
    /// without one is 40401; the global and registry-wide modes revert to READWRITE.
    pub async fn delete_mode(&self, scope: &Scope) -> Result<Mode, RegistryError> {
        let context = self.write_setting(scope, |_| Ok(SettingChange::Mode(None))).await?;
        removed(scope, context.own_mode(), || Mode::ReadWrite)
    }

    /// What a write at `scope` decides on: every settings layer in one read.
    pub(super) async fn decision_context(&self, scope: &Scope) -> Result<LayeredContext, RegistryError> {
        self.decision_context_for(scope, &[]).await
    }

    /// [`Registry::decision_context`] with the bindings of `schemas` where the store reads them
    /// together ([`crate::Store::layered_write_context`]).
    pub(super) async fn decision_context_for(
        &self,
        scope: &Scope,
        schemas: &[(registry_schema::Fingerprint, crate::model::Guid)],
    ) -> Result<LayeredContext, RegistryError> {
        Ok(self.store.layered_write_context(scope, schemas).await?)
    }

    /// Reads the settings at `scope`, lets `decide` choose the change, and writes it conditioned
    /// on every settings item `decide` saw; reads and decides again when one changed meanwhile.
    /// The context the write committed under.
    async fn write_setting(
        &self,
        scope: &Scope,
        decide: impl Fn(&LayeredContext) -> Result<SettingChange, RegistryError>,
    ) -> Result<LayeredContext, RegistryError> {
        for attempt in 0..MAX_ATTEMPTS {
            let context = self.decision_context(scope).await?;
            let change = decide(&context)?;
            let preconditions = Preconditions { settings: context.seen.clone(), ..Preconditions::default() };
            if self.commit_setting(scope, &change, &preconditions, attempt).await? {
                return Ok(context);
            }
        }
        Err(too_many_writers(scope))
    }

    /// One conditional settings write: `false` when a condition failed (read again after a pause).
    async fn commit_setting(
        &self,
        scope: &Scope,
        change: &SettingChange,
        preconditions: &Preconditions,
        attempt: usize,
    ) -> Result<bool, RegistryError> {
        let written = self.store.write_setting(SettingWrite { scope, change, preconditions }).await;
        self.forget_lookups();
        match written {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => {
                self.after_conflict(attempt).await;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `DELETE /contexts/{context}`: stops listing an empty context; 42211 while any subject
    /// (even one whose versions are all soft-deleted) is left in it, also when one appears between
    /// that check and the unlisting (the store refuses it: [`crate::Store::unlist_context`]). The default context always
    /// exists: deleting it only checks that it is empty.
    pub async fn delete_context(&self, context: &str) -> Result<(), RegistryError> {
        let context = Context::parse(context)?;
        let prefix = context.subject_prefix();
        let page = SubjectsPage { prefix: &prefix, filter: DeletedFilter::IncludeDeleted, after: None, limit: 1 };
        let left = self.store.list_subjects(page).await?;
        if !left.is_empty() {
            return Err(RegistryError::ContextNotEmpty { context: context.name().to_string() });
        }
        if !context.is_default() {
            match self.store.unlist_context(&context).await {
                Ok(()) => {}
                // A subject appeared there after the listing above: as if it came first.
                Err(StoreError::Conflict(_)) => {
                    return Err(RegistryError::ContextNotEmpty { context: context.name().to_string() });
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Hard-deletes the soft-deleted rows of `scope` (a context's subjects for a context, every
    /// subject for the global and registry-wide scopes); whether there were any. Idempotent: a
    /// crash part-way leaves rows the retried call deletes.
    async fn clear_deleted(&self, scope: &Scope) -> Result<bool, RegistryError> {
        let mut subjects = Vec::new();
        match subjects_prefix(scope) {
            None => subjects.extend(scope_subject(scope).cloned()),
            Some(prefix) => {
                let mut after = None;
                loop {
                    let page = SubjectsPage {
                        prefix: &prefix,
                        filter: DeletedFilter::DeletedOnly,
                        after: after.as_ref(),
                        limit: 1000,
                    };
                    let page = self.store.list_subjects(page).await?;
                    let Some(last) = page.last().cloned() else { break };
                    subjects.extend(page);
                    after = Some(last);
                }
            }
        }
        let mut cleared = false;
        for subject in subjects {
            let mut deleted = Vec::new();
            for row in self.rows(&subject).await?.iter().filter(|r| r.deleted) {
                if !self.referenced_by_another_subject(&subject, row.version).await? {
                    deleted.push(row.version);
                }
            }
            if !deleted.is_empty() {
                self.hard_delete(&subject, &deleted, false, &Preconditions::default()).await?;
                cleared = true;
            }
        }
        Ok(cleared)
    }

    /// Whether a row of another subject (live or soft-deleted) references `subject` `version`: its
    /// hard delete is refused (42206), so clearing a scope for IMPORT keeps it too and its referrer
    /// still resolves. No referrer appears meanwhile: a registration references only live versions.
    async fn referenced_by_another_subject(&self, subject: &Subject, version: Version) -> Result<bool, RegistryError> {
        Ok(self.store.referrers(subject, version).await?.iter().any(|referrer| referrer.subject != *subject))
    }

    async fn has_live_versions(&self, scope: &Scope) -> Result<bool, RegistryError> {
        match (subjects_prefix(scope), scope_subject(scope)) {
            (Some(prefix), _) => {
                let page = SubjectsPage { prefix: &prefix, filter: DeletedFilter::LiveOnly, after: None, limit: 1 };
                Ok(!self.store.list_subjects(page).await?.is_empty())
            }
            (None, Some(subject)) => Ok(self.rows(subject).await?.iter().any(|r| !r.deleted)),
            (None, None) => Ok(false),
        }
    }
}

/// The prefix of the subjects a mode change at `scope` covers, as Confluent's
/// `matchingSubjectPredicate`: every subject (`""`) for the global and registry-wide scopes, a
/// context's subjects for its settings; `None` for one subject.
fn subjects_prefix(scope: &Scope) -> Option<String> {
    match (scope, scope.settings_context()) {
        (Scope::Global, _) => Some(String::new()),
        (_, Some(_)) if scope.is_registry_wide() => Some(String::new()),
        (_, Some(context)) => Some(context.subject_prefix()),
        (Scope::Subject(_), None) => None,
    }
}

fn scope_subject(scope: &Scope) -> Option<&crate::model::Subject> {
    match scope {
        Scope::Global => None,
        Scope::Subject(subject) => Some(subject),
    }
}

fn too_many_writers(scope: &Scope) -> RegistryError {
    StoreError::Unavailable(format!("settings write at {scope:?}: too many concurrent writers")).into()
}

/// What a delete at `scope` removed, given the setting it read there (`own`): for a subject or
/// context its own setting (40401 without one); for the global and registry-wide scopes the stored
/// setting, else `default` (what they revert to).
fn removed<T>(scope: &Scope, own: Option<T>, default: impl FnOnce() -> T) -> Result<T, RegistryError> {
    match scope {
        Scope::Subject(_) if scope.is_registry_wide() => Ok(own.unwrap_or_else(default)),
        Scope::Subject(subject) => own.ok_or_else(|| subject_not_found(subject)),
        Scope::Global => Ok(own.unwrap_or_else(default)),
    }
}
