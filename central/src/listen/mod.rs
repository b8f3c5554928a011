//! Accepting connections without letting anyone exhaust the service: how many connections may be
//! open at once (in all and per client address), how long a TLS handshake and an idle connection
//! may take, and what happens at the file-descriptor limit. Both the gRPC ingest and the registry's
//! HTTPS API accept through here, so both ports follow the same rules.
//!
//! * [`limits`]: the settings (`[listen]` in `central.toml`) and the [`Gate`] that counts open
//!   connections.
//! * [`idle`]: a stream that fails once nothing has moved on it for the idle timeout, so idle and
//!   half-sent connections are closed.
//! * [`accept`]: the accept loop: sheds connections past the limits, backs off at the
//!   descriptor limit (logging once per interval, never in a loop), and hands on connections whose
//!   TLS handshake finished in time.
//! * [`tls`]: the server's TLS configuration.

pub mod accept;
pub mod idle;
pub mod limits;
pub mod tls;

pub use accept::{Accepted, Incoming, incoming};
pub use limits::{ConnectionLimits, Gate};
