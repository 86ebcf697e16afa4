//! The storage operations as synchronous SQL over one connection. Each write function runs
//! inside the caller's `IMMEDIATE` transaction, so its checks and writes are one atomic step;
//! each read is a single statement (one consistent snapshot).

use crate::codec::{self, VERSION_COLUMNS, VERSION_COLUMNS_V};
use crate::error::{LocalError, LocalResult};
use registry_core::id_rules::{self, Allocation, BindDecision, BindRead};
use registry_core::{
    ConfigRecord, Context, DeletedFilter, Fingerprint, Guid, Mode, SchemaBody, SchemaId, Subject, Version, VersionRow,
};
use rusqlite::{Connection, OptionalExtension, params};

const MAX_ID: &str = "max_id";

// --- bodies ---------------------------------------------------------------------------------

pub(crate) fn put_body(conn: &Connection, fingerprint: &Fingerprint, body: &SchemaBody) -> LocalResult<()> {
    let (schema_type, schema, refs, metadata, rule_set) = codec::body_columns(body)?;
    conn.prepare_cached(
        "INSERT INTO bodies (fingerprint, schema_type, schema, refs, metadata, rule_set) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (fingerprint) DO NOTHING",
    )?
    .execute(params![&fingerprint.0[..], schema_type, schema, refs, metadata, rule_set])?;
    Ok(())
}

pub(crate) fn get_body(conn: &Connection, fingerprint: &Fingerprint) -> LocalResult<Option<SchemaBody>> {
    let columns = conn
        .prepare_cached("SELECT schema_type, schema, refs, metadata, rule_set FROM bodies WHERE fingerprint = ?1")?
        .query_row([&fingerprint.0[..]], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))
        .optional()?;
    columns.map(codec::body).transpose()
}

// --- ids, one space per context ------------------------------------------------------------
//
// The default context keeps the tables it had before contexts (`ids`, `fingerprint_ids`, the
// `max_id` counter), so existing databases need no data migration; a named context's bindings
// are keyed by its name in `context_ids` / `context_fingerprint_ids`, its counter (and whether it
// is listed) is its row in `contexts`.

pub(crate) fn id_for_fingerprint(
    conn: &Connection,
    context: &Context,
    fingerprint: &Fingerprint,
) -> LocalResult<Option<SchemaId>> {
    let id: Option<i64> = if context.is_default() {
        conn.prepare_cached("SELECT id FROM fingerprint_ids WHERE fingerprint = ?1")?
            .query_row([&fingerprint.0[..]], |row| row.get(0))
            .optional()?
    } else {
        conn.prepare_cached("SELECT id FROM context_fingerprint_ids WHERE context = ?1 AND fingerprint = ?2")?
            .query_row(params![context.name(), &fingerprint.0[..]], |row| row.get(0))
            .optional()?
    };
    id.map(|id| codec::narrow(id, "id").map(SchemaId)).transpose()
}

pub(crate) fn fingerprint_for_id(
    conn: &Connection,
    context: &Context,
    id: SchemaId,
) -> LocalResult<Option<Fingerprint>> {
    let bytes: Option<Vec<u8>> = if context.is_default() {
        conn.prepare_cached("SELECT fingerprint FROM ids WHERE id = ?1")?
            .query_row([id.0], |row| row.get(0))
            .optional()?
    } else {
        conn.prepare_cached("SELECT fingerprint FROM context_ids WHERE context = ?1 AND id = ?2")?
            .query_row(params![context.name(), id.0], |row| row.get(0))
            .optional()?
    };
    bytes.map(codec::fingerprint).transpose()
}

/// The fingerprint bound to `id` in `context` when some row of the context (live or soft-deleted)
/// carries `id` (`Store::fingerprint_for_carried_id_in`). The row is looked for without an order:
/// SQLite prepares a statement ordered over a bound range again at every run (its plan depends on
/// the bound values), which made this check, on every by-ID read the live-ID memory misses, cost
/// several times the read itself.
pub(crate) fn fingerprint_for_carried_id(
    conn: &Connection,
    context: &Context,
    id: SchemaId,
) -> LocalResult<Option<Fingerprint>> {
    let carried = if context.is_default() {
        conn.prepare_cached(CARRIED_IN_DEFAULT)?.exists([id.0])?
    } else {
        // A named context's subjects: the run of its prefix `:.name:`, up to `:.name;`.
        let prefix = context.subject_prefix();
        let end = format!("{};", &prefix[..prefix.len() - 1]);
        conn.prepare_cached(CARRIED_IN_NAMED)?.exists(params![id.0, prefix, end])?
    };
    if !carried {
        return Ok(None);
    }
    fingerprint_for_id(conn, context, id)
}

