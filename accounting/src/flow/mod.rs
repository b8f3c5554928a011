//! The site's accounting flows as library calls: each takes a plan (what to do, decided by the
//! caller from its configuration and flags) and returns a report (what happened), and the binary
//! only maps the report to log lines and an exit status.
//!
//! [`meter_site`] is `accelfed meter`: every backend's usage and installed GPUs in one pass
//! (`accelfed_provider::observe`), the manual-usage file, the node agents' figures, the monthly records and their capacity
//! check, the APEL safety check, retractions, and one spool transaction that holds back the
//! records the capacity check doubts.

pub mod agents;
mod hold;
mod meter;
mod write;

pub use hold::doubted;
pub use meter::{AgentsRead, ManualRead, MeterPlan, MeterReport, Written, meter_site};
