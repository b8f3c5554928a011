//! Site contacts in PostgreSQL (see [`crate::repository::contacts`]). Written on a pooled
//! connection, not the writer's: a call's contact must not wait for another site's batch.

use chrono::{DateTime, Utc};

use super::{PgFailure, PostgresRepository};
use crate::repository::contacts::{HeldEntry, HeldReport, SiteContact, stored_count, time_of};
use crate::repository::error::RepositoryError;

impl PostgresRepository {
    pub(crate) async fn record_contact(
        &self,
        site: &str,
        at: DateTime<Utc>,
        spool_depth: Option<u64>,
        received: u64,
        held: Option<HeldReport>,
    ) -> Result<(), RepositoryError> {
        let received = stored_count(received);
        let depth = spool_depth.map(stored_count);
        let held_count = held.as_ref().map(|held| stored_count(held.total));
        let conn = self.read_connection().await?;
        let result: Result<(), tokio_postgres::Error> = async {
            conn.execute(
                "INSERT INTO site_contacts
                         (site, last_contact, spool_depth, held_count, records_received)
                     VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (site) DO UPDATE
                     SET last_contact = greatest(site_contacts.last_contact,
                                                 excluded.last_contact),
                         spool_depth = coalesce(excluded.spool_depth, site_contacts.spool_depth),
                         held_count = coalesce(excluded.held_count, site_contacts.held_count),
                         records_received = site_contacts.records_received
                             + excluded.records_received",
                &[&site, &at.timestamp(), &depth, &held_count, &received],
            )
            .await?;
            if let Some(held) = held {
                replace_held(&conn, site, &held).await?;
            }
            Ok(())
        }
        .await;
        result.map_err(|e| self.fail(PgFailure::from(e)))
    }

    pub(crate) async fn site_contacts(&self) -> Result<Vec<SiteContact>, RepositoryError> {
        let rows = self
            .read_connection()
            .await?
            .query(
                "SELECT site, last_contact, spool_depth, records_received, held_count
                 FROM site_contacts ORDER BY site",
                &[],
            )
            .await
            .map_err(|e| self.fail(PgFailure::from(e)))?;
        rows.iter()
            .map(|row| -> Result<SiteContact, tokio_postgres::Error> {
                Ok(SiteContact {
                    site: row.try_get(0)?,
                    last_contact: time_of(row.try_get(1)?),
                    spool_depth: row.try_get::<_, Option<i64>>(2)?.map(i64::unsigned_abs),
                    records_received: row.try_get::<_, i64>(3)?.unsigned_abs(),
                    held_count: row.try_get::<_, Option<i64>>(4)?.map(i64::unsigned_abs),
                })
            })
            .collect::<Result<_, _>>()
            .map_err(|e| self.fail(PgFailure::from(e)))
    }

    pub(crate) async fn held_entries(&self) -> Result<Vec<(String, HeldEntry)>, RepositoryError> {
        let rows = self
            .read_connection()
            .await?
            .query(
                "SELECT site, record_id, reason, since FROM held_records
                 ORDER BY site, since, record_id",
                &[],
            )
            .await
            .map_err(|e| self.fail(PgFailure::from(e)))?;
        rows.iter()
            .map(
                |row| -> Result<(String, HeldEntry), tokio_postgres::Error> {
                    Ok((
                        row.try_get(0)?,
                        HeldEntry {
                            record_id: row.try_get(1)?,
                            reason: row.try_get(2)?,
                            since: time_of(row.try_get(3)?),
                        },
                    ))
                },
            )
            .collect::<Result<_, _>>()
            .map_err(|e| self.fail(PgFailure::from(e)))
    }
}

/// Replaces `site`'s held list in one statement (so two calls of one site racing each other
/// never interleave halves): rows not in the new list are deleted, the others
/// inserted or updated, so the two parts touch different rows.
async fn replace_held(
    client: &tokio_postgres::Client,
    site: &str,
    held: &HeldReport,
) -> Result<(), tokio_postgres::Error> {
    let ids: Vec<&str> = held.records.iter().map(|e| e.record_id.as_str()).collect();
    let reasons: Vec<&str> = held.records.iter().map(|e| e.reason.as_str()).collect();
    let since: Vec<i64> = held.records.iter().map(|e| e.since.timestamp()).collect();
    client
        .execute(
            "WITH gone AS (
                 DELETE FROM held_records WHERE site = $1 AND NOT (record_id = ANY($2::text[]))
             )
             INSERT INTO held_records (site, record_id, reason, since)
             SELECT DISTINCT ON (id) $1, id, reason, since
             FROM unnest($2::text[], $3::text[], $4::bigint[]) AS new (id, reason, since)
             ON CONFLICT (site, record_id) DO UPDATE
             SET reason = excluded.reason, since = excluded.since",
            &[&site, &ids, &reasons, &since],
        )
        .await
        .map(|_| ())
}
