//! Ingest into PostgreSQL, in one transaction per batch:
//!
//! 0. before the writer connection is taken ([`prepare`]): the batch sorted by id, and where the
//!    fast path will be tried, its `COPY` payload and its plan (every record new), so the one
//!    writer connection spends its time in the database, not encoding;
//! 1. a transaction-scoped advisory lock on the site: a site's records and summary rows are only
//!    written by that site's batches, so serialising them per site keeps "which ids exist" true
//!    until commit, even with several `accelfed serve` instances on one database;
//! 2. the fast path, when the site's last batch had nothing stored already: one binary `COPY` of
//!    the whole batch into `records` (routed to the monthly partitions) under a savepoint. The
//!    primary key proves every record new, so each one is `Stored` with no lookup at all;
//! 3. otherwise (or when the `COPY` hits a unique violation and its savepoint is rolled back): one
//!    query joins the batch's (period, id) pairs, sent as two arrays, against `records`; the shared
//!    plan decides; replaced rows are deleted; new and replacing rows go in with one `COPY`;
//! 4. the summary deltas go in with one `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE`
//!    per summary table ([`super::deltas`]);
//! 5. (right after 1) the site's report generation is bumped (`repository/generation.rs`), so
//!    report answers cached by any instance are invalidated by the commit.

use std::collections::HashMap;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Statement, Transaction};

use super::super::plan::{Deltas, Outcomes, Planner, plan};
use super::super::row::{COLUMNS, RecordRow};
use super::PgFailure;
use super::copy::CopyPayload;
use super::deltas;
use super::read::row_from_sql;

/// The one writer connection and the statements every batch runs, prepared once: an unprepared
/// statement costs a parse round trip per batch, while the site's lock is held.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) client: Client,
    lock: Statement,
    generation: Statement,
    summaries: Statement,
    users: Statement,
}

impl Writer {
    /// Prepares the statements on `client` (the schema must be migrated).
    pub(super) async fn new(client: Client) -> Result<Self, tokio_postgres::Error> {
        let lock = client.prepare(LOCK_SQL).await?;
        let generation = client
            .prepare(super::super::generation::POSTGRES_BUMP)
            .await?;
        let summaries = client.prepare(&deltas::summaries_sql()).await?;
        let users = client.prepare(&deltas::users_sql()).await?;
        Ok(Self {
            client,
            lock,
            generation,
            summaries,
            users,
        })
    }
}

const LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1)";

/// A batch made ready for the writer connection.
pub(super) struct Prepared {
    candidates: Vec<(usize, RecordRow)>,
    fast: Option<FastPath>,
}

/// The fast path's writes, decided in advance: valid exactly when the `COPY` succeeds, as that
/// proves every record new.
struct FastPath {
    payload: CopyPayload,
    outcomes: Outcomes,
    deltas: Deltas,
}

/// Sorts the batch by id (each partition's index writes then go left to right) and, with
/// `try_fast_path`, encodes it and plans it as all new.
pub(super) fn prepare(candidates: Vec<(usize, RecordRow)>, try_fast_path: bool) -> Prepared {
    let candidates = sorted_by_id(candidates);
    let fast = try_fast_path.then(|| {
        let mut planner = Planner::with_capacity(candidates.len());
        for (position, row) in &candidates {
            planner.decide(*position, row, None);
        }
        let (outcomes, deltas) = planner.finish();
        FastPath {
            payload: CopyPayload::encode(candidates.iter().map(|(_, r)| r)),
            outcomes,
            deltas,
        }
    });
    Prepared { candidates, fast }
}

/// `candidates` in id order, the months interleaved. The keys are sorted and the rows moved once
/// into place: sorting the rows themselves moves each (about 200 bytes) log n times.
///
/// Not (period, id): `COPY` into a partitioned table buffers rows per partition and flushes every
/// ~64 kB, and each buffer makes one tuple slot per row it ever held. Each slot is registered with
/// the transaction's resource owner (PostgreSQL 15), an open-addressing table in which the
/// identical entries (one tuple descriptor) pile into one run, so the n-th costs n probes. A
/// batch in month order filled one partition's buffer at a time, so nearly every row made a slot:
/// profiled, a sixth of the database backend's time during ingest. In id order the months
/// interleave, each partition's buffer holds a few rows per flush, and the slots are made once.
fn sorted_by_id(candidates: Vec<(usize, RecordRow)>) -> Vec<(usize, RecordRow)> {
    let mut order: Vec<([u8; 32], usize)> = candidates
        .iter()
        .enumerate()
        .map(|(at, (_, row))| (row.record_id, at))
        .collect();
    order.sort_unstable();
    let mut slots: Vec<Option<(usize, RecordRow)>> = candidates.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|(_, at)| slots[at].take())
        .collect()
}

