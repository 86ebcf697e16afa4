//! The log's writer: each formatted line is appended to a shared buffer, and a thread of its own
//! writes the buffer to stderr, everything that queued up while it wrote in one write. So a request
//! never waits for a write to the terminal or pipe, and a busy server makes one write per batch,
//! not per line. Nothing is dropped: when [`MAX_QUEUED_BYTES`] wait (stderr slower than the lines
//! come), a request waits for room, as it waited for the write before. The writer is woken only by
//! a line arriving while it waits for lines, and after each write it lets lines gather for
//! [`BATCH_WINDOW`]: a quiet server's line appears at once, a busy one's lines wake the writer at
//! most once per window, not once per line. [`Flushed`] writes out the rest when the process ends.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tracing_subscriber::fmt::MakeWriter;

/// Bytes of lines that may wait for the writer thread.
const MAX_QUEUED_BYTES: usize = 8 << 20;

/// How long lines gather after a write before the next (the most a line waits on a busy server).
const BATCH_WINDOW: Duration = Duration::from_millis(1);

#[derive(Debug, Default)]
struct Queue {
    state: Mutex<Pending>,
    /// Told when lines arrive in an empty buffer (the writer waits on it).
    arrived: Condvar,
    /// Told when the writer took the buffer and when it finished writing it.
    written: Condvar,
}

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// The writer holds a batch it has not finished writing.
    writing: bool,
    /// The writer waits for lines (only then does a line wake it).
    waiting: bool,
    /// Threads waiting for the writer's progress (room in the buffer, or a drain): only then does
    /// the writer tell `written` (a notification is a system call even when no one waits).
    awaiting_written: usize,
    /// No writer thread: lines are written where they are made.
    direct: bool,
}

/// How much waits, not the lines themselves (up to [`MAX_QUEUED_BYTES`] of them).
impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("queued_bytes", &self.lines.len()).finish_non_exhaustive()
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, line: &[u8]) {
        let mut pending = self.lock();
        if pending.direct {
            drop(pending);
            let _ = std::io::stderr().write_all(line);
            return;
        }
        while pending.lines.len() >= MAX_QUEUED_BYTES {
            pending.awaiting_written += 1;
            pending = self.written.wait(pending).unwrap_or_else(|poisoned| poisoned.into_inner());
            pending.awaiting_written -= 1;
        }
        pending.lines.extend_from_slice(line);
        if pending.waiting {
            pending.waiting = false;
            self.arrived.notify_one();
        }
    }

    fn write_forever(&self) {
        let mut batch = Vec::new();
        let mut out = std::io::stderr();
        loop {
            {
                let mut pending = self.lock();
                pending.writing = false;
                self.tell_written(&pending);
                while pending.lines.is_empty() {
                    pending.waiting = true;
                    pending = self.arrived.wait(pending).unwrap_or_else(|poisoned| poisoned.into_inner());
                }
                pending.waiting = false;
                batch.clear();
                std::mem::swap(&mut batch, &mut pending.lines);
                pending.writing = true;
                self.tell_written(&pending);
            }
            let _ = out.write_all(&batch);
            std::thread::sleep(BATCH_WINDOW);
        }
    }

    /// Tells the threads waiting for the writer's progress, if any.
    fn tell_written(&self, pending: &Pending) {
        if pending.awaiting_written > 0 {
            self.written.notify_all();
        }
    }

    /// Waits (at most `patience`) until every line pushed so far is written.
    fn drain(&self, patience: Duration) {
        let mut pending = self.lock();
        let deadline = std::time::Instant::now() + patience;
        while !pending.direct && (pending.writing || !pending.lines.is_empty()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            pending.awaiting_written += 1;
            pending = self.written.wait_timeout(pending, left).map_or_else(|poisoned| poisoned.into_inner().0, |w| w.0);
            pending.awaiting_written -= 1;
        }
    }
}

/// Where the subscriber writes: one [`LineWriter`] per event.
#[derive(Debug, Clone)]
pub struct QueuedStderr {
    queue: Arc<Queue>,
}

impl QueuedStderr {
    /// Queues one whole line (the hand-written access line, `crate::access_line`).
    pub fn push_line(&self, line: &[u8]) {
        self.queue.push(line);
    }

    /// A writer without its thread: what it is given stays queued, for a test to read back.
    #[cfg(test)]
    pub fn held() -> QueuedStderr {
        QueuedStderr { queue: Arc::new(Queue::default()) }
    }

    /// The lines queued so far, as text.
    #[cfg(test)]
    pub fn queued(&self) -> String {
        String::from_utf8_lossy(&self.queue.lock().lines).into_owned()
    }
}

/// Writes out what is still queued when dropped (keep it until the process ends).
pub struct Flushed {
    queue: Arc<Queue>,
}

/// The writer and its flush guard; starts the writer thread. When the thread cannot start, lines
/// are written straight to stderr.
pub fn queued_stderr() -> (QueuedStderr, Flushed) {
    let queue = Arc::new(Queue::default());
    let writer = Arc::clone(&queue);
    let started = std::thread::Builder::new().name("log-writer".into()).spawn(move || writer.write_forever());
    if let Err(error) = started {
        eprintln!("cannot start the log writer thread ({error}): logging to stderr directly");
        queue.lock().direct = true;
    }
    (QueuedStderr { queue: Arc::clone(&queue) }, Flushed { queue })
}

impl Drop for Flushed {
    fn drop(&mut self) {
        self.queue.drain(Duration::from_secs(5));
    }
}

/// One event's line, queued as a whole when the subscriber drops it.
pub struct LineWriter {
    queue: Arc<Queue>,
    line: Vec<u8>,
}

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        self.queue.push(&self.line);
    }
}

impl<'a> MakeWriter<'a> for QueuedStderr {
    type Writer = LineWriter;

    fn make_writer(&'a self) -> LineWriter {
        LineWriter { queue: Arc::clone(&self.queue), line: Vec::with_capacity(256) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_queue_whole_and_in_order_from_many_threads() {
        let writer = QueuedStderr::held();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    for n in 0..100 {
                        let mut line = writer.make_writer();
                        let _ = write!(line, "thread {t} line {n}");
                        let _ = writeln!(line, " end");
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|thread| thread.join().unwrap_or_default());
        let text = writer.queued();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 400);
        for t in 0..4 {
            let own: Vec<String> = lines
                .iter()
                .filter(|line| line.starts_with(&format!("thread {t} ")))
                .map(|line| line.to_string())
                .collect();
            let expected: Vec<String> = (0..100).map(|n| format!("thread {t} line {n} end")).collect();
            assert_eq!(own, expected, "each line whole, each thread's in order");
        }
    }

    #[test]
    fn a_debug_view_counts_the_queued_bytes_without_showing_them() {
        let writer = QueuedStderr::held();
        writer.push_line(b"secret line\n");
        let shown = format!("{writer:?}");
        assert!(shown.contains("queued_bytes: 12") && !shown.contains("115"), "{shown}");
    }

    #[test]
    fn a_drain_waits_until_the_writer_took_everything() {
        let queue = Arc::new(Queue::default());
        queue.push(b"one\n");
        let writer = Arc::clone(&queue);
        std::thread::spawn(move || writer.write_forever());
        queue.drain(Duration::from_secs(60));
        let pending = queue.lock();
        assert!(pending.lines.is_empty() && !pending.writing);
    }
}
