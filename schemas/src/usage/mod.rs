//! GPU usage accounting records: EGI's APEL accelerator record v0.1, one per VM, pod or job per GPU
//! model per calendar month (UTC), with a deterministic id so that re-sending replaces.
//!
//! * [`UsageRecord`]: the record, its validation and serde form.
//! * [`RecordId`]: the id derived from the identity (site, kind, resource, model, year, month).
//! * [`Month`]: calendar months, their bounds and lengths.
//! * [`Observation`]: what a meter saw, before it is cut into months.
//! * [`batch`]: packing records into messages by count and bytes (APEL export, shipping).

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod batch;
mod error;
mod id;
mod kind;
mod month;
mod observation;
mod raw;
mod record;

pub use error::{Problem, UsageError};
pub use id::{Identity, RecordId, RecordIdError};
pub use kind::{RecordType, Source};
pub use month::{Month, MonthError};
pub use observation::Observation;
pub use raw::{RawBenchmark, RawRecord};
pub use record::{Benchmark, UsageRecord};

#[cfg(any(test, feature = "test-support"))]
pub mod sample;

#[cfg(test)]
mod tests;
