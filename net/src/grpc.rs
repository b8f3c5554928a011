//! TLS for gRPC clients (tonic) from the same [`Trust`] as the HTTPS clients, and the endpoint
//! with its timeouts. tonic's own timeouts bound connecting and each request once the channel is
//! up; the TLS handshake is bounded by neither, so callers also run each whole call within
//! [`crate::deadline::within`].

use std::time::Duration;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

use crate::trust::Trust;
use crate::url::HttpsUrl;

/// The TLS settings of a channel: the system's roots (where the system has any) plus the trust's
/// extra certificates. tonic refuses an empty system store outright, so the roots are asked for
/// only where they exist; a site that names its CA then works on a host without a CA bundle.
pub fn client_tls(trust: &Trust) -> ClientTlsConfig {
    let mut tls = ClientTlsConfig::new();
    let system_roots = !rustls_native_certs::load_native_certs().certs.is_empty();
    if system_roots || trust.extra_pem().is_none() {
        tls = tls.with_native_roots();
    }
    if let Some(pem) = trust.extra_pem() {
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    tls
}

/// The endpoint for `url` over TLS with `trust`: connecting and each request end at `deadline`.
pub fn endpoint(url: &HttpsUrl, trust: &Trust, deadline: Duration) -> Result<Endpoint, String> {
    Endpoint::from_shared(url.as_str().to_owned())
        .map_err(|err| format!("not a URL: {err}"))?
        .tls_config(client_tls(trust))
        .map_err(|err| format!("TLS: {err}"))
        .map(|endpoint| endpoint.connect_timeout(deadline).timeout(deadline))
}
