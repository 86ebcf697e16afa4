//! `LocalStore`: the embedded default [`Store`], one SQLite database on local disk, for `make run`.
//!
//! **Why SQLite.** The embedded store needs crash safety, concurrent readers beside a writer,
//! ordered indexes for paging, and a start-up that does not depend on how much is stored.
//! SQLite (through `rusqlite`, with the library compiled in by its `bundled` feature, so there is
//! nothing to install) gives all four: atomic, durable transactions with a write-ahead log that
//! lets readers run while one writer commits; B-tree tables and indexes so every call is a key
//! lookup or a range scan; and an open that reads only the header and one `PRAGMA`. It is the most
//! widely deployed and tested storage engine there is, its file format is stable and documented,
//! and any operator can inspect a data directory with the `sqlite3` shell.
//!
//! **Durability.** The journal is WAL with `synchronous = FULL`: every commit is fsynced before a
//! call returns, so an acknowledged write survives a killed process *and* a power loss or OS
//! crash. `NORMAL` would survive a killed process too (the WAL frame is in the OS page cache) but
//! could drop the last commits on power loss, and a registry that hands out a schema ID and then
//! forgets it breaks every message already written with that ID. Concurrent writes share their
//! fsync through group commit (below), so durability does not cap write throughput at one fsync
//! per operation.
//!
//! **Layout** (`registry.db` in the data directory; tables in `schema.rs`): `bodies` (fingerprint →
//! body), `ids` (id → fingerprint), `fingerprint_ids` (fingerprint → first bound id), `counters`
//! (the id high-water mark), `versions` ((subject, version) → row, indexed by id),
//! `reference_edges` (referenced (subject, version) → referrer, for `referrers`), `subjects`
//! (per-subject row and live-row counts, indexed by (live, subject) for keyset paging), `configs`,
//! `modes`, `subject_usage` (last-used day) and `guids` (guid → first bound fingerprint, the
//! `GET /schemas/guids/{guid}` index; migration 3 creates it empty: a database written before it
//! gets entries as schemas are registered again or imported, never by a scan at open) and
//! `subject_revisions` (each subject's write revision, raised in the transaction of every change to
//! its rows; the write preconditions of `conditions.rs` compare it, so it is never removed), and the
//! DEK registry's `keks` and `deks` (`keys.rs`, the [`registry_dek::KeyStore`] of this store), and
//! schema linking's `exporters` (`exporters.rs`, the [`registry_exporter::ExporterStore`]).
//!
//! **Concurrency.** Each write call is one atomic operation on the writer thread, which commits
//! the operations queued meanwhile as one group (one `IMMEDIATE` transaction, each operation in its
//! own savepoint, every answer sent after the group's fsynced commit; see `writer.rs`). Each read
//! call is one statement on a pooled read-only connection: point reads run on the calling thread
//! (cheaper than a thread hand-off), reads that may scan many rows on `spawn_blocking`, at most
//! `MAX_READERS` at once. Several processes may open the same directory; SQLite's file locks
//! serialise their writers and `busy_timeout` makes them wait rather than fail.

mod bounded;
mod codec;
mod conditions;
mod error;
mod exporters;
mod keys;
mod ops;
mod pool;
mod records;
mod schema;
mod store;
mod writer;

use error::{LocalError, LocalResult};
use pool::Pool;
use registry_core::{Fingerprint, Guid, SchemaBody, StoreError, StoreResult, Subject, VersionRow};
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;

/// The database file's name inside the data directory.
pub const DATABASE_FILE: &str = "registry.db";

/// The embedded store. Cheap to clone (clones share the connections). See the crate doc for
/// durability and concurrency guarantees. Its async methods run SQLite on tokio's blocking pool,
/// so they must be awaited inside a tokio runtime.
#[derive(Debug, Clone)]
pub struct LocalStore {
    pool: Arc<Pool>,
    /// At most [`pool::MAX_READERS`] reads on the blocking pool at once.
    reads: Arc<tokio::sync::Semaphore>,
}

impl LocalStore {
    /// Opens the store in `dir`, creating the directory and an empty database if missing and
    /// applying pending schema migrations. Reads no schemas, subjects or versions: the time it
    /// takes does not grow with the data. Fails if the database was written by a newer build.
    pub fn open(dir: &Path) -> StoreResult<LocalStore> {
        let open = || -> LocalResult<LocalStore> {
            std::fs::create_dir_all(dir)?;
            let pool = Arc::new(Pool::open(&dir.join(DATABASE_FILE))?);
            Ok(LocalStore { pool, reads: Arc::new(tokio::sync::Semaphore::new(pool::MAX_READERS)) })
        };
        open().map_err(StoreError::from)
    }

    /// The database file this store uses.
    pub fn database_path(&self) -> &Path {
        self.pool.path()
    }

