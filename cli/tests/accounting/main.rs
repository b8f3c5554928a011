//! The accounting pipeline end to end: `accelfed meter` (manual usage as the test meter) -> spool
//! -> `accelfed ship` -> gRPC over TLS -> the central service (in-process, as `accelfed serve`
//! assembles it; `accelfed_tests::central::Server`) -> repository on SQLite and on PostgreSQL -> `accelfed report --by vo`, with exact GPU-hours; tokens of other
//! sites and wrong tokens refused; a repository that is down and comes back is caught up.

#![allow(clippy::unwrap_used)]

mod at_scale;
mod flood;
mod manual_usage;

use std::time::Duration;

use accelfed_tests::central::*;
use accelfed_tests::pki::pki;
use accelfed_tests::postgres;

/// 4 GPUs for a day (96 h), 0.5 GPU across a month boundary (6 h + 6 h), ten one-hour single-GPU
/// jobs in February (10 h), 2 GPUs for 10 h in March (20 h): atlas 108, cms 30; 14 records.
fn usage() -> String {
    let mut lines = vec![
        "# bare-metal nodes".to_owned(),
        r#"{"resource": "node-1", "model": "A100-SXM4-80GB", "count": 4, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}"#.to_owned(),
        r#"{"resource": "node-2", "model": "A100-SXM4-80GB", "count": 0.5, "vo": "atlas", "start": "2026-01-31T12:00:00Z", "end": "2026-02-01T12:00:00Z"}"#.to_owned(),
        r#"{"resource": "node-3", "model": "H100", "count": 2, "vo": "cms", "start": "2026-03-10T00:00:00Z", "end": "2026-03-10T10:00:00Z", "utilisation": 0.5}"#.to_owned(),
    ];
    for day in 1..=10 {
        lines.push(format!(
            r#"{{"resource": "job-{day}", "model": "H100", "count": 1, "vo": "cms", "record_type": "job", "start": "2026-02-{day:02}T08:00:00Z", "end": "2026-02-{day:02}T09:00:00Z"}}"#
        ));
    }
    lines.join("\n") + "\n"
}

const RECORDS: u64 = 14;

fn assert_expected_totals(database: &str) {
    let (rows, total) = report_by_vo(database);
    assert_eq!(
        rows,
        vec![("atlas".to_owned(), 108.0, 3), ("cms".to_owned(), 30.0, 11)],
        "per-VO GPU-hours"
    );
    assert_eq!(total, 138.0);
}

fn end_to_end(database_line: &str, database: &str) {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let central = central_config(dir.path(), &pki, database_line, "127.0.0.1:0");
    let server = Server::start(&central);
    let site = site_a(
        dir.path(),
        "site-a",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &usage(),
    );

    let metered = site.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    assert_eq!(site.spool_depth(), RECORDS);

    let shipped = site.ship(false);
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));
    assert_eq!(site.spool_depth(), 0, "every record acknowledged");
    assert_expected_totals(database);

    // Metering and shipping again changes nothing: same ids, same values.
    assert_eq!(status(&site.meter()), 0);
    assert_eq!(site.spool_depth(), 0);
    let again = site.ship(true);
    assert_eq!(status(&again), 0, "{}", stderr(&again));
    assert_expected_totals(database);

    let metrics = server.metrics();
    assert!(metrics.starts_with("HTTP/1.0 200"), "{metrics}");
    assert!(
        metrics.contains("accelfed_records_ingested_total{site=\"SITE-A\"} 14"),
        "{metrics}"
    );
    assert!(
        metrics.contains("accelfed_site_last_contact_timestamp_seconds{site=\"SITE-A\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("accelfed_site_spool_depth{site=\"SITE-A\"}"),
        "{metrics}"
    );
}

#[test]
fn sqlite_spool_to_report_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.sqlite");
    end_to_end(
        &format!("path = \"{}\"", path.display()),
        path.to_str().unwrap(),
    );
}

#[test]
fn postgres_spool_to_report_over_tls() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let database = runtime.block_on(postgres::TestDatabase::create());
    end_to_end(&format!("url = \"{}\"", database.url), &database.url);
    drop(database);
}

