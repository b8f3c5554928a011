//! Accepting connections without letting anyone exhaust the service: how many connections may be
//! open at once (in all and per client address), how long a TLS handshake and an idle connection
//! may take, and what happens at the file-descriptor limit. The gRPC ingest, the registry's HTTPS
//! API and the plain-HTTP metrics endpoint all accept through here, so every port follows the
//! same rules.
//!
//! * [`limits`]: the settings (`[listen.limits]` in `central.toml`).
//! * [`gate`]: counts open connections per port, network and address, and shares a full port
//!   fairly (a newcomer takes the place of the heaviest holder's oldest connection; sites keep a
//!   reserved share).
//! * [`frames`]: HTTP/2 control frames (PING, SETTINGS) counted and bounded per connection.
//! * [`idle`]: a stream that fails once nothing has moved on it for the idle timeout, so idle and
//!   half-sent connections are closed.
//! * [`requests`]: idleness counted in calls for HTTP/2, where PINGs move bytes without a call.
//! * [`accept`]: the accept loop: sheds connections past the limits, backs off at the
//!   descriptor limit (logging once per interval, never in a loop), and hands on connections whose
//!   TLS handshake (on a TLS port) finished in time.
//! * [`connection`]: one accepted connection, as the HTTP servers read and write it.
//! * [`http1`]: an axum router served over HTTP/1.1 with a header-read timeout.
//! * [`tls`]: the server's TLS configuration.

pub mod accept;
pub mod connection;
pub mod frames;
pub mod gate;
pub mod http1;
pub mod idle;
pub mod limits;
pub mod requests;
pub mod tls;

pub use accept::{Idle, Incoming, Port, Security, accept, incoming};
pub use gate::Gate;
pub use limits::ConnectionLimits;
