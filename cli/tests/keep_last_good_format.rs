//! `provide --keep-last-good FILE` publishes the saved document only to a consumer of the same
//! format and DIT layout: a BDII set up for GLUE 2.0 never gets a GLUE 2.1 LDIF (classes its
//! schema lacks), a resource BDII never gets the site layout's entries. The format and layout are
//! recorded in `FILE.format` beside the document; a file without that record (saved by an older
//! accelfed) is checked by its content, with a warning.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `accelfed provide --config <config> --keep-last-good <last>` with `args` (format and DIT).
fn provide(config: &Path, last: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--config"])
        .arg(config)
        .arg("--keep-last-good")
        .arg(last)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The example site in `dir`, and a complete run of it saved as `args` says.
fn saved(dir: &Path, args: &[&str]) -> (PathBuf, PathBuf, Vec<u8>) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let config = dir.join("site.toml");
    std::fs::copy(example, &config).unwrap();
    let last = dir.join("last-good.ldif");
    let good = provide(&config, &last, args);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert_eq!(std::fs::read(&last).unwrap(), good.stdout);
    // Then the configuration breaks: every later run falls back on the saved document.
    std::fs::write(
        &config,
        "[site]\nname = \"EXAMPLE-GPU\"\ncolour = \"blue\"\n",
    )
    .unwrap();
    (config, last, good.stdout)
}

/// The broken run refused the saved document: exit 2, nothing on stdout, `why` on stderr.
fn assert_refused(out: &Output, why: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        out.stdout.is_empty(),
        "nothing published: {}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains(why),
        "{why} in {}",
        text(&out.stderr)
    );
}

#[test]
fn a_glue21_ldif_never_reaches_a_glue20_consumer_nor_the_other_way() {
    let dir = tempfile::tempdir().unwrap();
    let (config, last, document) = saved(dir.path(), &["--format", "ldif-glue21"]);
    let record = std::fs::read_to_string(dir.path().join("last-good.ldif.format")).unwrap();
    assert_eq!(record, "format=ldif-glue21 dit=resource\n");

    let glue20 = provide(&config, &last, &["--format", "ldif-glue20"]);
    assert_refused(&glue20, "not a ldif-glue20 document");
    assert_refused(&glue20, "saved as `format=ldif-glue21 dit=resource`");

    let glue21 = provide(&config, &last, &["--format", "ldif-glue21"]);
    assert_eq!(glue21.status.code(), Some(2));
    assert_eq!(
        glue21.stdout, document,
        "the same format: published as saved"
    );
}

#[test]
fn the_site_layout_never_reaches_a_resource_bdii() {
    let dir = tempfile::tempdir().unwrap();
    let site = ["--format", "ldif-glue20", "--dit", "site"];
    let (config, last, document) = saved(dir.path(), &site);

    let resource = provide(&config, &last, &["--format", "ldif-glue20"]);
    assert_refused(&resource, "not in the resource DIT layout");

    let same = provide(&config, &last, &site);
    assert_eq!(same.status.code(), Some(2));
    assert_eq!(same.stdout, document);
}

#[test]
fn without_a_record_the_content_is_checked_and_a_warning_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (config, last, document) = saved(dir.path(), &["--format", "ldif-glue21"]);
    std::fs::remove_file(dir.path().join("last-good.ldif.format")).unwrap();

    // The example publishes accelerator classes: its content shows it is GLUE 2.1.
    let glue20 = provide(&config, &last, &["--format", "ldif-glue20"]);
    assert_refused(&glue20, "holds GLUE 2.1 classes");
    // Its DNs show the resource layout.
    let site = provide(
        &config,
        &last,
        &["--format", "ldif-glue21", "--dit", "site"],
    );
    assert_refused(&site, "entries are in the resource layout");

    let fits = provide(&config, &last, &["--format", "ldif-glue21"]);
    assert_eq!(fits.status.code(), Some(2));
    assert_eq!(fits.stdout, document);
    assert!(
        text(&fits.stderr).contains("only its content was checked"),
        "{}",
        text(&fits.stderr)
    );
}
