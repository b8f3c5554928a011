//! The gate every accepted connection passes: how many connections a port, a client network and a
//! client address may hold, and, when a port or a network is full, which connection gives way to a
//! newcomer.
//!
//! Capping each address alone did not keep a port usable (issue #30): 16 addresses at 64 each
//! held all 512 places of a port for as long as they kept reconnecting, and a site got through 0
//! times in 16. So places are shared, not first come first served:
//!
//! * an address holds at most `max_connections_per_address`, a network (/24 of IPv4, /64 of IPv6)
//!   at most `max_connections_per_network`;
//! * when the port (or the newcomer's network) is full, the newcomer takes the place of the
//!   oldest connection of the network, then the address, holding the most, provided it holds none
//!   or at least two fewer than that one (so a crowd can only trade places among itself, and
//!   anyone holding less than the crowd gets in); connections with no request in flight give way
//!   first;
//! * connections that authenticated (a call or push with a site's token) never give way while
//!   there are at most `reserved_for_sites` of them: that share of the port belongs to sites.
//!
//! A connection that gives way is told through its [`Permit`] ([`Permit::poll_evicted`]) and
//! closed by the task that serves it; its place counts as free at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::task::AtomicWaker;

use super::limits::ConnectionLimits;
use super::requests::Requests;

/// A client network: the /24 of an IPv4 address, the /64 of an IPv6 one (an IPv4-mapped IPv6
/// address counts as its IPv4 address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    V4([u8; 3]),
    V6([u16; 4]),
}

impl Network {
    pub fn of(address: IpAddr) -> Self {
        match address {
            IpAddr::V4(v4) => {
                let [a, b, c, _] = v4.octets();
                Self::V4([a, b, c])
            }
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self::of(IpAddr::V4(v4)),
                None => {
                    let [a, b, c, d, ..] = v6.segments();
                    Self::V6([a, b, c, d])
                }
            },
        }
    }
}

/// What the gate and the connection's tasks share about one admitted connection.
#[derive(Debug)]
struct Slot {
    id: u64,
    address: IpAddr,
    network: Network,
    admitted: Instant,
    requests: Arc<Requests>,
    authenticated: AtomicBool,
    evicted: AtomicBool,
    waker: AtomicWaker,
}

/// Counts and places, in all, per network and per address.
#[derive(Debug, Default)]
struct Open {
    next_id: u64,
    slots: HashMap<u64, Arc<Slot>>,
    by_network: HashMap<Network, usize>,
    by_address: HashMap<IpAddr, usize>,
}

impl Open {
    fn count<K: std::hash::Hash + Eq>(map: &HashMap<K, usize>, key: &K) -> usize {
        map.get(key).copied().unwrap_or(0)
    }

    fn add(&mut self, slot: Arc<Slot>) {
        *self.by_network.entry(slot.network).or_insert(0) += 1;
        *self.by_address.entry(slot.address).or_insert(0) += 1;
        self.slots.insert(slot.id, slot);
    }

    /// Frees `id`'s place; `None` if it was freed already (evicted, then dropped).
    fn remove(&mut self, id: u64) -> Option<Arc<Slot>> {
        let slot = self.slots.remove(&id)?;
        fn less<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: K) {
            if let Some(count) = map.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    map.remove(&key);
                }
            }
        }
        less(&mut self.by_network, slot.network);
        less(&mut self.by_address, slot.address);
        Some(slot)
    }

    /// The connection that gives way first (within `network` when given): not protected, from the
    /// network then the address holding the most, idle before busy, oldest first.
    fn victim(&self, network: Option<Network>, reserved: usize) -> Option<Arc<Slot>> {
        let authenticated = self
            .slots
            .values()
            .filter(|slot| slot.authenticated.load(Ordering::Relaxed))
            .count();
        let protect = authenticated <= reserved;
        self.slots
            .values()
            .filter(|slot| network.is_none_or(|network| slot.network == network))
            .filter(|slot| !(protect && slot.authenticated.load(Ordering::Relaxed)))
            .max_by_key(|slot| {
                (
                    !slot.authenticated.load(Ordering::Relaxed),
                    Self::count(&self.by_network, &slot.network),
                    Self::count(&self.by_address, &slot.address),
                    slot.requests.quiet_since().is_some(),
                    std::cmp::Reverse(slot.admitted),
                )
            })
            .cloned()
    }
}

