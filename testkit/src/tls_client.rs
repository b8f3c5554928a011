//! A raw TLS client of a test server's ports, for tests that speak to the central service below
//! its clients (half requests, trickled bodies, HTTP/2 frames by hand): a connector trusting the
//! test CA that offers one ALPN protocol, and the HTTP/2 frames such tests send.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// An HTTP/2 connection preface and an empty SETTINGS frame (RFC 9113, 3.4 and 6.5).
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
/// A PING frame (RFC 9113, 6.7) with 8 bytes of payload.
pub const H2_PING: &[u8] = b"\0\0\x08\x06\0\0\0\0\0accelfed";

/// A TLS connector trusting the CA certificates of `ca_pem` (only them), offering `alpn`.
pub fn connector(ca_pem: &str, alpn: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(certificate.expect("a PEM certificate of the test CA"))
            .expect("the test CA is a usable root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring's default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    TlsConnector::from(Arc::new(config))
}

/// A TLS connection to `to` (a server whose certificate names `localhost`), offering `alpn`.
pub async fn connect(
    ca_pem: &str,
    alpn: &[u8],
    to: SocketAddr,
) -> TlsStream<tokio::net::TcpStream> {
    let stream = tokio::net::TcpStream::connect(to)
        .await
        .unwrap_or_else(|err| panic!("connect to {to}: {err}"));
    let name = ServerName::try_from("localhost").expect("a valid server name");
    connector(ca_pem, alpn)
        .connect(name, stream)
        .await
        .unwrap_or_else(|err| panic!("TLS handshake with {to}: {err}"))
}
