//! `[listen.limits]`: how many connections a port, a client network and a client address may hold,
//! the share of a port kept for sites, and the handshake and idle timeouts. The [`super::gate`]
//! enforces the counts.

use std::time::Duration;

use serde::Deserialize;

/// `[listen.limits]`, per listener (the gRPC, HTTPS and metrics ports each have their own count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConnectionLimits {
    /// Connections open at once on one port. A newcomer past it takes the place of a connection
    /// from the network or address holding the most, if it holds fewer; else it is closed.
    pub max_connections: usize,
    /// Connections open at once from one client address on one port.
    pub max_connections_per_address: usize,
    /// Connections open at once from one client network (an IPv4 /24, an IPv6 /64) on one port;
    /// past it a newcomer takes the place of an address of its network holding more.
    pub max_connections_per_network: usize,
    /// Connections that authenticated (a call or push with a site's token) that never give way to
    /// a newcomer: the share of each port kept for sites.
    pub reserved_for_sites: usize,
    /// Seconds a client may take to finish the TLS handshake.
    pub handshake_timeout_s: u64,
    /// Seconds a connection may stay open with nothing read or written; also bounds how long a
    /// client may take to send a request's headers.
    pub idle_timeout_s: u64,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            // Three ports of 1,024 and the process's own files (crate::descriptors) need 3,328
            // descriptors: the packaged unit's LimitNOFILE of 8,192 holds them with room, and
            // `serve` refuses to start under a limit that does not.
            max_connections: 1024,
            max_connections_per_address: 64,
            max_connections_per_network: 256,
            reserved_for_sites: 256,
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

    /// What makes the limits unusable, naming the key: a zero. (A `reserved_for_sites` at or past
    /// `max_connections` keeps every site's connection.)
    pub fn problem(&self) -> Option<String> {
        if self.max_connections == 0 {
            return Some("listen.limits.max_connections: must be at least 1".to_owned());
        }
        if self.max_connections_per_address == 0 || self.max_connections_per_network == 0 {
            return Some(
                "listen.limits: max_connections_per_address and max_connections_per_network must \
                 be at least 1"
                    .to_owned(),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_are_named() {
        assert_eq!(ConnectionLimits::default().problem(), None);
        let zero = ConnectionLimits {
            max_connections: 0,
            ..ConnectionLimits::default()
        };
        assert!(zero.problem().unwrap().contains("max_connections"));
    }
}