    /// Bulk seeding for benchmarks and imports; **not for the request path**. Writes every body
    /// and its guid index entry (a guid already bound is left as it is), binds each row's id to
    /// its fingerprint (ids already bound are left as they are) and
    /// creates each row, all in one transaction: either everything is stored or nothing is.
    /// Skips the registry's checks (compatibility, dense versions, bodies existing); a row whose
    /// (subject, version) exists replaces it. The id counter is raised past every id written.
    /// Checkpoints the write-ahead log afterwards so the next open stays fast.
    pub async fn insert_unchecked(&self, bodies: &[(Fingerprint, SchemaBody)], rows: &[VersionRow]) -> StoreResult<()> {
        let bodies = bodies.to_vec();
        let rows = rows.to_vec();
        self.write(move |conn| {
            for (fingerprint, body) in &bodies {
                ops::put_body(conn, fingerprint, body)?;
                ops::insert_guid(conn, &Guid::of(body), fingerprint)?;
            }
            for row in &rows {
                let context = row.subject.context();
                if ops::fingerprint_for_id(conn, &context, row.id)?.is_none() {
                    ops::bind_id(conn, &context, row.id, &row.fingerprint)?;
                }
                ops::remove_row(conn, &row.subject, row.version)?;
                ops::insert_row(conn, row)?;
            }
            Ok(())
        })
        .await?;
        Ok(self.pool.checkpoint().await?)
    }