/// A row of the default context carries `?1`: its subjects are every one outside the run of
/// qualified subjects, [`QUALIFIED_FIRST`] to [`QUALIFIED_END`].
pub(crate) const CARRIED_IN_DEFAULT: &str =
    "SELECT 1 FROM versions WHERE id = ?1 AND (subject < ':.' OR subject >= ':/') LIMIT 1";

/// A row of a named context carries `?1`: its subjects are those from `?2` up to `?3`.
pub(crate) const CARRIED_IN_NAMED: &str =
    "SELECT 1 FROM versions WHERE id = ?1 AND subject >= ?2 AND subject < ?3 LIMIT 1";

pub(crate) fn max_id(conn: &Connection, context: &Context) -> LocalResult<Option<SchemaId>> {
    let value: Option<i64> = if context.is_default() {
        conn.prepare_cached("SELECT value FROM counters WHERE name = ?1")?
            .query_row([MAX_ID], |row| row.get(0))
            .optional()?
    } else {
        conn.prepare_cached("SELECT max_id FROM contexts WHERE context = ?1")?
            .query_row([context.name()], |row| row.get(0))
            .optional()?
    };
    value.map(|v| codec::narrow(v, "id counter").map(SchemaId)).transpose()
}

/// Where a counter lowered from the top restarts ([`id_rules::lowering_floor`]), read from the
/// IDs bound in `context` (bindings outlive hard deletes) from the greatest at or below
/// [`SchemaId::MAX_IMPORTED`] on, ascending.
fn lowering_floor(conn: &Connection, context: &Context) -> LocalResult<Option<SchemaId>> {
    let bound = SchemaId::MAX_IMPORTED.0;
    let ids: Vec<i64> = if context.is_default() {
        let sql = "SELECT id FROM ids WHERE id >= coalesce((SELECT max(id) FROM ids WHERE id <= ?1), 0) ORDER BY id";
        conn.prepare_cached(sql)?.query_map([bound], |row| row.get(0))?.collect::<Result<_, _>>()?
    } else {
        let sql = "SELECT id FROM context_ids WHERE context = ?1 AND id >= coalesce((SELECT max(id) FROM \
                   context_ids WHERE context = ?1 AND id <= ?2), 0) ORDER BY id";
        conn.prepare_cached(sql)?
            .query_map(params![context.name(), bound], |row| row.get(0))?
            .collect::<Result<_, _>>()?
    };
    let ids = ids.into_iter().map(|id| codec::narrow(id, "id").map(SchemaId)).collect::<LocalResult<Vec<_>>>()?;
    Ok(id_rules::lowering_floor(ids))
}

