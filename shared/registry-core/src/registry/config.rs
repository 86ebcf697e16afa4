//! Compatibility config, modes and contexts, per subject and global.

use super::Registry;
use super::support::{MAX_ATTEMPTS, subject_not_found, writable};
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Context, DeletedFilter, Mode, Scope};
use crate::store::{Preconditions, SettingChange, StoreError, WriteContext};

impl Registry {
    /// `GET /config[/{s}]`. Global: the stored config with the server default filled in. A
    /// subject's own config as stored; without one 40408, or with `default_to_global` the
    /// effective config (subject fields over global over the server default).
    pub async fn config(&self, scope: &Scope, default_to_global: bool) -> Result<ConfigRecord, RegistryError> {
        let global = self.store.get_config(&Scope::Global).await?.unwrap_or_default();
        let global = ConfigRecord {
            compatibility_level: global.compatibility_level.or(Some(self.settings.default_compatibility)),
            ..global
        };
        let Scope::Subject(subject) = scope else {
            return Ok(global);
        };
        match self.store.get_config(scope).await? {
            Some(own) if default_to_global => Ok(own.over(global)),
            Some(own) => Ok(own),
            None if default_to_global => Ok(global),
            None => Err(RegistryError::SubjectConfigNotFound { subject: subject.to_string() }),
        }
    }

    /// `PUT /config[/{s}]`: replaces the config at `scope` and returns it. Allowed for subjects
    /// without versions; 42205 while the scope is read-only (as read in the same step as the write:
    /// a `PUT /mode READONLY` acknowledged first is never overtaken).
    /// Data-contract defaults and overrides are stored in normal form; an invalid rule set is 42210.
    pub async fn set_config(&self, scope: &Scope, config: ConfigRecord) -> Result<ConfigRecord, RegistryError> {
        let config = super::contracts::normalize_config(config)?;
        let change = SettingChange::Config(Some(Box::new(config.clone())));
        self.write_setting(scope, |context| writable(context, scope_subject(scope)).map(|()| change.clone())).await?;
        Ok(config)
    }

    /// `DELETE /config[/{s}]`: the removed config. A subject without one is 40401; the global
    /// config reverts to the server default (the previous one, or the default, is returned).
    /// 42205 while the scope is read-only.
    pub async fn delete_config(&self, scope: &Scope) -> Result<ConfigRecord, RegistryError> {
        let change = SettingChange::Config(None);
        let context = self
            .write_setting(scope, |context| writable(context, scope_subject(scope)).map(|()| change.clone()))
            .await?;
        removed(scope, context.config, context.global_config, || ConfigRecord {
            compatibility_level: Some(self.settings.default_compatibility),
            ..ConfigRecord::default()
        })
    }

    /// `GET /mode[/{s}]`. Global: the stored mode or READWRITE. A subject's own mode; without
    /// one 40409, or with `default_to_global` the effective mode.
    pub async fn mode(&self, scope: &Scope, default_to_global: bool) -> Result<Mode, RegistryError> {
        match scope {
            Scope::Global => Ok(self.store.get_mode(scope).await?.unwrap_or_default()),
            Scope::Subject(subject) => match self.store.get_mode(scope).await? {
                Some(mode) => Ok(mode),
                None if default_to_global => self.effective_mode(Some(subject)).await,
                None => Err(RegistryError::SubjectModeNotFound { subject: subject.to_string() }),
            },
        }
    }

