//! Connections: one writer behind a mutex (every write is one `IMMEDIATE` transaction) and a
//! small stack of read-only connections that WAL lets run beside it.

use crate::error::LocalResult;
use crate::schema;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Idle read connections kept for reuse; more are opened under load and closed when returned.
const MAX_IDLE_READERS: usize = 4;

/// The database file's connections. Readers are opened on first use, not at start-up.
#[derive(Debug)]
pub(crate) struct Pool {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic inside a transaction drops it, which rolls it back: the connection is still sound.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Pool {
    /// Opens (creating if needed) the database at `path` and migrates it. Reads no data.
    pub(crate) fn open(path: &Path) -> LocalResult<Pool> {
        let mut writer = Connection::open(path)?;
        schema::configure_writer(&writer)?;
        schema::migrate(&mut writer)?;
        Ok(Pool { path: path.to_path_buf(), writer: Mutex::new(writer), readers: Mutex::new(Vec::new()) })
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in one `IMMEDIATE` transaction on the writer and commits if it returns `Ok`;
    /// on `Err` nothing `f` wrote is kept. The commit is durable when this returns `Ok`.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Connection) -> LocalResult<T>) -> LocalResult<T> {
        let mut writer = lock(&self.writer);
        let tx = writer.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Moves every committed WAL frame into the database file and truncates the WAL, so the next
    /// open (or crash recovery) has no long log to index. Best effort: skipped while readers
    /// hold old snapshots.
    pub(crate) fn checkpoint(&self) -> LocalResult<()> {
        let writer = lock(&self.writer);
        writer.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Runs `f` on a read-only connection. Each statement sees every commit acknowledged
    /// before it began.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> LocalResult<T>) -> LocalResult<T> {
        let pooled = lock(&self.readers).pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => self.open_reader()?,
        };
        let result = f(&conn);
        let mut readers = lock(&self.readers);
        if readers.len() < MAX_IDLE_READERS {
            readers.push(conn);
        }
        result
    }

    fn open_reader(&self) -> LocalResult<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        schema::configure(&conn)?;
        Ok(conn)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn writer_uses_wal_with_full_sync_and_readers_are_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::open(&dir.path().join("db")).unwrap();
        pool.write(|conn| {
            let journal: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
            let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
            assert_eq!((journal.as_str(), synchronous), ("wal", 2));
            conn.execute("INSERT INTO modes (scope, mode) VALUES ('x', 'IMPORT')", [])?;
            Ok(())
        })
        .unwrap();
        let seen: String =
            pool.read(|conn| Ok(conn.query_row("SELECT mode FROM modes", [], |row| row.get(0))?)).unwrap();
        assert_eq!(seen, "IMPORT");
        let refused = pool.read(|conn| Ok(conn.execute("DELETE FROM modes", [])?));
        assert!(refused.is_err(), "read connections must not write");
        pool.checkpoint().unwrap();
        assert_eq!(std::fs::metadata(dir.path().join("db-wal")).unwrap().len(), 0);
    }
}