/// Sets the context's counter to `value` and lists a named context, inside the caller's
/// transaction (which read the counter the value was decided on).
fn set_max_id(conn: &Connection, context: &Context, value: SchemaId) -> LocalResult<()> {
    if context.is_default() {
        conn.prepare_cached(
            "INSERT INTO counters (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )?
        .execute(params![MAX_ID, value.0])?;
    } else {
        conn.prepare_cached(
            "INSERT INTO contexts (context, max_id, listed) VALUES (?1, ?2, 1)
             ON CONFLICT (context) DO UPDATE SET max_id = excluded.max_id, listed = 1",
        )?
        .execute(params![context.name(), value.0])?;
    }
    Ok(())
}

/// Binds id → fingerprint in `context` (the ID side, unbound as read).
fn bind_id_side(conn: &Connection, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> LocalResult<()> {
    let default = "INSERT INTO ids (id, fingerprint) VALUES (?2, ?1)";
    let named = "INSERT INTO context_ids (context, id, fingerprint) VALUES (?3, ?2, ?1)";
    execute_in_context(conn, context, fingerprint, id, [default, named])
}

/// Binds fingerprint → id in `context` unless the fingerprint is bound already.
fn bind_fingerprint_if_unbound(
    conn: &Connection,
    context: &Context,
    fingerprint: &Fingerprint,
    id: SchemaId,
) -> LocalResult<()> {
    let default = "INSERT INTO fingerprint_ids (fingerprint, id) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
    let named =
        "INSERT INTO context_fingerprint_ids (context, fingerprint, id) VALUES (?3, ?1, ?2) ON CONFLICT DO NOTHING";
    execute_in_context(conn, context, fingerprint, id, [default, named])
}

/// Runs the first statement (default context) or the second (a named one, its name as `?3`) with
/// the fingerprint as `?1` and the id as `?2`: the two tables of an ID binding side.
fn execute_in_context(
    conn: &Connection,
    context: &Context,
    fingerprint: &Fingerprint,
    id: SchemaId,
    [default, named]: [&str; 2],
) -> LocalResult<()> {
    if context.is_default() {
        conn.prepare_cached(default)?.execute(params![&fingerprint.0[..], id.0])?;
    } else {
        conn.prepare_cached(named)?.execute(params![&fingerprint.0[..], id.0, context.name()])?;
    }
    Ok(())
}

/// [`id_rules::allocation`] on the fingerprint's binding and the counter read in the caller's
/// transaction; a counter at the top is lowered and the allocation made in the same transaction.
pub(crate) fn allocate_id(conn: &Connection, context: &Context, fingerprint: &Fingerprint) -> LocalResult<SchemaId> {
    let exhausted = |_| LocalError::IdsExhausted(context.clone());
    let next = match id_rules::allocation(id_for_fingerprint(conn, context, fingerprint)?, max_id(conn, context)?) {
        Allocation::AlreadyBound(id) => {
            return Err(LocalError::Conflict(format!("fingerprint {fingerprint} already has id {id} in {context}")));
        }
        Allocation::LowerCounter => {
            let lowered = id_rules::counter_after_lowering(lowering_floor(conn, context)?).map_err(exhausted)?;
            id_rules::next_id(lowered).map_err(exhausted)?
        }
        Allocation::Take(next) => next,
    };
    if fingerprint_for_id(conn, context, next)?.is_some() {
        return Err(LocalError::Corrupt(format!("id {next} is bound in {context} but above the counter")));
    }
    bind_id_side(conn, context, next, fingerprint)?;
    bind_fingerprint_if_unbound(conn, context, fingerprint, next)?;
    set_max_id(conn, context, next).map(|()| next)
}

pub(crate) fn unbind_fingerprint(
    conn: &Connection,
    context: &Context,
    fingerprint: &Fingerprint,
    id: SchemaId,
) -> LocalResult<()> {
    let default = "DELETE FROM fingerprint_ids WHERE fingerprint = ?1 AND id = ?2";
    let named = "DELETE FROM context_fingerprint_ids WHERE context = ?3 AND fingerprint = ?1 AND id = ?2";
    execute_in_context(conn, context, fingerprint, id, [default, named])
}

/// IMPORT's bind: [`id_rules::bind_decision`] on what the caller's transaction reads (the carriers
/// and the old schema's side only when `id` names another schema), committed in it.
pub(crate) fn bind_id(
    conn: &Connection,
    context: &Context,
    id: SchemaId,
    fingerprint: &Fingerprint,
) -> LocalResult<()> {
    let id_bound_to = fingerprint_for_id(conn, context, id)?;
    let (carried, old_side) = match id_rules::needs_carriers(id_bound_to, fingerprint) {
        Some(old) => {
            (!rows_with_id_page(conn, context, id, "", None, 1)?.is_empty(), id_for_fingerprint(conn, context, &old)?)
        }
        None => (false, None),
    };
    let fingerprint_side = id_for_fingerprint(conn, context, fingerprint)?;
    let decision =
        id_rules::bind_decision(id, fingerprint, &BindRead { id_bound_to, carried, old_side, fingerprint_side });
    match decision {
        BindDecision::Conflict { bound } => {
            return Err(LocalError::Conflict(format!("id {id} is bound to {bound} in {context}")));
        }
        BindDecision::AlreadyBound { .. } => {}
        BindDecision::Bind { .. } => bind_id_side(conn, context, id, fingerprint)?,
        BindDecision::Rebind { old, unbind_old, .. } => {
            if unbind_old {
                unbind_fingerprint(conn, context, &old, id)?;
            }
            let default = "UPDATE ids SET fingerprint = ?1 WHERE id = ?2";
            let named = "UPDATE context_ids SET fingerprint = ?1 WHERE context = ?3 AND id = ?2";
            execute_in_context(conn, context, fingerprint, id, [default, named])?;
        }
    }
    if decision.bind_reverse() {
        bind_fingerprint_if_unbound(conn, context, fingerprint, id)?;
    }
    set_max_id(conn, context, id_rules::counter_after_binding(max_id(conn, context)?, id))
}

pub(crate) fn list_contexts(conn: &Connection) -> LocalResult<Vec<Context>> {
    let mut stmt = conn.prepare_cached("SELECT context FROM contexts WHERE listed = 1 ORDER BY context")?;
    let names = stmt.query_map([], |row| row.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    names.iter().map(|name| Context::parse(name).map_err(|e| LocalError::Corrupt(e.to_string()))).collect()
}

/// Lists `context` again if it was unlisted (a subject appeared in it); its counter row exists,
/// as a row of it carries an ID allocated or bound there.
pub(crate) fn list_context(conn: &Connection, context: &Context) -> LocalResult<()> {
    conn.prepare_cached("UPDATE contexts SET listed = 1 WHERE context = ?1")?.execute([context.name()])?;
    Ok(())
}

/// Stops listing `context`; `Conflict` while a subject of it has a row (a registration committed
/// after the registry found it empty), checked in the same transaction.
pub(crate) fn unlist_context(conn: &Connection, context: &Context) -> LocalResult<()> {
    if !list_subjects(conn, &context.subject_prefix(), DeletedFilter::IncludeDeleted, None, 1)?.is_empty() {
        return Err(LocalError::Conflict(format!("a subject of {context} has versions")));
    }
    conn.prepare_cached("UPDATE contexts SET listed = 0 WHERE context = ?1")?.execute([context.name()])?;
    Ok(())
}

// --- guid index -----------------------------------------------------------------------------

/// Binds `guid` to `fingerprint` unless it is bound already; whether this call bound it.
pub(crate) fn insert_guid(conn: &Connection, guid: &Guid, fingerprint: &Fingerprint) -> LocalResult<bool> {
    let inserted = conn
        .prepare_cached("INSERT INTO guids (guid, fingerprint) VALUES (?1, ?2) ON CONFLICT (guid) DO NOTHING")?
        .execute(params![&guid.0[..], &fingerprint.0[..]])?;
    Ok(inserted == 1)
}

pub(crate) fn bind_guid(conn: &Connection, guid: &Guid, fingerprint: &Fingerprint) -> LocalResult<()> {
    let inserted = insert_guid(conn, guid, fingerprint)?;
    match fingerprint_for_guid(conn, guid)? {
        Some(bound) if inserted || bound == *fingerprint => Ok(()),
        Some(bound) => Err(LocalError::Conflict(format!("guid {guid} is bound to {bound}"))),
        None => Err(LocalError::Corrupt(format!("guid {guid}: binding vanished inside its transaction"))),
    }
}

pub(crate) fn fingerprint_for_guid(conn: &Connection, guid: &Guid) -> LocalResult<Option<Fingerprint>> {
    let bytes: Option<Vec<u8>> = conn
        .prepare_cached("SELECT fingerprint FROM guids WHERE guid = ?1")?
        .query_row([&guid.0[..]], |row| row.get(0))
        .optional()?;
    bytes.map(codec::fingerprint).transpose()
}

// --- versions -------------------------------------------------------------------------------

fn collect_rows(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> LocalResult<Vec<VersionRow>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let raw = stmt.query_map(params, codec::raw_version_row)?.collect::<Result<Vec<_>, _>>()?;
    raw.into_iter().map(codec::version_row).collect()
}

pub(crate) fn versions(conn: &Connection, subject: &Subject) -> LocalResult<Vec<VersionRow>> {
    collect_rows(
        conn,
        &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE subject = ?1 ORDER BY version"),
        [subject.as_str()],
    )
}

pub(crate) fn versions_page(
    conn: &Connection,
    subject: &Subject,
    after: Option<Version>,
    limit: usize,
) -> LocalResult<Vec<VersionRow>> {
    let sql =
        format!("SELECT {VERSION_COLUMNS} FROM versions WHERE subject = ?1 AND version > ?2 ORDER BY version LIMIT ?3");
    let after = after.map_or(i64::MIN, |version| i64::from(version.0));
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    collect_rows(conn, &sql, params![subject.as_str(), after, limit])
}

pub(crate) fn get_version(conn: &Connection, subject: &Subject, version: Version) -> LocalResult<Option<VersionRow>> {
    let sql = format!("SELECT {VERSION_COLUMNS} FROM versions WHERE subject = ?1 AND version = ?2");
    Ok(collect_rows(conn, &sql, params![subject.as_str(), version.0])?.into_iter().next())
}

pub(crate) fn rows_with_id_page(
    conn: &Connection,
    context: &Context,
    id: SchemaId,
    prefix: &str,
    after: Option<&(Subject, Version)>,
    limit: usize,
) -> LocalResult<Vec<VersionRow>> {
    // A named context's subjects are the run of its prefix `:.name:`; the default context's are
    // every subject outside the run of `:.` (qualified subjects), which the scan skips.
    let context_prefix = context.subject_prefix();
    let prefix = match () {
        _ if prefix.starts_with(&context_prefix) => prefix,
        _ if context_prefix.starts_with(prefix) => context_prefix.as_str(),
        _ => return Ok(Vec::new()),
    };
    // TEXT compares bytewise (BINARY collation), as `Subject`'s `Ord` does, so the subjects
    // starting with `prefix` are one run of `versions_by_id` from `prefix` on: the scan starts at
    // max(prefix, after) and stops at the first subject past the run.
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM versions WHERE id = ?1 AND subject >= ?2 \
         AND (subject > ?3 OR (subject = ?3 AND version > ?4)) \
         AND (?6 = 0 OR subject < '{QUALIFIED_FIRST}' OR subject >= '{QUALIFIED_END}') \
         ORDER BY subject, version LIMIT ?5"
    );
    let (subject, version) = after.map_or(("", i64::MIN), |(s, v)| (s.as_str(), i64::from(v.0)));
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(&sql)?;
    let raw = stmt
        .query_map(params![id.0, prefix, subject, version, limit, context.is_default()], codec::raw_version_row)?
        .take_while(|raw| !matches!(raw, Ok(raw) if !raw.0.starts_with(prefix)))
        .collect::<Result<Vec<_>, _>>()?;
    raw.into_iter().map(codec::version_row).collect()
}

/// The run of qualified subjects (`:.` then anything) in bytewise order: from `:.` up to `:/`.
const QUALIFIED_FIRST: &str = ":.";
const QUALIFIED_END: &str = ":/";

pub(crate) fn referrers(conn: &Connection, subject: &Subject, version: Version) -> LocalResult<Vec<VersionRow>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS_V} FROM reference_edges e
         JOIN versions v ON v.subject = e.subject AND v.version = e.version
         WHERE e.ref_subject = ?1 AND e.ref_version = ?2
         ORDER BY v.id, v.subject, v.version"
    );
    collect_rows(conn, &sql, params![subject.as_str(), version.0])
}

