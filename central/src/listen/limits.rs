//! Connection limits and the gate that enforces them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;

/// `[listen]` limits, per listener (the gRPC, HTTPS and metrics ports each have their own count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConnectionLimits {
    /// Connections open at once on one port; more are closed as they arrive.
    pub max_connections: usize,
    /// Connections open at once from one client address on one port.
    pub max_connections_per_address: usize,
    /// Seconds a client may take to finish the TLS handshake.
    pub handshake_timeout_s: u64,
    /// Seconds a connection may stay open with nothing read or written; also bounds how long a
    /// client may take to send a request's headers.
    pub idle_timeout_s: u64,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            // Below systemd's default soft limit of 1,024 descriptors per process with room for
            // the database, the log and the other port (the packaged unit raises LimitNOFILE).
            max_connections: 512,
            max_connections_per_address: 64,
            handshake_timeout_s: 10,
            idle_timeout_s: 60,
        }
    }
}

impl ConnectionLimits {
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_secs(self.handshake_timeout_s.max(1))
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_s.max(1))
    }
}

/// Counts open connections, in all and per client address.
#[derive(Debug, Clone)]
pub struct Gate {
    limits: ConnectionLimits,
    open: Arc<Mutex<Open>>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The port holds `max_connections`.
    Full,
    /// The client's address holds `max_connections_per_address`.
    AddressFull,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Permit {
    address: IpAddr,
    open: Arc<Mutex<Open>>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.by_address.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

/// The counts stay consistent even if a holder panicked: every update is one statement.
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

    /// A place for a connection from `address`, or why there is none.
    pub fn admit(&self, address: IpAddr) -> Result<Permit, Refusal> {
        let mut open = lock(&self.open);
        if open.total >= self.limits.max_connections {
            return Err(Refusal::Full);
        }
        let from_address = open.by_address.entry(address).or_insert(0);
        if *from_address >= self.limits.max_connections_per_address {
            return Err(Refusal::AddressFull);
        }
        *from_address += 1;
        open.total += 1;
        Ok(Permit {
            address,
            open: self.open.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        lock(&self.open).total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_bounds_all_connections_and_each_address_and_frees_places_on_drop() {
        let gate = Gate::new(ConnectionLimits {
            max_connections: 3,
            max_connections_per_address: 2,
            ..ConnectionLimits::default()
        });
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let first = gate.admit(a).unwrap();
        let _second = gate.admit(a).unwrap();
        assert_eq!(gate.admit(a).unwrap_err(), Refusal::AddressFull);
        let _third = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).unwrap_err(), Refusal::Full);
        drop(first);
        assert_eq!(gate.open(), 2);
        assert!(gate.admit(a).is_ok());
    }
}
