//! Which connections `registry serve` admits and which one gives its place up: at most
//! `max_per_peer` open connections per client address (an IPv6 client's /64, so one host cannot
//! take every place), and, when every place is taken, the open connection that has waited longest
//! for a request (idle between requests) or been stalled longest (silent since accepted, trickling
//! a request head, or not reading its answer) is evicted for the newcomer. A connection busy with a
//! request that arrives and is answered at pace is never evicted.
//!
//! A stalled connection is evicted only once it has been stalled for a grace ([`SILENT_GRACE`] when
//! serving): a client that just connected has its request on the way, a head may take two packets,
//! and a reader may be a moment behind; closing under them would lose their request.

use super::connection::Clock;
use registry_http::auth::client_address;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use tokio::time::Instant;

/// How long a connection must have been stalled (silent since accepted, receiving a head, or not
/// reading its answer) before it may be evicted.
pub const SILENT_GRACE: Duration = Duration::from_secs(1);

/// The open connections by client address, and their clocks.
#[derive(Debug)]
pub struct Admission {
    max_per_peer: u32,
    silent_grace: Duration,
    state: Mutex<Open>,
    turned_idle: Arc<IdleSignal>,
}

/// Tells the listener that a connection turned idle (an eviction candidate), only while it waits
/// for one (every place taken): a request's end then costs one atomic load, not a lock of a
/// process-wide `Notify`.
#[derive(Debug, Default)]
pub struct IdleSignal {
    notify: Notify,
    /// The listener waits for a connection to turn idle.
    listening: AtomicBool,
}

impl IdleSignal {
    /// A connection turned idle (after its phase moved, so a listener that starts listening after
    /// this load finds it idle when it looks for a connection to evict).
    pub fn turned_idle(&self) {
        if self.listening.load(Ordering::SeqCst) {
            self.notify.notify_waiters();
        }
    }

    /// The listener waits from now on; the future completes at the next [`IdleSignal::turned_idle`]
    /// once enabled (enable it before looking for a connection to evict).
    pub fn listen(&self) -> Notified<'_> {
        self.listening.store(true, Ordering::SeqCst);
        self.notify.notified()
    }

    /// The listener has its place: connections need not tell it any more.
    pub fn stop_listening(&self) {
        self.listening.store(false, Ordering::SeqCst);
    }
}

#[derive(Debug, Default)]
struct Open {
    per_peer: HashMap<IpAddr, u32>,
    clocks: HashMap<u64, Arc<Clock>>,
    next: u64,
}

/// One admitted connection; dropping it gives its share of its address back.
#[derive(Debug)]
pub struct Admitted {
    admission: Arc<Admission>,
    peer: IpAddr,
    id: u64,
}

impl Admission {
    /// Admits at most `max_per_peer` connections per client address; evicts silent connections once
    /// silent for `silent_grace`.
    pub fn new(max_per_peer: u32, silent_grace: Duration) -> Arc<Admission> {
        let turned_idle = Arc::new(IdleSignal::default());
        Arc::new(Admission { max_per_peer, silent_grace, state: Mutex::default(), turned_idle })
    }

    /// Told whenever an open connection turns idle (an eviction candidate) while the listener listens.
    pub fn turned_idle(&self) -> Arc<IdleSignal> {
        Arc::clone(&self.turned_idle)
    }

    /// Asks every open connection to close once its request in flight is answered (the server stops).
    pub fn stop_all(&self) {
        let open = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        open.clocks.values().for_each(|clock| clock.stop());
    }

