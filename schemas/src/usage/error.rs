//! Why a usage record was refused. Every error names the record (its id and a readable identity)
//! and the APEL field at fault, so a site admin can find the VM or job and a central operator can
//! match the complaint to what the site sent.

use chrono::{DateTime, Utc};

use super::id::RecordId;
use crate::names::NameError;

/// A refused record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("usage record {id} ({identity}): {problem}")]
pub struct UsageError {
    pub id: RecordId,
    /// The identity in words (site, kind, resource, model, month).
    pub identity: String,
    pub problem: Problem,
}

/// What is wrong with a record, by field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("MeasurementMonth must be 1..=12, got {0}")]
    Month(u32),
    #[error("MeasurementYear must be {min}..={max}, got {0}", min = super::Month::MIN_YEAR, max = super::Month::MAX_YEAR)]
    Year(i32),
    #[error("{field}: {source}")]
    Name {
        field: &'static str,
        source: NameError,
    },
    #[error("Count must be a finite number above zero, got {0}")]
    Count(f64),
    #[error(
        "Count {0} is below the smallest share a record may carry ({min} GPU)",
        min = super::UsageRecord::MIN_COUNT
    )]
    CountBelowShare(f64),
    #[error(
        "installed (physical GPUs of the model at the site) must be a finite number, at least zero, got {0}"
    )]
    Installed(f64),
    #[error("sharing: {0}")]
    Sharing(String),
    #[error("Benchmark must be a finite, non-negative number, got {0}")]
    Benchmark(f64),
    #[error("EnergyWh must be a finite, non-negative number of watt-hours, got {0}")]
    Energy(f64),
    #[error("AvailableDuration {seconds} s is longer than {month} ({month_seconds} s)")]
    AvailableTooLong {
        seconds: u64,
        month: String,
        month_seconds: u64,
    },
    #[error("ActiveDuration {active} s is longer than AvailableDuration {available} s")]
    ActiveTooLong { active: u64, available: u64 },
    #[error(
        "IdleDuration {idle} s{} is longer than AvailableDuration {available} s",
        active.map(|a| format!(" with ActiveDuration {a} s")).unwrap_or_default()
    )]
    IdleTooLong {
        idle: u64,
        active: Option<u64>,
        available: u64,
    },
    #[error("MeasurementYear/MeasurementMonth {month} is in the future (now {now})")]
    FutureMonth { month: String, now: DateTime<Utc> },
    #[error("first_seen {first} is after last_seen {last}")]
    SeenOrder {
        first: DateTime<Utc>,
        last: DateTime<Utc>,
    },
    #[error("first_seen {first} .. last_seen {last} leaves the record's month {month}")]
    SeenOutsideMonth {
        first: DateTime<Utc>,
        last: DateTime<Utc>,
        month: String,
    },
}
