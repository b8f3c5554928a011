//! The LDAP clients' CA: `[ldap] ca` for the registry's sync and the trust `query --ldap` is given.
//! A real slapd is reached over `ldaps://` through the kit's TLS front with the test PKI's
//! certificate; each client trusts it when its setting names the test CA and is refused at the
//! handshake without it. Inside the crate because the sync is crate-private; the binary's `query
//! --ldap --ca`, against the view the whole service wrote with `[ldap] ca`, is in
//! `cli/tests/ldap_ca.rs`.

use std::path::Path;

use crate::registry::ldap::LdapSync;
use crate::registry::ldap::config::{DEFAULT_BASE, GroupBase, LdapSyncConfig, LdapUrl, ModeName};
use crate::registry::ldap::error::LdapError;
use crate::registry::ldap::query::query;
use accelfed_net::Trust;
use accelfed_schemas::glue::from_json::parse;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::offer::Filter;
use accelfed_schemas::render::json;
use accelfed_testkit::pki::Pki;
use accelfed_testkit::slapd::{ROOT_DN, ROOT_PW, Slapd, ldaps_front};

fn config(url: &str, ca: Option<&Path>) -> LdapSyncConfig {
    LdapSyncConfig {
        url: LdapUrl::try_from(url.to_owned()).unwrap(),
        bind_dn: ROOT_DN.to_owned(),
        password_file: "ldap.password".into(),
        base: GroupBase::try_from(DEFAULT_BASE.to_owned()).unwrap(),
        mode: ModeName::default(),
        interval_s: 0,
        ca: ca.map(Path::to_path_buf),
    }
}

#[test]
fn the_sync_and_the_ldap_query_trust_an_ldaps_server_through_their_ca_and_only_then() {
    // Started outside the runtime: the kit's slapd checks itself with ldap3's blocking client.
    let slapd = Slapd::start(&[]).unwrap();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(trusted_only_through_the_ca(&slapd));
}

async fn trusted_only_through_the_ca(slapd: &Slapd) {
    let dir = tempfile::tempdir().unwrap();
    let test_pki = Pki::generate();
    let files = test_pki.write(dir.path());
    std::fs::write(dir.path().join("ldap.password"), format!("{ROOT_PW}\n")).unwrap();
    let url = ldaps_front(&test_pki, slapd).await.unwrap();
    let resolve = |path: &Path| dir.path().join(path);
    let document = parse(&json::render(&snapshot("CA-SITE"))).unwrap();

    // [ldap] ca naming the test CA: the sync writes the view over ldaps://.
    let trusted = LdapSync::new(&config(&url, Some(Path::new("ca.pem"))), resolve).unwrap();
    let report = trusted.sync([&document]).await.unwrap();
    assert!(report.applied.failed.is_empty(), "{report:?}");
    assert!(report.applied.done.adds > 0, "{report:?}");

    // Without it, the system's roots do not know the test CA: refused at the handshake, naming
    // the server.
    let untrusted = LdapSync::new(&config(&url, None), resolve).unwrap();
    let err = untrusted.sync([&document]).await.unwrap_err();
    assert!(matches!(err, LdapError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains(&url), "{err}");

    // A CA file that is not there is refused when the sync is configured, naming the setting.
    let missing = LdapSync::new(&config(&url, Some(Path::new("nowhere.pem"))), resolve)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("ldap.ca"), "{missing}");

    // The query `query --ldap` runs: the offers the sync wrote with `--ca`'s trust, refused with
    // the system's alone.
    let with_ca = Trust::optional("--ca", Some(&files.ca)).unwrap();
    let offers = query(&url, "o=glue", &Filter::default(), &with_ca)
        .await
        .unwrap();
    assert!(
        offers.iter().any(|offer| offer.site.as_str() == "CA-SITE"),
        "{offers:?}"
    );
    let err = query(&url, "o=glue", &Filter::default(), &Trust::system())
        .await
        .unwrap_err();
    assert!(matches!(err, LdapError::Connect { .. }), "{err:?}");
}
