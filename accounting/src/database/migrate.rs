//! The one migration runner, for both databases. A [`MigrationSet`] is one owner's numbered
//! migrations and the table that records which were applied; a version is never edited once
//! released, only followed by a new one. The runner refuses (and changes nothing in) a database
//! newer than this program.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use tokio_postgres::Client;

/// One owner's migrations.
#[derive(Debug)]
pub struct MigrationSet {
    /// For logs: `accounting repository`, `registry store`.
    pub owner: &'static str,
    /// The table recording the applied versions (`version`, `applied_at`); a constant, never
    /// outside text.
    pub table: &'static str,
    /// The PostgreSQL advisory lock key taken for the migration's transaction, so instances
    /// starting together never race on DDL.
    pub lock: i64,
    /// `(version, SQL)` in ascending order, from 1.
    pub migrations: &'static [(i64, &'static str)],
}

impl MigrationSet {
    /// The newest version this program knows.
    pub const fn latest(&self) -> i64 {
        match self.migrations.last() {
            Some((version, _)) => *version,
            None => 0,
        }
    }
}

/// What a migration found: the version before, or, when the database is newer than this program,
/// that version (`Err`; nothing was changed).
pub type Found = Result<i64, i64>;

/// Applies the set's migrations the PostgreSQL database lacks, in one transaction under the set's
/// advisory lock. The caller logs what changed.
pub async fn postgres(
    client: &mut Client,
    set: &MigrationSet,
) -> Result<Found, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&set.lock])
        .await?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {} (
            version    bigint PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
        set.table
    ))
    .await?;
    let found: Option<i64> = tx
        .query_one(&format!("SELECT MAX(version) FROM {}", set.table), &[])
        .await?
        .get(0);
    let found = found.unwrap_or(0);
    if found > set.latest() {
        return Ok(Err(found));
    }
    let record = format!("INSERT INTO {} (version) VALUES ($1)", set.table);
    for (version, sql) in set.migrations.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql).await?;
        tx.execute(&record, &[version]).await?;
    }
    tx.commit().await?;
    Ok(Ok(found))
}

/// Applies the set's migrations the SQLite database lacks, in one immediate (write-locked)
/// transaction.
pub fn sqlite(conn: &mut Connection, set: &MigrationSet) -> rusqlite::Result<Found> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {} (
            version    INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )",
        set.table
    ))?;
    let found: i64 = tx
        .query_row(
            &format!("SELECT MAX(version) FROM {}", set.table),
            [],
            |r| r.get::<_, Option<i64>>(0),
        )
        .optional()?
        .flatten()
        .unwrap_or(0);
    if found > set.latest() {
        return Ok(Err(found));
    }
    let record = format!("INSERT INTO {} (version) VALUES (?1)", set.table);
    for (version, sql) in set.migrations.iter().filter(|(v, _)| *v > found) {
        tx.execute_batch(sql)?;
        tx.execute(&record, [version])?;
    }
    tx.commit()?;
    Ok(Ok(found))
}
