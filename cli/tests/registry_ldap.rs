//! `accelfed query --ldap` against the federation view the service itself wrote: the whole service
//! started through `run` (the harness's `Server`) with `[ldap]` naming a real slapd with the
//! official GLUE 2.0 schema, two sites pushing their documents over HTTPS, the sync writing them;
//! the binary then prints the offers a filter selects, and a filter value shaped like an LDAP
//! filter term selects nothing. The sync's own checks (what it writes, repairs and refuses) are in
//! `central/src/tests/ldap_sync.rs`.

// A failing call here is the test failing; its error (slapd's log included) is the message.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use accelfed_central::TokenHash;
use accelfed_publishers::registry;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::{Filter, Offer};
use accelfed_schemas::render::json;
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;
use accelfed_tests::slapd::{ROOT_DN, ROOT_PW, Slapd};

// Of `accelfed token`'s form (64 hex digits).
const TOKEN_A: &str = "1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a";
const TOKEN_B: &str = "1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b";

/// A slapd holding the view of two sites, written by the service's own sync after their pushes.
fn loaded_federation(dir: &std::path::Path) -> (Slapd, Server) {
    let slapd = Slapd::start(&[]).unwrap();
    let pki = Pki::generate();
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    std::fs::write(dir.join("ldap.password"), format!("{ROOT_PW}\n")).unwrap();
    let config = dir.join("central.toml");
    std::fs::write(
        &config,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
             [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
             [database]\npath = \"{}\"\n\
             [ldap]\nurl = \"{}\"\nbind_dn = \"{ROOT_DN}\"\npassword_file = \"ldap.password\"\n\
             interval_s = 0\n\
             [sites.SITE-A]\ntoken_sha256 = \"{}\"\n\
             [sites.SITE-B]\ntoken_sha256 = \"{}\"\n",
            dir.join("accounting.sqlite").display(),
            slapd.url(),
            TokenHash::of(TOKEN_A).to_hex(),
            TokenHash::of(TOKEN_B).to_hex()
        ),
    )
    .unwrap();
    let server = Server::start(&config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = registry::client(Some(pki.ca_pem.as_bytes())).unwrap();
        for (site, token) in [("SITE-A", TOKEN_A), ("SITE-B", TOKEN_B)] {
            let mut document = snapshot(site);
            document.creation_time = chrono::Utc::now();
            registry::push(&client, &server.url(), token, json::render(&document))
                .await
                .unwrap();
        }
        // The sync runs after each push, on the service's own task: wait until both sites are
        // there.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let offers = accelfed_central::ldap_query(
                slapd.url(),
                "o=glue",
                &Filter::default(),
                &accelfed_net::Trust::system(),
            )
            .await
            .unwrap_or_default();
            let mut sites: Vec<&str> = offers.iter().map(|o| o.site.as_str()).collect();
            sites.sort_unstable();
            sites.dedup();
            if sites == ["SITE-A", "SITE-B"] {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the sync did not write both sites within 30 s: {sites:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    (slapd, server)
}

#[test]
fn accelfed_query_ldap_prints_the_offers_and_refuses_nothing_on_injection() {
    let dir = tempfile::tempdir().unwrap();
    let (slapd, server) = loaded_federation(dir.path());
    let run = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
            .args(["query", "--ldap", slapd.url(), "--format", "json"])
            .args(extra)
            .env_remove("ACCELFED_REGISTRY_URL")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let offers: Vec<Offer> = serde_json::from_slice(&output.stdout).unwrap();
        offers
    };
    let a100 = run(&["--model", "A100", "--min-gpus", "4", "--vo", "atlas"]);
    assert!(!a100.is_empty());
    assert!(
        a100.iter()
            .all(|offer| offer.model.contains("A100") && offer.gpus_each >= GpuCount::whole(4))
    );
    assert!(run(&["--model", "A100*)(objectClass=*"]).is_empty());
    server.stop().unwrap();
}
