//! The PostgreSQL connector against the machine's PostgreSQL (127.0.0.1:5432, `ssl = on` with
//! Debian's self-signed certificate for `localhost`; `ACCELFED_TEST_POSTGRES` names another
//! server): each `sslmode` connects, or refuses, as libpq's would, and the session is encrypted
//! exactly when the mode asks for it (the server's own `pg_stat_ssl` says). The refusals are
//! tried against a server with a certificate of the test's own CA (the machine's PostgreSQL
//! certificate is among the system's roots here: Debian keeps it in /etc/ssl/certs, which the
//! system store reads whole), which answers PostgreSQL's TLS request as PostgreSQL does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use accelfed_net::Trust;
use accelfed_net::postgres::target;

fn server() -> String {
    std::env::var("ACCELFED_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

/// `server()` with its host replaced by `host`.
fn at_host(host: &str) -> String {
    let server = server();
    let (user, address) = server
        .rsplit_once('@')
        .expect("the server URL names a user");
    let port = address.rsplit_once(':').map_or("5432", |(_, port)| port);
    format!("{user}@{host}:{port}/postgres")
}

/// Connects with `url` and returns whether the session is encrypted, or the error's text.
async fn encrypted(url: &str, trust: &Trust) -> Result<bool, String> {
    let target = target(url, trust)?;
    let (client, connection) = target
        .config
        .connect(target.tls)
        .await
        .map_err(|error| format!("{error:?}"))?;
    let task = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|error| error.to_string())?;
    drop(client);
    let _ = task.await;
    Ok(row.get(0))
}

/// The server's certificate file, as it reports it: self-signed, so it is its own root.
async fn server_certificate() -> String {
    let target = target(&at_host("127.0.0.1"), &Trust::system()).unwrap();
    let (client, connection) = target
        .config
        .connect(target.tls)
        .await
        .expect("the test needs PostgreSQL (set ACCELFED_TEST_POSTGRES)");
    let task = tokio::spawn(connection);
    let on: String = client.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    assert_eq!(
        on, "on",
        "the test needs PostgreSQL with ssl = on (Debian's default)"
    );
    let file: String = client
        .query_one("SHOW ssl_cert_file", &[])
        .await
        .unwrap()
        .get(0);
    drop(client);
    let _ = task.await;
    file
}

#[tokio::test]
async fn each_sslmode_connects_or_refuses_as_libpq_does() {
    let root = server_certificate().await;
    let system = Trust::system();
    let by_ip = at_host("127.0.0.1");
    let by_name = at_host("localhost");

    assert_eq!(
        encrypted(&format!("{by_ip}?sslmode=disable"), &system).await,
        Ok(false)
    );
    assert_eq!(
        encrypted(&by_ip, &system).await,
        Ok(true),
        "prefer, the default"
    );
    assert_eq!(
        encrypted(&format!("{by_ip}?sslmode=require"), &system).await,
        Ok(true)
    );

    // verify-ca: the chain is checked, the name is not (the certificate names localhost).
    let ca = format!("{by_ip}?sslmode=verify-ca&sslrootcert={root}");
    assert_eq!(encrypted(&ca, &system).await, Ok(true));
    // The same root through the project's trust instead of the URL.
    let trust = Trust::with_ca("test", std::path::Path::new(&root)).unwrap();
    assert_eq!(
        encrypted(&format!("{by_ip}?sslmode=verify-ca"), &trust).await,
        Ok(true)
    );

    // verify-full: the name must match too.
    let full = format!("{by_name}?sslmode=verify-full&sslrootcert={root}");
    assert_eq!(encrypted(&full, &system).await, Ok(true));
    let wrong_name = encrypted(
        &format!("{by_ip}?sslmode=verify-full&sslrootcert={root}"),
        &system,
    )
    .await;
    assert!(
        wrong_name
            .as_ref()
            .is_err_and(|e| e.contains("NotValidForName")),
        "a certificate for another name is refused: {wrong_name:?}"
    );
}

/// A server that answers PostgreSQL's `SSLRequest` with `S` and then the TLS handshake, with a
/// certificate for `elsewhere.test` issued by its own CA; counts the handshakes that completed.
struct TlsOnlyServer {
    port: u16,
    ca_pem: String,
    handshakes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

async fn tls_only_server() -> TlsOnlyServer {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["elsewhere.test".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handshakes: std::sync::Arc<std::sync::atomic::AtomicUsize> = std::sync::Arc::default();
    let counted = std::sync::Arc::clone(&handshakes);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = [0_u8; 8];
            if stream.read_exact(&mut request).await.is_err()
                || stream.write_all(b"S").await.is_err()
            {
                continue;
            }
            if acceptor.accept(stream).await.is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    TlsOnlyServer {
        port,
        ca_pem: ca.pem(),
        handshakes,
    }
}

#[tokio::test]
async fn a_certificate_no_root_vouches_for_or_for_another_name_is_refused() {
    use std::sync::atomic::Ordering;
    let server = tls_only_server().await;
    let root = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(root.path(), &server.ca_pem).unwrap();
    let url = |mode: &str, with_root: bool| {
        let mut url = format!("postgres://u@127.0.0.1:{}/db?sslmode={mode}", server.port);
        if with_root {
            url.push_str(&format!("&sslrootcert={}", root.path().display()));
        }
        url
    };
    let system = Trust::system();
    for mode in ["verify-ca", "verify-full"] {
        let refused = encrypted(&url(mode, false), &system).await;
        assert!(
            refused.as_ref().is_err_and(|e| e.contains("UnknownIssuer")),
            "{mode} without the root: {refused:?}"
        );
    }
    let wrong_name = encrypted(&url("verify-full", true), &system).await;
    assert!(
        wrong_name
            .as_ref()
            .is_err_and(|e| e.contains("NotValidForName")),
        "verify-full names 127.0.0.1, the certificate elsewhere.test: {wrong_name:?}"
    );
    // libpq: require with a root certificate checks the chain as verify-ca does.
    let other = tempfile::NamedTempFile::new().unwrap();
    let other_ca = rcgen::generate_simple_self_signed(vec!["other".to_owned()]).unwrap();
    std::fs::write(other.path(), other_ca.cert.pem()).unwrap();
    let required = encrypted(
        &format!(
            "postgres://u@127.0.0.1:{}/db?sslmode=require&sslrootcert={}",
            server.port,
            other.path().display()
        ),
        &system,
    )
    .await;
    assert!(
        // rcgen gives both CAs one default name, so the chain is found and its signature fails.
        required
            .as_ref()
            .is_err_and(|e| e.contains("UnknownIssuer") || e.contains("BadSignature")),
        "require with another root: {required:?}"
    );
    assert_eq!(server.handshakes.load(Ordering::SeqCst), 0);

    // What is accepted completes the handshake (the server then hangs up: it is no database).
    for accepted in [url("verify-ca", true), url("require", false)] {
        let _ = encrypted(&accepted, &system).await;
    }
    let from_project_trust = Trust::from_pem(server.ca_pem.clone().into_bytes());
    let _ = encrypted(&url("verify-ca", false), &from_project_trust).await;
    assert_eq!(server.handshakes.load(Ordering::SeqCst), 3);
}
