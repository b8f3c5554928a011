//! The accounting repository benchmark (not a timed test): ingest of records shipped over gRPC and
//! TLS on loopback against each database's floor, and the per-VO report over many stored records,
//! for SQLite and PostgreSQL, in one run. Client, service and database share the machine.
//!
//! ```text
//! cargo bench --workspace --locked --bench accounting
//! ```
//!
//! Sizes and choices by environment variable (defaults in brackets):
//!
//! * `ACCELFED_BENCH_RECORDS` [1000000]: records shipped (and written by the floor);
//! * `ACCELFED_BENCH_BATCH` [10000]: records per shipped batch, and per floor transaction;
//! * `ACCELFED_BENCH_IN_FLIGHT` [3]: batches on the wire at once, as accelfed ship's `in_flight`;
//! * `ACCELFED_BENCH_SITES` [1]: sites shipping at once, each from its own spool and thread;
//! * `ACCELFED_BENCH_REPORT_RECORDS` [10000000]: records stored for the report;
//! * `ACCELFED_BENCH_BACKENDS` [sqlite,postgres];
//! * `ACCELFED_BENCH_PARTS` [ingest,breakdown,report,api]: `breakdown` is the repository alone and
//!   the shipper's spool work alone, each against its own floor; `api` the report API under load
//!   ([`api`]);
//! * `ACCELFED_BENCH_API_RECORDS` [10000000]: records in the report API's repository (kept
//!   between runs: `target/tmp/bench-report-api/`, PostgreSQL `accelfed_bench_report_api_*`);
//! * `ACCELFED_BENCH_API_RATE` [200]: report API requests a second;
//! * `ACCELFED_BENCH_API_SECONDS` [60]: how long the load runs;
//! * `ACCELFED_BENCH_API_CACHE_MIB` [64]: the service's report answer cache (`[database]
//!   report_cache_mib`); 0 measures every report cold;
//! * `ACCELFED_BENCH_ROUNDS` [3]: rounds of floor then ingest; the median ratio is the figure;
//! * `ACCELFED_BENCH_POSTGRES` [postgres://postgres@127.0.0.1:5432]: the server; each run makes its
//!   own databases there and drops them. SQLite files go under `target/`.

#![allow(clippy::print_stdout)]

mod api;
mod api_load;
mod federation;
mod ingest;
mod records;
mod report;

use std::fmt;
use std::time::Duration;

use accelfed_accounting::repository::{Repository, SummaryFilter, SummaryQuery};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    fn floor(self) -> &'static str {
        match self {
            Backend::Sqlite => "prepared INSERTs, no service",
            Backend::Postgres => "binary COPY into the partitioned records table, no service",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        })
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    records: usize,
    batch: usize,
    in_flight: usize,
    sites: usize,
    report_records: usize,
    backends: Vec<Backend>,
    rounds: usize,
    ingest: bool,
    breakdown: bool,
    report: bool,
    api: bool,
    api_records: usize,
    api_rate: f64,
    api_seconds: f64,
    api_cache_mib: usize,
}

fn number(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .replace(['_', ','], "")
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, got {value:?}")),
        Err(_) => default,
    }
}

fn list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn settings() -> Settings {
    let backends = list("ACCELFED_BENCH_BACKENDS", "sqlite,postgres")
        .iter()
        .map(|b| match b.as_str() {
            "sqlite" => Backend::Sqlite,
            "postgres" => Backend::Postgres,
            other => panic!("ACCELFED_BENCH_BACKENDS: unknown backend {other:?}"),
        })
        .collect();
    let parts = list("ACCELFED_BENCH_PARTS", "ingest,breakdown,report,api");
    for part in &parts {
        assert!(
            ["ingest", "breakdown", "report", "api"].contains(&part.as_str()),
            "ACCELFED_BENCH_PARTS: unknown part {part:?}"
        );
    }
    let settings = Settings {
        records: number("ACCELFED_BENCH_RECORDS", 1_000_000),
        batch: number("ACCELFED_BENCH_BATCH", 10_000),
        in_flight: number(
            "ACCELFED_BENCH_IN_FLIGHT",
            accelfed_accounting::ship::DEFAULT_IN_FLIGHT,
        ),
        sites: number("ACCELFED_BENCH_SITES", 1).clamp(1, records::SITES),
        report_records: number("ACCELFED_BENCH_REPORT_RECORDS", 10_000_000),
        backends,
        rounds: number("ACCELFED_BENCH_ROUNDS", 3).max(1),
        ingest: parts.iter().any(|p| p == "ingest"),
        breakdown: parts.iter().any(|p| p == "breakdown"),
        report: parts.iter().any(|p| p == "report"),
        api: parts.iter().any(|p| p == "api"),
        api_records: number("ACCELFED_BENCH_API_RECORDS", 10_000_000).max(1),
        api_rate: number("ACCELFED_BENCH_API_RATE", 200).max(1) as f64,
        api_seconds: number("ACCELFED_BENCH_API_SECONDS", 60).max(1) as f64,
        api_cache_mib: number("ACCELFED_BENCH_API_CACHE_MIB", 64),
    };
    assert!(
        (1..=50_000).contains(&settings.batch),
        "ACCELFED_BENCH_BATCH must be 1..=50000, as accelfed ship's batch_size"
    );
    settings
}

pub fn rate(records: usize, time: Duration) -> f64 {
    records as f64 / time.as_secs_f64()
}

/// The records the summaries count, all sites and months.
pub async fn total_records(repository: &Repository) -> i64 {
    let rows = repository
        .summaries(SummaryQuery {
            group_by: vec![],
            filter: SummaryFilter::default(),
        })
        .await
        .expect("the summary totals");
    rows.first().map(|r| r.totals.records).unwrap_or(0)
}

/// The allocator the `accelfed` binary uses (`accelfed ship` and `accelfed serve` are what is
/// measured), for the floors too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let settings = settings();
    println!("{settings:?}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let certificates = accelfed_tests::pki::Pki::generate();
        for &backend in &settings.backends {
            if settings.ingest || settings.breakdown {
                ingest::run(&settings, backend, &certificates).await;
            }
        }
        for &backend in &settings.backends {
            if settings.report {
                report::run(&settings, backend).await;
            }
        }
        for &backend in &settings.backends {
            if settings.api {
                api::run(&settings, backend).await;
            }
        }
    });
}