/// Inserts `row` and its index entries. Returns false (writing nothing) if (subject, version) exists.
pub(crate) fn insert_row(conn: &Connection, row: &VersionRow) -> LocalResult<bool> {
    let refs = codec::references_text(&row.references)?;
    let inserted = conn
        .prepare_cached(
            "INSERT INTO versions (subject, version, id, fingerprint, deleted, refs, registered_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            row.subject.as_str(),
            row.version.0,
            row.id.0,
            &row.fingerprint.0[..],
            row.deleted,
            refs,
            row.registered_at_ms
        ])?;
    if inserted == 0 {
        return Ok(false);
    }
    let mut edge = conn.prepare_cached(
        "INSERT INTO reference_edges (ref_subject, ref_version, subject, version) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT DO NOTHING",
    )?;
    for reference in &row.references {
        edge.execute(params![reference.subject, reference.version, row.subject.as_str(), row.version.0])?;
    }
    adjust_subject(conn, &row.subject, 1, if row.deleted { 0 } else { 1 })?;
    Ok(true)
}

/// Removes the row at (subject, version) and its index entries; no-op if absent. The removed
/// row's ID and fingerprint, if there was one.
pub(crate) fn remove_row(
    conn: &Connection,
    subject: &Subject,
    version: Version,
) -> LocalResult<Option<(SchemaId, Fingerprint)>> {
    let removed: Option<(bool, Option<String>, i64, Vec<u8>)> = conn
        .prepare_cached(
            "DELETE FROM versions WHERE subject = ?1 AND version = ?2 RETURNING deleted, refs, id, fingerprint",
        )?
        .query_row(params![subject.as_str(), version.0], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
        .optional()?;
    let Some((deleted, refs, id, fingerprint)) = removed else { return Ok(None) };
    let carried = (SchemaId(codec::narrow(id, "id")?), codec::fingerprint(fingerprint)?);
    let mut edge = conn.prepare_cached(
        "DELETE FROM reference_edges WHERE ref_subject = ?1 AND ref_version = ?2 AND subject = ?3 AND version = ?4",
    )?;
    for reference in codec::references(refs)? {
        edge.execute(params![reference.subject, reference.version, subject.as_str(), version.0])?;
    }
    adjust_subject(conn, subject, -1, if deleted { 0 } else { -1 })?;
    Ok(Some(carried))
}

pub(crate) fn set_version_deleted(
    conn: &Connection,
    subject: &Subject,
    version: Version,
    deleted: bool,
) -> LocalResult<()> {
    let changed = conn
        .prepare_cached("UPDATE versions SET deleted = ?3 WHERE subject = ?1 AND version = ?2 AND deleted = ?4")?
        .execute(params![subject.as_str(), version.0, deleted, !deleted])?;
    if changed == 0 {
        return Err(LocalError::Conflict(format!(
            "{subject} version {version} is missing or already deleted={deleted}"
        )));
    }
    adjust_subject(conn, subject, 0, if deleted { -1 } else { 1 })
}

fn adjust_subject(conn: &Connection, subject: &Subject, rows: i64, live: i64) -> LocalResult<()> {
    conn.prepare_cached(
        "INSERT INTO subjects (subject, row_count, live_rows) VALUES (?1, ?2, ?3)
         ON CONFLICT (subject) DO UPDATE SET row_count = row_count + excluded.row_count,
                                             live_rows = live_rows + excluded.live_rows",
    )?
    .execute(params![subject.as_str(), rows, live])?;
    conn.prepare_cached("DELETE FROM subjects WHERE subject = ?1 AND row_count <= 0")?.execute([subject.as_str()])?;
    crate::conditions::bump(conn, subject.as_str())
}

pub(crate) fn list_subjects(
    conn: &Connection,
    prefix: &str,
    filter: DeletedFilter,
    after: Option<&Subject>,
    limit: usize,
) -> LocalResult<Vec<Subject>> {
    let live = match filter {
        DeletedFilter::LiveOnly => "live = 1 AND",
        DeletedFilter::DeletedOnly => "live = 0 AND",
        DeletedFilter::IncludeDeleted => "",
    };
    // Subjects starting with `prefix` are one contiguous run beginning at the first one >= prefix,
    // so scan from max(prefix, after) and stop at the first name outside the run.
    let (bound, op) = match after {
        Some(after) if after.as_str() >= prefix => (after.as_str(), ">"),
        _ => (prefix, ">="),
    };
    let sql = format!("SELECT subject FROM subjects WHERE {live} subject {op} ?1 ORDER BY subject LIMIT ?2");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![bound, i64::try_from(limit).unwrap_or(i64::MAX)])?;
    let mut page = Vec::new();
    while let Some(row) = rows.next()? {
        let name: String = row.get(0)?;
        if !name.starts_with(prefix) {
            break;
        }
        page.push(Subject::new(name).map_err(|e| LocalError::Corrupt(e.to_string()))?);
    }
    Ok(page)
}

