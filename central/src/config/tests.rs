use std::path::Path;

use super::*;
use accelfed_accounting::repository::DEFAULT_MAX_BATCH;

/// The SHA-256 of "not guessed" (`printf "not guessed" | sha256sum`), not one of the trivial tokens
/// `auth` refuses.
const HASH: &str = "fd2c90af7aca703b3a227b6564ee801657a032f40c6c2bcece78823dba8dadad";

fn parse(text: &str) -> Result<CentralConfig, CentralConfigError> {
    CentralConfig::parse(Path::new("central.toml"), text)
}

#[test]
fn a_minimal_file_gets_sqlite_and_the_default_batch_limit() {
    let config = parse(&format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [sites.CESNET-MCC]\ntoken_sha256 = \"{HASH}\"\n"
    ))
    .unwrap();
    assert_eq!(config.ingest.max_batch, DEFAULT_MAX_BATCH);
    assert!(config.listen.metrics.is_none());
    assert_eq!(config.sites.len(), 1);
    let loaded = LoadedCentral {
        path: "/etc/accelfed/central.toml".into(),
        config,
    };
    assert_eq!(
        loaded.database_location(),
        "/etc/accelfed/accounting.sqlite"
    );
}

#[test]
fn errors_name_file_line_column_and_field() {
    let base =
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n";
    let err = parse(&format!("{base}[ingest]\nmax_batch = 0\n")).unwrap_err();
    assert!(err.to_string().starts_with("central.toml:7:13:"), "{err}");

    let err = parse(&format!("{base}[sites.A]\ntoken_sha256 = \"abc\"\n")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("central.toml:7:16:") && text.contains("64"),
        "{text}"
    );

    let err = parse(&format!("{base}[listen2]\n")).unwrap_err();
    assert!(err.to_string().starts_with("central.toml:6:"), "{err}");
    assert!(err.to_string().contains("listen2"), "{err}");

    let err = parse(&format!("{base}[database]\nurl = \"mysql://x\"\n")).unwrap_err();
    assert!(err.to_string().starts_with("central.toml:7:8:"), "{err}");

    let err = parse(&format!(
        "{base}[database]\nurl = \"postgres://x\"\npath = \"a.sqlite\"\n"
    ))
    .unwrap_err();
    assert!(err.to_string().contains("not both"), "{err}");
}

#[test]
fn two_sites_with_one_token_hash_are_refused_naming_both() {
    let other = "a".repeat(64);
    let err = parse(&format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [sites.SITE-A]\ntoken_sha256 = \"{HASH}\"\n[sites.SITE-B]\ntoken_sha256 = \"{other}\"\n\
         [sites.SITE-C]\ntoken_sha256 = \"{}\"\n",
        HASH.to_uppercase()
    ))
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("central.toml:11:17:"), "{err}");
    assert!(
        err.contains("sites.SITE-C") && err.contains("sites.SITE-A"),
        "{err}"
    );
}

#[test]
fn the_shipped_example_is_refused_until_a_real_token_is_pasted() {
    let text = include_str!("../../../examples/central.toml");
    let err = parse(text).unwrap_err().to_string();
    assert!(err.contains("accelfed token --site NAME"), "{err}");
    let fixed = text.replace(
        "\"<run: accelfed token --site EXAMPLE-GPU>\"",
        &format!("\"{HASH}\""),
    );
    assert_ne!(fixed, text, "the example carries the placeholder");
    let config = parse(&fixed).unwrap();
    assert!(
        config
            .sites
            .keys()
            .any(|site| site.as_str() == "EXAMPLE-GPU")
    );
    // `[access]`: anonymous aggregates, EGI Check-in, a VO-manager and an operator rule.
    assert!(config.access.anonymous);
    let oidc = config.access.oidc.as_ref().unwrap();
    assert_eq!(oidc.issuer.as_str(), "https://aai.egi.eu/auth/realms/egi");
    assert_eq!(config.access.roles.len(), 2);
    assert!(config.access.roles[0].entitlement.contains("{vo}"));
}

#[test]
fn access_rules_that_cannot_give_their_role_are_refused() {
    let base = format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [sites.SITE-A]\ntoken_sha256 = \"{HASH}\"\n"
    );
    let oidc = "[access.oidc]\nissuer = \"https://aai.egi.eu/auth/realms/egi\"\naudience = \"a\"\n";
    for (rules, words) in [
        (
            format!("{oidc}[[access.roles]]\nentitlement = \"urn:x\"\nrole = \"vo-manager\"\n"),
            "needs {vo}",
        ),
        (
            format!("{oidc}[[access.roles]]\nentitlement = \"urn:{{vo}}\"\nrole = \"operator\"\n"),
            "an operator rule is for every VO",
        ),
        (
            "[[access.roles]]\nentitlement = \"urn:x\"\nrole = \"operator\"\n".to_owned(),
            "add [access.oidc]",
        ),
        (
            format!("{oidc}[[access.roles]]\nentitlement = \"urn:x\"\nrole = \"admin\"\n"),
            "unknown variant",
        ),
        (
            "[access.oidc]\nissuer = \"http://aai.egi.eu\"\naudience = \"a\"\n".to_owned(),
            "https://",
        ),
    ] {
        let err = parse(&format!("{base}{rules}")).unwrap_err().to_string();
        assert!(err.contains(words), "{rules}: {err}");
    }
}

#[test]
fn a_file_that_is_not_utf8_is_refused_at_its_first_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("central.toml");
    std::fs::write(&path, b"[listen]\n# caf\xe9\ngrpc = \"127.0.0.1:9443\"\n").unwrap();
    let err = CentralConfig::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("central.toml:2:6") && err.contains("byte 0xe9 is not UTF-8"),
        "{err}"
    );
}

#[test]
fn a_site_may_have_its_own_batch_limit() {
    let config = parse(&format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [ingest]\nmax_batch = 500\n\
         [sites.BIG]\ntoken_sha256 = \"{HASH}\"\nmax_batch = 5000\n\
         [sites.OTHER]\ntoken_sha256 = \"{}\"\n",
        "ab".repeat(32)
    ))
    .unwrap();
    let limits = config.batch_limits();
    assert_eq!(limits.of(&SiteName::new("BIG").unwrap()), 5000);
    assert_eq!(limits.of(&SiteName::new("OTHER").unwrap()), 500);
    let zero = parse(&format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [sites.BIG]\ntoken_sha256 = \"{HASH}\"\nmax_batch = 0\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        zero.contains("central.toml:8:13") && zero.contains("at least 1"),
        "{zero}"
    );
}

#[test]
fn site_names_drawn_alike_are_refused_naming_both() {
    let other = crate::auth::TokenHash::of("another site's token").to_hex();
    // Line 6 is `[sites."SITE-\u{406}"]`, with a Cyrillic I (U+0406); the name starts at column 9.
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:9443\"\n[tls]\ncertificate = \"c.pem\"\nkey = \"k.pem\"\n\
         [sites.\"SITE-\u{406}\"]\ntoken_sha256 = \"{HASH}\"\n[sites.SITE-I]\ntoken_sha256 = \"{other}\"\n"
    );
    let err = parse(&text).unwrap_err().to_string();
    assert_eq!(
        err,
        "central.toml:6:9: sites.SITE-\u{406}: looks like sites.SITE-I (SITE-I and SITE-\\u{0406} \
         differ only in characters drawn alike); give each site a name of its own"
    );
    let apart = text.replace("SITE-\u{406}", "SITE-J");
    parse(&apart).unwrap();
}
