//! `accelfed --version` names the commit the binary was built from (`central/build.rs`): the
//! checkout's HEAD when built in a git checkout, as this test's build is; `/metrics`'
//! `accelfed_build_info` carries the same (cli/tests/registry/metrics.rs).

#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn the_version_names_the_commit() {
    let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let line = String::from_utf8(output.stdout).unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8(out.stdout).unwrap().trim().to_owned());
    let commit = match (std::env::var("ACCELFED_COMMIT"), head) {
        (Ok(set), _) if !set.trim().is_empty() => set.trim().to_owned(),
        (_, Some(head)) => head,
        (_, None) => "unknown".to_owned(),
    };
    assert_eq!(
        line.trim_end(),
        format!("accelfed {} (commit {commit})", env!("CARGO_PKG_VERSION"))
    );
}