// --- config and mode ------------------------------------------------------------------------

/// The one text column `sql` reads (or deletes, with `RETURNING`) at `scope`, if there is a row.
fn scope_text(conn: &Connection, sql: &str, scope: &str) -> LocalResult<Option<String>> {
    Ok(conn.prepare_cached(sql)?.query_row([scope], |row| row.get(0)).optional()?)
}

pub(crate) fn get_config(conn: &Connection, scope: &str) -> LocalResult<Option<ConfigRecord>> {
    let text = scope_text(conn, "SELECT config FROM configs WHERE scope = ?1", scope)?;
    text.as_deref().map(codec::config).transpose()
}

/// One page of the subjects holding a config, after `after`, starting with `prefix`; the names
/// that are no subject (the global scope, a context's own) are skipped.
pub(crate) fn subjects_with_config(
    conn: &Connection,
    prefix: &str,
    after: Option<&Subject>,
    limit: usize,
) -> LocalResult<Vec<Subject>> {
    let (bound, op) = match after {
        Some(after) if after.as_str() >= prefix => (after.as_str(), ">"),
        _ => (prefix, ">="),
    };
    let sql = format!("SELECT scope FROM configs WHERE scope {op} ?1 ORDER BY scope");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![bound])?;
    let mut page = Vec::new();
    while page.len() < limit
        && let Some(row) = rows.next()?
    {
        let name: String = row.get(0)?;
        if !name.starts_with(prefix) {
            break;
        }
        page.extend(Subject::new(name).ok());
    }
    Ok(page)
}

