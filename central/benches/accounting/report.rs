//! The per-VO report over many stored records. The records are loaded through the floors' bulk
//! paths (`SqliteFloor::load`, `PostgresFloor::load`), with the summaries the repository keeps
//! computed and written by the repository's own code; the report then reads only the summaries,
//! through `Repository::summaries`, as `accelfed report --by vo` does.

use std::time::{Duration, Instant};

use accelfed_accounting::repository::floor::{PostgresFloor, PostgresFloorTable, SqliteFloor};
use accelfed_accounting::repository::{Dimension, Period, Repository, SummaryFilter, SummaryQuery};
use accelfed_schemas::usage::UsageRecord;

use crate::records::batch;
use crate::{Backend, Settings, total_records};

/// Batches of the report's records, generated on another thread while the database loads.
fn generated(n: usize) -> impl Iterator<Item = Vec<UsageRecord>> {
    const SIZE: usize = 100_000;
    let (send, receive) = std::sync::mpsc::sync_channel(2);
    std::thread::spawn(move || {
        for b in 0..n.div_ceil(SIZE) {
            let mut records = batch(b, SIZE, 0);
            records.truncate(n - b * SIZE);
            if send.send(records).is_err() {
                return;
            }
        }
    });
    receive.into_iter()
}

/// Runs `query` `times` times; returns (first, median, max, rows).
async fn time_query(
    repository: &Repository,
    query: &SummaryQuery,
    times: usize,
) -> (Duration, Duration, Duration, usize) {
    let mut samples = Vec::with_capacity(times);
    let mut rows = 0;
    for _ in 0..times {
        let start = Instant::now();
        rows = repository
            .summaries(query.clone())
            .await
            .expect("a report")
            .len();
        samples.push(start.elapsed());
    }
    let first = samples[0];
    samples.sort();
    (first, samples[times / 2], samples[times - 1], rows)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub async fn run(settings: &Settings, backend: Backend) {
    let n = settings.report_records;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
    let server = accelfed_tests::postgres::BenchServer::from_env();
    let start = Instant::now();
    let (repository, database) = match backend {
        Backend::Sqlite => {
            let path = dir.path().join("report.sqlite");
            let mut floor = SqliteFloor::open(&path).await.expect("the SQLite loader");
            let loaded = tokio::task::block_in_place(|| floor.load(generated(n)))
                .expect("loading the records");
            assert_eq!(loaded, n as u64);
            drop(floor);
            let location = path.to_str().expect("a UTF-8 path");
            (
                Repository::open(location).await.expect("the repository"),
                None,
            )
        }
        Backend::Postgres => {
            let database = server.fresh("report").await;
            let mut floor = PostgresFloor::open(
                &database.url,
                PostgresFloorTable::Partitioned,
                &crate::records::periods(),
            )
            .await
            .expect("the PostgreSQL loader");
            let loaded = floor.load(generated(n)).await.expect("loading the records");
            assert_eq!(loaded, n as u64);
            drop(floor);
            (
                Repository::open(&database.url)
                    .await
                    .expect("the repository"),
                Some(database),
            )
        }
    };
    assert_eq!(total_records(&repository).await, n as i64);
    println!(
        "{backend}: loaded {n} records with their summaries in {:.0} s",
        start.elapsed().as_secs_f64()
    );
    let queries = [
        (
            "per VO",
            SummaryQuery {
                group_by: vec![Dimension::Vo],
                filter: SummaryFilter::default(),
            },
        ),
        (
            "per VO, 6 months, one site",
            SummaryQuery {
                group_by: vec![Dimension::Vo],
                filter: SummaryFilter {
                    from: Some(Period::new(2025, 3).expect("a month")),
                    to: Some(Period::new(2025, 8).expect("a month")),
                    site: Some("SITE-07".into()),
                    ..SummaryFilter::default()
                },
            },
        ),
        (
            "per VO per month (the SVG chart)",
            SummaryQuery {
                group_by: vec![Dimension::Vo, Dimension::Month],
                filter: SummaryFilter::default(),
            },
        ),
    ];
    for (what, query) in &queries {
        let (first, median, max, rows) = time_query(&repository, query, 101).await;
        println!(
            "{backend}: report {what} over {n} records: first {:.2} ms, median {:.2} ms, max {:.2} ms over 101 runs ({rows} rows)",
            ms(first),
            ms(median),
            ms(max)
        );
    }
    drop(repository);
    if let Some(database) = database {
        server.drop(database).await;
    }
}