    async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        Ok(self.pool.write(f).await?)
    }

    /// A point read, run right here on the calling (async) thread. On a WAL database a read never
    /// waits for the writer, and an indexed lookup of a few rows costs microseconds, less than
    /// handing it to the blocking pool and back. Only for reads whose work is bounded by a
    /// constant; the rare exception is a `busy_timeout` wait while another process recovers the WAL.
    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        Ok(self.pool.read(f)?)
    }

    /// A read of at most `rows` rows: inline when that is a handful (an existence check, a small
    /// page), on the blocking pool otherwise (a listing's page of 1000).
    async fn read_sized<T, F>(&self, rows: usize, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        if rows <= bounded::INLINE_ROWS { self.read(f).await } else { self.read_blocking(f).await }
    }

    /// A read that may scan many rows (subject pages, referrers, every row of a popular ID): on
    /// the blocking pool, at most [`pool::MAX_READERS`] at once.
    async fn read_blocking<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        let _permit =
            self.reads.acquire().await.map_err(|_| LocalError::Io(std::io::Error::other("read limiter closed")))?;
        let pool = Arc::clone(&self.pool);
        let joined = tokio::task::spawn_blocking(move || pool.read(f)).await.map_err(LocalError::from)?;
        Ok(joined?)
    }

    /// Every row of `subject`: inline when there are at most [`bounded::INLINE_ROWS`] (the usual
    /// case), else on the blocking pool (a subject with many versions, read by every request
    /// that resolves it: one that references it thousands of times must not hold an async worker).
    async fn versions_bounded(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        let probe = subject.clone();
        match self.read(move |conn| bounded::versions_upto(conn, &probe, bounded::INLINE_ROWS)).await? {
            Some(rows) => Ok(rows),
            None => {
                let subject = subject.clone();
                self.read_blocking(move |conn| ops::versions(conn, &subject)).await
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use registry_core::testkit::StoreTestExt;
    use registry_core::{SchemaId, SchemaType, Store, Version};
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// The Avro body `"int"`.
    fn int_body() -> SchemaBody {
        SchemaBody {
            schema_type: SchemaType::Avro,
            schema: "\"int\"".into(),
            references: vec![],
            metadata: None,
            rule_set: None,
        }
    }

    fn rows(subject: &str, count: usize, body: &SchemaBody) -> Vec<VersionRow> {
        (1..=count)
            .map(|n| VersionRow {
                subject: Subject::new(subject).unwrap(),
                version: Version(i32::try_from(n).unwrap()),
                id: SchemaId(1),
                fingerprint: body.fingerprint(),
                deleted: false,
                references: vec![],
                registered_at_ms: 0,
            })
            .collect()
    }

    /// Whether `future` finished at its first poll (ran inline, without waiting for anything).
    fn ready_at_once<F: Future>(future: F) -> bool {
        matches!(pin!(future).poll(&mut Context::from_waker(Waker::noop())), Poll::Ready(_))
    }

    /// A subject's rows are read inline only while they are few: with every blocking-read slot
    /// taken, a small subject still answers at once and a large one waits for a slot.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_subject_with_many_versions_is_read_on_the_blocking_pool() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        let body = int_body();
        let (few, many) = (rows("few", 3, &body), rows("many", bounded::INLINE_ROWS + 1, &body));
        store
            .insert_unchecked(&[(body.fingerprint(), body.clone())], &[few.clone(), many.clone()].concat())
            .await
            .unwrap();
        let (small, large) = (few[0].subject.clone(), many[0].subject.clone());

        let slots = store.reads.acquire_many(u32::try_from(pool::MAX_READERS).unwrap()).await.unwrap();
        assert!(ready_at_once(store.versions(&small)), "a few rows are read inline");
        assert!(!ready_at_once(store.versions(&large)), "many rows wait for a blocking-read slot");
        drop(slots);
        assert_eq!(store.versions(&large).await.unwrap(), many);
        assert_eq!(store.versions(&small).await.unwrap(), few);
    }

    /// The carried-ID check (every by-ID read the live-ID memory misses) answers as the listing of
    /// the ID's rows does, in the default and a named context, and SQLite runs each of its
    /// statements as prepared, not preparing it again for each ID.
    #[tokio::test]
    async fn the_carried_id_check_answers_as_the_rows_do_without_preparing_again() {
        use registry_core::store::IdRowsPage;
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        let named = registry_core::Context::parse(".ctx").unwrap();
        let mut carrying = Vec::new();
        let mut bodies = Vec::new();
        let mut ids = Vec::new();
        for n in 0..12 {
            let body =
                SchemaBody { schema: format!("{{\"type\":\"fixed\",\"name\":\"F{n}\",\"size\":{n}}}"), ..int_body() };
            let fingerprint = body.fingerprint();
            let context = if n % 3 == 0 { named.clone() } else { registry_core::Context::DEFAULT };
            let id = store.allocate_id_in(&context, &fingerprint).await.unwrap();
            // Every fourth ID is bound but carried by no row.
            if n % 4 != 1 {
                let subject = Subject::new(context.qualify(&format!("s{n}"))).unwrap();
                carrying.push(VersionRow { subject, id, fingerprint, ..rows("x", 1, &body)[0].clone() });
            }
            bodies.push((fingerprint, body));
            ids.push((context, id));
        }
        store.insert_unchecked(&bodies, &carrying).await.unwrap();
        for context in [registry_core::Context::DEFAULT, named.clone()] {
            for id in (1..=8).map(SchemaId) {
                let page = IdRowsPage { id, prefix: "", after: None, limit: 1 };
                let expected = match store.rows_with_id_page_in(&context, page).await.unwrap().is_empty() {
                    true => None,
                    false => store.fingerprint_for_id_in(&context, id).await.unwrap(),
                };
                let carried = store.fingerprint_for_carried_id_in(&context, id).await.unwrap();
                assert_eq!(carried, expected, "{id:?} in {context:?}");
            }
        }
        assert!(ids.len() > 8 && carrying.len() < ids.len(), "both carried and uncarried IDs were asked");
        let reprepared = store
            .pool
            .read(|conn| {
                let status = rusqlite::StatementStatus::RePrepare;
                let default = conn.prepare_cached(ops::CARRIED_IN_DEFAULT)?.get_status(status);
                Ok(default + conn.prepare_cached(ops::CARRIED_IN_NAMED)?.get_status(status))
            })
            .unwrap();
        assert_eq!(reprepared, 0, "prepared once, run for every ID");
    }

    /// Reads run inline only while small: an ID carried by more rows than the inline bound still
    /// answers every row, sorted, through the blocking path.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_with_id_answers_all_rows_below_and_above_the_inline_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        let body = int_body();
        let fingerprint: Fingerprint = body.fingerprint();
        let rows: Vec<VersionRow> = (0..100)
            .map(|n| VersionRow {
                subject: Subject::new(format!("s{n:03}")).unwrap(),
                version: Version(1),
                id: SchemaId(if n < 5 { 1 } else { 2 }),
                fingerprint,
                deleted: false,
                references: vec![],
                registered_at_ms: 0,
            })
            .collect();
        store.insert_unchecked(&[(fingerprint, body)], &rows).await.unwrap();

        let few = store.rows_with_id(SchemaId(1)).await.unwrap();
        assert_eq!(few, rows[..5].to_vec());
        let many = store.rows_with_id(SchemaId(2)).await.unwrap();
        assert_eq!(many.len(), 95);
        assert_eq!(many, rows[5..].to_vec(), "every row, sorted by subject");
        assert!(store.rows_with_id(SchemaId(3)).await.unwrap().is_empty());
    }

    /// A counter pushed to the top again after a lowering restarts past the IDs allocated right
    /// above the import bound (`registry_core::id_rules::lowering_floor`), not at one of them, in
    /// the default context and in a named one.
    #[tokio::test]
    async fn a_second_lowering_restarts_past_the_ids_the_first_one_issued() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        for (n, context) in
            [registry_core::Context::DEFAULT, registry_core::Context::parse(".lowered").unwrap()].iter().enumerate()
        {
            let tag = |i: u8| Fingerprint([i + 10 * u8::try_from(n).unwrap(); 32]);
            store.bind_id_in(context, SchemaId::MAX_IMPORTED, &tag(1)).await.unwrap();
            store.bind_id_in(context, SchemaId(i32::MAX), &tag(2)).await.unwrap();
            let after_bound = SchemaId(SchemaId::MAX_IMPORTED.0 + 1);
            assert_eq!(store.allocate_id_in(context, &tag(3)).await.unwrap(), after_bound);
            store.bind_id_in(context, SchemaId(i32::MAX), &tag(2)).await.unwrap();
            assert_eq!(store.max_id_in(context).await.unwrap(), Some(SchemaId(i32::MAX)), "at the top again");
            assert_eq!(store.allocate_id_in(context, &tag(4)).await.unwrap(), SchemaId(after_bound.0 + 1));
        }
    }
}
