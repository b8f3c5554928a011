//! The rustls settings for each of libpq's checks ([`Check`]). Whatever is checked of the
//! certificate, the handshake's signatures always are: a server still proves it holds the key of
//! the certificate it sent.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};

use super::Trust;
use super::target::Check;

/// The client settings for `check` with the roots of `trust`.
pub(super) fn client_config(
    trust: &Trust,
    check: Check,
) -> Result<Arc<rustls::ClientConfig>, String> {
    let provider = crate::tls::provider();
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|err| format!("TLS: {err}"))?;
    let config = match check {
        Check::ChainAndName => builder
            .with_root_certificates(crate::tls::root_store(trust)?)
            .with_no_client_auth(),
        Check::Chain => {
            let roots = Arc::new(crate::tls::root_store(trust)?);
            let chain = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
                .build()
                .map_err(|err| format!("TLS: {err}"))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Lenient {
                    chain: Some(chain),
                    provider,
                }))
                .with_no_client_auth()
        }
        Check::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Lenient {
                chain: None,
                provider,
            }))
            .with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// libpq's checks short of `verify-full`: `verify-ca` gives the chain (it must lead to a trusted
/// root; the names in the certificate are not compared with the host: the chain is checked before
/// the name, so a name mismatch is the only failure forgiven); `require` and `prefer` without a
/// root certificate give none (encryption against a passive listener, as libpq gives). The
/// handshake's signatures are checked either way.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
