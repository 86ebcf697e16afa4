//! The DEK registry's [`KeyStore`] on the embedded database: tables `keks` and `deks` (migration
//! 6), each record a JSON document beside its key columns and revision. Every write is one
//! operation on the writer thread (its own savepoint), so a DEK write and the KEK guard it carries
//! commit together or not at all.

use crate::LocalStore;
use crate::error::{LocalError, LocalResult};
use crate::records::read_records;
use async_trait::async_trait;
use registry_dek::store::{Expect, KekGuard, KeyStore, StoreResult, Stored, SubjectPage, prefix_end};
use registry_dek::{Dek, DekId, DekSeries, Kek};
use rusqlite::{Connection, OptionalExtension, params};

fn encode<T: serde::Serialize>(value: &T) -> LocalResult<String> {
    serde_json::to_string(value).map_err(|error| LocalError::Corrupt(format!("cannot encode a key: {error}")))
}

fn decode<T: serde::de::DeserializeOwned>(json: &str, revision: i64) -> LocalResult<Stored<T>> {
    let value = serde_json::from_str(json).map_err(|error| LocalError::Corrupt(format!("stored key: {error}")))?;
    let revision = u64::try_from(revision).map_err(|_| LocalError::Corrupt(format!("revision {revision}")))?;
    Ok(Stored { value, revision })
}

fn revision_of(expect: Expect) -> Option<i64> {
    match expect {
        Expect::Absent => None,
        Expect::Revision(revision) => Some(i64::try_from(revision).unwrap_or(i64::MAX)),
    }
}

/// Checks `expect` against the revision stored (`None`: no record); answers the revision to write.
fn next_revision(current: Option<i64>, expect: Expect, what: &str) -> LocalResult<i64> {
    match (current, revision_of(expect)) {
        (None, None) => Ok(1),
        (Some(current), Some(expected)) if current == expected => Ok(current + 1),
        _ => Err(LocalError::Conflict(format!("{what} changed"))),
    }
}

fn kek_revision(conn: &Connection, name: &str) -> LocalResult<Option<i64>> {
    Ok(conn.query_row("SELECT revision FROM keks WHERE name = ?1", [name], |row| row.get(0)).optional()?)
}

fn dek_revision(conn: &Connection, id: &DekId) -> LocalResult<Option<i64>> {
    let sql = "SELECT revision FROM deks WHERE kek_name = ?1 AND subject = ?2 AND algorithm = ?3 AND version = ?4";
    let key = params![id.kek_name, id.subject, id.algorithm.as_str(), id.version];
    Ok(conn.query_row(sql, key, |row| row.get(0)).optional()?)
}

