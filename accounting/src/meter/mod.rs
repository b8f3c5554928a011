//! Metering: observations of VMs, pods and jobs -> usage records per calendar month (UTC). Pure:
//! the providers do the IO and hand over observations, the spool stores what comes out.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod error;
mod manual;
mod records;
mod split;

pub use error::MeterError;
pub use manual::{ManualError, parse_manual, read_manual};
pub use records::records_for;
pub use split::{MonthPiece, split_months};
