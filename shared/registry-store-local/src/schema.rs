//! The on-disk layout: connection settings and the numbered migrations tracked in `PRAGMA user_version`.

use crate::error::{LocalError, LocalResult};
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use std::time::Duration;

/// How long a statement waits for a lock held by another connection (another process on the
/// same directory, or a checkpoint) before failing with `Unavailable`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The global scope's key in the `configs` and `modes` tables. Confluent's own reserved name,
/// which [`registry_core::Subject`] refuses, so it cannot collide with a subject.
pub(crate) const GLOBAL_SCOPE: &str = "__GLOBAL";

/// Migration `n` (1-based) moves a database from `user_version = n - 1` to `n`. Append only:
/// a released migration is never edited.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE bodies (
    fingerprint BLOB PRIMARY KEY,
    schema_type TEXT NOT NULL,
    schema      TEXT NOT NULL,
    refs        TEXT,
    metadata    TEXT,
    rule_set    TEXT
) WITHOUT ROWID;

CREATE TABLE ids (
    id          INTEGER PRIMARY KEY,
    fingerprint BLOB NOT NULL
);

CREATE TABLE fingerprint_ids (
    fingerprint BLOB PRIMARY KEY,
    id          INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE versions (
    subject       TEXT NOT NULL,
    version       INTEGER NOT NULL,
    id            INTEGER NOT NULL,
    fingerprint   BLOB NOT NULL,
    deleted       INTEGER NOT NULL,
    refs          TEXT,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (subject, version)
) WITHOUT ROWID;
CREATE INDEX versions_by_id ON versions (id, subject, version);

CREATE TABLE reference_edges (
    ref_subject TEXT NOT NULL,
    ref_version INTEGER NOT NULL,
    subject     TEXT NOT NULL,
    version     INTEGER NOT NULL,
    PRIMARY KEY (ref_subject, ref_version, subject, version)
) WITHOUT ROWID;

CREATE TABLE subjects (
    subject   TEXT PRIMARY KEY,
    row_count INTEGER NOT NULL,
    live_rows INTEGER NOT NULL,
    live      INTEGER GENERATED ALWAYS AS (live_rows > 0) VIRTUAL
) WITHOUT ROWID;
CREATE INDEX subjects_by_live ON subjects (live, subject);

CREATE TABLE configs (
    scope  TEXT PRIMARY KEY,
    config TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE modes (
    scope TEXT PRIMARY KEY,
    mode  TEXT NOT NULL
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE subject_usage (
    subject TEXT PRIMARY KEY,
    day     INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE guids (
    guid        BLOB PRIMARY KEY,
    fingerprint BLOB NOT NULL
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE subject_revisions (
    subject  TEXT PRIMARY KEY,
    revision INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE context_ids (
    context     TEXT NOT NULL,
    id          INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    PRIMARY KEY (context, id)
) WITHOUT ROWID;

CREATE TABLE context_fingerprint_ids (
    context     TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    id          INTEGER NOT NULL,
    PRIMARY KEY (context, fingerprint)
) WITHOUT ROWID;

CREATE TABLE contexts (
    context TEXT PRIMARY KEY,
    max_id  INTEGER NOT NULL,
    listed  INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE keks (
    name     TEXT PRIMARY KEY,
    deleted  INTEGER NOT NULL,
    kek      TEXT NOT NULL,
    revision INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE deks (
    kek_name  TEXT NOT NULL,
    subject   TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    version   INTEGER NOT NULL,
    deleted   INTEGER NOT NULL,
    dek       TEXT NOT NULL,
    revision  INTEGER NOT NULL,
    PRIMARY KEY (kek_name, subject, algorithm, version)
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE exporters (
    name     TEXT PRIMARY KEY,
    record   TEXT NOT NULL,
    revision INTEGER NOT NULL
) WITHOUT ROWID;
"#,
];

/// The `user_version` this build writes and understands.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Settings every connection gets: wait on locks instead of failing at once, and plan each
/// statement once (the query planner stability guarantee). Without it SQLite plans with the values
/// bound to some parameters (a `LIMIT ?` among them) and prepares a cached statement again each
/// time those are bound: every page or bounded read re-parsed its SQL.
pub(crate) fn configure(conn: &Connection) -> LocalResult<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Settings for the writer, applied once at open: WAL journal (readers never block the writer,
/// a crash leaves the database consistent) and `synchronous = FULL` (each commit is fsynced
/// before it is acknowledged; see the crate doc).
pub(crate) fn configure_writer(conn: &Connection) -> LocalResult<()> {
    configure(conn)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(LocalError::Unsupported(format!("the filesystem refused WAL mode (got {mode})")));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(())
}

/// Brings the database to [`SCHEMA_VERSION`], each step in its own transaction. Reads one
/// integer when the database is current; never scans data. Fails on a database written by a
/// newer build rather than guessing.
pub(crate) fn migrate(conn: &mut Connection) -> LocalResult<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(LocalError::Unsupported(format!(
            "database schema version {current} is newer than this build's {SCHEMA_VERSION}"
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(current).unwrap_or(0)) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn migrate_is_idempotent_and_refuses_newer_databases() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        assert!(matches!(migrate(&mut conn), Err(LocalError::Unsupported(_))));
    }

    #[test]
    fn a_cached_statement_with_a_bound_limit_is_planned_once() {
        let runs = |conn: &Connection| {
            conn.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3);").unwrap();
            for limit in [1, 2, 1, 3] {
                let mut statement = conn.prepare_cached("SELECT k FROM t WHERE k > ?1 ORDER BY k LIMIT ?2").unwrap();
                let rows: Vec<i64> =
                    statement.query_map([0, limit], |row| row.get(0)).unwrap().map(Result::unwrap).collect();
                assert_eq!(rows.len(), usize::try_from(limit).unwrap());
            }
            let statement = conn.prepare_cached("SELECT k FROM t WHERE k > ?1 ORDER BY k LIMIT ?2").unwrap();
            statement.get_status(rusqlite::StatementStatus::RePrepare)
        };
        let configured = Connection::open_in_memory().unwrap();
        configure(&configured).unwrap();
        assert_eq!(runs(&configured), 0, "one plan for every run");
        // What it guards against: SQLite's default re-plans the statement on each new binding.
        assert!(runs(&Connection::open_in_memory().unwrap()) > 0);
    }

    /// An in-memory database as the first `version` migrations left it.
    fn database_at_version(version: usize) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..version] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        conn
    }

    #[test]
    fn a_database_from_before_the_guid_index_migrates_with_its_data_and_an_empty_index() {
        let mut conn = database_at_version(2);
        conn.execute("INSERT INTO subject_usage (subject, day) VALUES ('s', 7)", []).unwrap();
        migrate(&mut conn).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let day: i64 = conn.query_row("SELECT day FROM subject_usage WHERE subject = 's'", [], |r| r.get(0)).unwrap();
        assert_eq!(day, 7, "existing data is kept");
        let guids: i64 = conn.query_row("SELECT count(*) FROM guids", [], |row| row.get(0)).unwrap();
        assert_eq!(guids, 0, "no backfill: entries come from registrations");
    }

    #[test]
    fn a_database_from_before_contexts_keeps_its_ids_in_the_default_context() {
        use registry_core::{Context, Fingerprint, SchemaId};
        let mut conn = database_at_version(4);
        let fingerprint = Fingerprint([7; 32]);
        conn.execute("INSERT INTO ids (id, fingerprint) VALUES (7, ?1)", [&fingerprint.0[..]]).unwrap();
        conn.execute("INSERT INTO fingerprint_ids (fingerprint, id) VALUES (?1, 7)", [&fingerprint.0[..]]).unwrap();
        conn.execute("INSERT INTO counters (name, value) VALUES ('max_id', 7)", []).unwrap();
        migrate(&mut conn).unwrap();
        let default = Context::DEFAULT;
        assert_eq!(crate::ops::fingerprint_for_id(&conn, &default, SchemaId(7)).unwrap(), Some(fingerprint));
        assert_eq!(crate::ops::id_for_fingerprint(&conn, &default, &fingerprint).unwrap(), Some(SchemaId(7)));
        assert_eq!(crate::ops::max_id(&conn, &default).unwrap(), Some(SchemaId(7)), "no data migration needed");
        let named = Context::parse(".team").unwrap();
        assert_eq!(crate::ops::max_id(&conn, &named).unwrap(), None, "a named context starts empty");
        assert_eq!(crate::ops::allocate_id(&conn, &named, &fingerprint).unwrap(), SchemaId(1));
        assert_eq!(crate::ops::allocate_id(&conn, &default, &Fingerprint([8; 32])).unwrap(), SchemaId(8));
    }

    #[test]
    fn listing_queries_use_indexes_not_scans() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let plan = |sql: &str| -> String {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let rows = stmt.query_map([], |row| row.get::<_, String>(3)).unwrap();
            rows.map(|r| r.unwrap()).collect::<Vec<_>>().join("; ")
        };
        let live = plan("SELECT subject FROM subjects WHERE live = 1 AND subject > 'a' ORDER BY subject LIMIT 10");
        assert!(live.contains("subjects_by_live"), "{live}");
        assert!(!live.contains("TEMP B-TREE"), "{live}");
        let by_guid = plan("SELECT fingerprint FROM guids WHERE guid = x'00'");
        assert!(by_guid.contains("PRIMARY KEY"), "{by_guid}");
        let by_id = plan("SELECT subject, version FROM versions WHERE id = 3 ORDER BY subject, version");
        assert!(by_id.contains("versions_by_id"), "{by_id}");
        assert!(!by_id.contains("TEMP B-TREE"), "{by_id}");
    }
}
