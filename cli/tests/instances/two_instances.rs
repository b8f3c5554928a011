//! Two `accelfed serve` on one PostgreSQL database, 20 sites that list both: every site meters,
//! then ships and pushes its registry document at the same time as the others, and one instance
//! is killed with SIGKILL while they do. Every `ship` and `provide` finishes on the instance that
//! is left, the repository holds each record once (its report equals the sums of the usage files),
//! and, after a last round of pushes through both instances (the killed one started again), both
//! answer the registry's queries identically one second after the last push.
//!
//! Sites ship with the `accelfed` binary, one process each, all twenty at once.

use std::process::Child;
use std::time::{Duration, Instant};

use accelfed_tests::central::{ServeProcess, report_by_vo};
use accelfed_tests::pki::pki;
use accelfed_tests::postgres::TestDatabase;

use super::federation::{self, Expected, Site, finish, same_offers, text};

const SITES: usize = 20;

#[test]
#[ignore = "needs PostgreSQL on 127.0.0.1:5432"]
fn two_instances_lose_and_double_nothing_when_one_is_killed_and_answer_alike() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let database = runtime.block_on(TestDatabase::create());
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let central = federation::central_toml(dir.path(), &pki, &database.url, SITES);
    let first = ServeProcess::start(&central);
    let second = ServeProcess::start(&central);

    // Half the sites name the first instance first, half the second: ingest and pushes go
    // through both until the first dies.
    let mut expected = Expected::new();
    let sites: Vec<Site> = (0..SITES)
        .map(|index| {
            let (mut endpoints, mut urls) = (
                vec![first.endpoint(), second.endpoint()],
                vec![first.url(), second.url()],
            );
            if index % 2 == 1 {
                endpoints.reverse();
                urls.reverse();
            }
            federation::site(dir.path(), index, &pki, &endpoints, &urls, &mut expected)
        })
        .collect();
    for site in &sites {
        site.meter();
    }

    let started: Vec<(Child, Child)> = sites
        .iter()
        .map(|site| (site.start_ship(&[]), site.start_push(&[])))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    drop(first); // SIGKILL, mid-run: the sites are still shipping (checked below).
    let mut failed_over = 0;
    for (site, (ship, push)) in sites.iter().zip(started) {
        let (ship, push) = (finish(ship), finish(push));
        assert!(
            ship.status.success(),
            "{}: ship: {}",
            site.index,
            text(&ship)
        );
        assert!(
            push.status.success(),
            "{}: push: {}",
            site.index,
            text(&push)
        );
        assert_eq!(site.spool_depth(), 0, "{}: {}", site.index, text(&ship));
        let log = String::from_utf8_lossy(&ship.stderr);
        if log.contains("trying the next endpoint") {
            failed_over += 1;
            assert!(
                log.contains(&format!("endpoint={}", second.endpoint())),
                "the ship names the instance that took its records: {log}"
            );
        }
    }
    assert!(
        failed_over > 0,
        "the kill landed after every ship had finished; nothing failed over"
    );

    // Nothing lost, nothing counted twice.
    let (rows, total) = report_by_vo(&database.url);
    let found: Vec<(String, f64, u64)> = rows;
    let wanted: Vec<(String, f64, u64)> = expected
        .iter()
        .map(|(vo, (hours, records))| (vo.clone(), *hours, *records))
        .collect();
    assert_eq!(found, wanted);
    assert_eq!(
        total,
        expected.values().map(|(hours, _)| hours).sum::<f64>()
    );

    // The killed instance comes back on new ports; a last round of pushes through both, each
    // site to one of them (the flag overrides the file's list).
    let first = ServeProcess::start(&central);
    let pushes: Vec<Child> = sites
        .iter()
        .map(|site| {
            let url = if site.index % 2 == 0 {
                first.url()
            } else {
                second.url()
            };
            site.start_push(&["--registry-url", &url])
        })
        .collect();
    for (site, push) in sites.iter().zip(pushes) {
        let push = finish(push);
        assert!(
            push.status.success(),
            "{}: push: {}",
            site.index,
            text(&push)
        );
    }
    let last_push = Instant::now();
    std::thread::sleep(Duration::from_secs(1).saturating_sub(last_push.elapsed()));
    let sites_offering = same_offers(&runtime, [&first, &second], &pki);
    assert_eq!(sites_offering, SITES);
}
