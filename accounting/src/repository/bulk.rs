//! Bulk loading for benchmarks that need many stored records (the per-VO report over 10,000,000):
//! the rows go in through the floors' bulk paths, with none of ingest's lookups, and the summaries
//! are the ones the repository keeps: each batch's deltas come from the repository's own
//! [`Planner`] and are written by its own summary upsert, in the batch's transaction.
//!
//! Every loaded record must be new (unique ids, none stored before): nothing is looked up.

use accelfed_schemas::usage::UsageRecord;

use super::error::RepositoryError;
use super::floor::{PostgresFloor, SqliteFloor};
use super::plan::Planner;
use super::row::RecordRow;
use super::sqlite::ingest as sqlite_ingest;

fn rows_and_deltas(records: &[UsageRecord]) -> (Vec<RecordRow>, super::plan::Deltas) {
    let rows: Vec<RecordRow> = records
        .iter()
        .filter_map(|r| RecordRow::from_record(r).ok())
        .collect();
    let mut planner = Planner::default();
    for (position, row) in rows.iter().enumerate() {
        planner.decide(position, row, None);
    }
    let (_, deltas) = planner.finish();
    (rows, deltas)
}

impl SqliteFloor {
    /// Loads `batches` (one transaction each) with the record-id index dropped, and rebuilds the
    /// index afterwards with the statement the schema created it with: one sort instead of a
    /// random index write per row. Returns the number of rows loaded.
    pub fn load(
        &mut self,
        batches: impl IntoIterator<Item = Vec<UsageRecord>>,
    ) -> Result<u64, RepositoryError> {
        let path = self.path.clone();
        let fail = |source| RepositoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let indexes: Vec<(String, String)> = {
            let mut statement = self
                .conn
                .prepare(
                    "SELECT name, sql FROM sqlite_master
                     WHERE type = 'index' AND tbl_name = 'records' AND sql IS NOT NULL",
                )
                .map_err(fail)?;
            let rows = statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(fail)?;
            rows.collect::<rusqlite::Result<_>>().map_err(fail)?
        };
        for (name, _) in &indexes {
            self.conn
                .execute_batch(&format!("DROP INDEX \"{name}\""))
                .map_err(fail)?;
        }
        let mut loaded = 0;
        for records in batches {
            let (rows, deltas) = rows_and_deltas(&records);
            let tx = self.conn.transaction().map_err(fail)?;
            {
                let mut insert = tx
                    .prepare_cached(&sqlite_ingest::insert_sql(false))
                    .map_err(fail)?;
                for row in &rows {
                    sqlite_ingest::insert_with(&mut insert, row).map_err(fail)?;
                }
            }
            sqlite_ingest::apply_deltas(&tx, &deltas).map_err(fail)?;
            // The summaries changed: so does the report generation (`super::generation`).
            tx.execute(super::generation::SQLITE_BUMP, [""])
                .map_err(fail)?;
            tx.commit().map_err(fail)?;
            loaded += rows.len() as u64;
        }
        for (_, sql) in &indexes {
            self.conn.execute_batch(sql).map_err(fail)?;
        }
        Ok(loaded)
    }
}

impl PostgresFloor {
    /// Loads `batches` into the partitioned `records` (one binary COPY and one transaction each).
    /// Returns the number of rows loaded.
    pub async fn load(
        &mut self,
        batches: impl IntoIterator<Item = Vec<UsageRecord>>,
    ) -> Result<u64, RepositoryError> {
        let mut loaded = 0;
        for records in batches {
            let (rows, deltas) = rows_and_deltas(&records);
            self.copy_in_transaction(&rows, "records", &deltas).await?;
            loaded += rows.len() as u64;
        }
        Ok(loaded)
    }
}