/// Counts open connections and decides who gets a place.
#[derive(Debug, Clone)]
pub struct Gate {
    limits: ConnectionLimits,
    open: Arc<Mutex<Open>>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The port holds `max_connections`, and no one holds more than the newcomer's network or
    /// address.
    Full,
    /// The client's network holds `max_connections_per_network`, and no address of it holds more
    /// than the newcomer's.
    NetworkFull,
    /// The client's address holds `max_connections_per_address`.
    AddressFull,
}

/// A connection admitted, and whom it displaced (already told to close).
#[derive(Debug)]
pub struct Admission {
    pub permit: Permit,
    pub displaced: Option<IpAddr>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Permit {
    slot: Arc<Slot>,
    open: Arc<Mutex<Open>>,
}

impl Permit {
    /// The connection's request count (what tells idle from busy).
    pub fn requests(&self) -> Arc<Requests> {
        self.slot.requests.clone()
    }

    /// A handle the server uses to mark the connection as a site's.
    pub fn standing(&self) -> Standing {
        Standing(self.slot.clone())
    }

    /// `Ready` once the connection was told to give way to another; registers the waker otherwise.
    pub fn poll_evicted(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.slot.evicted.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.slot.waker.register(cx.waker());
        if self.slot.evicted.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Completes once the connection was told to give way.
    pub async fn evicted(&self) {
        std::future::poll_fn(|cx| self.poll_evicted(cx)).await;
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        lock(&self.open).remove(self.slot.id);
    }
}

/// Marks a connection as authenticated: a call or push on it carried a site's token.
#[derive(Debug, Clone)]
pub struct Standing(Arc<Slot>);

impl Standing {
    pub fn authenticated(&self) {
        self.0.authenticated.store(true, Ordering::Relaxed);
    }
}

/// Whether a newcomer whose address (or network) holds `newcomer` connections may take the place
/// of one whose holds `holder`: when it holds none (more clients than places take turns), or
/// when the trade leaves the two closer (a balanced crowd stays put instead of trading places
/// for ever).
fn fewer(newcomer: usize, holder: usize) -> bool {
    (newcomer == 0 && holder > 0) || newcomer + 1 < holder
}

/// The counts stay consistent even if a holder panicked: every update is done under the lock
/// before anything can fail.
fn lock(open: &Mutex<Open>) -> std::sync::MutexGuard<'_, Open> {
    open.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Gate {
    pub fn new(limits: ConnectionLimits) -> Self {
        Self {
            limits,
            open: Arc::default(),
        }
    }

    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    /// A place for a connection from `address` (taking one from a heavier holder when the port
    /// or the network is full), or why there is none.
    pub fn admit(&self, address: IpAddr) -> Result<Admission, Refusal> {
        let limits = &self.limits;
        let network = Network::of(address);
        let mut open = lock(&self.open);
        let at_address = Open::count(&open.by_address, &address);
        if at_address >= limits.max_connections_per_address {
            return Err(Refusal::AddressFull);
        }
        let in_network = Open::count(&open.by_network, &network);
        let victim = if in_network >= limits.max_connections_per_network {
            // Only an address of the same network holding more may give way.
            let victim = open
                .victim(Some(network), limits.reserved_for_sites)
                .filter(|victim| fewer(at_address, Open::count(&open.by_address, &victim.address)));
            Some(victim.ok_or(Refusal::NetworkFull)?)
        } else if open.slots.len() >= limits.max_connections {
            let victim = open
                .victim(None, limits.reserved_for_sites)
                .filter(|victim| {
                    if victim.network == network {
                        fewer(at_address, Open::count(&open.by_address, &victim.address))
                    } else {
                        fewer(in_network, Open::count(&open.by_network, &victim.network))
                    }
                });
            Some(victim.ok_or(Refusal::Full)?)
        } else {
            None
        };
        let displaced = victim.and_then(|victim| {
            let slot = open.remove(victim.id)?;
            slot.evicted.store(true, Ordering::Release);
            slot.waker.wake();
            Some(slot.address)
        });
        open.next_id += 1;
        let slot = Arc::new(Slot {
            id: open.next_id,
            address,
            network,
            admitted: Instant::now(),
            requests: Requests::new(),
            authenticated: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        open.add(slot.clone());
        Ok(Admission {
            permit: Permit {
                slot,
                open: self.open.clone(),
            },
            displaced,
        })
    }

    /// Connections open now (those told to give way not counted).
    #[cfg(test)]
    pub fn open(&self) -> usize {
        lock(&self.open).slots.len()
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
