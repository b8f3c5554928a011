//! Site contacts in SQLite (see [`crate::repository::contacts`]).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use super::SqliteRepository;
use crate::repository::contacts::{HeldEntry, HeldReport, SiteContact, stored_count, time_of};
use crate::repository::error::RepositoryError;

impl SqliteRepository {
    pub(crate) async fn record_contact(
        &self,
        site: String,
        at: DateTime<Utc>,
        spool_depth: Option<u64>,
        received: u64,
        held: Option<HeldReport>,
    ) -> Result<(), RepositoryError> {
        self.run(&self.writer, move |conn| {
            record(conn, &site, at, (spool_depth, received), held.as_ref())
        })
        .await
    }

    pub(crate) async fn site_contacts(&self) -> Result<Vec<SiteContact>, RepositoryError> {
        self.read(|conn| {
            let mut statement = conn.prepare(
                "SELECT site, last_contact, spool_depth, records_received, held_count
                 FROM site_contacts ORDER BY site",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(SiteContact {
                    site: row.get(0)?,
                    last_contact: time_of(row.get(1)?),
                    spool_depth: row.get::<_, Option<i64>>(2)?.map(i64::unsigned_abs),
                    records_received: row.get::<_, i64>(3)?.unsigned_abs(),
                    held_count: row.get::<_, Option<i64>>(4)?.map(i64::unsigned_abs),
                })
            })?;
            rows.collect()
        })
        .await
    }

    pub(crate) async fn held_entries(&self) -> Result<Vec<(String, HeldEntry)>, RepositoryError> {
        self.read(|conn| {
            let mut statement = conn.prepare(
                "SELECT site, record_id, reason, since FROM held_records
                 ORDER BY site, since, record_id",
            )?;
            let rows = statement.query_map([], |row| {
                Ok((
                    row.get(0)?,
                    HeldEntry {
                        record_id: row.get(1)?,
                        reason: row.get(2)?,
                        since: time_of(row.get(3)?),
                    },
                ))
            })?;
            rows.collect()
        })
        .await
    }
}

/// The call's row, and the site's held list replaced when the call reported one, in one
/// transaction.
fn record(
    conn: &mut Connection,
    site: &str,
    at: DateTime<Utc>,
    (spool_depth, received): (Option<u64>, u64),
    held: Option<&HeldReport>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO site_contacts (site, last_contact, spool_depth, held_count, records_received)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (site) DO UPDATE
         SET last_contact = max(last_contact, excluded.last_contact),
             spool_depth = coalesce(excluded.spool_depth, spool_depth),
             held_count = coalesce(excluded.held_count, held_count),
             records_received = records_received + excluded.records_received",
        params![
            site,
            at.timestamp(),
            spool_depth.map(stored_count),
            held.map(|held| stored_count(held.total)),
            stored_count(received)
        ],
    )?;
    if let Some(held) = held {
        tx.execute("DELETE FROM held_records WHERE site = ?1", [site])?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO held_records (site, record_id, reason, since) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (site, record_id) DO NOTHING",
        )?;
        for entry in &held.records {
            insert.execute(params![
                site,
                entry.record_id,
                entry.reason,
                entry.since.timestamp()
            ])?;
        }
    }
    tx.commit()
}
