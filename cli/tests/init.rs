//! The site deployment kit with the real binary: `init central` (private CA or a given
//! certificate), `token --add-to/--output`, and `ca` settings that name a folder laid out as
//! IGTF's /etc/grid-security/certificates, over real TLS to a real `accelfed serve`; OpenSSL
//! checks what `init` made.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use accelfed_tests::central::ServeProcess;

fn accelfed(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .current_dir(dir)
        .env_remove("ACCELFED_CENTRAL_CONFIG")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// Asserts that a command exited with `exit` and its error output says `says`.
fn assert_refused(output: &Output, exit: i32, says: &str) {
    let log = stderr(output);
    assert_eq!(code(output), exit, "{log}");
    assert!(log.contains(says), "{log}");
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

/// `init central` into `dir` with a private CA, on ports the system picks.
fn init(dir: &Path) -> Output {
    accelfed(
        dir,
        &[
            "init",
            "central",
            "--config",
            "central.toml",
            "--private-ca",
            "ca",
            "--listen",
            "127.0.0.1",
            "--grpc-port",
            "0",
            "--https-port",
            "0",
            "--metrics",
            "127.0.0.1:0",
            "--database",
            "accounting.sqlite",
        ],
    )
}

/// `accelfed serve` of the central.toml `init` made, run in `dir` as an operator would.
fn serve(dir: &Path) -> ServeProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .args(["serve", "--config", "central.toml"])
        .current_dir(dir);
    ServeProcess::spawn(command, &dir.join("central.toml"))
}

/// A folder as IGTF ships it: the CA as `<subject hash>.0` (a link to its `.pem`), a CRL, a
/// signing policy and a namespaces file, beside another CA's files.
fn igtf_folder(dir: &Path, ca: &Path) -> PathBuf {
    let folder = dir.join("certificates");
    std::fs::create_dir(&folder).unwrap();
    let hash = Command::new("openssl")
        .args(["x509", "-subject_hash", "-noout", "-in"])
        .arg(ca)
        .output()
        .expect("openssl");
    assert!(hash.status.success(), "{}", stderr(&hash));
    let hash = String::from_utf8(hash.stdout).unwrap().trim().to_owned();
    std::fs::copy(ca, folder.join("AccelfedTestCA.pem")).unwrap();
    std::os::unix::fs::symlink("AccelfedTestCA.pem", folder.join(format!("{hash}.0"))).unwrap();
    std::fs::write(
        folder.join(format!("{hash}.r0")),
        "-----BEGIN X509 CRL-----\nnot a CRL\n-----END X509 CRL-----\n",
    )
    .unwrap();
    std::fs::write(
        folder.join(format!("{hash}.signing_policy")),
        "access_id_CA X509 '/O=accelfed'\npos_rights globus CA:sign\n",
    )
    .unwrap();
    std::fs::write(
        folder.join(format!("{hash}.namespaces")),
        "TO Issuer \"/O=accelfed\" PERMIT Subject \".*\"\n",
    )
    .unwrap();
    std::fs::write(
        folder.join("AnotherCA.pem"),
        accelfed_tests::pki::unrelated_ca_pem("Another IGTF CA"),
    )
    .unwrap();
    std::fs::write(folder.join("AnotherCA.info"), "alias = AnotherCA\n").unwrap();
    folder
}

/// The binary's smoke test: the one test that spawns `accelfed serve` itself (and reads where it
/// listens from its "listening" lines), where every other service test starts the service
/// in-process (`accelfed_tests::central::Server`).
#[test]
fn a_private_ca_central_takes_sites_that_trust_an_igtf_style_folder() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let output = init(dir);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    for (file, expected) in [
        ("ca/ca.key", 0o600),
        ("tls/service.key", 0o600),
        ("ca/ca.pem", 0o644),
        ("central.toml", 0o644),
    ] {
        assert_eq!(mode(&dir.join(file)), expected, "{file}");
    }
    let verify = Command::new("openssl")
        .args([
            "verify",
            "-purpose",
            "sslserver",
            "-CAfile",
            "ca/ca.pem",
            "tls/service.pem",
        ])
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        verify.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        stderr(&verify)
    );
    let valid = accelfed(dir, &["validate", "--central", "central.toml"]);
    assert_eq!(code(&valid), 0, "{}", stderr(&valid));

    let token = accelfed(
        dir,
        &[
            "token",
            "--site",
            "EXAMPLE-GPU",
            "--add-to",
            "central.toml",
            "--output",
            "site.token",
        ],
    );
    assert_eq!(code(&token), 0, "{}", stderr(&token));
    assert!(token.stdout.is_empty(), "the token went to the file only");
    assert_eq!(mode(&dir.join("site.token")), 0o600);
    let secret = std::fs::read_to_string(dir.join("site.token")).unwrap();
    assert!(!stderr(&token).contains(secret.trim()));

    let server = serve(dir);
    let folder = igtf_folder(dir, &dir.join("ca/ca.pem"));
    let folder = folder.to_str().unwrap();
    let endpoint = server.endpoint();
    let observations = example("manual-usage.jsonl");
    let meter = accelfed(
        dir,
        &[
            "meter",
            "--config",
            example("site.toml").to_str().unwrap(),
            "--spool",
            "spool.sqlite",
            "--observations",
            observations.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&meter), 0, "{}", stderr(&meter));
    let ship = accelfed(
        dir,
        &[
            "ship",
            "--config",
            example("site.toml").to_str().unwrap(),
            "--spool",
            "spool.sqlite",
            "--endpoint",
            &endpoint,
            "--token-file",
            "site.token",
            "--ca",
            folder,
        ],
    );
    assert_eq!(code(&ship), 0, "{}", stderr(&ship));
    assert!(!stderr(&ship).contains(secret.trim()));

    let registry = server.url();
    let push = accelfed(
        dir,
        &[
            "provide",
            "--config",
            example("site.toml").to_str().unwrap(),
            "--publish",
            "registry",
            "--registry-url",
            &registry,
            "--registry-token-file",
            "site.token",
            "--registry-ca",
            folder,
        ],
    );
    assert_eq!(code(&push), 0, "{}", stderr(&push));
    let query = accelfed(
        dir,
        &[
            "query",
            "--url",
            &registry,
            "--ca",
            folder,
            "--site",
            "EXAMPLE-GPU",
        ],
    );
    assert_eq!(code(&query), 0, "{}", stderr(&query));
    assert!(String::from_utf8_lossy(&query.stdout).contains("EXAMPLE-GPU"));

    // A folder of other CAs only: the TLS handshake fails, and says so (exit 1).
    std::fs::remove_file(dir.join("certificates/AccelfedTestCA.pem")).unwrap();
    let refused = accelfed(dir, &["query", "--url", &registry, "--ca", folder]);
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    // A folder with no certificate at all is named (exit 2).
    std::fs::create_dir(dir.join("empty")).unwrap();
    let empty = accelfed(dir, &["query", "--url", &registry, "--ca", "empty"]);
    assert_refused(&empty, 2, "--ca empty: no CA certificate in the folder");
}

