//! No secret in any message (issue #30): a database password, in every form an operator may write
//! it, never appears in what `report`, `validate --central` and `serve` print, while the host they
//! could not reach is still named; a central.toml holding one that others may read is a warning;
//! and the hash of a token anyone can guess is refused by `validate --central` and `serve`.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use accelfed_tests::central::accelfed;
use accelfed_tests::pki::pki;

/// The password planted in each form; nothing the commands print may contain it.
const SECRET: &str = "Pw9s3cr3t";

/// The forms: userinfo, upper-case scheme with an `@` and `/` left unescaped in the password, a
/// `password=` query parameter. Port 1 on loopback: nothing listens, so each command fails to
/// connect and says where.
fn urls() -> Vec<String> {
    vec![
        format!("postgres://acct:{SECRET}@127.0.0.1:1/none"),
        format!("POSTGRESQL://acct:a@b/{SECRET}@127.0.0.1:1/none"),
        format!("postgres://acct@127.0.0.1:1/none?sslmode=disable&password={SECRET}"),
    ]
}

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// central.toml with `database` as its `[database]` line and `hash` as the one site's token hash,
/// at `mode`.
fn central(dir: &Path, database: &str, hash: &str, mode: u32) -> std::path::PathBuf {
    let pki = pki(dir);
    let path = dir.join("central.toml");
    std::fs::write(
        &path,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\n[tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\
             [database]\n{database}\n[sites.SITE-A]\ntoken_sha256 = \"{hash}\"\n",
            pki.cert.display(),
            pki.key.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn a_database_password_never_shows_in_report_validate_or_serve() {
    let dir = tempfile::tempdir().unwrap();
    let hash = "ab".repeat(32);
    for url in urls() {
        let report = accelfed()
            .args(["report", "--database", &url])
            .env_remove("ACCELFED_DATABASE")
            .output()
            .unwrap();
        let text = printed(&report);
        assert_eq!(report.status.code(), Some(1), "{url}: {text}");
        assert!(text.contains("127.0.0.1:1"), "{url}: {text}");
        assert!(!text.contains(SECRET), "{url}: {text}");

        // One try: the database is never there (`serve` would wait for it a minute by default).
        let config = central(
            dir.path(),
            &format!("url = {url:?}\nstart_wait_s = 0"),
            &hash,
            0o644,
        );
        let validate = accelfed()
            .args(["validate", "--central"])
            .arg(&config)
            .output()
            .unwrap();
        let text = printed(&validate);
        assert_eq!(validate.status.code(), Some(0), "{url}: {text}");
        assert!(text.contains("database: PostgreSQL"), "{url}: {text}");
        assert!(
            text.contains("database.url holds a password and the configuration file is readable by every local user"),
            "{url}: {text}"
        );
        assert!(!text.contains(SECRET), "{url}: {text}");

        let serve = accelfed()
            .args(["serve", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let text = printed(&serve);
        assert_eq!(serve.status.code(), Some(1), "{url}: {text}");
        assert!(text.contains("127.0.0.1:1"), "{url}: {text}");
        assert!(!text.contains(SECRET), "{url}: {text}");
    }
    // The file kept from other users: no warning.
    let config = central(dir.path(), &format!("url = {:?}", urls()[0]), &hash, 0o600);
    let validate = accelfed()
        .args(["validate", "--central"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        !printed(&validate).contains("holds a password"),
        "{}",
        printed(&validate)
    );
}

#[test]
fn the_hash_of_a_trivial_token_is_refused_by_validate_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    // sha256 of the empty string (`printf '' | sha256sum`): an empty token file's hash.
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let database = format!(
        "path = {:?}",
        dir.path().join("acc.sqlite").display().to_string()
    );
    let config = central(dir.path(), &database, empty, 0o600);
    for command in [vec!["validate", "--central"], vec!["serve", "--config"]] {
        let output = accelfed().args(&command).arg(&config).output().unwrap();
        let text = printed(&output);
        assert_eq!(output.status.code(), Some(2), "{command:?}: {text}");
        assert!(
            text.contains("token_sha256 is the SHA-256 of the empty string"),
            "{command:?}: {text}"
        );
    }
}
