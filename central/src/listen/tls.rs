//! The server side of TLS on the gRPC and HTTPS ports (the metrics port is plain HTTP): rustls
//! with the service's certificate, TLS 1.2 and 1.3 with rustls's safe defaults, and the
//! application protocol each port speaks (ALPN: `h2` for gRPC, `http/1.1` for the registry), since
//! the handshake happens here, not in the HTTP servers.
//!
//! The certificate and key are an [`Identity`] that every port's acceptor asks at each handshake,
//! so a reload (SIGHUP) gives new handshakes a renewed certificate while connections already made
//! keep theirs.

use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// The service's certificate chain and key, in force for every new handshake on every TLS port.
#[derive(Debug)]
pub struct Identity {
    current: RwLock<Arc<CertifiedKey>>,
}

impl Identity {
    /// The identity of a PEM certificate chain (leaf first) and its key; refused when the key
    /// is not the certificate's.
    pub fn from_pem(certificate_pem: &[u8], key_pem: &[u8]) -> Result<Self, String> {
        Ok(Self {
            current: RwLock::new(Arc::new(certified_key(certificate_pem, key_pem)?)),
        })
    }

    /// Puts `other`'s certificate and key in force for the handshakes from now on.
    pub fn replace(&self, other: Identity) {
        let key = other.current();
        match self.current.write() {
            Ok(mut current) => *current = key,
            Err(poisoned) => *poisoned.into_inner() = key,
        }
    }

    fn current(&self) -> Arc<CertifiedKey> {
        match self.current.read() {
            Ok(current) => current.clone(),
            // Replaced whole: a panicking writer cannot leave half of one.
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl ResolvesServerCert for Identity {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn certified_key(certificate_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, String> {
    let certificates: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(certificate_pem)
            .collect::<Result<_, _>>()
            .map_err(|error| format!("certificate: {error}"))?;
    if certificates.is_empty() {
        return Err("certificate: no PEM certificate in the file".to_owned());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| format!("key: {error}"))?;
    CertifiedKey::from_der(certificates, key, &rustls::crypto::ring::default_provider())
        .map_err(|error| error.to_string())
}

/// A TLS acceptor from a PEM certificate chain and key, offering `alpn` (e.g. `b"h2"`).
pub fn acceptor(
    certificate_pem: &[u8],
    key_pem: &[u8],
    alpn: &[u8],
) -> Result<TlsAcceptor, String> {
    acceptor_for(
        Arc::new(Identity::from_pem(certificate_pem, key_pem)?),
        alpn,
    )
}

/// A TLS acceptor that presents whatever `identity` holds at each handshake, offering `alpn`.
pub fn acceptor_for(identity: Arc<Identity>, alpn: &[u8]) -> Result<TlsAcceptor, String> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| error.to_string())?
    .with_no_client_auth()
    .with_cert_resolver(identity);
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
