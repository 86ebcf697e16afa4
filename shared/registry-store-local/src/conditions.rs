//! Subject revisions and write preconditions: read together for a decision, checked inside the
//! write's transaction (see [`registry_core::Preconditions`]).

use crate::codec::{self, scope_key};
use crate::error::{LocalError, LocalResult};
use crate::ops;
use registry_core::{LayeredContext, Preconditions, Revision, Scope, SettingKind, SettingSeen, Subject};
use rusqlite::{Connection, OptionalExtension};

/// The stored text of a settings item, as [`SettingSeen::stored`] holds it for this store.
fn stored_setting(conn: &Connection, kind: SettingKind, scope: &Scope) -> LocalResult<Option<String>> {
    let sql = match kind {
        SettingKind::Config => "SELECT config FROM configs WHERE scope = ?1",
        SettingKind::Mode => "SELECT mode FROM modes WHERE scope = ?1",
    };
    Ok(conn.prepare_cached(sql)?.query_row([scope_key(scope)], |row| row.get(0)).optional()?)
}

pub(crate) fn revision(conn: &Connection, subject: &Subject) -> LocalResult<Revision> {
    let revision: Option<i64> = conn
        .prepare_cached("SELECT revision FROM subject_revisions WHERE subject = ?1")?
        .query_row([subject.as_str()], |row| row.get(0))
        .optional()?;
    Ok(Revision(revision.map_or(0, |r| u64::try_from(r).unwrap_or(0))))
}

/// Raises the subject's revision (every change to its rows, every new referrer of one of them).
pub(crate) fn bump(conn: &Connection, subject: &str) -> LocalResult<()> {
    conn.prepare_cached(
        "INSERT INTO subject_revisions (subject, revision) VALUES (?1, 1)
         ON CONFLICT (subject) DO UPDATE SET revision = revision + 1",
    )?
    .execute([subject])?;
    Ok(())
}

/// The config and mode items at `scopes` as stored, configs first.
fn seen_at(conn: &Connection, scopes: &[Scope]) -> LocalResult<Vec<SettingSeen>> {
    let mut seen = Vec::with_capacity(scopes.len() * 2);
    for kind in [SettingKind::Config, SettingKind::Mode] {
        for scope in scopes {
            seen.push(SettingSeen { kind, scope: scope.clone(), stored: stored_setting(conn, kind, scope)? });
        }
    }
    Ok(seen)
}

fn scope_revision(conn: &Connection, scope: &Scope) -> LocalResult<Revision> {
    match scope {
        Scope::Subject(subject) => revision(conn, subject),
        Scope::Global => Ok(Revision::default()),
    }
}

/// What a write at `scope` decides on with every settings layer (see
/// [`registry_core::Store::layered_write_context`]), read on one connection.
pub(crate) fn layered_write_context(conn: &Connection, scope: &Scope) -> LocalResult<LayeredContext> {
    let seen = seen_at(conn, &scope.settings_read())?;
    let last_used = match scope {
        Scope::Subject(subject) => crate::ops::last_used(conn, subject)?,
        Scope::Global => None,
    };
    LayeredContext::from_stored(scope, scope_revision(conn, scope)?, seen, last_used, codec::config, codec::mode)
}

/// `Conflict` unless every precondition of a write to `subject` holds (inside its transaction).
pub(crate) fn check(conn: &Connection, subject: &Subject, preconditions: &Preconditions) -> LocalResult<()> {
    let conflict = |what: String| Err(LocalError::Conflict(format!("{subject}: {what}")));
    if let Some(expected) = preconditions.revision
        && revision(conn, subject)? != expected
    {
        return conflict(format!("revision is no longer {}", expected.0));
    }
    check_settings(conn, preconditions)?;
    for (referenced, version) in &preconditions.live_rows {
        if ops::get_version(conn, referenced, *version)?.is_none_or(|row| row.deleted) {
            return conflict(format!("referenced {referenced} version {version} is not live"));
        }
    }
    if let Some((fingerprint, id)) = &preconditions.binding
        && ops::id_for_fingerprint(conn, &subject.context(), fingerprint)? != Some(*id)
    {
        return conflict(format!("fingerprint {fingerprint} no longer names id {id}"));
    }
    if let Some((id, fingerprint)) = &preconditions.id_binding
        && ops::fingerprint_for_id(conn, &subject.context(), *id)? != Some(*fingerprint)
    {
        return conflict(format!("id {id} no longer names fingerprint {fingerprint}"));
    }
    Ok(())
}

/// `Conflict` unless every settings item is as `preconditions` saw it.
pub(crate) fn check_settings(conn: &Connection, preconditions: &Preconditions) -> LocalResult<()> {
    for seen in &preconditions.settings {
        if stored_setting(conn, seen.kind, &seen.scope)? != seen.stored {
            return Err(LocalError::Conflict(format!("{:?} at {:?} changed", seen.kind, seen.scope)));
        }
    }
    Ok(())
}

/// Raises the revision of every other subject whose versions a new row of `subject` references.
pub(crate) fn bump_referenced(conn: &Connection, subject: &Subject, preconditions: &Preconditions) -> LocalResult<()> {
    let mut done: Vec<&Subject> = vec![subject];
    for (referenced, _) in &preconditions.live_rows {
        if !done.contains(&referenced) {
            bump(conn, referenced.as_str())?;
            done.push(referenced);
        }
    }
    Ok(())
}

/// Removes the fingerprint → ID binding of a row just removed (carrying `id` under `fingerprint`)
/// as [`registry_core::id_rules::unbinds_on_removal`] decides: when it names `id` and no row of the
/// context carries `id` any more.
pub(crate) fn unbind_if_orphaned(
    conn: &Connection,
    context: &registry_core::Context,
    id: registry_core::SchemaId,
    fingerprint: &registry_core::Fingerprint,
) -> LocalResult<()> {
    let still_carried = !ops::rows_with_id_page(conn, context, id, "", None, 1)?.is_empty();
    let side = ops::id_for_fingerprint(conn, context, fingerprint)?;
    if registry_core::id_rules::unbinds_on_removal(side, id, still_carried) {
        ops::unbind_fingerprint(conn, context, fingerprint, id)?;
    }
    Ok(())
}
