//! `accelfed query --ldap --ca` against an `ldaps://` server the whole service wrote to with
//! `[ldap] ca`: a real slapd behind the kit's TLS front with the test PKI's certificate, the
//! service started through `run` (the harness's `Server`) with `[ldap]` naming the front and the
//! test CA, a site pushing over HTTPS, the sync writing its view. The binary prints the offers with
//! `--ca` (exit 0) and without it names the server and exits 1. The sync's and the query's own CA
//! checks (refused without the CA, a missing CA file named) are in `central/src/tests/ldap_ca.rs`.

// A failing call here is the test failing; its error (slapd's log included) is the message.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use accelfed_central::TokenHash;
use accelfed_net::Trust;
use accelfed_publishers::registry;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::offer::Filter;
use accelfed_schemas::render::json;
use accelfed_tests::central::Server;
use accelfed_tests::pki::{Pki, PkiFiles};
use accelfed_tests::slapd::{ROOT_DN, ROOT_PW, Slapd, ldaps_front};

// Of `accelfed token`'s form (64 hex digits).
const TOKEN: &str = "ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1ca1c";

/// central.toml with the registry on a free port and `[ldap]` naming `url` with the test CA.
fn central_config(dir: &Path, files: &PkiFiles, url: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("ldap.password"), format!("{ROOT_PW}\n")).unwrap();
    let config = dir.join("central.toml");
    std::fs::write(
        &config,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
             [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\
             [database]\npath = \"{}\"\n\
             [ldap]\nurl = \"{url}\"\nbind_dn = \"{ROOT_DN}\"\npassword_file = \"ldap.password\"\n\
             interval_s = 0\nca = \"{}\"\n\
             [sites.CA-SITE]\ntoken_sha256 = \"{}\"\n",
            files.cert.display(),
            files.key.display(),
            dir.join("accounting.sqlite").display(),
            files.ca.display(),
            TokenHash::of(TOKEN).to_hex()
        ),
    )
    .unwrap();
    config
}

#[test]
fn query_ldap_trusts_the_ldaps_view_the_service_wrote_through_ca_and_only_then() {
    // Started outside the runtime: the kit's slapd checks itself with ldap3's blocking client.
    let slapd = Slapd::start(&[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let test_pki = Pki::generate();
    let files = test_pki.write(dir.path());
    // The front's tasks run on this runtime's workers while the test waits on the binary.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = runtime.block_on(ldaps_front(&test_pki, &slapd)).unwrap();
    let server = Server::start(&central_config(dir.path(), &files, &url));
    let with_ca = Trust::optional("--ca", Some(&files.ca)).unwrap();
    let offers = runtime.block_on(async {
        let client = registry::client(Some(test_pki.ca_pem.as_bytes())).unwrap();
        let mut document = snapshot("CA-SITE");
        document.creation_time = chrono::Utc::now();
        registry::push(&client, &server.url(), TOKEN, json::render(&document))
            .await
            .unwrap();
        // The sync runs after the push, on the service's own task: wait until the site is there.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let offers = accelfed_central::ldap_query(&url, "o=glue", &Filter::default(), &with_ca)
                .await
                .unwrap_or_default();
            if !offers.is_empty() {
                break offers;
            }
            assert!(
                Instant::now() < deadline,
                "the sync did not write CA-SITE over {url} within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });

    let run = |ca: Option<&Path>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_accelfed"));
        command
            .args(["query", "--ldap", &url, "--format", "json"])
            .env_remove("ACCELFED_REGISTRY_URL")
            .env_remove("ACCELFED_REGISTRY_CA");
        if let Some(ca) = ca {
            command.arg("--ca").arg(ca);
        }
        command.output().unwrap()
    };
    let trusted = run(Some(&files.ca));
    assert!(trusted.status.success(), "{trusted:?}");
    let printed: Vec<serde_json::Value> = serde_json::from_slice(&trusted.stdout).unwrap();
    assert_eq!(printed.len(), offers.len());
    assert!(
        printed.iter().all(|offer| offer["site"] == "CA-SITE"),
        "{printed:?}"
    );
    let refused = run(None);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&url),
        "{refused:?}"
    );
    server.stop().unwrap();
}
