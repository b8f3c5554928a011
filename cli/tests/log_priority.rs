//! Under systemd, every log line reaches the journal with its priority: each line starts with a
//! `<N>` syslog prefix when standard error is the stream `JOURNAL_STREAM` names (as systemd sets it
//! for a unit), so `journalctl -p err` finds every error; elsewhere no line carries one. The
//! tests set `JOURNAL_STREAM` the way systemd does: `<device>:<inode>` of standard error, here the
//! pipe the test reads (no journald runs on a test machine; the prefix is what journald reads).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// `accelfed ARGS` with `JOURNAL_STREAM` naming its standard error when `journal`.
fn run(journal: bool, args: &[&str]) -> Output {
    let mut script = String::new();
    if journal {
        script.push_str(
            "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); export JOURNAL_STREAM; ",
        );
    } else {
        script.push_str("unset JOURNAL_STREAM; ");
    }
    script.push_str("exec \"$0\" \"$@\"");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_error_reaches_the_journal_at_priority_err() {
    let output = run(true, &["provide", "--config", "/nonexistent/site.toml"]);
    assert_eq!(output.status.code(), Some(2));
    let lines = lines(&output);
    assert!(!lines.is_empty());
    assert!(
        lines.iter().all(|line| line.starts_with("<3>")),
        "every line of a failed run is an error: {lines:?}"
    );
    assert!(lines[0].contains("/nonexistent/site.toml"), "{lines:?}");
}

#[test]
fn a_summary_reaches_the_journal_at_priority_info_in_text_and_json() {
    let config = examples().join("site.toml");
    let config = config.to_str().unwrap();
    for format in ["text", "json"] {
        let output = run(
            true,
            &["--log-format", format, "provide", "--config", config],
        );
        assert_eq!(output.status.code(), Some(0), "{format}");
        let lines = lines(&output);
        let published: Vec<_> = lines.iter().filter(|l| l.contains("published")).collect();
        assert_eq!(published.len(), 1, "{format}: {lines:?}");
        assert!(published[0].starts_with("<6>"), "{format}: {lines:?}");
        if format == "json" {
            let value: serde_json::Value = serde_json::from_str(&published[0][3..]).unwrap();
            assert_eq!(value["level"], "INFO");
        }
    }
}

#[test]
fn without_the_journal_no_line_has_a_prefix() {
    let config = examples().join("site.toml");
    for args in [
        vec!["provide", "--config", config.to_str().unwrap()],
        vec!["provide", "--config", "/nonexistent/site.toml"],
    ] {
        let output = run(false, &args);
        let lines = lines(&output);
        assert!(!lines.is_empty());
        assert!(
            lines.iter().all(|line| !line.starts_with('<')),
            "{args:?}: {lines:?}"
        );
    }
}