#[test]
fn another_sites_token_and_a_wrong_token_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);

    // SITE-A's records with SITE-B's token: each record refused as another site's, none stored.
    let borrowed = site_a(
        dir.path(),
        "borrowed",
        &server.endpoint(),
        TOKEN_B,
        &pki,
        &usage(),
    );
    assert_eq!(status(&borrowed.meter()), 0);
    let shipped = borrowed.ship(false);
    assert_eq!(status(&shipped), 1, "{}", stderr(&shipped));
    let log = stderr(&shipped);
    assert!(log.contains("wrong_site"), "{log}");
    assert!(
        log.contains("a site may only send its own records"),
        "{log}"
    );
    // One warning for the cause, with the count, not one per record.
    assert_eq!(
        log.matches(" WARN the repository refused").count(),
        1,
        "{log}"
    );
    assert!(log.contains("refused 14 record(s) as wrong_site"), "{log}");
    assert_eq!(
        borrowed.spool_depth(),
        RECORDS,
        "refused records stay in the spool"
    );
    let (rows, total) = report_by_vo(&database);
    assert!(rows.is_empty() && total == 0.0, "{rows:?}");

    // A token the repository does not know: the call is refused, nothing sent, exit 1.
    let unknown = "not-a-known-token";
    let stranger = site_a(
        dir.path(),
        "stranger",
        &server.endpoint(),
        unknown,
        &pki,
        &usage(),
    );
    assert_eq!(status(&stranger.meter()), 0);
    assert_unknown_token_refused(&stranger.ship(false), unknown);
    assert_eq!(stranger.spool_depth(), RECORDS);
    // The shipper stops at the first refusal; the batches already on the wire with it (at most
    // `in_flight`, 3 by default) are refused too.
    let failures: u64 = server
        .metrics()
        .lines()
        .find_map(|line| line.strip_prefix("accelfed_auth_failures_total "))
        .and_then(|value| value.trim().parse().ok())
        .expect("the auth failure counter");
    assert!((1..=3).contains(&failures), "{failures} refused calls");

    // The rightful owner ships the same records afterwards.
    let owner = site_a(
        dir.path(),
        "owner",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &usage(),
    );
    assert_eq!(status(&owner.meter()), 0);
    assert_eq!(status(&owner.ship(false)), 0);
    assert_expected_totals(&database);
}

#[test]
fn a_repository_down_then_up_is_caught_up() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    // A free port, released so the server can take it later.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let repository = dir.path().join("accounting.sqlite");
    let central = central_config(
        dir.path(),
        &pki,
        &format!("path = \"{}\"", repository.display()),
        &format!("127.0.0.1:{port}"),
    );
    let endpoint = format!("https://localhost:{port}");

    // Down: with few attempts, ship gives up, exit 1, everything still in the spool.
    let site_dir = dir.path().join("site");
    let quick = site_a(dir.path(), "site", &endpoint, TOKEN_A, &pki, &usage());
    assert_eq!(status(&quick.meter()), 0);
    let failed = quick.ship(false);
    assert_eq!(status(&failed), 1);
    assert!(
        stderr(&failed).contains("retry may help"),
        "{}",
        stderr(&failed)
    );
    assert_eq!(quick.spool_depth(), RECORDS);

    // Patient: many attempts; the repository comes up while ship is retrying.
    std::fs::write(
        site_dir.join("site.toml"),
        std::fs::read_to_string(site_dir.join("site.toml"))
            .unwrap()
            .replace("attempts = 2", "attempts = 60"),
    )
    .unwrap();
    let shipping = accelfed()
        .arg("ship")
        .arg("--config")
        .arg(site_dir.join("site.toml"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let _server = Server::start(&central);
    let output = shipping.wait_with_output().unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("trying again"),
        "{}",
        stderr(&output)
    );
    assert_eq!(quick.spool_depth(), 0);
    assert_expected_totals(repository.to_str().unwrap());
}

/// The site's own description: one node with one A100 (so 720 GPU-hours in April).
const ONE_A100: &str = r#"
[[static.batch]]
id = "hpc"
manager = "SLURM"

[[static.batch.node_type]]
id = "a100"
count = 1

[[static.batch.node_type.gpu]]
id = "a100"
vendor = "NVIDIA"
model = "NVIDIA A100-SXM4-80GB"
count = 1

[[static.batch.share]]
id = "gpu"
vos = ["atlas"]
node_types = ["a100"]
"#;

/// Usage of the site's one A100 in April 2026: `node-1` in two periods (10 days, then 5 days), and
/// `node-2` (the same GPU, described twice by mistake when `overlap`) for the whole month.
fn april(overlap: bool) -> String {
    let mut lines = vec![
        r#"{"resource": "node-1", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-01T00:00:00Z", "end": "2026-04-11T00:00:00Z"}"#,
        r#"{"resource": "node-1", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-20T00:00:00Z", "end": "2026-04-25T00:00:00Z"}"#,
    ];
    if overlap {
        lines.push(r#"{"resource": "node-2", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"}"#);
    }
    lines.join("\n") + "\n"
}
