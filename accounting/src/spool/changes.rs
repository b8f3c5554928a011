//! Reading the spool in the order records changed, for exports that keep their own watermark (the
//! APEL export): every new or changed record gets the next number of the spool-wide sequence as
//! its `version`, so "everything after version N" is exactly what changed since an export that
//! saw up to N, whatever the repository has acknowledged.

use rusqlite::params;

use accelfed_schemas::usage::{Month, UsageRecord};

use super::error::SpoolError;
use super::store::Spool;

/// A stored record and the version it is stored under.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedRecord {
    pub version: i64,
    pub record: UsageRecord,
}

impl Spool {
    /// Up to `limit` records whose stored version is greater than `after` (0: every record),
    /// lowest version first, held records left out (a release gives one a new version). A page ends at a version boundary, so the last version of a page is
    /// a correct watermark once the page has been delivered.
    pub fn changed_after(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<ChangedRecord>, SpoolError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT record_id, version, body FROM records WHERE version > ?1
                 AND enqueued NOT IN (SELECT enqueued FROM held WHERE released_version IS NULL)
                 ORDER BY version LIMIT ?2",
            )
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map(params![after, limit], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .map_err(self.sqlite())?;
        let mut page = Vec::new();
        for row in rows {
            let (id, version, body) = row.map_err(self.sqlite())?;
            let (_, record) = self.decode(&id, &body)?;
            page.push(ChangedRecord { version, record });
        }
        Ok(page)
    }
}

impl Spool {
    /// Calls `each` with every record the spool holds for `month`, in its latest version, one
    /// at a time (a month may hold millions).
    pub fn each_in_month(
        &self,
        month: Month,
        mut each: impl FnMut(UsageRecord),
    ) -> Result<(), SpoolError> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT record_id, body FROM records WHERE month = ?1")
            .map_err(self.sqlite())?;
        let mut rows = statement
            .query(params![month.to_string()])
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let id: String = row.get(0).map_err(self.sqlite())?;
            let body: String = row.get(1).map_err(self.sqlite())?;
            each(self.decode(&id, &body)?.1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::gpu::GpuCount;
    use accelfed_schemas::usage::sample::record;

    use super::*;

    #[test]
    fn pages_follow_versions_and_a_change_moves_a_record_past_the_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
        spool
            .write_run(&[record("vm-1"), record("vm-2"), record("vm-3")])
            .unwrap();
        let first = spool.changed_after(0, 2).unwrap();
        assert_eq!(first.len(), 2);
        let watermark = first[1].version;
        let rest = spool.changed_after(watermark, 10).unwrap();
        assert_eq!(rest.len(), 1);
        let watermark = rest[0].version;
        assert!(spool.changed_after(watermark, 10).unwrap().is_empty());

        // The same values again: nothing new. A changed value: the record comes back.
        spool.write_run(&[record("vm-1")]).unwrap();
        assert!(spool.changed_after(watermark, 10).unwrap().is_empty());
        let mut grown = record("vm-1");
        grown.count = GpuCount::new(2.0).unwrap();
        spool.write_run(&[grown.clone()]).unwrap();
        let changed = spool.changed_after(watermark, 10).unwrap();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].record, grown);
    }
}
