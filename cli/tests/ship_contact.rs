//! `accelfed ship` never succeeds silently: with an empty spool it still calls the repository (an
//! empty batch carrying the spool's depth), so a wrong token or CA fails the run, and the
//! central's metrics show the site's contact; a spool path whose folder does not exist is refused
//! (exit 2) instead of starting a new, empty spool. The binary against the central service
//! in-process over TLS (`accelfed_tests::central::Server`).

#![allow(clippy::unwrap_used)]

use accelfed_tests::central::*;
use accelfed_tests::pki::{pki, unrelated_ca_pem};

/// The metric line of `name{site="SITE-A"}`, its value.
fn site_metric(metrics: &str, name: &str) -> Option<String> {
    let prefix = format!("{name}{{site=\"SITE-A\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(str::to_owned)
}

#[test]
fn an_empty_spool_still_makes_contact_and_a_wrong_token_or_ca_fails() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, _database) = Server::start_sqlite(dir.path(), &pki);

    // A token the repository does not know, nothing to send: refused all the same, exit 1.
    let unknown = "not-a-known-token";
    let stranger = site_a(
        dir.path(),
        "stranger",
        &server.endpoint(),
        unknown,
        &pki,
        "",
    );
    assert_unknown_token_refused(&stranger.ship(false), unknown);
    let metrics = server.metrics();
    assert!(
        metrics
            .lines()
            .any(|l| l == "accelfed_auth_failures_total 1"),
        "{metrics}"
    );
    // Refused, so no contact: SITE-A is configured and has never called (its last contact 0).
    assert_eq!(
        site_metric(&metrics, "accelfed_site_last_contact_timestamp_seconds").as_deref(),
        Some("0"),
        "{metrics}"
    );

    // A CA that did not sign the repository's certificate: a settings error, exit 2.
    let other_ca = dir.path().join("other-ca.pem");
    std::fs::write(&other_ca, unrelated_ca_pem("another CA")).unwrap();
    let mistrusting = site_a(
        dir.path(),
        "mistrusting",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        "",
    );
    let config = std::fs::read_to_string(&mistrusting.config).unwrap();
    std::fs::write(
        &mistrusting.config,
        config.replace(
            &format!("ca = \"{}\"", pki.ca.display()),
            &format!("ca = \"{}\"", other_ca.display()),
        ),
    )
    .unwrap();
    let untrusted = mistrusting.ship(false);
    let log = stderr(&untrusted);
    assert_eq!(status(&untrusted), 2, "{log}");
    assert!(log.contains("retry will not help"), "{log}");
    assert!(log.to_lowercase().contains("certificate"), "{log}");

    // The right token: an empty batch, exit 0, and the central has seen the site.
    let owner = site_a(dir.path(), "owner", &server.endpoint(), TOKEN_A, &pki, "");
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let shipped = owner.ship(false);
    let log = stderr(&shipped);
    assert_eq!(status(&shipped), 0, "{log}");
    assert!(log.contains("heartbeat=true"), "{log}");
    assert!(log.contains("batches=0"), "{log}");
    let metrics = server.metrics();
    let contact: i64 = site_metric(&metrics, "accelfed_site_last_contact_timestamp_seconds")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no contact of SITE-A in\n{metrics}"));
    assert!(contact >= before, "{contact} < {before}");
    assert_eq!(
        site_metric(&metrics, "accelfed_site_spool_depth").as_deref(),
        Some("0"),
        "{metrics}"
    );
    assert_eq!(
        site_metric(&metrics, "accelfed_records_ingested_total").as_deref(),
        Some("0"),
        "{metrics}"
    );

    // -v shows the steps: what is shipped where, and the empty call.
    let verbose = accelfed()
        .args(["ship", "-v", "--config"])
        .arg(&owner.config)
        .output()
        .unwrap();
    let log = stderr(&verbose);
    assert_eq!(status(&verbose), 0, "{log}");
    for step in [
        "DEBUG shipping",
        "pending=0",
        "DEBUG nothing to send; calling the repository with an empty batch",
    ] {
        assert!(log.contains(step), "{step:?} in {log}");
    }
}