    /// Counts a connection from `peer`; `None` when that address already holds its most.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let peer = client_address(peer);
        let mut open = self.state.lock().ok()?;
        let count = open.per_peer.entry(peer).or_default();
        if *count >= self.max_per_peer {
            return None;
        }
        *count += 1;
        open.next += 1;
        Some(Admitted { admission: Arc::clone(self), peer, id: open.next })
    }

    /// Evicts the connection that has waited longest for a request or been stalled longest (stalled
    /// ones once past the grace); whether one was.
    pub fn evict_one(&self) -> bool {
        let Ok(open) = self.state.lock() else { return false };
        let now = Instant::now();
        let mut candidates: Vec<(Instant, &Arc<Clock>)> = open
            .clocks
            .values()
            .filter_map(|clock| clock.waiting().map(|waiting| (waiting, clock)))
            .filter(|(waiting, _)| !waiting.stalled || now.duration_since(waiting.since) >= self.silent_grace)
            .map(|(waiting, clock)| (waiting.since, clock))
            .collect();
        candidates.sort_by_key(|(since, _)| *since);
        candidates.into_iter().any(|(_, clock)| clock.evict())
    }
}

impl Admitted {
    /// Makes the connection's `clock` visible for eviction.
    pub fn track(&self, clock: Arc<Clock>) {
        if let Ok(mut open) = self.admission.state.lock() {
            open.clocks.insert(self.id, clock);
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Ok(mut open) = self.admission.state.lock() {
            open.clocks.remove(&self.id);
            if let Some(count) = open.per_peer.get_mut(&self.peer) {
                *count -= 1;
                if *count == 0 {
                    open.per_peer.remove(&self.peer);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn addresses_count_per_ipv4_address_and_per_ipv6_64() {
        assert_eq!(client_address(ip("10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(client_address(ip("::ffff:10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(client_address(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(client_address(ip("2001:db8:1:2:ffff::9")), client_address(ip("2001:db8:1:2::7")));
        assert_ne!(client_address(ip("2001:db8:1:3::1")), client_address(ip("2001:db8:1:2::1")));
    }

    #[test]
    fn an_address_holds_at_most_its_share_until_one_closes() {
        let admission = Admission::new(2, SILENT_GRACE);
        let first = admission.admit(ip("127.0.0.1"));
        let second = admission.admit(ip("127.0.0.1"));
        assert!(first.is_some() && second.is_some());
        assert!(admission.admit(ip("127.0.0.1")).is_none(), "a third from the same address");
        assert!(admission.admit(ip("127.0.0.2")).is_some(), "another address has its own share");
        drop(first);
        assert!(admission.admit(ip("127.0.0.1")).is_some(), "a closed connection gives its share back");
    }

    /// A tracked connection from 127.0.0.1 and its clock.
    fn open(admission: &Arc<Admission>) -> (Option<Admitted>, Arc<Clock>) {
        let clock = Arc::new(Clock::new(admission.turned_idle()));
        let admitted = admission.admit(ip("127.0.0.1"));
        admitted.iter().for_each(|a| a.track(Arc::clone(&clock)));
        (admitted, clock)
    }

    #[tokio::test]
    async fn stalled_connections_are_evicted_after_the_grace() {
        let patient = Admission::new(10, Duration::from_secs(3600));
        let (_kept, silent) = open(&patient);
        assert!(!patient.evict_one(), "a connection silent for less than the grace stays");
        assert!(silent.waiting().is_some());

        let prompt = Admission::new(10, Duration::ZERO);
        let (_receiving, receiving) = open(&prompt);
        receiving.received(10);
        assert!(prompt.evict_one(), "a connection receiving a head past the grace is stalled");
        assert!(receiving.waiting().is_none(), "the head receiving one was evicted");
        let patient_head = Admission::new(10, Duration::from_secs(3600));
        let (_arriving, arriving) = open(&patient_head);
        arriving.received(10);
        assert!(!patient_head.evict_one(), "a head arriving within the grace stays");
        let (_silent, silent) = open(&prompt);
        assert!(prompt.evict_one(), "silent past the grace");
        assert!(silent.waiting().is_none(), "the silent one was evicted");
        assert!(!prompt.evict_one(), "nothing else is waiting");
    }
}
