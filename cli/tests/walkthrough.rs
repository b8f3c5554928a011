//! docs/operations.md's "First federation in five commands", run verbatim: the fenced block after
//! the `walkthrough` marker is taken from the page and run by bash in an empty folder holding a
//! copy of `examples/`, with the built binary first on PATH. Nothing is written by hand. The
//! report it ends with must show the GPU-hours computed by hand from examples/manual-usage.jsonl.
//!
//! The commands listen on fixed ports (9443, 8443, 9464 on 127.0.0.1), as the page says. So that
//! another service on the machine (a second `accelfed serve`, say) cannot fail the test, the block
//! runs in a private network namespace of its own (`unshare --net`, its loopback brought up with
//! `ip link set lo up`), as root or, where user namespaces are allowed, as a mapped root
//! (`unshare --map-root-user --net`). Where neither works a port already taken fails the test
//! naming it.

#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};

const MARKER: &str = "<!-- walkthrough: run verbatim by cli/tests/walkthrough.rs -->";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shell block after the marker.
fn walkthrough() -> String {
    let page = std::fs::read_to_string(repository().join("docs/operations.md")).unwrap();
    let after = &page[page
        .find(MARKER)
        .expect("the walk-through marker in docs/operations.md")..];
    let start = after
        .find("```sh\n")
        .expect("a ```sh block after the marker")
        + "```sh\n".len();
    let end = after[start..].find("```").expect("the block's end");
    after[start..start + end].to_owned()
}

/// The block's commands: lines joined at trailing backslashes, comments and blank lines left out,
/// and a line that chains commands (`&&`, `||`, `;`, `|`) counted as each of them.
fn commands(block: &str) -> Vec<String> {
    let joined = block.replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .flat_map(|line| line.split("&&").flat_map(|part| part.split(['|', ';'])))
        .map(str::trim)
        .filter(|command| !command.is_empty())
        .map(str::to_owned)
        .collect()
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The `unshare` arguments that give a command a network namespace of its own with a working
/// loopback on this machine, tried in order; `None` where none does (no util-linux, not root and
/// no user namespaces).
fn private_network() -> Option<&'static [&'static str]> {
    const WAYS: [&[&str]; 2] = [&["--net"], &["--map-root-user", "--net"]];
    WAYS.into_iter().find(|&unshare| {
        Command::new("unshare")
            .args(unshare)
            .args(["--", "ip", "link", "set", "lo", "up"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Runs `script` with bash in `dir` (in a private network namespace where [`private_network`]
/// finds a way), at most `limit`; (status, stdout, stderr). The script's own
/// process group is killed at the end, so a background `serve` never outlives the test.
fn run_script(dir: &Path, script: &str, limit: Duration) -> (Option<i32>, String, String) {
    let binary = Path::new(env!("CARGO_BIN_EXE_accelfed"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (mut command, prelude) = match private_network() {
        Some(unshare) => {
            let mut command = Command::new("unshare");
            command.args(unshare).arg("--").arg("bash");
            (command, "ip link set lo up\n")
        }
        None => (Command::new("bash"), ""),
    };
    command
        .arg("-c")
        .arg(format!(
            "set -euo pipefail\n{prelude}{script}\nkill %1 && wait %1 || true\n"
        ))
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (name, _) in std::env::vars() {
        if name.starts_with("ACCELFED_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever is left of the group (a serve the script did not stop): killed.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    let _ = out.read_to_string(&mut stdout);
    (status, stdout, reader.join().unwrap())
}

/// The GPU-HOURS cell of the report's row for `key`.
fn gpu_hours(report: &str, key: &str) -> f64 {
    let row = report
        .lines()
        .find(|line| line.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no row {key} in the report:\n{report}"));
    row.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn the_first_federation_in_five_commands_runs_as_written() {
    let block = walkthrough();
    let commands = commands(&block);
    assert!(
        (1..=5).contains(&commands.len()),
        "at most five commands, found {}:\n{}",
        commands.len(),
        commands.join("\n")
    );
    if private_network().is_none() {
        for port in [9443, 8443, 9464] {
            if let Err(err) = std::net::TcpListener::bind(("127.0.0.1", port)) {
                panic!(
                    "the walk-through listens on 127.0.0.1:{port}, which is taken, and no \
                     private network namespace can be made here (`unshare --net`): {err}"
                );
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy_folder(&repository().join("examples"), &dir.path().join("examples"));
    let started = Utc::now();
    let (status, stdout, stderr) = run_script(dir.path(), &block, Duration::from_secs(180));
    let finished = Utc::now();
    assert_eq!(
        status,
        Some(0),
        "the walk-through failed:\n{block}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );

    // By hand, from examples/manual-usage.jsonl: gpu-node-07 held 4 GPUs for atlas from
    // 2026-01-01 to 2026-03-01, 31 + 28 days: 4 x 1416 h.
    assert_eq!(gpu_hours(&stdout, "atlas"), 4.0 * 1416.0, "{stdout}");
    // gpu-node-08 holds 8 GPUs for vo.access.egi.eu since 2026-02-15 and still does: 8 x the
    // hours until the meter ran, which was between the script's start and end.
    let since = Utc.with_ymd_and_hms(2026, 2, 15, 0, 0, 0).unwrap();
    let hours = |at: chrono::DateTime<Utc>| 8.0 * (at - since).num_seconds() as f64 / 3600.0;
    let open = gpu_hours(&stdout, "vo.access.egi.eu");
    assert!(
        hours(started) - 0.001 <= open && open <= hours(finished) + 0.001,
        "{open} GPU-hours, expected {} .. {}:\n{stdout}",
        hours(started),
        hours(finished)
    );

    // What the commands wrote: secrets only their owner reads, the token in no log line.
    let token = std::fs::read_to_string(dir.path().join("EXAMPLE-GPU.token")).unwrap();
    assert!(
        !stderr.contains(token.trim()),
        "the token was logged:\n{stderr}"
    );
    for secret in ["EXAMPLE-GPU.token", "ca/ca.key", "tls/service.key"] {
        let mode = std::fs::metadata(dir.path().join(secret))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{secret}");
    }
}

#[test]
fn commands_are_counted_with_their_continuation_lines() {
    let block = "# a comment\naccelfed a \\\n  --b\n\naccelfed c &\nd && e || f; g | h\n";
    assert_eq!(
        commands(block),
        ["accelfed a    --b", "accelfed c &", "d", "e", "f", "g", "h"]
    );
}
