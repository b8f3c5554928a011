//! Sync counts: how many records the repository holds per site and month, as APEL's sync records
//! tell a site. A site compares them with its own counts and re-sends the months that differ;
//! re-sending is safe because a record with a known id replaces, never adds.

use serde::Serialize;

use super::period::Period;

/// The number of records of one site in one month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyncCount {
    pub period: Period,
    pub records: i64,
}
