//! Repository benchmarks (not timed tests): ingest against each database's own floor, and the
//! per-VO report over many stored records.
//!
//! ```text
//! cargo bench -p accelfed-accounting --bench repository -- ingest [--records N] [--batch B] [--backend sqlite|postgres|both] [--runs R]
//! cargo bench -p accelfed-accounting --bench repository -- report [--records N] [--backend ...]
//! ```
//!
//! PostgreSQL is the server at `ACCELFED_BENCH_POSTGRES` (default postgres://postgres@127.0.0.1:5432);
//! each run creates its own databases and drops them (`accelfed_testkit::postgres::BenchServer`). SQLite
//! files go under `target/`.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use accelfed_accounting::repository::floor::{PostgresFloor, PostgresFloorTable, SqliteFloor};
use accelfed_accounting::repository::{
    Dimension, IngestOptions, Period, Repository, SummaryFilter, SummaryQuery,
};
use accelfed_accounting::wire::Submission;
use accelfed_testkit::bench_records::{MONTHS, SITES, batch, now, site};
use accelfed_testkit::postgres::BenchServer;

struct Args {
    mode: String,
    records: usize,
    batch: usize,
    sqlite: bool,
    postgres: bool,
    runs: usize,
}

fn args() -> Args {
    let mut args = Args {
        mode: "ingest".into(),
        records: 1_000_000,
        batch: 10_000,
        sqlite: true,
        postgres: true,
        runs: 2,
    };
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(arg) = it.next() {
        let mut value = || it.next().expect("a value after the flag");
        match arg.as_str() {
            "--records" => args.records = value().parse().expect("a number of records"),
            "--batch" => args.batch = value().parse().expect("a batch size"),
            "--runs" => args.runs = value().parse().expect("a number of runs"),
            "--backend" => match value().as_str() {
                "sqlite" => args.postgres = false,
                "postgres" => args.sqlite = false,
                _ => {}
            },
            "ingest" | "report" => args.mode = arg,
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// Checks as the service makes them, at a fixed "now" after every generated month.
fn options() -> IngestOptions {
    IngestOptions {
        max_batch: 100_000,
        now: now(),
    }
}

/// The months the records fall in.
fn periods() -> Vec<Period> {
    MONTHS
        .iter()
        .map(|&(year, month)| Period::new(year, month).expect("a valid month"))
        .collect()
}

/// Ingests `records` records in batches through the repository; returns the database time and
/// checks every record was stored (or replaced, for a re-send).
async fn ingest(repo: &Repository, records: usize, size: usize, variant: u64) -> Duration {
    let mut spent = Duration::ZERO;
    for b in 0..records / size {
        let submissions: Vec<Submission> = batch(b, size, variant)
            .into_iter()
            .map(Submission::from)
            .collect();
        let start = Instant::now();
        let report = repo
            .ingest(&site(b % SITES), submissions, options())
            .await
            .unwrap();
        spent += start.elapsed();
        let (stored, replaced, unchanged, rejected) = report.counts();
        assert_eq!(
            rejected,
            0,
            "{:?}",
            report.outcomes.iter().find(|o| !o.is_acknowledged())
        );
        assert_eq!(stored + replaced + unchanged, size);
    }
    spent
}

async fn total_records(repo: &Repository) -> i64 {
    let rows = repo
        .summaries(SummaryQuery {
            group_by: vec![],
            filter: SummaryFilter::default(),
        })
        .await
        .unwrap();
    rows.first().map(|r| r.totals.records).unwrap_or(0)
}

fn rate(records: usize, time: Duration) -> f64 {
    records as f64 / time.as_secs_f64()
}

async fn bench_ingest(args: &Args) {
    let n = args.records;
    let size = args.batch;
    println!(
        "ingest: {n} records in batches of {size}, {SITES} sites, runs {}",
        args.runs
    );
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for run in 1..=args.runs {
        if args.sqlite {
            let mut floor = SqliteFloor::open(&dir.path().join(format!("floor{run}.sqlite")))
                .await
                .unwrap();
            let mut floor_time = Duration::ZERO;
            for b in 0..n / size {
                floor_time += floor.insert_batch(&batch(b, size, 0)).unwrap();
            }
            drop(floor);
            let path = dir.path().join(format!("repo{run}.sqlite"));
            let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
            let time = ingest(&repo, n, size, 0).await;
            assert_eq!(total_records(&repo).await, n as i64);
            let resend = ingest(&repo, n / 10, size, 1).await;
            assert_eq!(total_records(&repo).await, n as i64);
            println!(
                "sqlite run {run}: floor (plain INSERT) {:.0} rows/s; ingest {:.0} records/s = {:.0}% of floor; re-send of {} changed records {:.0} records/s",
                rate(n, floor_time),
                rate(n, time),
                100.0 * floor_time.as_secs_f64() / time.as_secs_f64(),
                n / 10,
                rate(n / 10, resend)
            );
            std::fs::remove_file(dir.path().join(format!("floor{run}.sqlite"))).ok();
            std::fs::remove_file(&path).ok();
        }
        if args.postgres {
            let pg = BenchServer::from_env();
            let mut floors = Vec::new();
            for (label, table) in [
                (
                    "COPY into partitioned records",
                    PostgresFloorTable::Partitioned,
                ),
                ("COPY into unpartitioned table", PostgresFloorTable::Plain),
            ] {
                let database = pg.fresh("floor").await;
                let mut floor = PostgresFloor::open(&database.url, table, &periods())
                    .await
                    .unwrap();
                let mut floor_time = Duration::ZERO;
                for b in 0..n / size {
                    floor_time += floor.copy_batch(&batch(b, size, 0)).await.unwrap();
                }
                drop(floor);
                pg.drop(database).await;
                floors.push((label, floor_time));
            }
            let database = pg.fresh("ingest").await;
            let repo = Repository::open(&database.url).await.unwrap();
            let time = ingest(&repo, n, size, 0).await;
            assert_eq!(total_records(&repo).await, n as i64);
            let resend = ingest(&repo, n / 10, size, 1).await;
            assert_eq!(total_records(&repo).await, n as i64);
            drop(repo);
            pg.drop(database).await;
            for (label, floor_time) in &floors {
                println!(
                    "postgres run {run}: floor ({label}) {:.0} rows/s; ingest = {:.0}% of it",
                    rate(n, *floor_time),
                    100.0 * floor_time.as_secs_f64() / time.as_secs_f64()
                );
            }
            println!(
                "postgres run {run}: ingest {:.0} records/s; re-send of {} changed records {:.0} records/s",
                rate(n, time),
                n / 10,
                rate(n / 10, resend)
            );
        }
    }
}

/// Times `query` `times` times; returns (median, max).
async fn time_query(
    repo: &Repository,
    query: &SummaryQuery,
    times: usize,
) -> (Duration, Duration, usize) {
    let mut samples = Vec::with_capacity(times);
    let mut rows = 0;
    for _ in 0..times {
        let start = Instant::now();
        rows = repo.summaries(query.clone()).await.unwrap().len();
        samples.push(start.elapsed());
    }
    samples.sort();
    (samples[times / 2], samples[times - 1], rows)
}

async fn bench_report(args: &Args) {
    let n = args.records;
    let size = 50_000.min(n);
    println!("report: {n} stored records, per-VO report");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let pg = BenchServer::from_env();
    let mut repos = Vec::new();
    let mut database = None;
    if args.sqlite {
        let path = dir.path().join("report.sqlite");
        repos.push((
            "sqlite",
            Repository::open(path.to_str().unwrap()).await.unwrap(),
        ));
    }
    if args.postgres {
        let fresh = pg.fresh("report").await;
        repos.push(("postgres", Repository::open(&fresh.url).await.unwrap()));
        database = Some(fresh);
    }
    for (label, repo) in &repos {
        let start = Instant::now();
        ingest(repo, n, size, 0).await;
        let stored = total_records(repo).await;
        assert_eq!(stored, n as i64);
        println!(
            "{label}: loaded {stored} records in {:.0} s",
            start.elapsed().as_secs_f64()
        );
        let by_vo = SummaryQuery {
            group_by: vec![Dimension::Vo],
            filter: SummaryFilter::default(),
        };
        let filtered = SummaryQuery {
            group_by: vec![Dimension::Vo],
            filter: SummaryFilter {
                from: Some(Period::new(2025, 3).unwrap()),
                to: Some(Period::new(2025, 8).unwrap()),
                site: Some("SITE-07".into()),
                ..SummaryFilter::default()
            },
        };
        let chart = SummaryQuery {
            group_by: vec![Dimension::Vo, Dimension::Month],
            filter: SummaryFilter::default(),
        };
        for (what, query) in [
            ("per VO", &by_vo),
            ("per VO, 6 months, one site", &filtered),
            ("per VO per month (SVG)", &chart),
        ] {
            let (median, max, rows) = time_query(repo, query, 101).await;
            println!(
                "{label}: report {what}: median {:.2} ms, max {:.2} ms over 101 runs ({rows} rows)",
                median.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3
            );
        }
    }
    drop(repos);
    if let Some(database) = database {
        pg.drop(database).await;
    }
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        match args.mode.as_str() {
            "report" => bench_report(&args).await,
            _ => bench_ingest(&args).await,
        }
    });
}
