//! `accelfed provide --keep-last-good FILE`, through the binary as cron or a BDII runs it: a
//! complete run saves its document; a run whose configuration is broken, or whose every provider
//! fails, publishes that document instead, byte for byte (so with its original CreationTime), and
//! still exits 2 or 1.

// A failing call here is the test failing.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `accelfed provide --config <config> --format <format> --keep-last-good <last>`.
fn provide(config: &Path, format: &str, last: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--config"])
        .arg(config)
        .args(["--format", format, "--keep-last-good"])
        .arg(last)
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .output()
        .unwrap()
}

fn example_site(dir: &Path) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let path = dir.join("site.toml");
    std::fs::copy(example, &path).unwrap();
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_broken_run_publishes_the_last_complete_document_and_still_fails() {
    let dir = tempfile::tempdir().unwrap();
    let config = example_site(dir.path());
    let last = dir.path().join("last-good.json");

    let good = provide(&config, "glue21-json", &last);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert_eq!(
        std::fs::read(&last).unwrap(),
        good.stdout,
        "the saved document"
    );
    let saved: serde_json::Value = serde_json::from_slice(&good.stdout).unwrap();
    let created = saved["CloudComputingService"][0]["CreationTime"].clone();
    assert!(created.is_string(), "{saved}");

    // The configuration breaks: exit 2, and the last good document on stdout, as it was.
    std::fs::write(
        &config,
        "[site]\nname = \"EXAMPLE-GPU\"\ncolour = \"blue\"\n",
    )
    .unwrap();
    let broken = provide(&config, "glue21-json", &last);
    assert_eq!(broken.status.code(), Some(2), "{}", text(&broken.stderr));
    assert!(
        text(&broken.stderr).contains("site.toml:3:1"),
        "{}",
        text(&broken.stderr)
    );
    assert!(
        broken.stdout == good.stdout,
        "the last good document, byte for byte"
    );
    let again: serde_json::Value = serde_json::from_slice(&broken.stdout).unwrap();
    assert_eq!(again["CloudComputingService"][0]["CreationTime"], created);

    // A consumer of another format never gets it.
    let ldif = provide(&config, "ldif-glue20", &last);
    assert_eq!(ldif.status.code(), Some(2));
    assert!(ldif.stdout.is_empty(), "{}", text(&ldif.stdout));
    assert!(
        text(&ldif.stderr).contains("not a ldif-glue20 document"),
        "{}",
        text(&ldif.stderr)
    );
}

#[test]
fn when_every_provider_fails_the_last_good_document_is_published_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let last = dir.path().join("last-good.ldif");
    std::fs::write(
        &last,
        "dn: GLUE2GroupID=resource,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: resource\n",
    )
    .unwrap();
    // Slurm's commands are not where the configuration says: the only provider fails.
    let bin = dir.path().join("no-slurm-here");
    std::fs::create_dir(&bin).unwrap();
    let config = dir.path().join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"S\"\n[[slurm]]\nid = \"hpc\"\n[slurm.cli]\nbin_dir = {bin:?}\ntimeout_s = 5\n"
        ),
    )
    .unwrap();
    let out = provide(&config, "ldif-glue20", &last);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(out.stdout, std::fs::read(&last).unwrap());
    // The failed run did not replace the good document.
    assert!(text(&std::fs::read(&last).unwrap()).starts_with("dn: GLUE2GroupID=resource"));
}
