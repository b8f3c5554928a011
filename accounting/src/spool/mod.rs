//! The site spool: a durable queue of usage records between the meter and the shipper (house-style
//! rule 8). Records are keyed by their deterministic id, so re-metering replaces and never adds; a
//! record leaves the queue only when the repository acknowledged its latest version.
//!
//! [`Spool`] does the IO (SQLite); [`plan`] decides what to send, purely.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod agent_figures;
mod changes;
mod error;
mod held;
mod open;
mod plan;
mod reads;
mod schema;
mod store;
mod write;

pub use changes::ChangedRecord;
pub use error::SpoolError;
pub use held::{HeldRecord, HoldSummary, Holds, Release, Released};
pub use plan::{ShipLimits, plan};
pub use reads::MonthCount;
pub use store::{Ack, PendingRecord, Spool, StoredRecord};
pub use write::RunSummary;

#[cfg(test)]
mod tests;
