//! An `ldaps://` server for the LDAP clients' CA tests: a TLS front with a test certificate on a
//! free port of 127.0.0.1 that passes each connection on to a slapd's plain port. slapd itself
//! listens without TLS here (its TLS needs files in its own formats); the clients only see the
//! front, so what they trust or refuse is the front's certificate.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::pki::Pki;

use super::Slapd;

/// Starts the front for `slapd` with `pki`'s server certificate on the current tokio runtime and
/// returns its URL (`ldaps://127.0.0.1:PORT`); the front's tasks end with the runtime.
pub async fn ldaps_front(pki: &Pki, slapd: &Slapd) -> std::io::Result<String> {
    let backend = plain_address(slapd)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| {
            builder.with_no_client_auth().with_single_cert(
                vec![pki.cert_der.clone().into()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
            )
        })
        .map_err(std::io::Error::other)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
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
    Ok(format!("ldaps://127.0.0.1:{port}"))
}

/// slapd's plain address, from its `ldap://127.0.0.1:PORT` URL.
fn plain_address(slapd: &Slapd) -> std::io::Result<SocketAddr> {
    let url = slapd.url();
    url.trim_start_matches("ldap://")
        .trim_end_matches('/')
        .parse()
        .map_err(|error| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("slapd's URL {url} is not ldap://ADDRESS:PORT: {error}"),
            )
        })
}
