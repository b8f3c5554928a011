//! Records held back: ones the meter's capacity check doubts (usage above the installed GPUs of
//! their model and month) are stored like every record but kept out of the outbox, so neither
//! `ship` nor the APEL export sends them, until an operator releases them (`accelfed spool
//! release`) or a later run no longer doubts them (the operator corrected the configuration or
//! the manual-usage file, and the values are within the bound).
//!
//! A `held` row per record (keyed by its queue position, like the outbox): `released_version`
//! is NULL while it is held, and the version an operator released otherwise, so a released record
//! that the next run doubts again with the same values stays released; one whose values changed is
//! doubted afresh. Holding and releasing happen in the transaction that writes the run
//! ([`Spool::write_run_holding`]), so a crash never leaves a doubted record shippable.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction, params};

use accelfed_schemas::usage::{RecordId, UsageRecord};

use super::error::SpoolError;
use super::store::Spool;

/// The records of a run the meter doubts, each with why (the capacity finding in words).
pub type Holds = BTreeMap<RecordId, String>;

/// A record held back, for listing.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldRecord {
    pub record: UsageRecord,
    pub reason: String,
    /// When it was first held (RFC 3339, UTC).
    pub held_at: String,
}

/// Which held records to release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    All,
    Ids(Vec<RecordId>),
}

/// What a release did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Released {
    /// Records now pending again.
    pub released: usize,
    /// Ids named that are not held (unknown, or not held any more).
    pub not_held: Vec<RecordId>,
}

/// What holding did in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HoldSummary {
    /// Records of the run held back (newly or still).
    pub held: usize,
    /// Records held by an earlier run that this run no longer doubts, pending again.
    pub released: usize,
}

/// Holds the run's doubted records and releases the ones it no longer doubts, inside the run's
/// transaction. `next` is the spool's sequence, advanced for each record released (it gets a new
/// version, so the APEL export, which follows versions, sends it too).
pub(super) fn apply<'a>(
    tx: &Transaction<'_>,
    run: impl IntoIterator<Item = &'a RecordId>,
    holds: &Holds,
    next: &mut i64,
) -> rusqlite::Result<HoldSummary> {
    let mut summary = HoldSummary::default();
    let any_held: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM held)", [], |r| r.get(0))?;
    if holds.is_empty() && !any_held {
        return Ok(summary);
    }
    let mut row = tx.prepare_cached(
        "SELECT r.enqueued, r.version, h.enqueued IS NOT NULL, h.released_version
         FROM records r LEFT JOIN held h ON h.enqueued = r.enqueued WHERE r.record_id = ?1",
    )?;
    let mut unqueue = tx.prepare_cached("DELETE FROM outbox WHERE enqueued = ?1")?;
    let mut hold = tx.prepare_cached(
        "INSERT INTO held (enqueued, reason, held_at, released_version)
         VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), NULL)
         ON CONFLICT (enqueued) DO UPDATE SET reason = excluded.reason, released_version = NULL",
    )?;
    let mut forget = tx.prepare_cached("DELETE FROM held WHERE enqueued = ?1")?;
    for id in run {
        let Some((enqueued, version, known, released)) = row
            .query_row([id.as_str()], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            })
            .optional()?
        else {
            continue;
        };
        match holds.get(id) {
            // Released by an operator with these very values: it stays released.
            Some(_) if released == Some(version) => {}
            Some(reason) => {
                unqueue.execute([enqueued])?;
                hold.execute(params![enqueued, reason])?;
                summary.held += 1;
            }
            None if known => {
                forget.execute([enqueued])?;
                if released.is_none() {
                    requeue(tx, enqueued, next)?;
                    summary.released += 1;
                }
            }
            None => {}
        }
    }
    Ok(summary)
}

/// Makes the record at `enqueued` pending under a new version.
fn requeue(tx: &Transaction<'_>, enqueued: i64, next: &mut i64) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE records SET version = ?2 WHERE enqueued = ?1")?
        .execute([enqueued, *next])?;
    tx.prepare_cached("INSERT OR REPLACE INTO outbox (enqueued, version) VALUES (?1, ?2)")?
        .execute([enqueued, *next])?;
    *next += 1;
    Ok(())
}

impl Spool {
    /// The records held back, oldest first.
    pub fn held(&self) -> Result<Vec<HeldRecord>, SpoolError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT r.record_id, r.body, h.reason, h.held_at
                 FROM held h JOIN records r ON r.enqueued = h.enqueued
                 WHERE h.released_version IS NULL ORDER BY h.enqueued",
            )
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(self.sqlite())?;
        let mut held = Vec::new();
        for row in rows {
            let (id, body, reason, held_at) = row.map_err(self.sqlite())?;
            let (_, record) = self.decode(&id, &body)?;
            held.push(HeldRecord {
                record,
                reason,
                held_at,
            });
        }
        Ok(held)
    }

    /// How many records are held back.
    pub fn held_count(&self) -> Result<u64, SpoolError> {
        let count: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM held WHERE released_version IS NULL",
                [],
                |r| r.get(0),
            )
            .map_err(self.sqlite())?;
        Ok(count.unsigned_abs())
    }

    /// Releases held records: each is pending again under a new version (so `ship` and the APEL
    /// export send it) and stays released while later runs meter it with the same values.
    pub fn release(&mut self, which: &Release) -> Result<Released, SpoolError> {
        let path = self.path.clone();
        let err = |source| SpoolError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut out = Released::default();
        let targets: Vec<(Option<RecordId>, Option<i64>)> = match which {
            Release::All => {
                let mut statement = tx
                    .prepare("SELECT enqueued FROM held WHERE released_version IS NULL")
                    .map_err(err)?;
                let rows = statement.query_map([], |r| r.get(0)).map_err(err)?;
                rows.map(|row| row.map(|enqueued| (None, Some(enqueued))))
                    .collect::<rusqlite::Result<_>>()
                    .map_err(err)?
            }
            Release::Ids(ids) => {
                let mut statement = tx
                    .prepare(
                        "SELECT h.enqueued FROM held h JOIN records r ON r.enqueued = h.enqueued
                         WHERE r.record_id = ?1 AND h.released_version IS NULL",
                    )
                    .map_err(err)?;
                let mut found = Vec::new();
                for id in ids {
                    let enqueued = statement
                        .query_row([id.as_str()], |r| r.get(0))
                        .optional()
                        .map_err(err)?;
                    found.push((Some(id.clone()), enqueued));
                }
                found
            }
        };
        let mut next: i64 = tx
            .query_row("SELECT next FROM sequence WHERE id = 1", [], |r| r.get(0))
            .map_err(err)?;
        for (id, enqueued) in targets {
            let Some(enqueued) = enqueued else {
                out.not_held.extend(id);
                continue;
            };
            let version = next;
            requeue(&tx, enqueued, &mut next).map_err(err)?;
            tx.execute(
                "UPDATE held SET released_version = ?2 WHERE enqueued = ?1",
                [enqueued, version],
            )
            .map_err(err)?;
            out.released += 1;
        }
        tx.execute("UPDATE sequence SET next = ?1 WHERE id = 1", [next])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(out)
    }
}