pub(crate) fn put_config(conn: &Connection, scope: &str, config: &ConfigRecord) -> LocalResult<()> {
    conn.prepare_cached(
        "INSERT INTO configs (scope, config) VALUES (?1, ?2) ON CONFLICT (scope) DO UPDATE SET config = excluded.config",
    )?
    .execute(params![scope, codec::config_text(config)?])?;
    Ok(())
}

pub(crate) fn delete_config(conn: &Connection, scope: &str) -> LocalResult<Option<ConfigRecord>> {
    let text = scope_text(conn, "DELETE FROM configs WHERE scope = ?1 RETURNING config", scope)?;
    text.as_deref().map(codec::config).transpose()
}

pub(crate) fn put_mode(conn: &Connection, scope: &str, mode: Mode) -> LocalResult<()> {
    conn.prepare_cached(
        "INSERT INTO modes (scope, mode) VALUES (?1, ?2) ON CONFLICT (scope) DO UPDATE SET mode = excluded.mode",
    )?
    .execute(params![scope, mode.as_str()])?;
    Ok(())
}

pub(crate) fn delete_mode(conn: &Connection, scope: &str) -> LocalResult<Option<Mode>> {
    let text = scope_text(conn, "DELETE FROM modes WHERE scope = ?1 RETURNING mode", scope)?;
    text.as_deref().map(codec::mode).transpose()
}

// --- usage marker ---------------------------------------------------------------------------

pub(crate) fn last_used(conn: &Connection, subject: &Subject) -> LocalResult<Option<u32>> {
    let day: Option<i64> = conn
        .prepare_cached("SELECT day FROM subject_usage WHERE subject = ?1")?
        .query_row([subject.as_str()], |row| row.get(0))
        .optional()?;
    day.map(|day| u32::try_from(day).map_err(|_| LocalError::Corrupt(format!("usage day {day} of {subject}"))))
        .transpose()
}

/// Stores `day` unless an equal or newer day is stored (one upsert; never moves back).
pub(crate) fn mark_used(conn: &Connection, subject: &Subject, day: u32) -> LocalResult<()> {
    conn.prepare_cached(
        "INSERT INTO subject_usage (subject, day) VALUES (?1, ?2)
         ON CONFLICT (subject) DO UPDATE SET day = excluded.day WHERE excluded.day > subject_usage.day",
    )?
    .execute(params![subject.as_str(), i64::from(day)])?;
    Ok(())
}
