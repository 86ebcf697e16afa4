//! Group commit: one thread owns the writer connection and commits queued write operations
//! together, so many concurrent writers share one `fsync` instead of paying one each.
//!
//! Each operation still runs alone in its own `SAVEPOINT` inside the group's `IMMEDIATE`
//! transaction: its checks see every earlier operation of the group, and when it fails only its
//! own writes are rolled back. Every operation of a group is answered only after the group's
//! `COMMIT` returned (with `synchronous = FULL`, after the WAL is fsynced), so an acknowledged write
//! is durable exactly as with one transaction per operation; if the commit fails, every
//! operation of the group is answered with that failure and nothing of the group is kept.

use crate::error::{LocalError, LocalResult};
use rusqlite::Connection;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// Most operations committed together.
const MAX_GROUP: usize = 512;

/// Answers one operation once its group's outcome is known (`Err` carries the commit failure).
type Finish = Box<dyn FnOnce(Result<(), &str>) + Send>;
/// Runs one operation inside the open transaction (`Err`: the transaction could not be opened).
/// Sets the flag when its savepoint could not be rolled back: then the whole group is abandoned.
type Operation = Box<dyn FnOnce(Result<(&Connection, &Cell<bool>), &str>) -> Finish + Send>;

enum Job {
    /// Part of a group transaction.
    Write(Operation),
    /// Runs alone, outside any transaction (checkpoints).
    Alone(Box<dyn FnOnce(&mut Connection) + Send>),
}

/// The writer thread and the queue feeding it. Dropping it lets the queue drain, then joins the thread.
#[derive(Debug)]
pub(crate) struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    #[cfg_attr(not(test), allow(dead_code))]
    groups: Arc<AtomicU64>,
}

impl Writer {
    /// Moves `conn` onto a new writer thread.
    pub(crate) fn start(conn: Connection) -> LocalResult<Writer> {
        let (jobs, queue) = mpsc::channel();
        let groups = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&groups);
        let thread = std::thread::Builder::new()
            .name("registry-sqlite-writer".to_string())
            .spawn(move || run(conn, queue, &counted))?;
        Ok(Writer { jobs: Some(jobs), thread: Some(thread), groups })
    }

    /// Group transactions run so far.
    #[cfg(test)]
    pub(crate) fn groups(&self) -> u64 {
        self.groups.load(Ordering::SeqCst)
    }

    /// Queues `f` to run in the next group; the receiver gets its result after the group's commit.
    pub(crate) fn submit<T, F>(&self, f: F) -> oneshot::Receiver<LocalResult<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> LocalResult<T> + Send + 'static,
    {
        let (answer, receiver) = oneshot::channel();
        let operation: Operation = Box::new(move |conn| {
            let outcome = match conn {
                Ok((conn, poisoned)) => in_savepoint(conn, poisoned, f),
                Err(message) => Err(failed(message)),
            };
            Box::new(move |commit: Result<(), &str>| {
                let result = match (outcome, commit) {
                    (Ok(value), Ok(())) => Ok(value),
                    (Ok(_), Err(message)) => Err(failed(message)),
                    (Err(error), _) => Err(error),
                };
                let _ = answer.send(result);
            })
        });
        self.send(Job::Write(operation));
        receiver
    }

    /// Runs `f` on the writer connection outside any transaction, between groups.
    pub(crate) fn alone<T, F>(&self, f: F) -> oneshot::Receiver<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> T + Send + 'static,
    {
        let (answer, receiver) = oneshot::channel();
        self.send(Job::Alone(Box::new(move |conn| {
            let _ = answer.send(f(conn));
        })));
        receiver
    }

    fn send(&self, job: Job) {
        // A closed queue drops the job and with it the answer sender: the caller sees the writer gone.
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The error an operation gets when its group could not begin or commit.
fn failed(message: &str) -> LocalError {
    LocalError::Io(std::io::Error::other(format!("group commit failed: {message}")))
}

/// The error a caller gets when the writer thread is gone (it panicked or the store was dropped).
pub(crate) fn writer_gone() -> LocalError {
    LocalError::Io(std::io::Error::other("the writer thread stopped"))
}

fn in_savepoint<T>(
    conn: &Connection,
    poisoned: &Cell<bool>,
    f: impl FnOnce(&Connection) -> LocalResult<T>,
) -> LocalResult<T> {
    if poisoned.get() {
        return Err(failed("an earlier operation of the group could not be rolled back"));
    }
    conn.execute_batch("SAVEPOINT operation")?;
    let outcome = catch_unwind(AssertUnwindSafe(|| f(conn)))
        .unwrap_or_else(|_| Err(LocalError::Io(std::io::Error::other("a write operation panicked"))));
    match outcome {
        Ok(value) => match conn.execute_batch("RELEASE operation") {
            Ok(()) => Ok(value),
            Err(error) => {
                poisoned.set(true);
                Err(error.into())
            }
        },
        Err(error) => {
            if conn.execute_batch("ROLLBACK TO operation; RELEASE operation").is_err() {
                poisoned.set(true);
            }
            Err(error)
        }
    }
}

fn run(mut conn: Connection, queue: mpsc::Receiver<Job>, groups: &AtomicU64) {
    let mut pending: Option<Job> = None;
    loop {
        let first = match pending.take() {
            Some(job) => job,
            None => match queue.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        let first = match first {
            Job::Alone(job) => {
                job(&mut conn);
                continue;
            }
            Job::Write(operation) => operation,
        };
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(Job::Write(operation)) => group.push(operation),
                Ok(alone) => {
                    pending = Some(alone);
                    break;
                }
                Err(_) => break,
            }
        }
        groups.fetch_add(1, Ordering::SeqCst);
        commit_group(&conn, group);
    }
}

