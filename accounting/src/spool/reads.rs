//! The spool's reads: pending records page by page for the shipper, the records of recent months
//! the meter compares for retractions, and the per-month counts `ship --verify` compares with the
//! repository's.

use rusqlite::params;

use accelfed_schemas::usage::{Month, UsageRecord};

use super::error::SpoolError;
use super::schema::PENDING_FROM;
use super::store::{PENDING_COLUMNS, PendingRecord, PendingRow, Spool};

/// How many records the spool holds for one month (acknowledged or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthCount {
    pub month: Month,
    pub records: u64,
}

impl Spool {
    /// Every record the spool holds for `from` and the months after it (acknowledged or not): the
    /// meter compares them with a run's records to find identities a resource no longer has.
    pub fn records_since(&self, from: Month) -> Result<Vec<UsageRecord>, SpoolError> {
        let mut statement = self
            .conn
            .prepare("SELECT record_id, body FROM records WHERE month >= ?1 ORDER BY record_id")
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map([from.to_string()], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(self.sqlite())?;
        let mut records = Vec::new();
        for row in rows {
            let (id, body) = row.map_err(self.sqlite())?;
            records.push(self.decode(&id, &body)?.1);
        }
        Ok(records)
    }

    /// Up to `limit` pending records enqueued after position `after` (0: from the start), oldest
    /// first. A shipper pages with the last position it saw ([`PendingRecord::enqueued`]), so a
    /// record the repository refused is not read again in the same run.
    pub fn pending_after(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<PendingRecord>, SpoolError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut statement = self
            .conn
            .prepare_cached(&format!(
                "SELECT {PENDING_COLUMNS} FROM {PENDING_FROM}
                 WHERE o.enqueued > ?1 ORDER BY o.enqueued LIMIT ?2"
            ))
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map(params![after, limit], PendingRow::read)
            .map_err(self.sqlite())?;
        let mut page = Vec::with_capacity(usize::try_from(limit).unwrap_or(0).min(100_000));
        for row in rows {
            let row = row.map_err(self.sqlite())?;
            page.push(self.pending_record(row)?);
        }
        Ok(page)
    }

    /// Records per month, oldest month first, held records left out (the repository has not been
    /// sent them, so `ship --verify` would otherwise re-send their month on every run).
    pub fn month_counts(&self) -> Result<Vec<MonthCount>, SpoolError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT month, count(*) FROM records
                 WHERE enqueued NOT IN (SELECT enqueued FROM held WHERE released_version IS NULL)
                 GROUP BY month ORDER BY month",
            )
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })
            .map_err(self.sqlite())?;
        let mut counts = Vec::new();
        for row in rows {
            let (text, records) = row.map_err(self.sqlite())?;
            let month = parse_month(&text).ok_or_else(|| SpoolError::Corrupt {
                path: self.path.clone(),
                id: format!("month {text:?}"),
                reason: "not a YYYY-MM month".to_owned(),
            })?;
            counts.push(MonthCount {
                month,
                records: records.unsigned_abs(),
            });
        }
        Ok(counts)
    }

    /// Makes every record of `month` pending again, so the next ship re-sends it (the repository
    /// replaces what it has); held records stay held. Returns how many records were reopened.
    pub fn reopen_month(&mut self, month: Month) -> Result<usize, SpoolError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO outbox (enqueued, version)
                 SELECT enqueued, version FROM records WHERE month = ?1
                 AND enqueued NOT IN (SELECT enqueued FROM held WHERE released_version IS NULL)",
                [month.to_string()],
            )
            .map_err(self.sqlite())
    }
}

fn parse_month(text: &str) -> Option<Month> {
    let (year, month) = text.split_once('-')?;
    Month::new(year.parse().ok()?, month.parse().ok()?).ok()
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::usage::sample::record;

    use super::*;

    #[test]
    fn pages_skip_what_was_seen_and_counts_follow_months() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
        let mut feb = record("vm-3");
        feb.month = Month::new(2026, 2).unwrap();
        feb.first_seen = feb.month.start();
        feb.last_seen = feb.first_seen + chrono::Duration::days(10);
        spool
            .write_run(&[record("vm-1"), record("vm-2"), feb])
            .unwrap();

        let first = spool.pending_after(0, 2).unwrap();
        assert_eq!(first.len(), 2);
        let rest = spool.pending_after(first[1].enqueued, 10).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].record().unwrap().associated_record.as_str(), "vm-3");

        let counts = spool.month_counts().unwrap();
        assert_eq!(
            counts,
            vec![
                MonthCount {
                    month: Month::new(2026, 1).unwrap(),
                    records: 2
                },
                MonthCount {
                    month: Month::new(2026, 2).unwrap(),
                    records: 1
                },
            ]
        );

        let acks: Vec<_> = first.iter().map(|p| p.ack()).collect();
        spool.acknowledge(&acks).unwrap();
        assert_eq!(spool.depth().unwrap(), 1);
        assert_eq!(spool.reopen_month(Month::new(2026, 1).unwrap()).unwrap(), 2);
        assert_eq!(spool.depth().unwrap(), 3);
    }
}
