//! Ingest over gRPC and TLS against the database's own floor, in one run:
//!
//! * floor: the same rows written with no service and no repository logic, in transactions of the
//!   shipping batch size (SQLite: prepared `INSERT`s; PostgreSQL: one binary `COPY` per batch into
//!   the repository's partitioned `records`), see `accelfed_accounting::repository::floor`;
//! * ingest: each site's records in its own spool (filled before timing), then `accelfed ship`'s
//!   code (`accelfed_accounting::ship::ship`, its TLS client and bearer token, its batch planning)
//!   sending them to `accelfed serve` started in-process through `accelfed_central::run` (the
//!   harness's `Server`: tonic over TLS on 127.0.0.1, the production accept path, limits and token
//!   check) in front of the repository, summaries kept on ingest. Timed from the first call to the last acknowledgement.
//!
//! Each site ships from its own thread with its own runtime, as separate `accelfed ship`
//! processes would; the records of site `s` are its share of the same numbered records the floor
//! writes.

use std::time::{Duration, Instant};

use accelfed_accounting::repository::floor::{PostgresFloor, PostgresFloorTable, SqliteFloor};
use accelfed_accounting::repository::{DEFAULT_MAX_BATCH, Repository};
use accelfed_accounting::ship::{Client, ClientSettings, ShipOptions, ship};
use accelfed_accounting::spool::{ShipLimits, Spool, plan};
use accelfed_accounting::wire::Submission;
use accelfed_central::TokenHash;
use accelfed_schemas::usage::UsageRecord;
use accelfed_tests::central::Server;

use crate::records::{record, site};
use crate::{Backend, Settings, rate, total_records};
use accelfed_tests::pki::Pki as Certificates;
use accelfed_tests::postgres::{BenchDatabase, BenchServer};

/// The records of site `s` out of `n` records over `sites` sites, in chunks of `size`.
fn site_records(
    n: usize,
    sites: usize,
    s: usize,
    size: usize,
) -> impl Iterator<Item = Vec<UsageRecord>> {
    let share = n / sites;
    let name = site(s);
    let first = (s * share) as u64;
    let last = first + share as u64;
    (first..last).step_by(size).map(move |start| {
        (start..(start + size as u64).min(last))
            .map(|i| record(&name, i, 0))
            .collect()
    })
}

fn token(s: usize) -> String {
    // 64 hex digits, the form `accelfed token` gives (others are refused before hashing).
    format!("{:064x}", 0xbe7c_0000_usize + s)
}

async fn floor(settings: &Settings, backend: Backend, dir: &std::path::Path) -> Duration {
    let (n, sites, size) = (settings.records, settings.sites, settings.batch);
    let mut spent = Duration::ZERO;
    match backend {
        Backend::Sqlite => {
            let mut floor = SqliteFloor::open(&dir.join("floor.sqlite"))
                .await
                .expect("the SQLite floor");
            for s in 0..sites {
                for records in site_records(n, sites, s, size) {
                    spent += floor.insert_batch(&records).expect("a floor batch");
                }
            }
        }
        Backend::Postgres => {
            let server = BenchServer::from_env();
            let database = server.fresh("floor").await;
            let mut floor = PostgresFloor::open(
                &database.url,
                PostgresFloorTable::Partitioned,
                &crate::records::periods(),
            )
            .await
            .expect("the PostgreSQL floor");
            server.checkpoint().await;
            for s in 0..sites {
                for records in site_records(n, sites, s, size) {
                    spent += floor.copy_batch(&records).await.expect("a floor batch");
                }
            }
            drop(floor);
            server.drop(database).await;
        }
    }
    spent
}

/// Fills one spool per site, untimed (that is the meter's work).
fn spools(settings: &Settings, dir: &std::path::Path) -> Vec<Spool> {
    (0..settings.sites)
        .map(|s| {
            let mut spool =
                Spool::open(dir.join(format!("site-{s:02}.spool"))).expect("a site spool");
            for records in site_records(settings.records, settings.sites, s, 50_000) {
                spool.write_run(&records).expect("a meter run");
            }
            spool
        })
        .collect()
}

