//! Subject aliases (`alias` in a subject's own config), as Confluent's `AliasFilter` rewrites
//! `/subjects/{alias}/...` (register, lookup, versions, deletes, referencedby),
//! `/compatibility/subjects/{alias}/...` and `GET /schemas/ids/{id}?subject={alias}` to the target,
//! whatever the aliasing subject holds itself: an unqualified alias names a subject in the aliasing
//! subject's context, an alias is followed once (never in a chain), and the answers name the
//! target. `/config/{alias}` and `/mode/{alias}` act on the aliasing subject itself, as there.
//!
//! Authorization: setting an alias needs `Configure` on its target (an alias forwards every
//! operation to it, hard deletes included), and following one needs the request's own operation
//! on the target (403 otherwise), decided on the caller the registry acts for ([`crate::access`]).
//!
//! Cost: writes, lookups and compatibility checks read the subject's config anyway (in their
//! decision read), so following costs nothing more for a subject without an alias; reads of
//! versions by subject read its config with its rows, at once (one storage call more, no more
//! latency).

use super::Registry;
use crate::access::Operation;
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Scope, Subject, VersionRow};
use crate::store::{LayeredContext, SettingKind, SettingSeen};

impl Registry {
    /// The subject `subject`'s alias names, from its own config (one read), for a read through
    /// the alias: 403 when the caller may not read the target; `None` without an alias.
    pub async fn alias_of(&self, subject: &Subject) -> Result<Option<Subject>, RegistryError> {
        let target = alias_target(subject, self.store.get_config(&Scope::Subject(subject.clone())).await?.as_ref())?;
        if let Some(target) = &target {
            self.access.require(Operation::Read, target)?;
        }
        Ok(target)
    }

    /// For a request that read `subject`'s settings (`context`) to perform `operation`: the
    /// target to read again at, once (`aliased` remembers it), when the subject's own config has
    /// an alias; 403 when the caller may not perform `operation` on the target.
    pub(super) fn follow_alias(
        &self,
        subject: &Subject,
        context: &LayeredContext,
        aliased: &mut bool,
        operation: Operation,
    ) -> Result<Option<Subject>, RegistryError> {
        let target = follow_alias(subject, context, aliased)?;
        if let Some(target) = &target {
            self.access.require(operation, target)?;
        }
        Ok(target)
    }

    /// Refuses (42208) a config whose alias is not a subject name, before it is stored, and (403)
    /// one naming a subject the caller may not configure: an alias forwards every operation on
    /// the aliasing subject to its target.
    pub(super) fn check_alias(&self, scope: &Scope, config: &ConfigRecord) -> Result<(), RegistryError> {
        if let Some(target) = check_alias(scope, config)? {
            self.access.require(Operation::Configure, &target)?;
        }
        Ok(())
    }

    /// `subject` with its rows, or, when its own config has an alias, the alias target with the
    /// target's rows (the config and the rows are read at once).
    pub(super) async fn rows_following_alias(
        &self,
        subject: Subject,
    ) -> Result<(Subject, Vec<VersionRow>), RegistryError> {
        let (alias, rows) = futures::future::join(self.alias_of(&subject), self.rows(&subject)).await;
        match alias? {
            Some(target) => {
                let rows = self.rows(&target).await?;
                Ok((target, rows))
            }
            None => Ok((subject, rows?)),
        }
    }
}

/// What a write through the alias `subject` commits under besides its target's own conditions:
/// the aliasing subject's config as `context` (read at `subject`) saw it. A write that followed an
/// alias conflicts when the alias changed before it committed, and decides again from `subject`.
pub(super) fn alias_seen(subject: &Subject, context: &LayeredContext) -> Vec<SettingSeen> {
    let own = Scope::Subject(subject.clone());
    context.seen.iter().filter(|seen| seen.kind == SettingKind::Config && seen.scope == own).cloned().collect()
}

/// The subject `own` (the config stored at `subject` itself) makes `subject` an alias of: the
/// alias as written when qualified (`:.ctx:name`), else in `subject`'s context (Confluent's
/// `qualifySubjectWithParent`). `None` without an alias, with an empty one, or one naming
/// `subject` itself.
pub(super) fn alias_target(subject: &Subject, own: Option<&ConfigRecord>) -> Result<Option<Subject>, RegistryError> {
    let Some(alias) = own.and_then(|config| config.alias.as_deref()).filter(|alias| !alias.is_empty()) else {
        return Ok(None);
    };
    let target = qualified_alias(subject, alias)?;
    Ok((target != *subject).then_some(target))
}

/// For a request that read `subject`'s settings (`context`): the target to read again at, once
/// (`aliased` remembers it), when the subject's own config has an alias.
fn follow_alias(
    subject: &Subject,
    context: &LayeredContext,
    aliased: &mut bool,
) -> Result<Option<Subject>, RegistryError> {
    if *aliased {
        return Ok(None);
    }
    let target = alias_target(subject, context.own_config().as_ref())?;
    *aliased = target.is_some();
    Ok(target)
}

/// The subject a config's alias names (`None` without one), or 42208 when it is not a subject name.
fn check_alias(scope: &Scope, config: &ConfigRecord) -> Result<Option<Subject>, RegistryError> {
    match (&config.alias, scope) {
        (Some(alias), _) if alias.is_empty() => Ok(None),
        (Some(alias), Scope::Subject(subject)) => qualified_alias(subject, alias).map(Some),
        (Some(alias), Scope::Global) => Subject::new(alias.clone()).map(Some),
        (None, _) => Ok(None),
    }
}

fn qualified_alias(subject: &Subject, alias: &str) -> Result<Subject, RegistryError> {
    subject.context().referenced_subject(alias)
}
