//! Reads from SQLite: summary queries, sync counts, and decoding stored rows.

use std::borrow::Cow;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::{FromSqlError, Value};

use super::super::capacity::{INSTALLED_SQL, Installed};
use super::super::period::Period;
use super::super::query::{self, Param, SummaryQuery, SummaryRow};
use super::super::row::RecordRow;
use super::super::sync_count::SyncCount;

/// The installed GPUs per (site, model, month) that records carry (the largest figure of each).
pub(super) fn installed(conn: &mut Connection) -> rusqlite::Result<Vec<Installed>> {
    let mut statement = conn.prepare_cached(INSTALLED_SQL)?;
    let rows = statement.query_map([], |row| {
        Ok(Installed {
            site: row.get(0)?,
            model: row.get(1)?,
            period: period(row.get(2)?, 2)?,
            gpus: row.get(3)?,
        })
    })?;
    rows.collect()
}

/// The query builder's parameters as SQLite values.
fn values(params: Vec<Param>) -> Vec<Value> {
    params
        .into_iter()
        .map(|p| match p {
            Param::Int(i) => Value::Integer(i64::from(i)),
            Param::Text(s) => Value::Text(s),
        })
        .collect()
}

pub(super) fn summaries(
    conn: &mut Connection,
    q: &SummaryQuery,
) -> rusqlite::Result<Vec<SummaryRow>> {
    let (sql, params) = query::build_sql(q, |n| format!("?{n}"));
    let params = values(params);
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(rusqlite::params_from_iter(params), |row| {
        query::summary_row(
            &q.group_by,
            |i| row.get(i),
            |i| period(row.get(i)?, i),
            |i| row.get(i),
        )
    })?;
    rows.collect()
}

pub(super) fn sync_counts(conn: &mut Connection, site: &str) -> rusqlite::Result<Vec<SyncCount>> {
    let mut statement = conn.prepare_cached(
        "SELECT period, SUM(records) FROM summaries WHERE site = ?1 AND records <> 0
         GROUP BY period ORDER BY period",
    )?;
    let rows = statement.query_map([site], |row| {
        Ok(SyncCount {
            period: period(row.get(0)?, 0)?,
            records: row.get(1)?,
        })
    })?;
    rows.collect()
}

/// The distinct users `site` reported in `period` (index `records_by_site_user` only).
pub(super) fn users(
    conn: &mut Connection,
    site: &str,
    period: Period,
) -> rusqlite::Result<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT DISTINCT global_user_name FROM records INDEXED BY records_by_site_user
         WHERE site = ?1 AND period = ?2 AND global_user_name IS NOT NULL",
    )?;
    let rows = statement.query_map(rusqlite::params![site, period.index()], |row| row.get(0))?;
    rows.collect()
}

/// One page of `site`'s records ([`super::super::listing`]).
pub(super) fn site_records(
    conn: &mut Connection,
    site: &str,
    limit: i64,
    offset: i64,
) -> rusqlite::Result<Vec<RecordRow>> {
    let sql = super::super::listing::page_sql(|n| format!("?{n}"));
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(rusqlite::params![site, limit, offset], row_from_sql)?;
    rows.collect()
}

/// Decodes a row selected with [`super::super::row::COLUMNS`].
pub(super) fn row_from_sql(row: &rusqlite::Row<'_>) -> rusqlite::Result<RecordRow> {
    let id: Vec<u8> = row.get(0)?;
    let record_id: [u8; 32] = id.try_into().map_err(|id: Vec<u8>| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Blob,
            Box::new(FromSqlError::InvalidBlobSize {
                expected_size: 32,
                blob_size: id.len(),
            }),
        )
    })?;
    Ok(RecordRow {
        record_id,
        period: period(row.get(1)?, 1)?,
        site: row.get::<_, String>(2)?.into(),
        vo: row.get::<_, Option<String>>(3)?.map(Arc::from),
        model: row.get::<_, String>(4)?.into(),
        record_type: Cow::Owned(row.get(5)?),
        associated_record: row.get::<_, String>(6)?.into(),
        global_user_name: row.get::<_, Option<String>>(7)?.map(Arc::from),
        fqan: row.get::<_, Option<String>>(8)?.map(Arc::from),
        gpu_milli: row.get(9)?,
        cores: row.get(10)?,
        active_seconds: row.get(11)?,
        available_seconds: row.get(12)?,
        benchmark_type: row.get::<_, Option<String>>(13)?.map(Arc::from),
        benchmark: row.get(14)?,
        accelerator_type: Cow::Owned(row.get(15)?),
        source: Cow::Owned(row.get(16)?),
        first_seen: row.get(17)?,
        last_seen: row.get(18)?,
        gpu_count: row.get(19)?,
        sharing: row.get::<_, Option<String>>(20)?.map(Arc::from),
        installed: row.get(21)?,
        energy_wh: row.get(22)?,
        idle_seconds: row.get(23)?,
    })
}

fn period(index: i32, column: usize) -> rusqlite::Result<Period> {
    Period::from_index(index).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Integer,
            Box::new(FromSqlError::OutOfRange(i64::from(index))),
        )
    })
}

/// The report generation (`repository/generation.rs`).
pub(super) fn generation(conn: &mut Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(super::super::generation::READ)?
        .query_row([], |row| row.get(0))
}
