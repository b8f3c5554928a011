//! Where a central service under test listens, and the URLs tests reach it by: the same for the
//! service in-process ([`super::Server`]) and as a process ([`super::ServeProcess`]), which both
//! dereference to it.

use std::net::SocketAddr;

/// The listeners' addresses (port 0 resolved).
#[derive(Debug, Clone, Copy)]
pub struct Listening {
    pub grpc: SocketAddr,
    pub metrics: Option<SocketAddr>,
    pub https: Option<SocketAddr>,
}

impl Listening {
    /// The gRPC endpoint as sites name it (`https://localhost:<port>`).
    pub fn endpoint(&self) -> String {
        format!("https://localhost:{}", self.grpc.port())
    }

    /// The registry's base URL (`https://localhost:<port>`); panics without `[listen] https`.
    pub fn url(&self) -> String {
        let https = self.https.expect("[listen] https in central.toml");
        format!("https://localhost:{}", https.port())
    }

    /// `GET /metrics`; panics without `[listen] metrics`.
    pub fn metrics(&self) -> String {
        super::metrics::get(self.metrics.expect("[listen] metrics in central.toml"))
    }
}
