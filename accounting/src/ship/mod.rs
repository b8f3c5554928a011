//! `accelfed ship`: the site's spool to the central repository over gRPC (TLS, bearer token).
//!
//! * `config.rs`: `[accounting.ship]`, the shipper's settings in the site's file.
//! * [`backoff`]: retry delays, exponential with jitter (pure).
//! * [`client`]: the TLS channel with the site's token (the only IO besides the spool).
//! * [`run`]: pages of pending records, oldest first, cut into batches sent in that order, a few
//!   on the wire at once (the spool work overlaps with the repository's); each is sent (and
//!   retried) until the repository answers, and its acknowledged records are marked in the spool in
//!   sending order. A site offline for days therefore catches up in order.
//! * [`retry`]: one call sent until answered or refused, with retries and, where several
//!   endpoints are listed, failover to the next.
//! * [`verify`]: the repository's per-month counts against the spool's; months that differ are
//!   re-sent (re-sending replaces, never adds).

mod acker;
mod backoff;
mod client;
mod config;
mod error;
mod retry;
mod run;
mod verify;

pub use backoff::{Backoff, delay};
pub use client::{Client, ClientSettings};
pub use config::ShipConfig;
pub use error::ShipError;
pub use run::{DEFAULT_IN_FLIGHT, Rejected, ShipOptions, ShipReport, ship};
pub use verify::{VerifyReport, months_to_resend, verify};
