//! The LDAP clients' CA: `[ldap] ca` for the registry's sync and `--ca` for `query --ldap`. A real
//! slapd is reached over `ldaps://` through a TLS front with the test PKI's certificate; each
//! client (and `accelfed query --ldap`) reads it when its setting names the test CA and is refused
//! without it.

// A failing call here is the test failing; its error (slapd's log included) is the message.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use accelfed_central::registry::ldap::config::{
    DEFAULT_BASE, GroupBase, LdapSyncConfig, LdapUrl, ModeName,
};
use accelfed_central::registry::ldap::{LdapError, LdapSync, query};
use accelfed_net::Trust;
use accelfed_schemas::glue::from_json::parse;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::offer::Filter;
use accelfed_schemas::render::json;
use accelfed_tests::pki::Pki;
use accelfed_tests::slapd::{ROOT_DN, ROOT_PW, Slapd};

/// A TLS front on a free port of 127.0.0.1 with `pki`'s certificate that passes each connection
/// on to `backend` (slapd's plain port): an `ldaps://` server for the clients. Its URL; the task
/// ends with the test's runtime.
async fn ldaps_front(pki: &Pki, backend: std::net::SocketAddr) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.cert_der.clone().into()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("ldaps://127.0.0.1:{port}")
}

/// slapd's plain address, from its `ldap://127.0.0.1:PORT` URL.
fn address(slapd: &Slapd) -> std::net::SocketAddr {
    slapd
        .url()
        .trim_start_matches("ldap://")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

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
fn the_sync_and_query_ldap_trust_an_ldaps_server_through_their_ca_and_only_then() {
    // Started outside the runtime: the kit's slapd checks itself with ldap3's blocking client.
    let slapd = Slapd::start(&[]).unwrap();
    let backend = address(&slapd);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(trusted_only_through_the_ca(backend));
}

async fn trusted_only_through_the_ca(backend: std::net::SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    let test_pki = Pki::generate();
    let files = test_pki.write(dir.path());
    std::fs::write(dir.path().join("ldap.password"), format!("{ROOT_PW}\n")).unwrap();
    let url = ldaps_front(&test_pki, backend).await;
    let resolve = |path: &Path| dir.path().join(path);
    let document = parse(&json::render(&snapshot("CA-SITE"))).unwrap();

    // [ldap] ca naming the test CA: the sync writes the view over ldaps://.
    let trusted = LdapSync::new(&config(&url, Some(Path::new("ca.pem"))), resolve).unwrap();
    let report = trusted.sync([&document]).await.unwrap();
    assert!(report.applied.failed.is_empty(), "{report:?}");
    assert!(report.applied.done.adds > 0, "{report:?}");

    // Without it, the system's roots do not know the test CA: refused at the handshake.
    let untrusted = LdapSync::new(&config(&url, None), resolve).unwrap();
    let err = untrusted.sync([&document]).await.unwrap_err();
    assert!(matches!(err, LdapError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains(&url), "{err}");

    // A CA file that is not there is refused when the sync is configured, naming the setting.
    let missing = LdapSync::new(&config(&url, Some(Path::new("nowhere.pem"))), resolve)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("ldap.ca"), "{missing}");

    // query --ldap: the offers the sync wrote with --ca's trust, refused with the system's alone.
    let with_ca = Trust::optional("--ca", Some(&files.ca)).unwrap();
    let offers = query(&url, "o=glue", &Filter::default(), &with_ca)
        .await
        .unwrap();
    assert!(!offers.is_empty());
    let err = query(&url, "o=glue", &Filter::default(), &Trust::system())
        .await
        .unwrap_err();
    assert!(matches!(err, LdapError::Connect { .. }), "{err:?}");

    // The binary: `accelfed query --ldap URL --ca FILE` prints the offers, exit 0; without --ca
    // it names the server and exits 1.
    let run = |ca: Option<std::path::PathBuf>| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_accelfed"));
            command
                .args(["query", "--ldap", &url, "--format", "json"])
                .env_remove("ACCELFED_REGISTRY_URL")
                .env_remove("ACCELFED_REGISTRY_CA");
            if let Some(ca) = ca {
                command.arg("--ca").arg(ca);
            }
            command.output().unwrap()
        })
    };
    let trusted = run(Some(files.ca.clone())).await.unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let printed: Vec<serde_json::Value> = serde_json::from_slice(&trusted.stdout).unwrap();
    assert_eq!(printed.len(), offers.len());
    let refused = run(None).await.unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&url),
        "{refused:?}"
    );
}
