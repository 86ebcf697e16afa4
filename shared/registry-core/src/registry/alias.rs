//! Subject aliases (`alias` in a subject's own config), as Confluent's `AliasFilter` rewrites
//! `/subjects/{alias}/...` and `?subject=` to the target: an unqualified alias names a subject in
//! the aliasing subject's context, an alias is followed once (never in a chain), and the answers
//! name the target.
//!
//! Confluent follows an alias whatever the aliasing subject holds. Here a subject follows its
//! alias while it has no versions of its own (live or soft-deleted): a request reads the subject's
//! config only when its rows are empty, or when the request reads that config anyway (register,
//! delete, compatibility), so requests to subjects with versions cost no extra read.

use super::Registry;
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Scope, Subject, VersionRow};
use crate::store::LayeredContext;

impl Registry {
    /// The subject `subject`'s alias names, from its own config (one read); `None` without one.
    pub async fn alias_of(&self, subject: &Subject) -> Result<Option<Subject>, RegistryError> {
        alias_target(subject, self.store.get_config(&Scope::Subject(subject.clone())).await?.as_ref())
    }

    /// `subject` with its rows, or, when it has none, its alias target with the target's rows.
    pub(super) async fn rows_following_alias(
        &self,
        subject: Subject,
    ) -> Result<(Subject, Vec<VersionRow>), RegistryError> {
        let rows = self.rows(&subject).await?;
        if !rows.is_empty() {
            return Ok((subject, rows));
        }
        match self.alias_of(&subject).await? {
            Some(target) => {
                let rows = self.rows(&target).await?;
                Ok((target, rows))
            }
            None => Ok((subject, rows)),
        }
    }
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

/// For a write that read `subject`'s settings (`context`) and `rows`: the target to read again at,
/// once (`aliased` remembers it), when the subject has no rows and its own config has an alias.
pub(super) fn follow_alias(
    subject: &Subject,
    rows: &[VersionRow],
    context: &LayeredContext,
    aliased: &mut bool,
) -> Result<Option<Subject>, RegistryError> {
    if *aliased || !rows.is_empty() {
        return Ok(None);
    }
    let target = alias_target(subject, context.own_config().as_ref())?;
    *aliased = target.is_some();
    Ok(target)
}

/// Refuses (42208) a config whose alias is not a subject name, before it is stored.
pub(super) fn check_alias(scope: &Scope, config: &ConfigRecord) -> Result<(), RegistryError> {
    match (&config.alias, scope) {
        (Some(alias), _) if alias.is_empty() => Ok(()),
        (Some(alias), Scope::Subject(subject)) => qualified_alias(subject, alias).map(|_| ()),
        (Some(alias), Scope::Global) => Subject::new(alias.clone()).map(|_| ()),
        (None, _) => Ok(()),
    }
}

fn qualified_alias(subject: &Subject, alias: &str) -> Result<Subject, RegistryError> {
    subject.context().referenced_subject(alias)
}
