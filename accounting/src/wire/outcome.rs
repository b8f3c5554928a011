//! What happened to each record of a batch.

use std::fmt;

use accelfed_schemas::usage::{Problem, UsageError};
use serde::Serialize;

/// The result for one record of an ingested batch, in the batch's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// A record the repository did not have; now stored and counted.
    Stored,
    /// A new version of a stored record; the old one's contribution was subtracted from the
    /// summaries and the new one's added.
    Replaced,
    /// Identical to the stored record; nothing changed.
    Unchanged,
    /// Not stored, for this reason; the site may fix and re-send it.
    Rejected { reason: Rejection },
}

impl Outcome {
    /// Whether the repository now holds this record, so the site may drop it from its spool.
    pub fn is_acknowledged(&self) -> bool {
        !matches!(self, Self::Rejected { .. })
    }
}

/// Why one record was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rejection {
    /// The message could not be decoded into a usage record.
    Malformed { detail: String },
    /// The record names a site other than the one that authenticated.
    WrongSite {
        record: String,
        authenticated: String,
    },
    /// MeasurementMonth is not 1..=12, or the year is out of range.
    BadMonth { detail: String },
    /// The record's month, or a time in it, lies in the future.
    Future { detail: String },
    /// A duration is negative or longer than the month allows.
    BadDuration { detail: String },
    /// Count is NaN, infinite, negative, or too large to account.
    BadCount { detail: String },
    /// A field is missing, empty or inconsistent.
    BadField { detail: String },
    /// The batch held more records than the repository takes at once; this one was past the limit.
    BatchTooLarge { limit: usize },
    /// The repository could not decide; sending the record again is safe.
    Internal { detail: String },
    /// The same record id appeared again later in the batch; the later copy was used.
    Duplicate { kept: usize },
}

/// A record's own validation error as the reason sent back: one mapping, so a bad month or year
/// is `bad_month` whether the repository's screen or the protobuf decoding finds it; the detail
/// keeps the record's id.
impl From<UsageError> for Rejection {
    fn from(error: UsageError) -> Self {
        let detail = error.to_string();
        match error.problem {
            Problem::Month(_) | Problem::Year(_) => Self::BadMonth { detail },
            Problem::Count(_) | Problem::CountBelowShare(_) => Self::BadCount { detail },
            Problem::AvailableTooLong { .. }
            | Problem::ActiveTooLong { .. }
            | Problem::IdleTooLong { .. } => Self::BadDuration { detail },
            Problem::FutureMonth { .. } => Self::Future { detail },
            Problem::Name { .. }
            | Problem::Benchmark(_)
            | Problem::SeenOrder { .. }
            | Problem::SeenOutsideMonth { .. }
            | Problem::Installed(_)
            | Problem::Energy(_)
            | Problem::Sharing(_) => Self::BadField { detail },
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed { detail } => write!(f, "malformed record: {detail}"),
            Self::WrongSite {
                record,
                authenticated,
            } => write!(
                f,
                "record of site {record:?} sent by site {authenticated:?}; a site may only send its own records"
            ),
            Self::BadMonth { detail } => write!(f, "bad month: {detail}"),
            Self::Future { detail } => write!(f, "in the future: {detail}"),
            Self::BadDuration { detail } => write!(f, "bad duration: {detail}"),
            Self::BadCount { detail } => write!(f, "bad GPU count: {detail}"),
            Self::BadField { detail } => write!(f, "bad field: {detail}"),
            Self::Internal { detail } => write!(f, "internal error: {detail}"),
            Self::BatchTooLarge { limit } => write!(
                f,
                "batch larger than {limit} records; re-send this record in a later batch"
            ),
            Self::Duplicate { kept } => write!(
                f,
                "the same record id appears again at position {kept} of the batch; that copy was used"
            ),
        }
    }
}

/// The outcomes of one batch, one per submitted record, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct IngestReport {
    pub outcomes: Vec<Outcome>,
}

impl IngestReport {
    /// How many records ended each way: (stored, replaced, unchanged, rejected).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let mut counts = (0, 0, 0, 0);
        for outcome in &self.outcomes {
            match outcome {
                Outcome::Stored => counts.0 += 1,
                Outcome::Replaced => counts.1 += 1,
                Outcome::Unchanged => counts.2 += 1,
                Outcome::Rejected { .. } => counts.3 += 1,
            }
        }
        counts
    }
}