#[test]
fn init_writes_nothing_over_existing_files_and_checks_a_given_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    assert_eq!(code(&init(dir)), 0);
    let before = std::fs::read(dir.join("ca/ca.key")).unwrap();
    let token = accelfed(
        dir,
        &["token", "--site", "SITE-A", "--add-to", "central.toml"],
    );
    assert_eq!(code(&token), 0, "{}", stderr(&token));
    let configured = std::fs::read(dir.join("central.toml")).unwrap();
    let again = init(dir);
    assert_refused(&again, 2, "init never replaces a configured service");
    assert_eq!(std::fs::read(dir.join("central.toml")).unwrap(), configured);
    std::fs::rename(dir.join("central.toml"), dir.join("old.toml")).unwrap();
    let again = init(dir);
    assert_refused(&again, 2, "ca.pem: exists");
    assert_eq!(
        std::fs::read(dir.join("ca/ca.key")).unwrap(),
        before,
        "the CA key is kept"
    );
    assert!(!dir.join("central.toml").exists());

    // An existing certificate and key (an IGTF host certificate): checked first.
    let with_certificate = |certificate: &str| {
        accelfed(
            dir,
            &[
                "init",
                "central",
                "--config",
                "igtf.toml",
                "--certificate",
                certificate,
                "--key",
                "tls/service.key",
            ],
        )
    };
    assert_refused(&with_certificate("nothere.pem"), 2, "nothere.pem");
    assert!(!dir.join("igtf.toml").exists());
    let given = with_certificate("tls/service.pem");
    assert_eq!(code(&given), 0, "{}", stderr(&given));
    let valid = accelfed(dir, &["validate", "--central", "igtf.toml"]);
    assert_eq!(code(&valid), 0, "{}", stderr(&valid));
}

