//! What a site submits: records already decoded, or messages that could not be. Keeping the
//! undecodable ones in the batch keeps every outcome at its record's position, so a site learns
//! which of its records were refused and why. Received records become submissions in one place,
//! [`super::encoded::decode_submission`], so every reason code comes from the same mapping.

use accelfed_schemas::usage::UsageRecord;

use super::outcome::Rejection;

/// One submitted record.
#[derive(Debug, Clone, PartialEq)]
pub enum Submission {
    /// A decoded record (boxed: records are large and batches move them around).
    Record(Box<UsageRecord>),
    /// A message that is not a usage record, with the reason.
    Invalid(Rejection),
}

impl From<UsageRecord> for Submission {
    fn from(record: UsageRecord) -> Self {
        Self::Record(Box::new(record))
    }
}
