//! Connections: one writer connection owned by the group-commit thread ([`crate::writer`]) and a
//! small stack of read-only connections that WAL lets run beside it.

use crate::error::LocalResult;
use crate::schema;
use crate::writer::{Writer, writer_gone};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Reads [`crate::LocalStore`] runs on the blocking pool at once, so under load they queue for a
/// connection instead of opening (and closing) new ones.
pub(crate) const MAX_READERS: usize = 8;

/// Idle read connections kept: the blocking readers plus the inline ones (one per async worker).
const MAX_IDLE_READERS: usize = MAX_READERS + 4;

/// Prepared statements kept per connection: more than the distinct statements the store runs,
/// so the hot paths never parse SQL again (rusqlite's default of 16 is fewer).
const STATEMENT_CACHE: usize = 128;

/// The database file's connections. Readers are opened on first use, not at start-up.
#[derive(Debug)]
pub(crate) struct Pool {
    path: PathBuf,
    writer: Writer,
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
        writer.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        schema::configure_writer(&writer)?;
        schema::migrate(&mut writer)?;
        Ok(Pool { path: path.to_path_buf(), writer: Writer::start(writer)?, readers: Mutex::new(Vec::new()) })
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` as one write operation: atomically (its own savepoint inside a group commit, see
    /// [`crate::writer`]); on `Err` nothing `f` wrote is kept. The write is durable when the
    /// answer is `Ok`.
    pub(crate) async fn write<T, F>(&self, f: F) -> LocalResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        self.writer.submit(f).await.map_err(|_| writer_gone())?
    }

    /// [`Pool::write`] for synchronous callers (outside an async runtime).
    #[cfg(test)]
    pub(crate) fn write_blocking<T, F>(&self, f: F) -> LocalResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        self.writer.submit(f).blocking_recv().map_err(|_| writer_gone())?
    }

    /// Moves every committed WAL frame into the database file and truncates the WAL, so the next
    /// open (or crash recovery) has no long log to index. Best effort: skipped while readers
    /// hold old snapshots.
    pub(crate) async fn checkpoint(&self) -> LocalResult<()> {
        let done = self.writer.alone(|conn| -> LocalResult<()> {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        });
        done.await.map_err(|_| writer_gone())?
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
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
        pool.write_blocking(|conn| {
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
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(pool.checkpoint()).unwrap();
        assert_eq!(std::fs::metadata(dir.path().join("db-wal")).unwrap().len(), 0);
    }
}
