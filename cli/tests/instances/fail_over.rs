//! What a site does with the instances it lists, on one instance (in-process, SQLite) and an
//! address where nothing listens: records and documents go past the unreachable one to the next,
//! and the log names the instance that took them; a refusal (an unknown token) is the same at
//! every instance, so it is not tried elsewhere. `accelfed query` reads the offers from the first
//! instance that answers, on the same terms.

use accelfed_tests::central::{Server, report_by_vo};
use accelfed_tests::pki::pki;

use super::federation::{self, Expected, finish, name, text};

/// `https://localhost:<port>` where nothing listens: a port the kernel handed out, released.
fn unreachable() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("https://localhost:{port}")
}

#[test]
fn records_and_documents_go_past_an_unreachable_instance_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let database = dir.path().join("accounting.sqlite").display().to_string();
    let central =
        federation::central_toml_with(dir.path(), &pki, &format!("path = \"{database}\""), 1);
    let server = Server::start(&central);
    let dead = unreachable();
    let mut expected = Expected::new();
    let site = federation::site(
        dir.path(),
        0,
        &pki,
        &[dead.clone(), server.endpoint()],
        &[dead.clone(), server.url()],
        &mut expected,
    );
    site.meter();

    let ship = finish(site.start_ship(&[]));
    let log = String::from_utf8_lossy(&ship.stderr);
    assert!(ship.status.success(), "{}", text(&ship));
    assert!(log.contains("trying the next endpoint"), "{log}");
    let taken = log
        .lines()
        .find(|line| line.contains("the repository at this endpoint acknowledged"))
        .unwrap_or_else(|| panic!("no line names the instance: {log}"));
    assert!(
        taken.contains(&format!("endpoint={}", server.endpoint())) && taken.contains("records=15"),
        "{taken}"
    );
    assert_eq!(site.spool_depth(), 0);
    let (rows, _) = report_by_vo(&database);
    let wanted: Vec<(String, f64, u64)> = expected
        .iter()
        .map(|(vo, (hours, records))| (vo.clone(), *hours, *records))
        .collect();
    assert_eq!(rows, wanted);

    let push = finish(site.start_push(&[]));
    let log = String::from_utf8_lossy(&push.stderr);
    assert!(push.status.success(), "{}", text(&push));
    assert!(log.contains("pushing to the next registry URL"), "{log}");
    assert!(
        log.lines()
            .any(|line| line.contains("pushed to the registry") && line.contains(&server.url())),
        "the summary names the instance that took the document: {log}"
    );
}

#[test]
fn a_refused_token_is_not_tried_at_the_next_instance() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let database = dir.path().join("accounting.sqlite").display().to_string();
    // SITE-01 is not among the central's sites: its token is refused.
    let central =
        federation::central_toml_with(dir.path(), &pki, &format!("path = \"{database}\""), 1);
    let server = Server::start(&central);
    let dead = unreachable();
    let site = federation::site(
        dir.path(),
        1,
        &pki,
        &[server.endpoint(), dead.clone()],
        &[server.url(), dead.clone()],
        &mut Expected::new(),
    );
    site.meter();

    let ship = finish(site.start_ship(&[]));
    let log = String::from_utf8_lossy(&ship.stderr);
    assert_eq!(ship.status.code(), Some(1), "{}", text(&ship));
    assert!(log.contains("refused the site"), "{log}");
    assert!(
        !log.contains(&dead),
        "the next instance is never tried: {log}"
    );

    let push = finish(site.start_push(&[]));
    let log = String::from_utf8_lossy(&push.stderr);
    assert_eq!(push.status.code(), Some(1), "{}", text(&push));
    assert!(log.contains("(401)"), "{log}");
    assert!(
        !log.contains(&dead),
        "the next instance is never tried: {log}"
    );
}

/// `accelfed query --format json` with `urls` as `--url`.
fn query(urls: &[String], ca: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args([
            "query",
            "--format",
            "json",
            "--url",
            &urls.join(","),
            "--ca",
        ])
        .arg(ca)
        .env_remove("ACCELFED_REGISTRY_URL")
        .output()
        .unwrap()
}

#[test]
fn a_query_asks_past_an_instance_that_is_down_but_not_past_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let database = dir.path().join("accounting.sqlite").display().to_string();
    let central =
        federation::central_toml_with(dir.path(), &pki, &format!("path = \"{database}\""), 1);
    // Two instances of the central service; the first is stopped: its address is an instance
    // that is down.
    let first = Server::start(&central);
    let down = first.url();
    first.stop().unwrap();
    let second = Server::start(&central);
    let site = federation::site(
        dir.path(),
        0,
        &pki,
        &[second.endpoint()],
        &[second.url()],
        &mut Expected::new(),
    );
    let push = finish(site.start_push(&[]));
    assert!(push.status.success(), "{}", text(&push));

    let answer = query(&[down.clone(), second.url()], &pki.ca);
    let log = String::from_utf8_lossy(&answer.stderr);
    assert!(answer.status.success(), "{}", text(&answer));
    assert!(log.contains("asking the next registry URL"), "{log}");
    let offers: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
    let offers = offers.as_array().unwrap();
    assert!(
        !offers.is_empty() && offers.iter().all(|offer| offer["site"] == name(0).as_str()),
        "{offers:?}"
    );

    // A refusal (404: no registry under that path) is the answer; the next, which would answer,
    // is not asked.
    let refusing = format!("{}/no-registry-here", second.url());
    let answer = query(&[refusing, second.url()], &pki.ca);
    let log = String::from_utf8_lossy(&answer.stderr);
    assert_eq!(answer.status.code(), Some(1), "{}", text(&answer));
    assert!(log.contains("(404)"), "{log}");
    assert!(!log.contains("asking the next"), "{log}");
    assert!(answer.stdout.is_empty());
    // Every instance down: each is named.
    let answer = query(&[down.clone(), unreachable()], &pki.ca);
    let log = String::from_utf8_lossy(&answer.stderr);
    assert_eq!(answer.status.code(), Some(1), "{}", text(&answer));
    assert!(log.contains(&down), "{log}");
}