#[test]
fn a_spool_whose_folder_does_not_exist_is_refused_unless_asked_to_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let site = site_a(dir.path(), "site", "https://127.0.0.1:9", TOKEN_A, &pki, "");
    let mistyped = dir.path().join("var/spool/acelfed/spool.sqlite");
    let shipped = accelfed()
        .arg("ship")
        .arg("--config")
        .arg(&site.config)
        .arg("--spool")
        .arg(&mistyped)
        .output()
        .unwrap();
    let log = stderr(&shipped);
    assert_eq!(status(&shipped), 2, "{log}");
    assert!(
        log.contains(&format!(
            "{} does not exist",
            mistyped.parent().unwrap().display()
        )),
        "{log}"
    );
    assert!(log.contains("spool_create = true"), "{log}");
    assert!(!dir.path().join("var").exists(), "nothing was created");

    let metered = accelfed()
        .args(["meter", "--since", "2026-01-01", "--config"])
        .arg(&site.config)
        .arg("--spool")
        .arg(&mistyped)
        .output()
        .unwrap();
    let log = stderr(&metered);
    assert_ne!(status(&metered), 0, "{log}");
    assert!(log.contains("does not exist"), "{log}");
    assert!(!dir.path().join("var").exists(), "nothing was created");

    // Asked for in the file: meter creates the folder and the spool.
    let config = std::fs::read_to_string(&site.config).unwrap();
    std::fs::write(
        &site.config,
        config.replace("[accounting]\n", "[accounting]\nspool_create = true\n"),
    )
    .unwrap();
    let created = accelfed()
        .args(["meter", "--since", "2026-01-01", "--config"])
        .arg(&site.config)
        .arg("--spool")
        .arg(&mistyped)
        .output()
        .unwrap();
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    assert!(mistyped.is_file());
}

#[test]
fn the_per_site_series_survive_a_restart_of_the_central() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, _database) = Server::start_sqlite(dir.path(), &pki);
    let usage = concat!(
        r#"{"resource": "node-1", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}"#,
        "\n",
        r#"{"resource": "node-2", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}"#,
        "\n"
    );
    let owner = site_a(
        dir.path(),
        "owner",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        usage,
    );
    let metered = owner.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    assert_eq!(owner.spool_depth(), 2);
    let shipped = owner.ship(false);
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));
    let before = server.metrics();
    let contact = site_metric(&before, "accelfed_site_last_contact_timestamp_seconds")
        .unwrap_or_else(|| panic!("no contact in\n{before}"));
    // The run's last call reported the spool as the run left it: empty, not the batch's depth.
    assert_eq!(
        site_metric(&before, "accelfed_site_spool_depth").as_deref(),
        Some("0"),
        "{before}"
    );
    assert_eq!(
        site_metric(&before, "accelfed_records_ingested_total").as_deref(),
        Some("2"),
        "{before}"
    );

    server.stop().unwrap();
    let restarted = Server::start(&dir.path().join("central.toml"));
    let after = restarted.metrics();
    assert_eq!(
        site_metric(&after, "accelfed_site_last_contact_timestamp_seconds"),
        Some(contact),
        "{after}"
    );
    assert_eq!(
        site_metric(&after, "accelfed_site_spool_depth").as_deref(),
        Some("0"),
        "{after}"
    );
    assert_eq!(
        site_metric(&after, "accelfed_records_ingested_total").as_deref(),
        Some("2"),
        "{after}"
    );
    // SITE-B is configured and never called: its series are there, its last contact 0.
    let never = |name: &str| {
        let prefix = format!("{name}{{site=\"SITE-B\"}} ");
        after
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map(str::to_owned)
    };
    assert_eq!(
        never("accelfed_site_last_contact_timestamp_seconds").as_deref(),
        Some("0"),
        "{after}"
    );
    assert_eq!(
        never("accelfed_records_ingested_total").as_deref(),
        Some("0")
    );
    assert_eq!(never("accelfed_site_configured").as_deref(), Some("1"));
}
