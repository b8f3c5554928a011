//! `accelfed meter` backfills draw a progress bar only on a terminal: under cron (standard error a
//! pipe or a file) nothing but log lines reaches standard error, with no control characters, and
//! `-q` leaves it empty. The terminal side is checked through `script`, which gives the command a
//! pseudo-terminal, where util-linux provides it.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn site(dir: &Path) -> PathBuf {
    let usage: String = (0..500)
        .map(|i| {
            format!(
                r#"{{"resource": "node-{i}", "model": "A100", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-03-15T00:00:00Z"}}"#
            ) + "\n"
        })
        .collect();
    std::fs::write(dir.join("usage.jsonl"), usage).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        "[site]\nname = \"SITE-A\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
         observations = \"usage.jsonl\"\n",
    )
    .unwrap();
    config
}

fn control_characters(text: &[u8]) -> Vec<u8> {
    text.iter()
        .copied()
        .filter(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
        .collect()
}

#[test]
fn a_backfill_under_cron_writes_no_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let config = site(dir.path());
    for verbosity in [&[][..], &["-v"][..]] {
        let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
            .args(verbosity)
            .args(["meter", "--since", "2026-01-01", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            control_characters(&output.stderr),
            Vec::<u8>::new(),
            "{verbosity:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let quiet = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["-q", "meter", "--since", "2026-01-01", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty(), "{:?}", quiet.stderr);
    assert!(
        quiet.stdout.is_empty(),
        "data only on standard output, and meter has none"
    );
}

/// The other side, through `script` (util-linux, which the test command's machine has): on a
/// pseudo-terminal the bar is drawn (escape sequences; carriage returns prove nothing, the
/// terminal turns every newline into one), and `-q` still silences it. Ignored by a plain `cargo
/// test`; scripts/test runs it (`--include-ignored`), where a missing `script` fails it.
#[test]
#[ignore = "needs `script` (util-linux) for a pseudo-terminal; scripts/test runs it"]
fn on_a_terminal_the_bar_is_drawn_unless_quiet() {
    let probe = Command::new("script")
        .arg("--version")
        .output()
        .unwrap_or_else(|err| panic!("`script` (util-linux) gives the command a terminal: {err}"));
    assert!(probe.status.success());
    let dir = tempfile::tempdir().unwrap();
    let config = site(dir.path());
    let run = |quiet: bool| {
        let line = format!(
            "{} {} meter --since 2026-01-01 --config {}",
            env!("CARGO_BIN_EXE_accelfed"),
            if quiet { "-q" } else { "" },
            config.display()
        );
        let output = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        output.stdout
    };
    let drawn = run(false);
    assert!(
        drawn.contains(&0x1b),
        "no bar drawn on a terminal: {}",
        String::from_utf8_lossy(&drawn)
    );
    let quiet = run(true);
    assert!(
        !quiet.contains(&0x1b),
        "-q on a terminal: {}",
        String::from_utf8_lossy(&quiet)
    );
}