    /// `PUT /mode[/{s}]`: stores and returns `mode`. Entering IMPORT (from another mode,
    /// without `force`) is refused with 42205 `Cannot import since found existing subjects`
    /// while the scope has live versions; when allowed, the scope's leftover soft-deleted rows
    /// are hard-deleted first, as Confluent's `ClearSubjectKey` (imports bring their own).
    /// For a subject the mode write is conditioned on its revision as read before its rows, so a
    /// registration racing it either commits first (and IMPORT is refused) or reads IMPORT.
    pub async fn set_mode(&self, scope: &Scope, mode: Mode, force: bool) -> Result<Mode, RegistryError> {
        for attempt in 0..MAX_ATTEMPTS {
            let context = self.store.write_context(scope).await?;
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

    /// `DELETE /mode[/{s}]`: the removed mode (allowed while read-only). A subject without one
    /// is 40401; the global mode reverts to READWRITE.
    pub async fn delete_mode(&self, scope: &Scope) -> Result<Mode, RegistryError> {
        let context = self.write_setting(scope, |_| Ok(SettingChange::Mode(None))).await?;
        removed(scope, context.mode, context.global_mode, || Mode::ReadWrite)
    }

    /// Reads the settings at `scope`, lets `decide` choose the change, and writes it conditioned
    /// on every settings item `decide` saw; reads and decides again when one changed meanwhile.
    /// The context the write committed under.
    async fn write_setting(
        &self,
        scope: &Scope,
        decide: impl Fn(&WriteContext) -> Result<SettingChange, RegistryError>,
    ) -> Result<WriteContext, RegistryError> {
        for attempt in 0..MAX_ATTEMPTS {
            let context = self.store.write_context(scope).await?;
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
        let written = self.store.write_setting(scope, change, preconditions).await;
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
    /// (even one whose versions are all soft-deleted) is left in it. The default context always
    /// exists: deleting it only checks that it is empty.
    pub async fn delete_context(&self, context: &str) -> Result<(), RegistryError> {
        let context = Context::parse(context)?;
        let left = self.store.list_subjects(&context.subject_prefix(), DeletedFilter::IncludeDeleted, None, 1).await?;
        if !left.is_empty() {
            return Err(RegistryError::ContextNotEmpty { context: context.name().to_string() });
        }
        if !context.is_default() {
            self.store.unlist_context(&context).await?;
        }
        Ok(())
    }

    /// Hard-deletes the soft-deleted rows of `scope` (every subject for the global scope); whether
    /// there were any. Idempotent: a crash part-way leaves rows the retried call deletes.
    async fn clear_deleted(&self, scope: &Scope) -> Result<bool, RegistryError> {
        let mut subjects = Vec::new();
        match scope {
            Scope::Subject(subject) => subjects.push(subject.clone()),
            Scope::Global => {
                let mut after = None;
                loop {
                    let page = self.store.list_subjects("", DeletedFilter::DeletedOnly, after.as_ref(), 1000).await?;
                    let Some(last) = page.last().cloned() else { break };
                    subjects.extend(page);
                    after = Some(last);
                }
            }
        }
        let mut cleared = false;
        for subject in subjects {
            let deleted: Vec<_> = self.rows(&subject).await?.iter().filter(|r| r.deleted).map(|r| r.version).collect();
            if !deleted.is_empty() {
                self.hard_delete(&subject, &deleted, false, &Preconditions::default()).await?;
                cleared = true;
            }
        }
        Ok(cleared)
    }

    async fn has_live_versions(&self, scope: &Scope) -> Result<bool, RegistryError> {
        Ok(match scope {
            Scope::Global => !self.store.list_subjects("", DeletedFilter::LiveOnly, None, 1).await?.is_empty(),
            Scope::Subject(subject) => self.rows(subject).await?.iter().any(|r| !r.deleted),
        })
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

/// What a delete at `scope` removed, given the setting it read there (`own`) and the global one:
/// for a subject its own setting (40401 without one); for the global scope the stored setting,
/// else `global_default` (what the global scope reverts to).
fn removed<T>(
    scope: &Scope,
    own: Option<T>,
    global: Option<T>,
    global_default: impl FnOnce() -> T,
) -> Result<T, RegistryError> {
    match scope {
        Scope::Subject(subject) => own.ok_or_else(|| subject_not_found(subject)),
        Scope::Global => Ok(global.unwrap_or_else(global_default)),
    }
}