/// Ships every spool to the service at `port`, each from its own thread; returns the time from
/// the first call to the last acknowledgement.
fn ship_all(settings: &Settings, spools: Vec<Spool>, ca_pem: &[u8], port: u16) -> Duration {
    let options = ShipOptions {
        limits: ShipLimits {
            max_records: settings.batch,
            ..ShipLimits::default()
        },
        in_flight: settings.in_flight,
        ..ShipOptions::default()
    };
    let start = Instant::now();
    let shipped: usize = std::thread::scope(|scope| {
        let threads: Vec<_> = spools
            .into_iter()
            .enumerate()
            .map(|(s, mut spool)| {
                scope.spawn(move || {
                    // As `accelfed ship` runs it: the spool work on this thread, the network on
                    // two workers.
                    let runtime = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .expect("a shipper runtime");
                    // The channel is built lazily on the runtime it will run on.
                    let _runtime = runtime.enter();
                    let mut client = Client::new(&ClientSettings {
                        endpoint: format!("https://localhost:{port}"),
                        fallbacks: Vec::new(),
                        ca_pem: Some(ca_pem.to_vec()),
                        token: token(s),
                        timeout: Duration::from_secs(600),
                    })
                    .expect("a shipping client");
                    let report = runtime
                        .block_on(ship(&mut spool, &mut client, &options))
                        .expect("shipping");
                    assert!(report.rejected.is_empty(), "{:?}", report.rejected.first());
                    assert_eq!(report.retries, 0, "no call should have failed");
                    report.acknowledged
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a shipper thread"))
            .sum()
    });
    let spent = start.elapsed();
    assert_eq!(
        shipped,
        settings.records / settings.sites * settings.sites,
        "every record acknowledged"
    );
    spent
}

/// Ships into a fresh repository (at `location`) behind the whole service as `accelfed serve`
/// assembles it (`accelfed_central::run` from a central.toml written in `dir`, through the test
/// harness: its listeners, limits and token checks); returns the shipping time.
async fn ingest(
    settings: &Settings,
    (repository, location): (Repository, String),
    dir: &std::path::Path,
    certificates: &Certificates,
    spools: Vec<Spool>,
) -> Duration {
    std::fs::write(dir.join("cert.pem"), &certificates.cert_pem).expect("writing the certificate");
    std::fs::write(dir.join("key.pem"), &certificates.key_pem).expect("writing the key");
    let mut config = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\n{} = {:?}\n\
         [ingest]\nmax_batch = {DEFAULT_MAX_BATCH}\n",
        if location.contains("://") {
            "url"
        } else {
            "path"
        },
        location
    );
    for s in 0..settings.sites {
        config.push_str(&format!(
            "[sites.{}]\ntoken_sha256 = \"{}\"\n",
            site(s).as_str(),
            TokenHash::of(&token(s)).to_hex()
        ));
    }
    let path = dir.join("central.toml");
    std::fs::write(&path, config).expect("writing central.toml");
    // The harness starts and stops the service on a runtime of its own, blocking while it does.
    let server = tokio::task::spawn_blocking(move || Server::start(&path))
        .await
        .expect("the service started");
    let port = server.grpc.port();
    let ca_pem = certificates.ca_pem.clone().into_bytes();
    let shippers = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || ship_all(&settings, spools, &ca_pem, port))
    };
    let spent = shippers.await.expect("the shippers");
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .expect("the service's thread")
        .expect("the service stopped cleanly");
    let expected = (settings.records / settings.sites * settings.sites) as i64;
    assert_eq!(
        total_records(&repository).await,
        expected,
        "summaries count every record"
    );
    spent
}

/// For the breakdown: the same batches straight into `Repository::ingest` (checks, ids, rows,
/// summaries; no gRPC, no spool), into a repository of its own.
async fn direct(settings: &Settings, repository: &Repository) -> Duration {
    let (n, sites, size) = (settings.records, settings.sites, settings.batch);
    let mut spent = Duration::ZERO;
    for s in 0..sites {
        for records in site_records(n, sites, s, size) {
            let submissions: Vec<Submission> = records.into_iter().map(Submission::from).collect();
            let start = Instant::now();
            repository
                .ingest(
                    &site(s),
                    submissions,
                    crate::records::options(DEFAULT_MAX_BATCH),
                )
                .await
                .expect("a direct batch");
            spent += start.elapsed();
        }
    }
    spent
}

/// For the breakdown: the shipper's work on its own spool with no network and no service: page
/// pending records, plan batches, encode them and acknowledge every record, as `ship` does per
/// batch (it counts the spool's depth once per run).
fn client_alone(spool: &mut Spool, batch: usize) -> Duration {
    let limits = ShipLimits {
        max_records: batch,
        ..ShipLimits::default()
    };
    let start = Instant::now();
    let mut after = 0;
    loop {
        let page = spool.pending_after(after, batch * 4).expect("a page");
        let Some(last) = page.last() else {
            break;
        };
        after = last.enqueued;
        let pending = page;
        for indexes in plan(&pending, limits).batches {
            let encoded: Vec<_> = indexes.iter().map(|&i| pending[i].wire.clone()).collect();
            std::hint::black_box(encoded);
            let acks: Vec<_> = indexes.iter().map(|&i| pending[i].ack()).collect();
            spool.acknowledge(&acks).expect("acknowledging");
        }
    }
    start.elapsed()
}

/// A fresh repository of `backend` named `name`, and its PostgreSQL database to drop after
/// (checkpointed, so the phase timed next starts a checkpoint cycle of its own).
async fn fresh_repository(
    backend: Backend,
    dir: &std::path::Path,
    name: &str,
) -> ((Repository, String), Option<BenchDatabase>) {
    match backend {
        Backend::Sqlite => {
            let path = dir.join(format!("{name}.sqlite"));
            let location = path.to_str().expect("a UTF-8 path");
            let repository = Repository::open(location).await.expect("the repository");
            ((repository, location.to_owned()), None)
        }
        Backend::Postgres => {
            let server = BenchServer::from_env();
            let database = server.fresh(name).await;
            let repository = Repository::open(&database.url)
                .await
                .expect("the repository");
            server.checkpoint().await;
            let location = database.url.clone();
            ((repository, location), Some(database))
        }
    }
}

async fn drop_database(database: Option<BenchDatabase>) {
    if let Some(database) = database {
        BenchServer::from_env().drop(database).await;
    }
}

/// Rounds of floor then ingest, for one database (the ratio is taken per round, as the disk's
/// pace drifts between minutes on a shared machine), then the breakdown if asked; prints the
/// figures.
pub async fn run(settings: &Settings, backend: Backend, certificates: &Certificates) {
    let n = settings.records / settings.sites * settings.sites;
    let mut ratios = Vec::new();
    let rounds = if settings.ingest { settings.rounds } else { 0 };
    for round in 1..=rounds {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
        let floor_time = floor(settings, backend, dir.path()).await;
        let spools = spools(settings, dir.path());
        let (repository, database) = fresh_repository(backend, dir.path(), "ingest").await;
        let cpu_before = process_cpu();
        let spent = ingest(settings, repository, dir.path(), certificates, spools).await;
        let cpu = process_cpu() - cpu_before;
        drop_database(database).await;
        let ratio = floor_time.as_secs_f64() / spent.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{backend}: round {round}: floor ({}, {}-row transactions): {n} rows in {:.2} s = {:.0} rows/s",
            backend.floor(),
            settings.batch,
            floor_time.as_secs_f64(),
            rate(n, floor_time)
        );
        println!(
            "{backend}: round {round}: ingest over gRPC/TLS ({} site(s) shipping batches of {}): {n} records in {:.2} s = {:.0} records/s = {:.0}% of the floor",
            settings.sites,
            settings.batch,
            spent.as_secs_f64(),
            rate(n, spent),
            100.0 * ratio
        );
        println!(
            "{backend}: round {round}: CPU of the shippers and the service (this process) while shipping: {:.2} s = {:.2} us a record",
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / n as f64
        );
    }
    ratios.sort_by(f64::total_cmp);
    if !ratios.is_empty() {
        println!(
            "{backend}: ingest over gRPC/TLS vs floor, median of {} round(s): {:.0}% (lowest {:.0}%, highest {:.0}%)",
            ratios.len(),
            100.0 * ratios[ratios.len() / 2],
            100.0 * ratios[0],
            100.0 * ratios[ratios.len() - 1]
        );
    }
    if settings.breakdown {
        breakdown(settings, backend).await;
    }
}