/// The outcomes, and whether some record was already stored (the hint for the site's next batch).
pub(super) async fn ingest(
    writer: &mut Writer,
    site: &str,
    prepared: Prepared,
) -> Result<(Outcomes, bool), PgFailure> {
    let Prepared { candidates, fast } = prepared;
    let Writer {
        client,
        lock,
        generation,
        summaries,
        users,
    } = writer;
    let mut tx = client.transaction().await?;
    tx.execute(&*lock, &[&site_lock(site)]).await?;
    // Under the site's lock, so the site's row adds no waiting (`repository/generation.rs`);
    // visible to every instance exactly when the batch is.
    tx.execute(&*generation, &[&site]).await?;
    if let Some(fast) = fast {
        let savepoint = tx.savepoint("all_new").await?;
        match fast.payload.copy_into(&savepoint, "records").await {
            Ok(()) => {
                savepoint.commit().await?;
                deltas::apply(&tx, &*summaries, &*users, &fast.deltas).await?;
                tx.commit().await?;
                return Ok((fast.outcomes, false));
            }
            Err(error) if error.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                savepoint.rollback().await?;
            }
            Err(error) => return Err(error.into()),
        }
    }
    let outcomes = careful(&mut tx, [&*summaries, &*users], candidates).await?;
    tx.commit().await?;
    Ok((outcomes, true))
}

/// Looks up the stored versions, then writes what the plan says.
async fn careful(
    tx: &mut Transaction<'_>,
    [summaries, users]: [&Statement; 2],
    candidates: Vec<(usize, RecordRow)>,
) -> Result<Outcomes, PgFailure> {
    // The lookup is a few thousand primary-key probes. Partitions filled since the last ANALYZE
    // carry stale statistics, and the planner then prefers sequential scans of every partition
    // joined by hash or merge, which grows with the table (measured: 20x slower at 400,000
    // records). Probing the index is right for any batch size, so say so for this transaction only;
    // JIT compilation would only add its start-up time.
    tx.batch_execute(
        "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL jit = off",
    )
    .await?;
    let periods: Vec<i32> = candidates.iter().map(|(_, r)| r.period.index()).collect();
    let ids: Vec<&[u8]> = candidates.iter().map(|(_, r)| &r.record_id[..]).collect();
    let select = format!(
        "SELECT {} FROM records r JOIN unnest($1::integer[], $2::bytea[]) AS k(period, record_id)
         ON r.period = k.period AND r.record_id = k.record_id",
        COLUMNS.map(|c| format!("r.{c}")).join(", ")
    );
    let mut stored = HashMap::new();
    for row in tx.query(&select, &[&periods, &ids]).await? {
        let row = row_from_sql(&row)?;
        stored.insert(row.record_id, row);
    }
    let plan = plan(candidates, &stored);
    if !plan.replaced.is_empty() {
        let periods: Vec<i32> = plan.replaced.iter().map(|r| r.period.index()).collect();
        let ids: Vec<&[u8]> = plan.replaced.iter().map(|r| &r.record_id[..]).collect();
        tx.execute(
            "DELETE FROM records r USING unnest($1::integer[], $2::bytea[]) AS k(period, record_id)
             WHERE r.period = k.period AND r.record_id = k.record_id",
            &[&periods, &ids],
        )
        .await?;
    }
    if !plan.inserts.is_empty() || !plan.replaced.is_empty() {
        CopyPayload::encode(plan.replaced.iter().chain(&plan.inserts))
            .copy_into(tx, "records")
            .await?;
    }
    deltas::apply(tx, summaries, users, &plan.deltas).await?;
    Ok(plan.outcomes)
}

/// The advisory lock key of a site: FNV-1a of its name, stable across processes and versions (std's
/// hasher is not). Two sites sharing a key only serialise each other; correctness does not suffer.
fn site_lock(site: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in site.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}