/// A packaged host has the example in /etc/accelfed/central.toml: `init` replaces a file that
/// configures no site, keeping its mode, and what it writes is a working configuration.
#[test]
fn init_replaces_the_packaged_example() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::copy(example("central.toml"), dir.join("central.toml")).unwrap();
    std::fs::set_permissions(
        dir.join("central.toml"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let replaced = init(dir);
    assert_eq!(code(&replaced), 0, "{}", stderr(&replaced));
    assert!(
        stderr(&replaced).contains("replaced"),
        "{}",
        stderr(&replaced)
    );
    let text = std::fs::read_to_string(dir.join("central.toml")).unwrap();
    assert!(!text.contains("<run: accelfed token"), "{text}");
    assert_eq!(
        mode(&dir.join("central.toml")),
        0o640,
        "the packaged mode is kept"
    );
    let valid = accelfed(dir, &["validate", "--central", "central.toml"]);
    assert_eq!(code(&valid), 0, "{}", stderr(&valid));
}

/// `--site` hands out a first site's token with the file, and refuses before writing anything
/// when the token file is already there.
#[test]
fn init_with_a_first_site_writes_its_token_and_hash() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let with_site = |config: &str| {
        let mut args = vec!["init", "central", "--config", config, "--site", "SITE/A"];
        args.extend([
            "--certificate",
            "tls/service.pem",
            "--key",
            "tls/service.key",
        ]);
        accelfed(dir, &args)
    };
    assert_eq!(code(&init(dir)), 0);
    let first = with_site("one.toml");
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let token = std::fs::read_to_string(dir.join("SITE_A.token")).unwrap();
    assert_eq!(token.trim().len(), 64, "{token}");
    assert_eq!(mode(&dir.join("SITE_A.token")), 0o600);
    let text = std::fs::read_to_string(dir.join("one.toml")).unwrap();
    let hash = accelfed_central::TokenHash::of(token.trim()).to_hex();
    assert!(text.contains(&hash), "{text}");
    assert!(
        !stderr(&first).contains(token.trim()),
        "the token is not logged"
    );

    assert_refused(&with_site("two.toml"), 2, "SITE_A.token: exists");
    assert!(!dir.join("two.toml").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("SITE_A.token")).unwrap(),
        token
    );
}

#[test]
fn token_add_to_keeps_a_sites_hash_and_an_existing_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    assert_eq!(code(&init(dir)), 0);
    let first = accelfed(
        dir,
        &["token", "--site", "SITE-A", "--add-to", "central.toml"],
    );
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim().len(),
        64,
        "the token on stdout"
    );
    let text = std::fs::read_to_string(dir.join("central.toml")).unwrap();

    let again = accelfed(
        dir,
        &["token", "--site", "SITE-A", "--add-to", "central.toml"],
    );
    assert_refused(&again, 2, "sites.SITE-A already has a token hash");
    std::fs::write(dir.join("taken.token"), "keep me\n").unwrap();
    let taken = accelfed(
        dir,
        &[
            "token",
            "--site",
            "SITE-B",
            "--add-to",
            "central.toml",
            "--output",
            "taken.token",
        ],
    );
    assert_refused(&taken, 2, "taken.token: exists");
    assert_eq!(
        std::fs::read_to_string(dir.join("taken.token")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("central.toml")).unwrap(),
        text,
        "unchanged"
    );

    // The shipped example's placeholder is replaced in a copy of it.
    std::fs::copy(example("central.toml"), dir.join("example.toml")).unwrap();
    let example = accelfed(
        dir,
        &["token", "--site", "EXAMPLE-GPU", "--add-to", "example.toml"],
    );
    assert_eq!(code(&example), 0, "{}", stderr(&example));
    let edited = std::fs::read_to_string(dir.join("example.toml")).unwrap();
    assert!(!edited.contains("<run: accelfed token"), "{edited}");
    assert!(edited.contains("# One table per site"), "comments are kept");
}
