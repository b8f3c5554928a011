//! Ingest into SQLite, in one `BEGIN IMMEDIATE` transaction per batch.
//!
//! Records are taken in id order (so the id index's pages are visited once per batch) and each is
//! first inserted with `ON CONFLICT DO NOTHING`: a new record, the common case, costs exactly one
//! insert. Only when the id exists is the stored row read, compared and, if it differs, replaced.
//! The summary deltas are applied before commit.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::super::plan::{Action, Planner};
use super::super::row::{COLUMNS, RecordRow};
use super::super::totals::{SummaryKey, Totals};
use super::read::row_from_sql;
use crate::wire::Outcome;

pub(super) fn ingest(
    conn: &mut Connection,
    mut candidates: Vec<(usize, RecordRow)>,
) -> rusqlite::Result<Vec<(usize, Outcome)>> {
    candidates.sort_unstable_by_key(|(_, r)| r.record_id);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut planner = Planner::default();
    {
        let mut insert = tx.prepare_cached(&insert_sql(true))?;
        let mut select = tx.prepare_cached(&format!(
            "SELECT {} FROM records WHERE record_id = ?1",
            COLUMNS.join(", ")
        ))?;
        let mut delete = tx.prepare_cached("DELETE FROM records WHERE record_id = ?1")?;
        let mut insert_row = |row: &RecordRow| insert_with(&mut insert, row);
        for (position, row) in &candidates {
            if insert_row(row)? == 1 {
                planner.decide(*position, row, None);
                continue;
            }
            let stored = select
                .query_row([&row.record_id[..]], row_from_sql)
                .optional()?;
            if planner.decide(*position, row, stored.as_ref()) == Action::Replace {
                delete.execute([&row.record_id[..]])?;
                insert_row(row)?;
            }
        }
    }
    let (outcomes, deltas) = planner.finish();
    apply_deltas(&tx, &deltas)?;
    tx.commit()?;
    Ok(outcomes)
}

/// The INSERT of one row into `records`, optionally doing nothing when the id exists.
pub(crate) fn insert_sql(on_conflict_do_nothing: bool) -> String {
    let placeholders: Vec<String> = (1..=COLUMNS.len()).map(|n| format!("?{n}")).collect();
    format!(
        "INSERT INTO records ({}) VALUES ({}){}",
        COLUMNS.join(", "),
        placeholders.join(", "),
        if on_conflict_do_nothing {
            " ON CONFLICT (record_id) DO NOTHING"
        } else {
            ""
        }
    )
}

/// Runs an [`insert_sql`] statement for `row`; returns the number of rows inserted (0 or 1).
pub(crate) fn insert_with(
    statement: &mut rusqlite::CachedStatement<'_>,
    row: &RecordRow,
) -> rusqlite::Result<usize> {
    statement.execute(params![
        &row.record_id[..],
        row.period.index(),
        row.site,
        row.vo,
        row.model,
        row.record_type,
        row.associated_record,
        row.global_user_name,
        row.fqan,
        row.gpu_milli,
        row.cores,
        row.active_seconds,
        row.available_seconds,
        row.benchmark_type,
        row.benchmark,
        row.accelerator_type,
        row.source,
        row.first_seen,
        row.last_seen,
        row.gpu_count,
        row.sharing,
        row.installed,
        row.energy_wh,
    ])
}

pub(crate) fn apply_deltas(
    tx: &Transaction<'_>,
    deltas: &[(SummaryKey, Totals)],
) -> rusqlite::Result<()> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO summaries (site, vo, model, period, records, gpu_milli, gpu_milli_seconds,
             active_records, active_gpu_milli_seconds, active_available_gpu_milli_seconds,
             energy_records, energy_milli_wh)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (site, vo, model, period) DO UPDATE SET
             records = records + excluded.records,
             gpu_milli = gpu_milli + excluded.gpu_milli,
             gpu_milli_seconds = gpu_milli_seconds + excluded.gpu_milli_seconds,
             active_records = active_records + excluded.active_records,
             active_gpu_milli_seconds = active_gpu_milli_seconds + excluded.active_gpu_milli_seconds,
             active_available_gpu_milli_seconds =
                 active_available_gpu_milli_seconds + excluded.active_available_gpu_milli_seconds,
             energy_records = energy_records + excluded.energy_records,
             energy_milli_wh = energy_milli_wh + excluded.energy_milli_wh",
    )?;
    for (key, t) in deltas {
        upsert.execute(params![
            key.site,
            key.vo,
            key.model,
            key.period.index(),
            t.records,
            t.gpu_milli,
            t.gpu_milli_seconds,
            t.active_records,
            t.active_gpu_milli_seconds,
            t.active_available_gpu_milli_seconds,
            t.energy_records,
            t.energy_milli_wh,
        ])?;
    }
    Ok(())
}
