//! Manual usage files through to the repository: `report --check` names the site-month an
//! overlapping file breaks, a renamed model replaces its records, a broken line is refused alone.

use super::*;

#[test]
fn report_check_names_the_site_month_an_overlapping_manual_file_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);
    let database = database.as_str();
    let check = || run(&["report", "--database", database, "--check"]);

    // Within capacity: both periods of node-1 count (15 days, 360 GPU-hours), the check passes.
    let fine = site(
        &dir.path().join("fine"),
        "SITE-A",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &april(false),
        ONE_A100,
    );
    let metered = fine.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    assert_eq!(fine.spool_depth(), 1, "two periods, one record");
    assert_eq!(status(&fine.ship(false)), 0);
    assert_eq!(report_by_vo(database).1, 360.0);
    let passed = check();
    assert_eq!(status(&passed), 0, "{}", stderr(&passed));
    assert!(passed.stdout.is_empty());

    // The same GPU described again as node-2 for all of April: 1,080 GPU-hours on one A100. The
    // meter says so (error, exit 1) and writes the records held back: `ship` does not send them
    // (and says they are held) until the operator releases them; then the repository's check
    // lists the site-month and exits 1.
    let overlapping = site(
        &dir.path().join("overlapping"),
        "SITE-A",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &april(true),
        ONE_A100,
    );
    let metered = overlapping.meter();
    assert_eq!(status(&metered), 1, "{}", stderr(&metered));
    let log = stderr(&metered);
    assert!(
        log.contains("usage above installed capacity")
            && log.contains("node-1")
            && log.contains("node-2"),
        "{log}"
    );
    assert_eq!(overlapping.spool_depth(), 0, "held back, not pending");
    let shipped = overlapping.ship(false);
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));
    assert!(stderr(&shipped).contains("held"), "{}", stderr(&shipped));
    assert_eq!(report_by_vo(database).1, 360.0, "nothing held was shipped");
    // The central knows them all the same: the run's last call reported them, and the check
    // lists them (exit 1), each with its id, since when and why.
    let held_at_central = check();
    assert_eq!(status(&held_at_central), 1, "{}", stderr(&held_at_central));
    let listed = String::from_utf8(held_at_central.stdout.clone()).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    for line in listed.lines() {
        assert!(
            line.starts_with("held at SITE-A: ") && line.contains(" since 20"),
            "{listed}"
        );
        assert!(line.contains("above installed capacity"), "{listed}");
    }
    assert!(
        stderr(&held_at_central).contains("records held back at sites"),
        "{}",
        stderr(&held_at_central)
    );
    let metrics = server.metrics();
    assert!(
        metrics
            .lines()
            .any(|l| l == "accelfed_site_held_records{site=\"SITE-A\"} 2"),
        "{metrics}"
    );
    let held = accelfed()
        .args(["spool", "held", "--config"])
        .arg(&overlapping.config)
        .output()
        .unwrap();
    assert_eq!(status(&held), 0, "{}", stderr(&held));
    let listed = String::from_utf8(held.stdout.clone()).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(listed.contains("above installed capacity"), "{listed}");
    let released = accelfed()
        .args(["spool", "release", "--all", "--config"])
        .arg(&overlapping.config)
        .output()
        .unwrap();
    assert_eq!(status(&released), 0, "{}", stderr(&released));
    assert_eq!(overlapping.spool_depth(), 2);
    assert_eq!(status(&overlapping.ship(false)), 0);
    assert_eq!(report_by_vo(database).1, 1080.0);
    // Released and shipped: the run's last call reports none held, so the check lists only the
    // repository's own finding.
    let failed = check();
    assert_eq!(status(&failed), 1, "{}", stderr(&failed));
    let listed = String::from_utf8(failed.stdout.clone()).unwrap();
    assert!(
        listed.contains("SITE-A 2026-04") && listed.contains("NVIDIA A100-SXM4-80GB"),
        "{listed}"
    );
    assert!(
        listed.contains("1080.000") && listed.contains("720.000"),
        "{listed}"
    );
    assert_eq!(listed.lines().count(), 1, "{listed}");
}

#[test]
fn a_renamed_model_replaces_its_records_instead_of_adding_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);
    let database = database.as_str();
    let site_dir = dir.path().join("site");
    let site = site(
        &site_dir,
        "SITE-A",
        &server.endpoint(),
        TOKEN_A,
        &pki,
        &april(false),
        "",
    );
    assert_eq!(status(&site.meter()), 0);
    assert_eq!(status(&site.ship(false)), 0);
    assert_eq!(report_by_vo(database).1, 360.0);

    // The site renames the model in its manual file: the old identity is retracted (0 s), so the
    // repository still holds 360 GPU-hours, now under the new name.
    let renamed = april(false).replace("NVIDIA A100-SXM4-80GB", "A100 80GB (renamed)");
    std::fs::write(site_dir.join("usage.jsonl"), renamed).unwrap();
    let metered = site.meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    assert!(
        stderr(&metered).contains("retracted"),
        "{}",
        stderr(&metered)
    );
    assert_eq!(site.spool_depth(), 2, "the new record and the retraction");
    assert_eq!(status(&site.ship(false)), 0);
    assert_eq!(report_by_vo(database).1, 360.0, "not 720");
    let by_model = run(&[
        "report",
        "--database",
        database,
        "--by",
        "model",
        "--format",
        "csv",
    ]);
    let text = String::from_utf8(by_model.stdout).unwrap();
    assert!(text.contains("A100 80GB (renamed),1,360.000"), "{text}");
    assert!(text.contains("NVIDIA A100-SXM4-80GB,1,0.000"), "{text}");
}

#[test]
fn a_broken_manual_line_is_refused_alone_and_its_record_kept() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let a100 = r#"{"resource": "node-1", "model": "NVIDIA A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-04-01T00:00:00Z", "end": "2026-04-11T00:00:00Z"}"#;
    let h100 = r#"{"resource": "node-1", "model": "H100", "count": 2, "vo": "atlas", "start": "2026-04-11T00:00:00Z", "end": "2026-04-21T00:00:00Z"}"#;
    let site = site(
        dir.path(),
        "SITE-A",
        "https://127.0.0.1:1",
        TOKEN_A,
        &pki,
        &format!("{a100}\n{h100}\n"),
        "",
    );
    assert_eq!(status(&site.meter()), 0);
    let hours = || {
        let spool = accelfed_accounting::spool::Spool::open(&site.spool).unwrap();
        let april = accelfed_schemas::usage::Month::new(2026, 4).unwrap();
        let mut found: Vec<(String, f64)> = spool
            .records_since(april)
            .unwrap()
            .iter()
            .map(|r| (r.model.as_str().to_owned(), r.gpu_hours()))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    };
    let before = hours();
    assert_eq!(before.len(), 2, "{before:?}");

    // The H100 line breaks (a typo in its count): that line alone is refused, named by file,
    // line and the column of the count, the run exits 1, and the H100 record already spooled is not retracted: the node still
    // has another record this month, but the broken line may be the one that stands behind it.
    let broken = h100.replace("\"count\": 2", "\"count\": -2");
    std::fs::write(
        dir.path().join("usage.jsonl"),
        format!("{a100}\n{broken}\n"),
    )
    .unwrap();
    let metered = site.meter();
    assert_eq!(status(&metered), 1, "{}", stderr(&metered));
    let log = stderr(&metered);
    assert!(
        log.contains("manual usage line not metered")
            && log.contains("usage.jsonl:2:50: count must be a number above zero, got -2"),
        "{log}"
    );
    assert!(!log.contains("retracted"), "{log}");
    assert_eq!(hours(), before);
}