fn read_deks(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> LocalResult<Vec<Stored<Dek>>> {
    read_records(conn, sql, params, decode)
}

fn limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl LocalStore {
    /// A record write on the writer thread; `write` answers the revision it gave the record.
    async fn write_revision<F>(&self, write: F) -> StoreResult<u64>
    where
        F: FnOnce(&Connection) -> LocalResult<i64> + Send + 'static,
    {
        let revision = self.write(write).await?;
        Ok(u64::try_from(revision).unwrap_or_default())
    }
}

#[async_trait]
impl KeyStore for LocalStore {
    async fn kek(&self, name: &str) -> StoreResult<Option<Stored<Kek>>> {
        self.record_named("SELECT kek, revision FROM keks WHERE name = ?1", name, decode).await
    }

    async fn keks(&self, after: Option<&str>, page: usize) -> StoreResult<Vec<Stored<Kek>>> {
        let after = after.unwrap_or_default().to_owned();
        self.read_sized(page, move |conn| {
            let sql = "SELECT kek, revision FROM keks WHERE name > ?1 ORDER BY name LIMIT ?2";
            read_records(conn, sql, params![after, limit(page)], decode)
        })
        .await
    }

    async fn put_kek(&self, kek: &Kek, expect: Expect) -> StoreResult<u64> {
        let json = encode(kek)?;
        let (name, deleted) = (kek.name.clone(), kek.deleted);
        self.write_revision(move |conn| {
            let revision = next_revision(kek_revision(conn, &name)?, expect, &name)?;
            let sql = "INSERT OR REPLACE INTO keks (name, deleted, kek, revision) VALUES (?1, ?2, ?3, ?4)";
            conn.execute(sql, params![name, deleted, json, revision])?;
            Ok(revision)
        })
        .await
    }

    async fn remove_kek(&self, name: &str, revision: u64) -> StoreResult<()> {
        let name = name.to_owned();
        self.write(move |conn| {
            next_revision(kek_revision(conn, &name)?, Expect::Revision(revision), &name)?;
            conn.execute("DELETE FROM keks WHERE name = ?1", [&name])?;
            Ok(())
        })
        .await
    }

    async fn dek(&self, id: &DekId) -> StoreResult<Option<Stored<Dek>>> {
        let id = id.clone();
        self.read(move |conn| {
            let sql = "SELECT dek, revision FROM deks
                       WHERE kek_name = ?1 AND subject = ?2 AND algorithm = ?3 AND version = ?4";
            let deks = read_deks(conn, sql, params![id.kek_name, id.subject, id.algorithm.as_str(), id.version])?;
            Ok(deks.into_iter().next())
        })
        .await
    }

    async fn deks(&self, series: DekSeries<'_>, after_version: i32, page: usize) -> StoreResult<Vec<Stored<Dek>>> {
        let (kek_name, subject, algorithm) = (series.kek_name.to_owned(), series.subject.to_owned(), series.algorithm);
        self.read_sized(page, move |conn| {
            let sql = "SELECT dek, revision FROM deks
                       WHERE kek_name = ?1 AND subject = ?2 AND algorithm = ?3 AND version > ?4
                       ORDER BY version LIMIT ?5";
            read_deks(conn, sql, params![kek_name, subject, algorithm.as_str(), after_version, limit(page)])
        })
        .await
    }

    async fn latest_dek(&self, series: DekSeries<'_>, include_deleted: bool) -> StoreResult<Option<Stored<Dek>>> {
        let (kek_name, subject, algorithm) = (series.kek_name.to_owned(), series.subject.to_owned(), series.algorithm);
        self.read(move |conn| {
            let sql = "SELECT dek, revision FROM deks
                       WHERE kek_name = ?1 AND subject = ?2 AND algorithm = ?3 AND (?4 OR deleted = 0)
                       ORDER BY version DESC LIMIT 1";
            let deks = read_deks(conn, sql, params![kek_name, subject, algorithm.as_str(), include_deleted])?;
            Ok(deks.into_iter().next())
        })
        .await
    }

    async fn dek_subjects(&self, page: SubjectPage<'_>) -> StoreResult<Vec<String>> {
        let SubjectPage { kek_name, prefix, after, limit: size, include_deleted } = page;
        let (kek_name, after) = (kek_name.to_owned(), after.unwrap_or_default().to_owned());
        // The primary key's range of the prefix: from the prefix itself to the first string
        // without it (none above an empty prefix).
        let (start, end) = (prefix.to_owned(), prefix_end(prefix));
        self.read_sized(size, move |conn| {
            let bounded = "SELECT DISTINCT subject FROM deks
                           WHERE kek_name = ?1 AND subject > ?2 AND subject >= ?5 AND subject < ?6
                             AND (?3 OR deleted = 0)
                           ORDER BY subject LIMIT ?4";
            let open = "SELECT DISTINCT subject FROM deks
                        WHERE kek_name = ?1 AND subject > ?2 AND subject >= ?5 AND (?3 OR deleted = 0)
                        ORDER BY subject LIMIT ?4";
            let mut statement = conn.prepare_cached(if end.is_some() { bounded } else { open })?;
            let rows = match &end {
                Some(end) => {
                    let values = params![kek_name, after, include_deleted, limit(size), start, end];
                    statement.query_map(values, |row| row.get(0))?.collect::<Result<Vec<String>, _>>()
                }
                None => {
                    let values = params![kek_name, after, include_deleted, limit(size), start];
                    statement.query_map(values, |row| row.get(0))?.collect::<Result<Vec<String>, _>>()
                }
            };
            Ok(rows?)
        })
        .await
    }

    async fn put_dek(&self, dek: &Dek, expect: Expect, guard: KekGuard) -> StoreResult<u64> {
        let json = encode(dek)?;
        let dek = dek.clone();
        self.write_revision(move |conn| {
            let id = dek.id();
            let revision = next_revision(dek_revision(conn, &id)?, expect, &id.subject)?;
            let sql = match guard {
                KekGuard::Unchecked => None,
                KekGuard::Live => Some("UPDATE keks SET revision = revision + 1 WHERE name = ?1 AND deleted = 0"),
                KekGuard::Present => Some("UPDATE keks SET revision = revision + 1 WHERE name = ?1"),
            };
            if let Some(sql) = sql
                && conn.execute(sql, [&id.kek_name])? != 1
            {
                return Err(LocalError::Conflict(format!("KEK {} is not {guard:?}", id.kek_name)));
            }
            let sql = "INSERT OR REPLACE INTO deks (kek_name, subject, algorithm, version, deleted, dek, revision)
                       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
            let values =
                params![id.kek_name, id.subject, id.algorithm.as_str(), id.version, dek.deleted, json, revision];
            conn.execute(sql, values)?;
            Ok(revision)
        })
        .await
    }

    async fn remove_dek(&self, id: &DekId, revision: u64) -> StoreResult<()> {
        let id = id.clone();
        self.write(move |conn| {
            next_revision(dek_revision(conn, &id)?, Expect::Revision(revision), &id.subject)?;
            let sql = "DELETE FROM deks WHERE kek_name = ?1 AND subject = ?2 AND algorithm = ?3 AND version = ?4";
            conn.execute(sql, params![id.kek_name, id.subject, id.algorithm.as_str(), id.version])?;
            Ok(())
        })
        .await
    }
}
