//! A rustls client configuration from a [`Trust`], for clients that take one (the LDAP clients:
//! ldap3). ldap3's own default drops every system root when any file of the system's store fails
//! to load; here the roots that load are kept and the others logged.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::trust::Trust;

/// The system's roots plus the trust's extra certificates, with ring (the one crypto provider of
/// the workspace) and its safe protocol versions.
pub fn client_config(trust: &Trust) -> Result<Arc<rustls::ClientConfig>, String> {
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|err| format!("TLS: {err}"))?
        .with_root_certificates(root_store(trust)?)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// ring, the one crypto provider of the workspace.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The system's roots that load, plus the trust's extra certificates.
pub fn root_store(trust: &Trust) -> Result<rustls::RootCertStore, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for error in &native.errors {
        tracing::debug!("a system CA certificate was not read: {error}");
    }
    let (_, unparsable) = roots.add_parsable_certificates(native.certs);
    if unparsable > 0 {
        tracing::debug!(
            unparsable,
            "system CA certificates rustls cannot use were passed over"
        );
    }
    if let Some(pem) = trust.extra_pem() {
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate = certificate.map_err(|err| format!("the CA certificates: {err}"))?;
            roots
                .add(certificate)
                .map_err(|err| format!("a CA certificate cannot be trusted: {err}"))?;
        }
    }
    Ok(roots)
}