fn commit_group(conn: &Connection, group: Vec<Operation>) {
    if let Err(error) = conn.execute_batch("BEGIN IMMEDIATE") {
        let message = error.to_string();
        for operation in group {
            operation(Err(&message))(Err(&message));
        }
        return;
    }
    let poisoned = Cell::new(false);
    let finishes: Vec<Finish> = group.into_iter().map(|operation| operation(Ok((conn, &poisoned)))).collect();
    let committed = if poisoned.get() {
        Err("a failed operation could not be rolled back".to_string())
    } else {
        conn.execute_batch("COMMIT").map_err(|error| error.to_string())
    };
    match committed {
        Ok(()) => finishes.into_iter().for_each(|finish| finish(Ok(()))),
        Err(message) => {
            let _ = conn.execute_batch("ROLLBACK");
            finishes.into_iter().for_each(|finish| finish(Err(&message)));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn writer() -> (tempfile::TempDir, Writer, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let conn = Connection::open(&path).unwrap();
        crate::schema::configure_writer(&conn).unwrap();
        conn.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY)").unwrap();
        (dir, Writer::start(conn).unwrap(), path)
    }

    fn keys(path: &std::path::Path) -> Vec<i64> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn.prepare("SELECT k FROM t ORDER BY k").unwrap();
        stmt.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }

    #[tokio::test]
    async fn queued_operations_share_one_commit_and_a_failing_one_keeps_nothing() {
        let (_dir, writer, path) = writer();
        // Hold the writer until all operations are queued, so they form one group.
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let held = writer.alone(move |_| hold.recv().ok());
        let answers: Vec<_> = (0..100i64)
            .map(|k| {
                writer.submit(move |conn| {
                    conn.execute("INSERT INTO t (k) VALUES (?1)", [k])?;
                    if k % 2 == 1 { Err(LocalError::Conflict(format!("odd {k}"))) } else { Ok(k) }
                })
            })
            .collect();
        release.send(()).unwrap();
        held.await.unwrap();
        for (k, answer) in answers.into_iter().enumerate() {
            let result = answer.await.unwrap();
            assert_eq!(result.is_ok(), k % 2 == 0, "operation {k}: {result:?}");
        }
        assert_eq!(writer.groups(), 1, "100 queued operations, one group commit");
        assert_eq!(keys(&path), (0..100).filter(|k| k % 2 == 0).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn later_operations_of_a_group_see_earlier_ones() {
        let (_dir, writer, path) = writer();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let held = writer.alone(move |_| hold.recv().ok());
        let first = writer.submit(|conn| Ok(conn.execute("INSERT INTO t (k) VALUES (1)", [])?));
        let second = writer.submit(|conn| {
            let seen: i64 = conn.query_row("SELECT count(*) FROM t", [], |row| row.get(0))?;
            if seen == 1 { Err(LocalError::Conflict("exists".into())) } else { Ok(0) }
        });
        release.send(()).unwrap();
        held.await.unwrap();
        assert!(first.await.unwrap().is_ok());
        assert!(matches!(second.await.unwrap(), Err(LocalError::Conflict(_))));
        assert_eq!(keys(&path), [1]);
    }

    #[tokio::test]
    async fn a_panicking_operation_fails_alone_and_the_writer_keeps_going() {
        let (_dir, writer, path) = writer();
        let panicked = writer.submit(|conn| -> LocalResult<()> {
            conn.execute("INSERT INTO t (k) VALUES (7)", [])?;
            panic!("boom")
        });
        assert!(panicked.await.unwrap().is_err());
        writer.submit(|conn| Ok(conn.execute("INSERT INTO t (k) VALUES (8)", [])?)).await.unwrap().unwrap();
        assert_eq!(keys(&path), [8]);
    }
}
