//! Ingest into SQLite, in one `BEGIN IMMEDIATE` transaction per batch.
//!
//! Records are taken in id order (so the id index's pages are visited once per batch) and each is
//! first inserted with `ON CONFLICT DO NOTHING`: a new record, the common case, costs exactly one
//! insert. Only when the id exists is the stored row read, compared and, if it differs, replaced.
//! The summary deltas are applied before commit.

use rusqlite::{Connection, OptionalExtension, ToSql, Transaction, TransactionBehavior, params};

use super::super::plan::{Action, Deltas, Planner};
use super::super::row::{COLUMNS, RecordRow};
use super::super::totals::SUMMED;
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
    if let Some((_, first)) = candidates.first() {
        // The batch is one site's (`Repository::ingest` screens out the others).
        tx.execute(super::super::generation::SQLITE_BUMP, [&*first.site])?;
    }
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
        row.idle_seconds,
    ])
}

pub(crate) fn apply_deltas(tx: &Transaction<'_>, deltas: &Deltas) -> rusqlite::Result<()> {
    let mut upsert = tx.prepare_cached(&upsert_sql("summaries", SUMMARY_KEY))?;
    for (key, t) in &deltas.summaries {
        let period = key.period.index();
        let keys: [&dyn ToSql; 4] = [&key.site, &key.vo, &key.model, &period];
        upsert.execute(with_sums(&keys, &t.summed()))?;
    }
    let mut upsert = tx.prepare_cached(&upsert_sql("user_summaries", USER_KEY))?;
    for (key, t) in &deltas.users {
        let summary = &key.summary;
        let period = summary.period.index();
        let keys: [&dyn ToSql; 5] = [
            &summary.site,
            &summary.vo,
            &summary.model,
            &period,
            &key.user,
        ];
        upsert.execute(with_sums(&keys, &t.summed()))?;
    }
    Ok(())
}

/// The parameters of an upsert: the key's values, then the sums.
fn with_sums<'a>(keys: &'a [&'a dyn ToSql], sums: &'a [i64]) -> impl rusqlite::Params + 'a {
    rusqlite::params_from_iter(
        keys.iter()
            .copied()
            .chain(sums.iter().map(|sum| sum as &dyn ToSql)),
    )
}

const SUMMARY_KEY: &[&str] = &["site", "vo", "model", "period"];
const USER_KEY: &[&str] = &["site", "vo", "model", "period", "global_user_name"];

/// The upsert that adds one delta to its row of `table` (keyed by `key`): the key's values, then
/// each of [`SUMMED`]. A summed column more (energy) is one entry in [`SUMMED`] and one parameter.
fn upsert_sql(table: &str, key: &[&str]) -> String {
    let columns: Vec<&str> = key.iter().copied().chain(SUMMED).collect();
    let placeholders: Vec<String> = (1..=columns.len()).map(|n| format!("?{n}")).collect();
    let sums: Vec<String> = SUMMED
        .iter()
        .map(|c| format!("{c} = {c} + excluded.{c}"))
        .collect();
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {}",
        columns.join(", "),
        placeholders.join(", "),
        key.join(", "),
        sums.join(", ")
    )
}
