//! The service certificate's dates, where it is taken on: `validate --central`, `init central
//! --certificate` and `serve` refuse an expired or not yet valid certificate with its dates (RFC
//! 3339), and warn about one that ends within `[tls] expiry_warning_days` (default 30).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use accelfed_tests::pki::Pki;
use chrono::Datelike;

fn accelfed(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// central.toml with `pki`'s certificate and key written beside it, warning `warning_days` ahead.
fn central(dir: &Path, pki: &Pki, warning_days: Option<u32>) {
    let files = pki.write(dir);
    let warning = warning_days
        .map(|days| format!("expiry_warning_days = {days}\n"))
        .unwrap_or_default();
    std::fs::write(
        dir.join("central.toml"),
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\n\n[tls]\ncertificate = \"{}\"\nkey = \"{}\"\n{warning}",
            files.cert.display(),
            files.key.display()
        ),
    )
    .unwrap();
}

#[test]
fn an_expired_certificate_is_refused_with_its_date_by_validate_serve_and_init() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    central(
        dir,
        &Pki::issued("expired CA", &["localhost"], Some(((2020, 1), (2021, 1)))),
        None,
    );
    for args in [
        &["validate", "--central", "central.toml"][..],
        &["serve", "--config", "central.toml"][..],
    ] {
        let output = accelfed(dir, args);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("server.pem") && text.contains("expired on 2021-01-01T00:00:00Z"),
            "{args:?}: {text}"
        );
        assert!(
            !text.contains("listening"),
            "{args:?} must not start: {text}"
        );
    }
    let init = accelfed(
        dir,
        &[
            "init",
            "central",
            "--config",
            "new.toml",
            "--certificate",
            "server.pem",
            "--key",
            "server.key",
        ],
    );
    assert_eq!(init.status.code(), Some(2), "{}", stderr(&init));
    assert!(
        stderr(&init).contains("expired on 2021-01-01"),
        "{}",
        stderr(&init)
    );
    assert!(!dir.join("new.toml").exists(), "nothing written");
}

#[test]
fn a_certificate_not_yet_valid_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    central(
        dir,
        &Pki::issued("future CA", &["localhost"], Some(((2099, 1), (2100, 1)))),
        None,
    );
    let output = accelfed(dir, &["validate", "--central", "central.toml"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not valid before 2099-01-01T00:00:00Z"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_certificate_ending_soon_is_accepted_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // Valid until the first of next month: 1 to 31 days from now, so within 40 days whatever
    // today's date, and beyond the 0 that turns the warning off.
    let today = chrono::Utc::now().date_naive();
    let (year, month) = if today.month() == 12 {
        (today.year() + 1, 1)
    } else {
        (today.year(), today.month() + 1)
    };
    let ending = Pki::issued(
        "ending CA",
        &["localhost"],
        Some(((2020, 1), (year, month as u8))),
    );
    central(dir, &ending, Some(40));
    let output = accelfed(dir, &["validate", "--central", "central.toml"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let expected = format!("expires on {year}-{month:02}-01T00:00:00Z");
    let warnings: Vec<_> = text.lines().filter(|l| l.contains(" WARN ")).collect();
    assert!(
        warnings
            .iter()
            .any(|l| l.contains(&expected) && l.contains("renew")),
        "{text}"
    );
    central(dir, &ending, Some(0));
    let quiet = accelfed(dir, &["validate", "--central", "central.toml"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert!(!stderr(&quiet).contains("expires on"), "{}", stderr(&quiet));
}
