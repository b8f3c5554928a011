//! Floors for the ingest benchmark: the same rows the repository would store, written with no
//! repository logic at all (no lookups, no summaries, no checks), so the benchmark can report
//! ingest speed as a fraction of what the database itself manages on this machine.
//!
//! * SQLite: plain prepared `INSERT`s in one transaction per batch, into a `records` table created
//!   by the same migration, with the same connection settings.
//! * PostgreSQL: one binary `COPY` per batch, either into the same partitioned `records` table or
//!   into an unpartitioned table with the same columns and primary key.
//!
//! Converting records to rows is not timed: only the database work is.

use std::path::Path;
use std::time::{Duration, Instant};

use accelfed_schemas::usage::UsageRecord;
use rusqlite::Connection;
use tokio_postgres::Client;

use super::error::RepositoryError;
use super::period::Period;
use super::plan::Deltas;
use super::postgres::copy::CopyPayload;
use super::postgres::deltas as pg_deltas;
use super::postgres::{PostgresRepository, connect_url, schema as pg_schema};
use super::row::RecordRow;
use super::sqlite::{SqliteRepository, ingest as sqlite_ingest, schema as sqlite_schema};

fn rows(records: &[UsageRecord]) -> Vec<RecordRow> {
    records
        .iter()
        .filter_map(|r| RecordRow::from_record(r).ok())
        .collect()
}

/// Plain batched INSERTs into an SQLite file.
#[derive(Debug)]
pub struct SqliteFloor {
    pub(super) conn: Connection,
    pub(super) path: String,
}

impl SqliteFloor {
    /// Creates the schema in `path` (through the repository's own migration) and connects with
    /// the repository's connection settings.
    pub async fn open(path: &Path) -> Result<Self, RepositoryError> {
        drop(SqliteRepository::open(path).await?);
        let location = path.display().to_string();
        let fail = |source| RepositoryError::Sqlite {
            path: location.clone(),
            source,
        };
        let conn = Connection::open(path).map_err(fail)?;
        sqlite_schema::configure(&conn).map_err(fail)?;
        Ok(Self {
            conn,
            path: location,
        })
    }

    /// Inserts `records` in one transaction; returns the time the database took.
    pub fn insert_batch(&mut self, records: &[UsageRecord]) -> Result<Duration, RepositoryError> {
        let rows = rows(records);
        let start = Instant::now();
        let result = (|| {
            let tx = self.conn.transaction()?;
            {
                let mut insert = tx.prepare_cached(&sqlite_ingest::insert_sql(false))?;
                for row in &rows {
                    sqlite_ingest::insert_with(&mut insert, row)?;
                }
            }
            tx.commit()
        })();
        result.map_err(|source| RepositoryError::Sqlite {
            path: self.path.clone(),
            source,
        })?;
        Ok(start.elapsed())
    }
}

/// Where the PostgreSQL floor copies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostgresFloorTable {
    /// The repository's own partitioned `records` table (partitions created before timing).
    Partitioned,
    /// `floor_records`: the same columns and primary key, no partitions.
    Plain,
}

/// Binary COPY into PostgreSQL.
#[derive(Debug)]
pub struct PostgresFloor {
    client: Client,
    table: PostgresFloorTable,
    url: String,
}

impl PostgresFloor {
    /// Creates the schema in the (empty) database `url` through the repository's migration, and
    /// the partitions of `periods` (or the unpartitioned copy).
    pub async fn open(
        url: &str,
        table: PostgresFloorTable,
        periods: &[Period],
    ) -> Result<Self, RepositoryError> {
        drop(PostgresRepository::open(url).await?);
        let fail = |error| RepositoryError::Postgres {
            url: super::postgres::redact(url),
            error,
        };
        let mut client = connect_url(url).await?;
        match table {
            PostgresFloorTable::Partitioned => pg_schema::create_partitions(&mut client, periods)
                .await
                .map_err(fail)?,
            PostgresFloorTable::Plain => client
                .batch_execute(
                    "CREATE TABLE IF NOT EXISTS floor_records (LIKE records INCLUDING ALL)",
                )
                .await
                .map_err(fail)?,
        }
        Ok(Self {
            client,
            table,
            url: super::postgres::redact(url),
        })
    }

    /// Copies `records` with one binary COPY in one transaction; returns the time it took.
    pub async fn copy_batch(
        &mut self,
        records: &[UsageRecord],
    ) -> Result<Duration, RepositoryError> {
        let rows = rows(records);
        let table = match self.table {
            PostgresFloorTable::Partitioned => "records",
            PostgresFloorTable::Plain => "floor_records",
        };
        let start = Instant::now();
        self.copy_in_transaction(&rows, table, &Deltas::default())
            .await?;
        Ok(start.elapsed())
    }

    /// One binary COPY of `rows` into `table` and the summaries' `deltas` (none where only the
    /// COPY is measured), in one transaction.
    pub(super) async fn copy_in_transaction(
        &mut self,
        rows: &[RecordRow],
        table: &str,
        deltas: &Deltas,
    ) -> Result<(), RepositoryError> {
        let result = async {
            let tx = self.client.transaction().await?;
            CopyPayload::encode(rows.iter())
                .copy_into(&tx, table)
                .await?;
            pg_deltas::apply(
                &tx,
                &pg_deltas::summaries_sql(),
                &pg_deltas::users_sql(),
                deltas,
            )
            .await?;
            // The summaries changed: so does the report generation (`super::generation`).
            tx.execute(super::generation::POSTGRES_BUMP, &[&""]).await?;
            tx.commit().await
        }
        .await;
        result.map_err(|error| RepositoryError::Postgres {
            url: self.url.clone(),
            error,
        })
    }
}
