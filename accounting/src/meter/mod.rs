//! Metering: observations of VMs, pods and jobs -> usage records per calendar month (UTC). Pure:
//! the providers do the IO and hand over observations, the spool stores what comes out.
//! [`meter`] is the whole way from a run's observations to the records it writes.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod agents;
mod capacity;
mod error;
mod manual;
mod merge;
mod pipeline;
mod records;
mod retract;
mod split;

#[cfg(test)]
mod tests;

pub use agents::{AgentFigure, AgentUsage, MonthCounters, holders_of};
pub use capacity::{Installed, Overrun, check_capacity};
pub use error::MeterError;
pub use manual::{ManualError, ManualUsage, parse_manual, parse_manual_bytes, read_manual};
pub use merge::{Capped, merge_periods};
pub use pipeline::{Metered, meter};
pub use records::records_for;
pub use retract::{MeteredResources, retractions};
pub use split::{MonthPiece, split_months};
