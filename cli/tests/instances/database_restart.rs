//! A database restart under load: `accelfed serve` on a PostgreSQL server of the test's own, four
//! sites metering a new version of every record and shipping it, round after round, and pushing
//! their documents, while the server is stopped (`pg_ctl stop -m fast`, which ends every session)
//! and started again. `serve` is never restarted: once the database is back, every site's ship
//! and push succeed, the repository's report equals the last round's usage (every record there,
//! once, in its last version), and a second instance on the same database, which heard the pushes
//! through `LISTEN`, answers the registry's queries as the first one second after the last push.
//! And a `serve` started while its database is down waits for it rather than exiting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use accelfed_tests::central::{ServeProcess, report_by_vo};
use accelfed_tests::pki::pki;
use accelfed_tests::postgres::PrivateServer;

use super::federation::{self, Expected, Site, finish, same_offers, text};

const SITES: usize = 4;
/// How long the service has, after the database is back, to take a site's records.
const RECOVERY: Duration = Duration::from_secs(30);

#[test]
#[ignore = "needs PostgreSQL's server programs (initdb, pg_ctl)"]
fn a_database_restart_under_load_costs_no_record_and_no_serve_restart() {
    let postgres = PrivateServer::start_new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = runtime.block_on(postgres.create_database("accelfed"));
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let central = federation::central_toml(dir.path(), &pki, &url, SITES);
    let serve = ServeProcess::start(&central);
    let other = ServeProcess::start(&central);
    // Started through: this test is about a running `serve` (one that starts while the database
    // is down waits for it: the test below).
    for instance in [&serve, &other] {
        let log = instance.log_until(RECOVERY, |line| line.contains("accelfed serve: listening"));
        assert!(
            log.iter()
                .any(|line| line.contains("accelfed serve: listening")),
            "{}",
            log.join("\n")
        );
    }
    let sites: Vec<Site> = (0..SITES)
        .map(|index| {
            let mut ignored = Expected::new();
            federation::site(
                dir.path(),
                index,
                &pki,
                &[serve.endpoint()],
                &[serve.url()],
                &mut ignored,
            )
        })
        .collect();
    let sites = Arc::new(sites);

    // The load: rounds of meter, ship and push over every site until told to stop; failures
    // while the database is down are expected (the records stay in the spools).
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let load = {
        let (sites, stop, done) = (Arc::clone(&sites), Arc::clone(&stop), Arc::clone(&done));
        std::thread::spawn(move || {
            let (mut round, mut failed) = (0, 0);
            while !stop.load(Ordering::Relaxed) {
                round += 1;
                for site in sites.iter() {
                    site.rewrite_usage(round, &mut Expected::new());
                    site.meter();
                    let ship = site.start_ship(&[]);
                    let push = site.start_push(&[]);
                    let (ship, push) = (finish(ship), finish(push));
                    failed += usize::from(!ship.status.success());
                    failed += usize::from(!push.status.success());
                }
                done.store(round, Ordering::Relaxed);
            }
            (round, failed)
        })
    };
    // A round done before the restart, and one begun and done after it.
    let rounds_done = |at_least: u64| {
        while done.load(Ordering::Relaxed) < at_least {
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    rounds_done(1);
    postgres.stop("fast");
    std::thread::sleep(Duration::from_secs(1));
    postgres.start();
    let back = Instant::now();
    rounds_done(done.load(Ordering::Relaxed) + 2);
    stop.store(true, Ordering::Relaxed);
    let (rounds, failed) = load.join().unwrap();

    assert!(
        failed > 0,
        "no ship or push met the database down: the restart fell between rounds"
    );

    // One more version of every record, shipped and pushed after the restart by the same
    // `serve`: each site's first tries may still meet a connection of before the restart.
    let mut expected = Expected::new();
    for site in sites.iter() {
        site.rewrite_usage(rounds + 1, &mut expected);
        site.meter();
        for what in ["ship", "push"] {
            loop {
                let output = finish(match what {
                    "ship" => site.start_ship(&[]),
                    _ => site.start_push(&[]),
                });
                if output.status.success() {
                    break;
                }

                assert!(
                    back.elapsed() < RECOVERY,
                    "{}: {what} still fails {} s after the database came back: {}",
                    site.index,
                    back.elapsed().as_secs(),
                    text(&output)
                );
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        assert_eq!(site.spool_depth(), 0, "{}", site.index);
    }
    let last_push = Instant::now();
    std::thread::sleep(Duration::from_secs(1).saturating_sub(last_push.elapsed()));
    assert_eq!(same_offers(&runtime, [&serve, &other], &pki), SITES);
    let (rows, total) = report_by_vo(&url);
    let wanted: Vec<(String, f64, u64)> = expected
        .iter()
        .map(|(vo, (hours, records))| (vo.clone(), *hours, *records))
        .collect();
    assert_eq!(rows, wanted);
    assert_eq!(
        total,
        expected.values().map(|(hours, _)| hours).sum::<f64>()
    );
    assert!(
        serve.metrics().contains("accelfed"),
        "the same serve still answers"
    );
}

#[test]
#[ignore = "needs PostgreSQL's server programs (initdb, pg_ctl)"]
fn serve_started_while_its_database_is_down_waits_for_it() {
    let postgres = PrivateServer::start_new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = runtime.block_on(postgres.create_database("accelfed"));
    postgres.stop("fast");
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let central = federation::central_toml(dir.path(), &pki, &url, 1);
    let serve = ServeProcess::start(&central);
    let waiting = serve.log_until(RECOVERY, |line| line.contains("does not answer yet"));
    assert!(
        waiting
            .iter()
            .any(|line| line.contains("does not answer yet") && line.contains("waiting up to")),
        "{}",
        waiting.join("\n")
    );
    postgres.start();
    let started = serve.log_until(RECOVERY, |line| line.contains("accelfed serve: listening"));
    assert!(
        started
            .iter()
            .any(|line| line.contains("accelfed serve: listening")),
        "{}",
        started.join("\n")
    );
    let mut expected = Expected::new();
    let site = federation::site(
        dir.path(),
        0,
        &pki,
        &[serve.endpoint()],
        &[serve.url()],
        &mut expected,
    );
    site.meter();
    let ship = finish(site.start_ship(&[]));
    assert!(ship.status.success(), "{}", text(&ship));
    let (rows, _) = report_by_vo(&url);
    assert_eq!(rows.iter().map(|row| row.2).sum::<u64>(), 15);
}
