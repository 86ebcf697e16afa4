//! Schema linking's [`ExporterStore`] on the embedded database: table `exporters` (migration 7),
//! each record the JSON of its [`ExporterRecord`] beside its name and revision. Every write is one
//! operation on the writer thread, conditional on the revision the writer read.

use crate::LocalStore;
use crate::error::{LocalError, LocalResult};
use crate::records::read_records;
use async_trait::async_trait;
use registry_exporter::ExporterRecord;
use registry_exporter::store::{Expect, ExporterStore, StoreResult, Stored};
use rusqlite::{Connection, OptionalExtension, params};

fn decode(json: &str, revision: i64) -> LocalResult<Stored<ExporterRecord>> {
    let value = serde_json::from_str(json).map_err(|error| LocalError::Corrupt(format!("stored exporter: {error}")))?;
    let revision = u64::try_from(revision).map_err(|_| LocalError::Corrupt(format!("revision {revision}")))?;
    Ok(Stored { value, revision })
}

fn revision(conn: &Connection, name: &str) -> LocalResult<Option<i64>> {
    Ok(conn.query_row("SELECT revision FROM exporters WHERE name = ?1", [name], |row| row.get(0)).optional()?)
}

/// Checks `expect` against the stored revision; answers the revision to write.
fn next_revision(current: Option<i64>, expect: Expect) -> LocalResult<i64> {
    match (current, expect) {
        (None, Expect::Absent) => Ok(1),
        (Some(current), Expect::Revision(expected)) if u64::try_from(current).ok() == Some(expected) => Ok(current + 1),
        _ => Err(LocalError::Conflict("exporter changed".to_owned())),
    }
}

#[async_trait]
impl ExporterStore for LocalStore {
    async fn exporter(&self, name: &str) -> StoreResult<Option<Stored<ExporterRecord>>> {
        self.record_named("SELECT record, revision FROM exporters WHERE name = ?1", name, decode).await
    }

    async fn exporters(&self) -> StoreResult<Vec<Stored<ExporterRecord>>> {
        self.read(move |conn| read_records(conn, "SELECT record, revision FROM exporters ORDER BY name", [], decode))
            .await
    }

    async fn put_exporter(&self, record: &ExporterRecord, expect: Expect) -> StoreResult<u64> {
        let json = serde_json::to_string(record)
            .map_err(|error| LocalError::Corrupt(format!("cannot encode an exporter: {error}")))?;
        let name = record.exporter.name.clone();
        let written = self
            .write(move |conn| {
                let next = next_revision(revision(conn, &name)?, expect)?;
                let sql = "INSERT OR REPLACE INTO exporters (name, record, revision) VALUES (?1, ?2, ?3)";
                conn.execute(sql, params![name, json, next])?;
                Ok(next)
            })
            .await?;
        Ok(u64::try_from(written).unwrap_or_default())
    }

    async fn remove_exporter(&self, name: &str, expected: u64) -> StoreResult<()> {
        let name = name.to_owned();
        self.write(move |conn| {
            next_revision(revision(conn, &name)?, Expect::Revision(expected))?;
            conn.execute("DELETE FROM exporters WHERE name = ?1", [&name])?;
            Ok(())
        })
        .await
    }
}
