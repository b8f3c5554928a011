//! `accelfed report` on a real SQLite repository filled through the library.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::{Month, sample};
use chrono::{TimeZone, Utc};

fn accelfed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .env_remove("ACCELFED_DATABASE")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A repository with atlas in January and February and cms in February.
fn repository(path: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
        let records = [
            ("vm-1", "atlas", 1),
            ("vm-2", "atlas", 2),
            ("vm-3", "cms", 2),
        ];
        let batch: Vec<Submission> = records
            .iter()
            .map(|(resource, vo, month)| {
                let mut r = sample::record(resource);
                r.vo = Some(VoName::new(*vo).unwrap());
                r.month = Month::new(2026, *month).unwrap();
                r.first_seen = Utc.with_ymd_and_hms(2026, *month, 1, 0, 0, 0).unwrap();
                r.last_seen = r.first_seen + chrono::Duration::days(10);
                r.into()
            })
            .collect();
        let options = IngestOptions {
            max_batch: 100,
            now: Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap(),
        };
        let site = SiteName::new("CESNET-MCC").unwrap();
        let report = repo.ingest(&site, batch, options).await.unwrap();
        assert_eq!(report.outcomes, vec![Outcome::Stored; 3]);
    });
}

#[test]
fn reports_in_every_format_with_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("acc.sqlite");
    repository(&db);
    let db = db.to_str().unwrap();

    let table = accelfed(&["report", "--database", db]);
    assert!(table.status.success(), "{table:?}");
    let text = stdout(&table);
    assert!(text.starts_with("VO "), "{text}");
    assert!(text.contains("\natlas ") && text.contains("\ncms "));
    // Each sample record holds one GPU for ten days: 240 GPU-hours.
    assert!(text.lines().last().unwrap().contains("720.000"), "{text}");

    let csv = accelfed(&["report", "--database", db, "--by", "month", "-f", "csv"]);
    assert_eq!(
        stdout(&csv)
            .lines()
            .skip(1)
            .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>(),
        ["2026-01,1,240.000", "2026-02,2,480.000"]
    );

    let json = accelfed(&[
        "report",
        "--database",
        db,
        "--by",
        "vo",
        "--from",
        "2026-02",
        "--to",
        "2026-02",
        "-f",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(json["from"], "2026-02");
    assert_eq!(json["rows"][0]["vo"], "atlas");
    assert_eq!(json["rows"][0]["gpu_hours"], 240.0);
    assert_eq!(json["total"]["records"], 2);

    let filtered = accelfed(&[
        "report",
        "--database",
        db,
        "--vo",
        "cms",
        "--by",
        "site",
        "-f",
        "csv",
    ]);
    assert_eq!(
        stdout(&filtered).lines().nth(1).unwrap().split(',').next(),
        Some("CESNET-MCC")
    );

    let chart = dir.path().join("chart.svg");
    let svg = accelfed(&[
        "report",
        "--database",
        db,
        "-f",
        "svg",
        "-o",
        chart.to_str().unwrap(),
    ]);
    assert!(svg.status.success());
    assert!(svg.stdout.is_empty());
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.starts_with("<svg")
            && svg.contains(">atlas (480)</text>")
            && svg.contains(">cms (240)</text>")
    );
}

#[test]
fn bad_arguments_exit_2_and_an_unreachable_database_exits_1() {
    let missing = accelfed(&["report", "--database", "/nonexistent/acc.sqlite"]);
    assert_eq!(missing.status.code(), Some(2));
    let reversed = accelfed(&["report", "--from", "2026-05", "--to", "2026-01"]);
    assert_eq!(reversed.status.code(), Some(2));
    let month = accelfed(&["report", "--from", "2026-13"]);
    assert_eq!(month.status.code(), Some(2));
    let unreachable = accelfed(&["report", "--database", "postgres://nobody@127.0.0.1:1/none"]);
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("127.0.0.1:1"));
}

#[test]
fn model_filter_matches_by_words_as_query_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("acc.sqlite");
    repository(&db);
    let db = db.to_str().unwrap();
    // The records' model is `NVIDIA A100-SXM4-80GB`.
    for wanted in ["A100", "a100-sxm4", "NVIDIA A100-SXM4-80GB"] {
        let found = accelfed(&[
            "report",
            "--database",
            db,
            "--model",
            wanted,
            "--by",
            "model",
            "-f",
            "csv",
        ]);
        assert!(found.status.success(), "{found:?}");
        assert_eq!(
            stdout(&found)
                .lines()
                .skip(1)
                .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>(),
            ["NVIDIA A100-SXM4-80GB,3,720.000"],
            "--model {wanted}"
        );
    }
    let none = accelfed(&[
        "report",
        "--database",
        db,
        "--model",
        "H100",
        "--by",
        "model",
        "-f",
        "csv",
    ]);
    assert_eq!(stdout(&none).lines().count(), 1, "{}", stdout(&none));
    // Records without an installed figure are not checked: nothing to report, exit 0.
    let check = accelfed(&["report", "--database", db, "--check"]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    assert!(stdout(&check).is_empty());
}

#[test]
fn a_file_that_is_not_a_repository_is_refused_unchanged_with_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "not a database, but long enough to have a header of sorts\n".repeat(10),
    )
    .unwrap();
    let spool = dir.path().join("spool.sqlite");
    accelfed_accounting::spool::Spool::open(&spool).unwrap();
    for (path, says) in [
        (&empty, "an empty database"),
        (&text, "not an SQLite database"),
        (&spool, "a site spool"),
    ] {
        let before = std::fs::read(path).unwrap();
        let out = accelfed(&["report", "--database", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("is not an accelfed accounting repository"),
            "{stderr}"
        );
        assert!(stderr.contains(says), "{says}: {stderr}");
        assert!(out.stdout.is_empty(), "no schema SQL or report on stdout");
        assert_eq!(
            std::fs::read(path).unwrap(),
            before,
            "{} unchanged",
            path.display()
        );
    }
}
