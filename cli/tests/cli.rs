//! The binary as a cron job or a BDII runs it: arguments, exit statuses, what goes to stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn accelfed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .output()
        .expect("the binary runs")
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn provide_prints_glue21_json_of_the_example_site_and_nothing_else() {
    let out = accelfed(&["provide", "--config", example().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let document: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(document["AdminDomain"][0]["ID"], "EXAMPLE-GPU");
    assert_eq!(
        document["CloudComputingService"][0]["OtherInfo"]["gocdb_id"],
        "1234G0"
    );
}

#[test]
fn validate_accepts_the_example_and_reports_on_stderr() {
    let out = accelfed(&["validate", "--config", example().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("valid (site EXAMPLE-GPU, providers: static)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_bad_configuration_exits_2_with_its_location_and_prints_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[site]\nname = \"S\"\ncolour = \"blue\"\n").unwrap();
    for command in ["provide", "validate"] {
        let out = accelfed(&[command, "--config", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(out.stdout.is_empty(), "{command}: stdout must stay empty");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("bad.toml:3:1: unknown field `colour`"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_missing_configuration_file_exits_2_naming_it() {
    let out = accelfed(&["validate", "--config", "/nonexistent/site.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("/nonexistent/site.toml: cannot read"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(accelfed(&["provide"]).status.code(), Some(2));
    let out = accelfed(&["provide", "--config", "x.toml", "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    // The formats are clap's possible values: the message lists them (as completion offers them).
    let stderr = text(&out.stderr);
    assert!(stderr.contains("invalid value 'yaml'"), "{stderr}");
    assert!(
        stderr.contains("glue21-json, ldif-glue20, ldif-glue21, glue20-xml"),
        "{stderr}"
    );
}

#[test]
fn output_goes_to_a_file_when_asked_and_one_that_cannot_be_written_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("site.json");
    let out = accelfed(&[
        "provide",
        "-c",
        example().to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    serde_json::from_slice::<serde_json::Value>(&std::fs::read(&target).unwrap()).unwrap();

    let out = accelfed(&[
        "provide",
        "-c",
        example().to_str().unwrap(),
        "-o",
        "/nonexistent/dir/site.json",
    ]);
    // Checked before anything is gathered: a configuration error, nothing published.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "cannot write /nonexistent/dir/site.json: its folder /nonexistent/dir: No such file \
             or directory (ENOENT)"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["provide", "--help"],
        &["validate", "--help"],
        &["token", "--help"],
        &["init", "central", "--help"],
    ] {
        let out = accelfed(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out.stdout).contains("Usage: accelfed"), "{args:?}");
    }
}

#[test]
fn validate_central_checks_the_file_its_certificate_and_key_and_its_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let pki = accelfed_tests::pki::Pki::generate();
    std::fs::write(dir.path().join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), &pki.key_pem).unwrap();
    std::fs::write(
        dir.path().join("other.pem"),
        accelfed_tests::pki::unrelated_key_pem(),
    )
    .unwrap();
    let central = |key_file: &str, hash: &str| {
        let path = dir.path().join("central.toml");
        std::fs::write(
            &path,
            format!(
                "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"cert.pem\"\n\
                 key = \"{key_file}\"\n[sites.SITE-A]\ntoken_sha256 = \"{hash}\"\n"
            ),
        )
        .unwrap();
        accelfed(&["validate", "--central", path.to_str().unwrap()])
    };
    use std::os::unix::fs::PermissionsExt;
    let key_mode = |mode: u32| {
        std::fs::set_permissions(
            dir.path().join("key.pem"),
            std::fs::Permissions::from_mode(mode),
        )
        .unwrap()
    };
    key_mode(0o600);
    let good = central("key.pem", &"ab".repeat(32));
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert!(
        text(&good.stderr).contains("valid (sites: 1"),
        "{}",
        text(&good.stderr)
    );
    assert!(!text(&good.stderr).contains("readable by every local user"));
    // A key any local user can read: still valid, with a warning naming the setting and file.
    key_mode(0o644);
    let exposed = central("key.pem", &"ab".repeat(32));
    assert_eq!(exposed.status.code(), Some(0));
    let warned = text(&exposed.stderr);
    assert!(
        warned.contains("tls.key: the file is readable by every local user (mode 644)")
            && warned.contains("key.pem"),
        "{warned}"
    );
    let mismatched = central("other.pem", &"ab".repeat(32));
    assert_eq!(mismatched.status.code(), Some(2));
    assert!(
        text(&mismatched.stderr).contains("tls"),
        "{}",
        text(&mismatched.stderr)
    );
    let placeholder = central("key.pem", "<run: accelfed token --site SITE-A>");
    assert_eq!(placeholder.status.code(), Some(2));
    assert!(
        text(&placeholder.stderr).contains("central.toml:7:"),
        "{}",
        text(&placeholder.stderr)
    );
}

#[test]
fn an_endless_or_huge_configuration_is_refused_without_reading_it_all() {
    let out = accelfed(&["validate", "--config", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("larger than 1048576 bytes"),
        "{}",
        text(&out.stderr)
    );
    let central = accelfed(&["validate", "--central", "/dev/zero"]);
    assert_eq!(central.status.code(), Some(2));
    assert!(
        text(&central.stderr).contains("larger than"),
        "{}",
        text(&central.stderr)
    );
}

/// A token file any local user can read is used, with a warning naming it and its mode; one only
/// its owner reads gives none. (The push then fails on the missing CA file: the warning comes
/// first, when the token is read.)
#[test]
fn a_token_file_readable_by_others_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("site.token");
    std::fs::write(&token, format!("{}\n", "ab".repeat(32))).unwrap();
    let push = |mode: u32| {
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = accelfed(&[
            "provide",
            "--config",
            example().to_str().unwrap(),
            "--publish",
            "registry",
            "--registry-url",
            "https://127.0.0.1:1",
            "--registry-token-file",
            token.to_str().unwrap(),
        ]);
        text(&out.stderr)
    };
    let open = push(0o644);
    assert!(
        open.contains("readable by every local user (mode 644)") && open.contains("site.token"),
        "{open}"
    );
    assert!(!open.contains(&"ab".repeat(32)), "the token is not logged");
    let private = push(0o600);
    assert!(
        !private.contains("readable by every local user"),
        "{private}"
    );
}
