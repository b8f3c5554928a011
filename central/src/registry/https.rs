//! Serving a router over TLS (axum itself serves plain HTTP): rustls with the service's certificate,
//! HTTP/1.1 with keep-alive, one task per connection.

use std::sync::Arc;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// A TLS acceptor from PEM certificate chain and key.
pub fn acceptor(certificate_pem: &[u8], key_pem: &[u8]) -> Result<TlsAcceptor, String> {
    let certificates: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(certificate_pem)
            .collect::<Result<_, _>>()
            .map_err(|error| format!("certificate: {error}"))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| format!("key: {error}"))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| error.to_string())?
    .with_no_client_auth()
    .with_single_cert(certificates, key)
    .map_err(|error| error.to_string())?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts connections until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => return,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                tracing::warn!(%error, "registry API: accept failed");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(error) => {
                    tracing::debug!(%peer, %error, "registry API: TLS handshake failed");
                    return;
                }
            };
            let service = TowerToHyperService::new(app);
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await
            {
                tracing::debug!(%peer, %error, "registry API: connection ended");
            }
        });
    }
}
