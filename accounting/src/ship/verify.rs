//! `ship --verify`: compare the repository's per-month counts (APEL's sync records) with the
//! spool's and reopen the months where the repository holds fewer records, so the next ship
//! re-sends them. Re-sending is safe: a known id replaces, never adds.

use std::collections::BTreeMap;

use accelfed_schemas::usage::Month;

use super::client::{Client, describe, retryable};
use super::error::ShipError;
use super::retry::refusal;
use crate::spool::{MonthCount, Spool};

/// What verification found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// (month, spool count, repository count) of each month re-sent.
    pub resent: Vec<(Month, u64, u64)>,
    /// Records made pending again.
    pub reopened: usize,
}

/// Pure: the months whose repository count is below the spool's, with both counts. A month the
/// repository has more records of (records pruned from the spool) needs nothing.
pub fn months_to_resend(
    spool: &[MonthCount],
    repository: &[(Month, u64)],
) -> Vec<(Month, u64, u64)> {
    let held: BTreeMap<Month, u64> = repository.iter().copied().collect();
    spool
        .iter()
        .filter_map(|count| {
            let there = held.get(&count.month).copied().unwrap_or(0);
            (there < count.records).then_some((count.month, count.records, there))
        })
        .collect()
}

/// Asks the repository for its counts and reopens the months it lacks records of.
pub async fn verify(spool: &mut Spool, client: &mut Client) -> Result<VerifyReport, ShipError> {
    // Each endpoint once: the counts are the same at every instance of one central service.
    let mut failed = 0;
    let response = loop {
        let (at, answer) = client.sync_counts().await;
        match answer {
            Ok(response) => break response,
            Err(status) if retryable(&status) => {
                failed += 1;
                if failed >= client.endpoint_count() {
                    return Err(ShipError::Unreachable {
                        endpoint: client.endpoints(),
                        attempts: u32::try_from(failed).unwrap_or(u32::MAX),
                        message: describe(&status),
                    });
                }
                let next = client.fail_over(at);
                tracing::warn!(
                    endpoint = client.endpoint_at(at),
                    next,
                    "asking for the counts failed ({}); trying the next endpoint",
                    describe(&status)
                );
            }
            Err(status) => return Err(refusal(client.endpoint_at(at), &status)),
        }
    };
    let repository: Vec<(Month, u64)> = response
        .months
        .iter()
        .filter_map(|m| {
            let month = Month::new(m.year, u32::try_from(m.month).ok()?).ok()?;
            Some((month, m.records.unsigned_abs()))
        })
        .collect();
    let resend = months_to_resend(&spool.month_counts()?, &repository);
    let mut report = VerifyReport::default();
    for &(month, ours, theirs) in &resend {
        tracing::warn!(
            %month,
            spool = ours,
            repository = theirs,
            "the repository lacks records of this month; re-sending it"
        );
        report.reopened += spool.reopen_month(month)?;
    }
    report.resent = resend;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn month(m: u32) -> Month {
        Month::new(2026, m).unwrap()
    }

    #[test]
    fn only_months_the_repository_lacks_are_resent() {
        let spool = [
            MonthCount {
                month: month(1),
                records: 10,
            },
            MonthCount {
                month: month(2),
                records: 5,
            },
            MonthCount {
                month: month(3),
                records: 2,
            },
        ];
        let repository = [(month(1), 10), (month(2), 4), (month(4), 7)];
        assert_eq!(
            months_to_resend(&spool, &repository),
            vec![(month(2), 5, 4), (month(3), 2, 0)]
        );
    }
}
