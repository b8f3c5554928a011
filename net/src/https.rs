//! The one HTTPS client builder (reqwest over rustls): the [`Trust`], a connect timeout, and one
//! overall deadline per call. Every HTTP client of the project (the registry push and query, ARGO
//! AMS, Keystone and the OpenStack APIs, Prometheus, slurmrestd) is built here, so they agree on
//! TLS and on when a call ends.

use std::time::Duration;

use crate::deadline::{self, TimedOut};
use crate::trust::Trust;

/// How one client talks: whom it trusts and how long a call may take.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    pub trust: Trust,
    /// One call, whole: connecting, the TLS handshake, the request and the answer's body.
    pub deadline: Duration,
    /// Idle connections kept per host (a client fanning out keeps as many as it runs at once).
    pub idle_per_host: Option<usize>,
}

impl ClientSettings {
    /// `trust`, `deadline`, reqwest's default pool.
    pub fn new(trust: Trust, deadline: Duration) -> Self {
        Self {
            trust,
            deadline,
            idle_per_host: None,
        }
    }
}

/// The longest a TCP connection alone may take, when the deadline is longer: a host that does not
/// answer SYN is reported as such rather than as a call that ran out of time.
const CONNECT_AT_MOST: Duration = Duration::from_secs(10);

/// A client and its deadline. Cheap to clone (reqwest's client is a handle to one pool): build
/// one per run and endpoint, not per request.
#[derive(Debug, Clone)]
pub struct HttpsClient {
    http: reqwest::Client,
    deadline: Duration,
}

/// Why a client could not be built (a CA bundle reqwest refuses): a configuration error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(String);

impl HttpsClient {
    pub fn new(settings: &ClientSettings) -> Result<Self, BuildError> {
        let deadline = settings.deadline.max(Duration::from_millis(1));
        // reqwest's own total timeout equals the deadline: it covers the body read after `send`
        // returned, and [`HttpsClient::within`] ends what is still waiting at the same moment.
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .timeout(deadline)
            .connect_timeout(deadline.min(CONNECT_AT_MOST));
        if let Some(idle) = settings.idle_per_host {
            builder = builder.pool_max_idle_per_host(idle);
        }
        if let Some(pem) = settings.trust.extra_pem() {
            let certificates = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|err| BuildError(format!("the CA certificates are not PEM: {err}")))?;
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let http = builder
            .build()
            .map_err(|err| BuildError(format!("cannot build the HTTPS client: {err}")))?;
        Ok(Self { http, deadline })
    }

    /// The client, to build requests with.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Runs one whole call to `endpoint` (send and read the answer) within the deadline.
    pub async fn within<F: std::future::Future>(
        &self,
        endpoint: &str,
        call: F,
    ) -> Result<F::Output, TimedOut> {
        deadline::within(endpoint, self.deadline, call).await
    }

    /// A transport failure in words: `timed out after N s` for one that ran out of time, else the
    /// chain of causes ("connection refused", "invalid peer certificate: UnknownIssuer"; reqwest's
    /// own text repeats the URL and stops at "error sending request"). Never a header or the URL.
    pub fn describe(&self, err: &reqwest::Error) -> String {
        if err.is_timeout() {
            return deadline::timed_out(self.deadline);
        }
        match std::error::Error::source(err) {
            Some(source) => accelfed_schemas::cause::chain(source),
            None => err.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_peer_that_accepts_and_stays_silent_ends_at_the_deadline() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let client = HttpsClient::new(&ClientSettings::new(
            Trust::system(),
            Duration::from_secs(1),
        ))
        .unwrap();
        let started = std::time::Instant::now();
        let url = format!("https://{address}/");
        let err = client.http().get(&url).send().await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(client.describe(&err), "timed out after 1 s");
        held.abort();
    }

    /// An HTTPS server on 127.0.0.1 with a certificate for 127.0.0.1 signed by a fresh CA, which
    /// answers every request `200 ok`; its port and the CA's PEM.
    async fn https_server() -> (u16, String) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![certificate.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let Ok(mut stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let mut request = [0u8; 4096];
                    let _ = stream.read(&mut request).await;
                    let _ = stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                        )
                        .await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        (port, ca_pem)
    }

    #[tokio::test]
    async fn a_server_signed_by_a_ca_of_an_igtf_folder_is_trusted_and_not_without_it() {
        let (port, ca_pem) = https_server().await;
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("1234abcd.0"), &ca_pem).unwrap();
        std::fs::write(folder.path().join("1234abcd.signing_policy"), "x").unwrap();
        let url = format!("https://127.0.0.1:{port}/");
        let deadline = Duration::from_secs(5);

        let trust = Trust::with_ca("rest.ca", folder.path()).unwrap();
        let client = HttpsClient::new(&ClientSettings::new(trust, deadline)).unwrap();
        let answer = client.http().get(&url).send().await.unwrap();
        assert_eq!(answer.text().await.unwrap(), "ok");

        let client = HttpsClient::new(&ClientSettings::new(Trust::system(), deadline)).unwrap();
        let err = client.http().get(&url).send().await.unwrap_err();
        let text = client.describe(&err);
        assert!(text.contains("UnknownIssuer"), "{text}");
        assert!(crate::cause::is_permanent(&err), "{text}");
    }

    #[test]
    fn a_ca_that_is_not_pem_is_refused_when_the_client_is_built() {
        let settings = ClientSettings::new(
            Trust::from_pem(
                b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n".to_vec(),
            ),
            Duration::from_secs(1),
        );
        let err = HttpsClient::new(&settings).unwrap_err();
        assert!(err.to_string().contains("not PEM"), "{err}");
    }
}
