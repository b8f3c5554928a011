//! The summary upserts: a batch's [`Deltas`] added to `summaries` and to the user rollup
//! `user_summaries`, one `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE` per table,
//! each column sent as one array. The SQL is built from the key's columns and
//! [`SUMMED`], so a summed column more is a name in `SUMMED`, not an edit here.

use tokio_postgres::types::ToSql;
use tokio_postgres::{ToStatement, Transaction};

use super::super::plan::Deltas;
use super::super::totals::{SUMMED, Totals};

const SUMMARY_KEY: [(&str, &str); 4] = [
    ("site", "text"),
    ("vo", "text"),
    ("model", "text"),
    ("period", "integer"),
];
const USER_KEY: [(&str, &str); 5] = [
    ("site", "text"),
    ("vo", "text"),
    ("model", "text"),
    ("period", "integer"),
    ("global_user_name", "text"),
];

/// The upsert into `summaries`.
pub(crate) fn summaries_sql() -> String {
    upsert_sql("summaries", &SUMMARY_KEY)
}

/// The upsert into `user_summaries`.
pub(crate) fn users_sql() -> String {
    upsert_sql("user_summaries", &USER_KEY)
}

fn upsert_sql(table: &str, key: &[(&str, &str)]) -> String {
    let columns: Vec<&str> = key.iter().map(|(name, _)| *name).chain(SUMMED).collect();
    let arrays: Vec<String> = key
        .iter()
        .map(|(_, kind)| *kind)
        .chain(SUMMED.iter().map(|_| "bigint"))
        .enumerate()
        .map(|(i, kind)| format!("${}::{kind}[]", i + 1))
        .collect();
    let sums: Vec<String> = SUMMED
        .iter()
        .map(|c| format!("{c} = s.{c} + excluded.{c}"))
        .collect();
    let key_names: Vec<&str> = key.iter().map(|(name, _)| *name).collect();
    format!(
        "INSERT INTO {table} AS s ({}) SELECT * FROM unnest({}) ON CONFLICT ({}) DO UPDATE SET {}",
        columns.join(", "),
        arrays.join(", "),
        key_names.join(", "),
        sums.join(", ")
    )
}

/// Adds `deltas` to their rows; `summaries` and `users` are [`summaries_sql`] and [`users_sql`]
/// or their prepared forms.
pub(crate) async fn apply<S: ?Sized + ToStatement>(
    tx: &Transaction<'_>,
    summaries: &S,
    users: &S,
    deltas: &Deltas,
) -> Result<(), tokio_postgres::Error> {
    if !deltas.summaries.is_empty() {
        let rows = &deltas.summaries;
        let sites: Vec<&str> = rows.iter().map(|(k, _)| &*k.site).collect();
        let vos: Vec<&str> = rows.iter().map(|(k, _)| &*k.vo).collect();
        let models: Vec<&str> = rows.iter().map(|(k, _)| &*k.model).collect();
        let periods: Vec<i32> = rows.iter().map(|(k, _)| k.period.index()).collect();
        let sums = sums(rows.iter().map(|(_, t)| t));
        let keys: [&(dyn ToSql + Sync); 4] = [&sites, &vos, &models, &periods];
        execute(tx, summaries, &keys, &sums).await?;
    }
    if !deltas.users.is_empty() {
        let rows = &deltas.users;
        let sites: Vec<&str> = rows.iter().map(|(k, _)| &*k.summary.site).collect();
        let vos: Vec<&str> = rows.iter().map(|(k, _)| &*k.summary.vo).collect();
        let models: Vec<&str> = rows.iter().map(|(k, _)| &*k.summary.model).collect();
        let periods: Vec<i32> = rows.iter().map(|(k, _)| k.summary.period.index()).collect();
        let names: Vec<&str> = rows.iter().map(|(k, _)| &*k.user).collect();
        let sums = sums(rows.iter().map(|(_, t)| t));
        let keys: [&(dyn ToSql + Sync); 5] = [&sites, &vos, &models, &periods, &names];
        execute(tx, users, &keys, &sums).await?;
    }
    Ok(())
}

/// One array per summed column.
fn sums<'a>(totals: impl Iterator<Item = &'a Totals>) -> Vec<Vec<i64>> {
    let mut columns = vec![Vec::new(); SUMMED.len()];
    for t in totals {
        for (column, value) in columns.iter_mut().zip(t.summed()) {
            column.push(value);
        }
    }
    columns
}

async fn execute<S: ?Sized + ToStatement>(
    tx: &Transaction<'_>,
    statement: &S,
    keys: &[&(dyn ToSql + Sync)],
    sums: &[Vec<i64>],
) -> Result<(), tokio_postgres::Error> {
    let params: Vec<&(dyn ToSql + Sync)> = keys
        .iter()
        .copied()
        .chain(sums.iter().map(|column| column as &(dyn ToSql + Sync)))
        .collect();
    tx.execute(statement, &params).await?;
    Ok(())
}
