//! Site tokens from `init central --site` and `token --add-to`: a first site's token and hash are
//! written together, existing token files and hashes are kept.

use super::*;

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
