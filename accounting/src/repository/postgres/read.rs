//! Reads from PostgreSQL: summary queries, sync counts, and decoding stored rows.

use std::borrow::Cow;
use std::sync::Arc;

use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::super::capacity::{INSTALLED_SQL, Installed};
use super::super::period::Period;
use super::super::query::{self, Param, SummaryQuery, SummaryRow};
use super::super::row::RecordRow;
use super::super::sync_count::SyncCount;
use super::PgFailure;

pub(super) async fn summaries(
    client: &impl GenericClient,
    q: &SummaryQuery,
) -> Result<Vec<SummaryRow>, PgFailure> {
    let (sql, params) = query::build_sql(q, |n| format!("${n}"));
    let rows = query_with(client, &sql, params).await?;
    rows.iter()
        .map(|row| {
            query::summary_row(
                &q.group_by,
                |i| Ok(row.try_get(i)?),
                |i| period(row.try_get(i)?),
                |i| Ok(row.try_get(i)?),
            )
        })
        .collect()
}

/// Runs `sql` with the query builder's parameters.
async fn query_with(
    client: &impl GenericClient,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<Row>, PgFailure> {
    let params: Vec<Box<dyn ToSql + Sync + Send>> = params
        .into_iter()
        .map(|p| -> Box<dyn ToSql + Sync + Send> {
            match p {
                Param::Int(i) => Box::new(i),
                Param::Text(s) => Box::new(s),
            }
        })
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    Ok(client.query(sql, &refs).await?)
}

/// The installed GPUs per (site, model, month) that records carry (the largest figure of each).
pub(super) async fn installed(client: &impl GenericClient) -> Result<Vec<Installed>, PgFailure> {
    let rows = client.query(INSTALLED_SQL, &[]).await?;
    rows.iter()
        .map(|row| {
            Ok(Installed {
                site: row.try_get(0)?,
                model: row.try_get(1)?,
                period: period(row.try_get(2)?)?,
                gpus: row.try_get(3)?,
            })
        })
        .collect()
}

pub(super) async fn sync_counts(
    client: &impl GenericClient,
    site: &str,
) -> Result<Vec<SyncCount>, PgFailure> {
    let rows = client
        .query(
            "SELECT period, CAST(SUM(records) AS BIGINT) FROM summaries
             WHERE site = $1 AND records <> 0 GROUP BY period ORDER BY period",
            &[&site],
        )
        .await?;
    rows.iter()
        .map(|row| {
            Ok(SyncCount {
                period: period(row.try_get(0)?)?,
                records: row.try_get(1)?,
            })
        })
        .collect()
}

/// The distinct users `site` reported in `period` (index `records_by_site_user`).
pub(super) async fn users(
    client: &impl GenericClient,
    site: &str,
    period: Period,
) -> Result<Vec<String>, PgFailure> {
    let rows = client
        .query(
            "SELECT DISTINCT global_user_name FROM records
             WHERE site = $1 AND period = $2 AND global_user_name IS NOT NULL",
            &[&site, &period.index()],
        )
        .await?;
    rows.iter()
        .map(|row| row.try_get(0).map_err(PgFailure::from))
        .collect()
}

/// One page of `site`'s records ([`super::super::listing`]).
pub(super) async fn site_records(
    client: &impl GenericClient,
    site: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<RecordRow>, PgFailure> {
    let sql = super::super::listing::page_sql(|n| format!("${n}"));
    let rows = client.query(&sql, &[&site, &limit, &offset]).await?;
    rows.iter().map(row_from_sql).collect()
}

/// Decodes a row selected with [`super::super::row::COLUMNS`].
pub(super) fn row_from_sql(row: &Row) -> Result<RecordRow, PgFailure> {
    let id: Vec<u8> = row.try_get(0)?;
    let record_id: [u8; 32] = id.try_into().map_err(|id: Vec<u8>| PgFailure::Corrupt {
        what: "record_id",
        value: format!("{} bytes", id.len()),
    })?;
    Ok(RecordRow {
        record_id,
        period: period(row.try_get(1)?)?,
        site: row.try_get::<_, &str>(2)?.into(),
        vo: row.try_get::<_, Option<&str>>(3)?.map(Arc::from),
        model: row.try_get::<_, &str>(4)?.into(),
        record_type: Cow::Owned(row.try_get(5)?),
        associated_record: row.try_get::<_, &str>(6)?.into(),
        global_user_name: row.try_get::<_, Option<&str>>(7)?.map(Arc::from),
        fqan: row.try_get::<_, Option<&str>>(8)?.map(Arc::from),
        gpu_milli: row.try_get(9)?,
        cores: row.try_get(10)?,
        active_seconds: row.try_get(11)?,
        available_seconds: row.try_get(12)?,
        benchmark_type: row.try_get::<_, Option<&str>>(13)?.map(Arc::from),
        benchmark: row.try_get(14)?,
        accelerator_type: Cow::Owned(row.try_get(15)?),
        source: Cow::Owned(row.try_get(16)?),
        first_seen: row.try_get(17)?,
        last_seen: row.try_get(18)?,
        gpu_count: row.try_get(19)?,
        sharing: row.try_get::<_, Option<&str>>(20)?.map(Arc::from),
        installed: row.try_get(21)?,
        energy_wh: row.try_get(22)?,
        idle_seconds: row.try_get(23)?,
    })
}

fn period(index: i32) -> Result<Period, PgFailure> {
    Period::from_index(index).ok_or(PgFailure::Corrupt {
        what: "period",
        value: index.to_string(),
    })
}

/// The report generation (`repository/generation.rs`), with the pooled connection's cached
/// statement: one round trip per report.
pub(super) async fn generation(client: &deadpool_postgres::Object) -> Result<i64, PgFailure> {
    let statement = client
        .prepare_cached(super::super::generation::READ)
        .await?;
    Ok(client.query_one(&statement, &[]).await?.try_get(0)?)
}
