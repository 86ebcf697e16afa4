//! Runs the real `registry serve` binary on a data directory: spawn, wait for the first 200,
//! read its memory from `/proc/<pid>/status`, stop it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer its first 200 before the run is abandoned.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// A running server process, killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    /// Spawn → first `200` on `GET /subjects?limit=1`.
    pub ready: Duration,
}

/// The CPU time (user and system) process `pid` has used so far, from `/proc/{pid}/stat`; `None`
/// where there is no such file.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command (which may hold spaces and ends at the last `)`) start at the
    // third; `utime` and `stime` are the 14th and 15th, in USER_HZ (100 a second on Linux).
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let ticks = |index: usize| fields.get(index).and_then(|field| field.parse::<u64>().ok());
    Some(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

/// Resident memory of a process, in KiB.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss_kib: u64,
    /// `VmHWM`: the peak resident size since the process started.
    pub peak_kib: u64,
}

impl Server {
    /// Spawns `binary serve` on `dir` (embedded store, 127.0.0.1, a free port) with `env` added,
    /// and waits until it answers `GET /subjects?limit=1` with 200. It logs warnings to this
    /// process's stderr; with a `RUST_LOG` in `env`, it logs at that level to `/dev/null` (the log
    /// lines are made and written, nobody reads them).
    pub async fn start(binary: &Path, dir: &Path, env: &[(&str, &str)]) -> Result<Server, String> {
        let port = free_port()?;
        let started = Instant::now();
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .env("PORT", port.to_string())
            .env("REGISTRY_BIND", "127.0.0.1")
            .env("REGISTRY_BACKEND", "embedded")
            .env("REGISTRY_DATA_DIR", dir)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (name, value) in env {
            command.env(name, value);
        }
        if env.iter().any(|(name, _)| *name == "RUST_LOG") {
            command.stderr(Stdio::null());
        }
        let child = command.spawn().map_err(|error| format!("spawn {}: {error}", binary.display()))?;
        let mut server = Server { child, port, ready: Duration::ZERO };
        loop {
            if started.elapsed() > READY_DEADLINE {
                return Err(format!("server on {} not ready after {READY_DEADLINE:?}", dir.display()));
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("server exited early: {status}"));
            }
            // Probed from a blocking thread with a 100 µs pause: tokio's timer has a 1 ms
            // resolution, which at a ~5 ms start-up would blur the ready time by a fifth.
            let answered = tokio::task::spawn_blocking(move || probe_until(port, Duration::from_millis(50)))
                .await
                .unwrap_or(false);
            if answered {
                server.ready = started.elapsed();
                return Ok(server);
            }
        }
    }

    /// The process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident memory now and at its peak.
    pub fn memory(&self) -> Result<Memory, String> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).map_err(|error| format!("{path}: {error}"))?;
        let field = |name: &str| -> u64 {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kib| kib.parse().ok())
                .unwrap_or(0)
        };
        Ok(Memory { rss_kib: field("VmRSS:"), peak_kib: field("VmHWM:") })
    }

    /// Resets the peak (`VmHWM`) to the current resident size (Linux `clear_refs` 5), so that the next
    /// [`Server::memory`] shows the peak of what ran in between.
    pub fn reset_peak(&self) -> Result<(), String> {
        let path = format!("/proc/{}/clear_refs", self.child.id());
        std::fs::write(&path, "5").map_err(|error| format!("{path}: {error}"))
    }

    /// Stops the server (SIGKILL: nothing to flush, every acknowledged write is already durable).
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Probes `GET /subjects?limit=1` every 100 µs for up to `window`; whether it answered 200.
fn probe_until(port: u16, window: Duration) -> bool {
    let until = Instant::now() + window;
    while Instant::now() < until {
        if probe(port) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    false
}

/// One `GET /subjects?limit=1` on a fresh connection; whether the answer is a 200.
fn probe(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = b"GET /subjects?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut status = [0u8; 12];
    stream.write_all(request).is_ok() && stream.read_exact(&mut status).is_ok() && &status[9..12] == b"200"
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|error| format!("bind: {error}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|error| error.to_string())
}