/// The same batches straight into `Repository::ingest`, against a floor measured just before,
/// and the shipper's spool work alone.
async fn breakdown(settings: &Settings, backend: Backend) {
    let n = settings.records / settings.sites * settings.sites;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
    let floor_time = floor(settings, backend, dir.path()).await;
    let ((repository, _), database) = fresh_repository(backend, dir.path(), "direct").await;
    let direct_time = direct(settings, &repository).await;
    drop(repository);
    drop_database(database).await;
    let client_time = {
        let mut spool = Spool::open(dir.path().join("alone.spool")).expect("a spool");
        for records in site_records(n, 1, 0, 50_000) {
            spool.write_run(&records).expect("a meter run");
        }
        tokio::task::block_in_place(|| client_alone(&mut spool, settings.batch))
    };
    println!(
        "{backend}: breakdown: floor {:.2} s; the same batches straight into Repository::ingest (no gRPC, no spool): {:.2} s = {:.0} records/s = {:.0}% of that floor; the shipper's spool work alone (page, encode, depth, acknowledge; no network): {:.2} s",
        floor_time.as_secs_f64(),
        direct_time.as_secs_f64(),
        rate(n, direct_time),
        100.0 * floor_time.as_secs_f64() / direct_time.as_secs_f64(),
        client_time.as_secs_f64()
    );
}

/// CPU time of this whole process so far, all threads, user and system (`/proc/self/stat`, in
/// clock ticks of 10 ms): what the shippers and the service cost beside the database.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&at| fields.get(at)?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}
