//! `accelfed export` to an ssmsend outgoing queue, read back with the real python `dirq` package
//! (what ssmsend uses): every message is an `APEL-accelerator-message` v0.1 of at most 1,000
//! records and under 1 MB, ASCII only, and every metered record arrives exactly once. A second
//! export sends nothing; a changed record is sent again; `--all` sends everything again.
//!
//! The venv with dirq is made by scripts/test (`target/venv`); with CI=true a missing one fails.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RECORDS: usize = 2_500;

fn accelfed(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap()
}

fn python_with_dirq() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python");
    let works = Command::new(&python)
        .args(["-c", "import dirq.QueueSimple"])
        .output()
        .is_ok_and(|output| output.status.success());
    if works {
        return Some(python);
    }
    let message = format!(
        "{} cannot import dirq; run scripts/test (python3 -m venv target/venv && target/venv/bin/pip install dirq)",
        python.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("skipped: {message}");
    None
}

/// Every element of the queue, in dirq's order, as read by `dirq.QueueSimple` (lock, get,
/// remove, as ssmsend does). Fails if an element is not ASCII.
fn drain_with_dirq(python: &Path, queue: &Path) -> Vec<(String, String)> {
    let script = r#"
import json, sys
from dirq.QueueSimple import QueueSimple
queue = QueueSimple(sys.argv[1])
out = []
for name in queue:
    if not queue.lock(name):
        continue
    out.append([name, queue.get(name).decode("ascii")])
    queue.remove(name)
json.dump(out, sys.stdout)
"#;
    let output = Command::new(python)
        .args(["-c", script])
        .arg(queue)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "dirq reader failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// One hour on one GPU per resource in January 2026; users with non-ASCII names long enough that
/// the byte limit, not only the 1,000-record limit, splits messages.
fn usage(hours_of_first: u32) -> String {
    let padding = "Jürgen Müller 🚀 ".repeat(40);
    (0..RECORDS)
        .map(|i| {
            let end = if i == 0 { 1 + hours_of_first } else { 2 };
            format!(
                r#"{{"resource": "node-{i:05}", "model": "A100", "count": 1, "vo": "atlas", "user": "{padding}{i}", "start": "2026-01-03T01:00:00Z", "end": "2026-01-03T{end:02}:00:00Z"}}"#
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn site(dir: &Path, queue: &Path) -> PathBuf {
    std::fs::write(dir.join("usage.jsonl"), usage(1)).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-A\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.apel.dirq]\npath = \"{}\"\n",
            queue.display()
        ),
    )
    .unwrap();
    config
}

/// Checks each message's envelope and limits; returns the records by AssociatedRecord.
fn records_in(messages: &[(String, String)]) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut found: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for (name, text) in messages {
        assert!(text.is_ascii(), "{name} is not ASCII");
        assert!(text.len() < 1_000_000, "{name} has {} bytes", text.len());
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(value["Type"], "APEL-accelerator-message", "{name}");
        assert_eq!(value["Version"], "0.1", "{name}");
        let records = value["UsageRecords"].as_array().unwrap();
        assert!(!records.is_empty() && records.len() <= 1_000, "{name}");
        for record in records {
            let resource = record["AssociatedRecord"].as_str().unwrap().to_owned();
            found.entry(resource).or_default().push(record.clone());
        }
    }
    found
}

#[test]
fn ssmsend_queue_read_back_with_dirq_holds_every_record_once() {
    let Some(python) = python_with_dirq() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("outgoing");
    let config = site(dir.path(), &queue);

    let metered = accelfed(&["meter", "--since", "2026-01-01"], &config);
    assert!(
        metered.status.success(),
        "{}",
        String::from_utf8_lossy(&metered.stderr)
    );
    let exported = accelfed(&["export"], &config);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );

    let messages = drain_with_dirq(&python, &queue);
    assert!(
        messages.len() >= 3,
        "2,500 records of ~1.5 KB need at least 3 messages, got {}",
        messages.len()
    );
    let names: Vec<&String> = messages.iter().map(|(name, _)| name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        names, sorted,
        "dirq returns the messages in the order written"
    );
    let found = records_in(&messages);
    assert_eq!(found.len(), RECORDS);
    for (resource, copies) in &found {
        assert_eq!(
            copies.len(),
            1,
            "{resource} exported {} times",
            copies.len()
        );
        let record = &copies[0];
        assert_eq!(record["SiteName"], "SITE-A");
        assert_eq!(record["FQAN"], "/atlas");
        assert_eq!(record["MeasurementYear"], 2026);
        assert_eq!(record["MeasurementMonth"], 1);
        assert_eq!(record["AvailableDuration"], 3_600);
        assert_eq!(record["Count"], 1.0);
        assert_eq!(record["Type"], "GPU");
        let user = record["GlobalUserName"].as_str().unwrap();
        assert!(
            user.starts_with("Jürgen Müller 🚀 "),
            "non-ASCII survives escaping"
        );
    }

    // Nothing changed: nothing exported.
    assert!(accelfed(&["export"], &config).status.success());
    assert!(drain_with_dirq(&python, &queue).is_empty());

    // One record grows: it alone goes again, with its new value (APEL replaces it).
    std::fs::write(dir.path().join("usage.jsonl"), usage(3)).unwrap();
    assert!(
        accelfed(&["meter", "--since", "2026-01-01"], &config)
            .status
            .success()
    );
    assert!(accelfed(&["export"], &config).status.success());
    let again = records_in(&drain_with_dirq(&python, &queue));
    assert_eq!(again.keys().collect::<Vec<_>>(), vec!["node-00000"]);
    assert_eq!(again["node-00000"][0]["AvailableDuration"], 3 * 3_600);

    // --all: everything again.
    assert!(accelfed(&["export", "--all"], &config).status.success());
    assert_eq!(records_in(&drain_with_dirq(&python, &queue)).len(), RECORDS);
}

#[test]
fn a_missing_destination_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("site.toml");
    std::fs::write(
        &config,
        "[site]\nname = \"SITE-A\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\n[accounting.apel]\n",
    )
    .unwrap();
    let output = accelfed(&["export"], &config);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[accounting.apel.dirq]"), "{stderr}");
}
