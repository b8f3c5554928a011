//! Writing one meter run: [`Spool::write_run`] stores the run in one transaction, so a crash
//! leaves the previous run or this one, never part of it.
//!
//! A record whose id is new is inserted; one whose values changed replaces the stored row under a
//! new version and is pending again (also when it was acknowledged: that is how a running job's
//! growing month is re-sent); one with the same values keeps its version and state.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use accelfed_schemas::usage::UsageRecord;

use super::error::SpoolError;
use super::store::Spool;

/// What one meter run changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunSummary {
    /// Ids seen for the first time.
    pub inserted: usize,
    /// Pending records replaced by a newer version.
    pub updated: usize,
    /// Acknowledged records that changed and are pending again.
    pub reopened: usize,
    /// Records with the same values as stored.
    pub unchanged: usize,
    /// Records held back and released (see `held.rs`).
    pub holds: super::held::HoldSummary,
}

impl Spool {
    /// Stores one meter run atomically (see the module documentation). Refuses the whole run,
    /// storing nothing, when a record fails validation or an id appears twice.
    pub fn write_run(&mut self, records: &[UsageRecord]) -> Result<RunSummary, SpoolError> {
        self.write_run_holding(records, &super::held::Holds::new())
    }

    /// [`Self::write_run`], holding back the records `holds` names and releasing the run's others
    /// that an earlier run held, in the same transaction (see `held.rs`).
    pub fn write_run_holding(
        &mut self,
        records: &[UsageRecord],
        holds: &super::held::Holds,
    ) -> Result<RunSummary, SpoolError> {
        let written = self.write_run_unexplained(records, holds);
        written.map_err(super::open::explained)
    }

    fn write_run_unexplained(
        &mut self,
        records: &[UsageRecord],
        holds: &super::held::Holds,
    ) -> Result<RunSummary, SpoolError> {
        let mut rows = Vec::with_capacity(records.len());
        let mut seen = HashSet::with_capacity(records.len());
        for record in records {
            record
                .validate_shape()
                .map_err(|source| SpoolError::InvalidRecord {
                    path: self.path.clone(),
                    source: Box::new(source),
                })?;
            let id = record.id();
            if !seen.insert(id.clone()) {
                return Err(SpoolError::DuplicateRecord {
                    path: self.path.clone(),
                    id,
                });
            }
            let body = serde_json::to_string(record).map_err(|e| SpoolError::Corrupt {
                path: self.path.clone(),
                id: id.to_string(),
                reason: e.to_string(),
            })?;
            let wire = crate::wire::encoded::encode_record(record);
            rows.push((id, record.month.to_string(), body, wire));
        }

        let path = self.path.clone();
        let err = |source| SpoolError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut next: i64 = tx
            .query_row("SELECT next FROM sequence WHERE id = 1", [], |row| {
                row.get(0)
            })
            .map_err(err)?;
        let mut summary = RunSummary::default();
        {
            let mut select = tx
                .prepare_cached("SELECT enqueued, body FROM records WHERE record_id = ?1")
                .map_err(err)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO records (record_id, version, enqueued, month, body, wire,
                                          updated_at)
                     VALUES (?1, ?2, ?2, ?3, ?4, ?5, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                )
                .map_err(err)?;
            let mut was_pending = tx
                .prepare_cached("SELECT 1 FROM outbox WHERE enqueued = ?1")
                .map_err(err)?;
            // The new version replaces a pending one in place, keeping the queue position.
            let mut enqueue = tx
                .prepare_cached("INSERT OR REPLACE INTO outbox (enqueued, version) VALUES (?1, ?2)")
                .map_err(err)?;
            let mut update = tx
                .prepare_cached(
                    "UPDATE records
                     SET version = ?2, month = ?3, body = ?4, wire = ?5,
                         updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
                     WHERE record_id = ?1",
                )
                .map_err(err)?;
            for (id, month, body, wire) in &rows {
                let stored: Option<(i64, String)> = select
                    .query_row([id.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
                    .map_err(err)?;
                match stored {
                    None => {
                        insert
                            .execute(params![id.as_str(), next, month, body, wire])
                            .map_err(err)?;
                        enqueue.execute([next, next]).map_err(err)?;
                        next += 1;
                        summary.inserted += 1;
                    }
                    Some((_, stored_body)) if stored_body == *body => summary.unchanged += 1,
                    Some((enqueued, _)) => {
                        if was_pending.exists([enqueued]).map_err(err)? {
                            summary.updated += 1;
                        } else {
                            summary.reopened += 1;
                        }
                        update
                            .execute(params![id.as_str(), next, month, body, wire])
                            .map_err(err)?;
                        enqueue.execute([enqueued, next]).map_err(err)?;
                        next += 1;
                    }
                }
            }
        }
        summary.holds = super::held::apply(&tx, rows.iter().map(|row| &row.0), holds, &mut next)
            .map_err(err)?;
        tx.execute("UPDATE sequence SET next = ?1 WHERE id = 1", [next])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(summary)
    }
}
