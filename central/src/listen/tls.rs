//! The server side of TLS on the gRPC and HTTPS ports (the metrics port is plain HTTP): rustls
//! with the service's certificate, TLS 1.2 and 1.3 with rustls's safe defaults, and the
//! application protocol each port speaks (ALPN: `h2` for gRPC, `http/1.1` for the registry), since
//! the handshake happens here, not in the HTTP servers.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A TLS acceptor from a PEM certificate chain and key, offering `alpn` (e.g. `b"h2"`).
pub fn acceptor(
    certificate_pem: &[u8],
    key_pem: &[u8],
    alpn: &[u8],
) -> Result<TlsAcceptor, String> {
    let certificates: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(certificate_pem)
            .collect::<Result<_, _>>()
            .map_err(|error| format!("certificate: {error}"))?;
    if certificates.is_empty() {
        return Err("certificate: no PEM certificate in the file".to_owned());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| format!("key: {error}"))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| error.to_string())?
    .with_no_client_auth()
    .with_single_cert(certificates, key)
    .map_err(|error| error.to_string())?;
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
