//! `accelfed export` to an ssmsend outgoing queue, read back with the real python `dirq` package
//! (what ssmsend uses): every message is an `APEL-accelerator-message` v0.1 of at most 1,000
//! records and under 1 MB, ASCII only, and every metered record arrives exactly once. A second
//! export sends nothing; a changed record is sent again; `--all` sends everything again.
//!
//! Each message is then signed with `openssl smime -sign -text` as ssmsend signs it, and its
//! base64 form (what AMS carries) checked against AMS's 1 MB, with the default allowance for the
//! signature. A record APEL's database cannot store is refused alone by the meter (exit 1), the
//! rest are spooled and go.
//!
//! Every message read back is held against APEL's accelerator record v0.1 rules
//! (`accelfed_tests::apel_record`, written from APEL's own definition).
//!
//! The venv with dirq is made by scripts/test (`target/venv`), which runs the tests that need it
//! (`--include-ignored`); there a missing one fails them.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use accelfed_tests::apel_record::assert_accelerator_messages;

const RECORDS: usize = 2_500;

fn accelfed(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap()
}

fn python_with_dirq() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python");
    let works = Command::new(&python)
        .args(["-c", "import dirq.QueueSimple"])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        works,
        "{} cannot import dirq; run scripts/test (python3 -m venv target/venv && target/venv/bin/pip install dirq)",
        python.display()
    );
    python
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

/// One hour on one GPU per resource in January 2026; users with non-ASCII names (at most 255
/// characters, APEL's column) long enough that the byte limit, not only the 1,000-record limit,
/// splits messages, with an emoji APEL's utf8 cannot store (written as `?`).
fn usage(hours_of_first: u32) -> String {
    let padding = "Jürgen Müller Ελληνικά 🚀 ".repeat(9);
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

/// Checks each message's limits, and every message against APEL's accelerator record v0.1
/// (`accelfed_tests::apel_record`: envelope, fields, types, lengths, characters, keys that
/// collide in APEL's table); returns the records by AssociatedRecord.
fn records_in(messages: &[(String, String)]) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut found: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    let mut parsed = Vec::new();
    for (name, text) in messages {
        assert!(text.is_ascii(), "{name} is not ASCII");
        // 1,000,000 less AMS's JSON, base64 (3/4) and the 16 KiB signature allowance.
        assert!(text.len() <= 733_559, "{name} has {} bytes", text.len());
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        for record in value["UsageRecords"].as_array().unwrap() {
            let resource = record["AssociatedRecord"].as_str().unwrap().to_owned();
            found.entry(resource).or_default().push(record.clone());
        }
        parsed.push((name.clone(), value));
    }
    let records = assert_accelerator_messages(parsed.iter().map(|(name, m)| (name.clone(), m)));
    assert_eq!(records, found.values().map(Vec::len).sum::<usize>());
    found
}

#[test]
#[ignore = "needs python-dirq in target/venv (scripts/test makes it and runs this)"]
fn ssmsend_queue_read_back_with_dirq_holds_every_record_once() {
    let python = python_with_dirq();
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
        messages.len() >= 4,
        "2,500 records of ~1 KB need at least 4 messages, got {}",
        messages.len()
    );
    let signer = dir.path().join("pki");
    host_certificate(&signer);
    for (name, text) in &messages {
        let request = ams_request_len(&signer, text);
        assert!(request <= 1_000_000, "{name}: {request} bytes once signed");
    }
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
            user.starts_with("Jürgen Müller Ελληνικά ? "),
            "non-ASCII survives escaping; the emoji is normalised: {user}"
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

/// A self-signed host certificate and key in `dir` (`host.pem`, `host.key`).
fn host_certificate(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let output = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes"])
        .args(["-keyout", "host.key", "-out", "host.pem", "-days", "2"])
        .args(["-subj", "/DC=org/DC=example/CN=gpu.example.org"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

/// The bytes of the AMS publish request ssmsend makes of `message`: signed as SSM's crypto.sign
/// signs (`openssl smime -sign -inkey KEY -signer CERT -text`), base64-encoded by the AMS
/// library and wrapped in `{"messages":[{"attributes":{"empaid":...},"data":...}]}`.
fn ams_request_len(pki: &Path, message: &str) -> usize {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut child = Command::new("openssl")
        .args([
            "smime", "-sign", "-inkey", "host.key", "-signer", "host.pem", "-text",
        ])
        .current_dir(pki)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = message.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success());
    let body = serde_json::json!({"messages": [{
        "attributes": {"empaid": "692621a0/692621a0123456"},
        "data": base64::engine::general_purpose::STANDARD.encode(&output.stdout),
    }]});
    body.to_string().len()
}

/// Records APEL would refuse (a character its utf8 cannot store in the resource name, a resource
/// named `None`, a user name longer than its column, two names equal but for case): each refused
/// alone, named in the log with its month and field, exit 1; every other record is queued. A
/// resource name longer than any column is refused as the manual-usage line is read, alone too.
#[test]
#[ignore = "needs python-dirq in target/venv (scripts/test makes it and runs this)"]
fn records_apel_cannot_take_are_refused_alone_and_the_rest_go() {
    let python = python_with_dirq();
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("outgoing");
    let config = site(dir.path(), &queue);
    let long = "n".repeat(256);
    let line = |resource: &str, user: &str| {
        format!(
            r#"{{"resource": "{resource}", "model": "A100", "count": 0.0004, "vo": "atlas", "user": "{user}", "start": "2026-01-03T00:00:00Z", "end": "2026-01-04T00:00:00Z"}}"#
        )
    };
    let mut lines: Vec<String> = ["vm-🚀", "None", long.as_str(), "GPU-Node-1", "gpu-node-1"]
        .iter()
        .chain(["vm-1", "vm-2"].iter())
        .map(|resource| line(resource, "/CN=someone"))
        .collect();
    lines.push(line("vm-long-user", &long));
    lines.push(String::new());
    std::fs::write(dir.path().join("usage.jsonl"), lines.join("\n")).unwrap();
    // The meter checks what it spools when the site feeds APEL: each record APEL would refuse
    // is left out alone and named (exit 1); the rest are spooled and exported.
    let metered = accelfed(&["meter", "--since", "2026-01-01"], &config);
    assert_eq!(metered.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&metered.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("manual usage line not metered")
                && l.contains("usage.jsonl:3:")
                && l.contains("is 256 characters long, more than 255")),
        "{stderr}"
    );
    for (resource, field) in [
        ("vm-🚀", "AssociatedRecord"),
        ("None", "AssociatedRecord"),
        ("vm-long-user", "GlobalUserName"),
        ("gpu-node-1", "AssociatedRecord"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("record {resource} (2026-01")))
            .unwrap_or_else(|| panic!("{resource} not named: {stderr}"));
        assert!(line.contains(&format!("field {field}")), "{line}");
    }
    let exported = accelfed(&["export"], &config);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let found = records_in(&drain_with_dirq(&python, &queue));
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        vec!["GPU-Node-1", "vm-1", "vm-2"]
    );
    // 0.0004 GPUs for a day: 34.56 GPU-seconds, not 0.
    let record = &found["vm-1"][0];
    let seconds = record["Count"].as_f64().unwrap() * record["AvailableDuration"].as_f64().unwrap();
    assert!((seconds - 34.56).abs() <= 1.0, "{record}");
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
