//! A reload on its own (the signal and the running service: `cli/tests/config_reload.rs`): what it
//! puts in force, what it refuses, and that a refused one changes nothing.

use std::path::Path;
use std::sync::Arc;

use accelfed_testkit::pki::{Pki, PkiFiles};

use super::*;
use crate::auth::new_token;

struct Setup {
    _dir: tempfile::TempDir,
    config: PathBuf,
    pki: PkiFiles,
}

fn write(path: &Path, pki: &PkiFiles, grpc: &str, sites: &[(&str, &str)]) {
    let mut text = format!(
        "[listen]\ngrpc = \"{grpc}\"\nhttps = \"127.0.0.1:0\"\n\n\
         [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n",
        pki.cert.display(),
        pki.key.display()
    );
    for (site, token) in sites {
        text.push_str(&format!(
            "[sites.{site}]\ntoken_sha256 = \"{}\"\n",
            crate::auth::TokenHash::of(token).to_hex()
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn setup(sites: &[(&str, &str)]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate().write(dir.path());
    let config = dir.path().join("central.toml");
    write(&config, &pki, "127.0.0.1:0", sites);
    Setup {
        _dir: dir,
        config,
        pki,
    }
}

fn live(setup: &Setup) -> Live {
    let loaded = CentralConfig::load(&setup.config).unwrap();
    let (certificate_pem, key_pem) = crate::run::check(&loaded).unwrap();
    let tokens = loaded.config.tokens();
    let access = Arc::new(crate::run::access(&loaded, &tokens).unwrap());
    Live::new(
        &loaded,
        tokens,
        Some(access),
        Arc::new(Identity::from_pem(&certificate_pem, &key_pem).unwrap()),
        WatchedCertificate {
            validity: Validity::of_leaf(&certificate_pem).unwrap(),
            warning_days: 30,
            path: setup.pki.cert.clone(),
        },
        Arc::new(Metrics::default()),
    )
}

#[tokio::test]
async fn a_new_site_is_in_force_for_every_holder_of_the_tokens_and_named_in_the_summary() {
    let (a, b) = (new_token().unwrap(), new_token().unwrap());
    let setup = setup(&[("SITE-A", &a)]);
    let live = live(&setup);
    let held_by_the_ingest = live.tokens.clone();
    let access = live.access.clone().unwrap();
    assert_eq!(held_by_the_ingest.site_for(&b), None);

    write(&setup.config, &setup.pki, "127.0.0.1:0", &[("SITE-B", &b)]);
    let summary = live.reload().unwrap();
    assert!(
        summary.starts_with("1 sites (added: SITE-B; removed: SITE-A; new token: none)"),
        "{summary}"
    );
    assert!(!summary.contains(&b) && !summary.contains(&a), "{summary}");
    assert_eq!(
        held_by_the_ingest.site_for(&b).map(|site| site.to_string()),
        Some("SITE-B".to_owned())
    );
    assert_eq!(held_by_the_ingest.site_for(&a), None);
    let bearer = format!("Bearer {b}");
    assert!(matches!(
        access.identify(Some(&bearer)).await,
        Ok(crate::access::Caller::Site(site)) if site.as_str() == "SITE-B"
    ));
}

#[test]
fn a_broken_file_an_expired_certificate_and_a_bad_hash_are_refused_and_change_nothing() {
    let a = new_token().unwrap();
    let setup = setup(&[("SITE-A", &a)]);
    let live = live(&setup);

    std::fs::write(&setup.config, "[listen\n").unwrap();
    let refused = live.reload().unwrap_err();
    assert!(refused.contains("central.toml:1:"), "{refused}");

    let expired_dir = tempfile::tempdir().unwrap();
    let expired = Pki::issued("expired CA", &["localhost"], Some(((2020, 1), (2021, 1))))
        .write(expired_dir.path());
    write(&setup.config, &expired, "127.0.0.1:0", &[("SITE-A", &a)]);
    let refused = live.reload().unwrap_err();
    assert!(refused.contains("expired"), "{refused}");

    let text = std::fs::read_to_string(&setup.config)
        .unwrap()
        .replace(&crate::auth::TokenHash::of(&a).to_hex(), &"0".repeat(63));
    std::fs::write(&setup.config, text).unwrap();
    let refused = live.reload().unwrap_err();
    assert!(refused.contains("token_sha256"), "{refused}");

    std::fs::remove_file(&setup.config).unwrap();
    let refused = live.reload().unwrap_err();
    assert!(refused.contains("central.toml"), "{refused}");

    assert_eq!(
        live.tokens.site_for(&a).map(|site| site.to_string()),
        Some("SITE-A".to_owned()),
        "the old sites stay in force"
    );
    assert_eq!(
        live.certificate.borrow().path,
        setup.pki.cert,
        "the old certificate stays in force"
    );
}

#[test]
fn listeners_and_database_wait_for_a_restart_and_the_rest_is_put_in_force() {
    let (a, b) = (new_token().unwrap(), new_token().unwrap());
    let setup = setup(&[("SITE-A", &a)]);
    let live = live(&setup);
    write(
        &setup.config,
        &setup.pki,
        "127.0.0.1:1",
        &[("SITE-A", &a), ("SITE-B", &b)],
    );
    let new = CentralConfig::load(&setup.config).unwrap();
    let restart = changes::Changes::needing_restart(&live.started, &new);
    assert_eq!(restart, vec!["[listen]".to_owned()]);
    live.reload().unwrap();
    assert!(live.tokens.site_for(&b).is_some());
}

#[test]
fn the_access_rules_of_the_new_file_are_in_force_after_a_reload() {
    let a = new_token().unwrap();
    let setup = setup(&[("SITE-A", &a)]);
    let live = live(&setup);
    let access = live.access.clone().unwrap();
    let anonymous = crate::access::Caller::Anonymous;
    let aggregates = crate::access::Scope::default();
    assert!(access.allows(&anonymous, &aggregates).is_ok());

    let mut text = std::fs::read_to_string(&setup.config).unwrap();
    text.push_str(
        "[access]\nanonymous = false\n\
         [access.oidc]\nissuer = \"https://aai.example.org/oidc/\"\naudience = \"accelfed\"\n\
         [[access.roles]]\nentitlement = \"urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu\"\n\
         role = \"vo-manager\"\n",
    );
    std::fs::write(&setup.config, text).unwrap();
    let summary = live.reload().unwrap();
    assert!(
        summary.contains("access: 1 role rules, OIDC on, anonymous reading off"),
        "{summary}"
    );
    assert!(matches!(
        access.allows(&anonymous, &aggregates),
        Err(crate::access::Refusal::SignIn(_))
    ));
}
