//! The test PKI: a throw-away CA and a server certificate it signed for `localhost` and 127.0.0.1,
//! generated with rcgen. Every test that needs TLS takes its certificates from here, as PEM and DER
//! bytes ([`Pki::generate`]) or as PEM files in a folder ([`pki`]).

use std::path::{Path, PathBuf};

/// A CA and a server certificate it signed, for `localhost` and 127.0.0.1.
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The server certificate, PEM.
    pub cert_pem: String,
    /// The server's private key, PEM (PKCS#8).
    pub key_pem: String,
    /// The server certificate, DER.
    pub cert_der: Vec<u8>,
    /// The server's private key, DER (PKCS#8).
    pub key_der: Vec<u8>,
}

/// The test PKI written as `ca.pem`, `server.pem` and `server.key` in a folder.
#[derive(Debug, Clone)]
pub struct PkiFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Pki {
    /// A fresh CA ("accelfed test CA") and server certificate.
    pub fn generate() -> Pki {
        Self::issued("accelfed test CA", &["localhost", "127.0.0.1"], None)
    }

    /// A fresh CA named `ca_name` and a server certificate it signed for `names`, valid between
    /// the first days of the (year, month) pair `validity` gives (rcgen's default without one): for
    /// tests of expired certificates and certificates for another name.
    pub fn issued(ca_name: &str, names: &[&str], validity: Option<((i32, u8), (i32, u8))>) -> Pki {
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, ca_name);
        let ca_cert = ca_params.self_signed(&ca_key).expect("a self-signed CA");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().expect("a server key");
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = rcgen::CertificateParams::new(names).expect("server params");
        if let Some(((from_year, from_month), (to_year, to_month))) = validity {
            params.not_before = rcgen::date_time_ymd(from_year, from_month, 1);
            params.not_after = rcgen::date_time_ymd(to_year, to_month, 1);
        }
        let cert = params
            .signed_by(&key, &issuer)
            .expect("a server certificate");
        Pki {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().to_vec(),
            key_der: key.serialize_der(),
        }
    }

    /// Writes the PEM files into `dir`.
    pub fn write(&self, dir: &Path) -> PkiFiles {
        let files = PkiFiles {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
        };
        std::fs::write(&files.ca, &self.ca_pem).expect("write ca.pem");
        std::fs::write(&files.cert, &self.cert_pem).expect("write server.pem");
        std::fs::write(&files.key, &self.key_pem).expect("write server.key");
        files
    }
}

/// A fresh test PKI as PEM files in `dir`.
pub fn pki(dir: &Path) -> PkiFiles {
    Pki::generate().write(dir)
}

/// A self-signed CA certificate named `common_name`, PEM, whose key is thrown away (a CA that
/// signed nothing the test uses).
pub fn unrelated_ca_pem(common_name: &str) -> String {
    let key = rcgen::KeyPair::generate().expect("a CA key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    params.self_signed(&key).expect("a self-signed CA").pem()
}

/// A fresh private key, PEM, that belongs to no certificate.
pub fn unrelated_key_pem() -> String {
    rcgen::KeyPair::generate().expect("a key").serialize_pem()
}

/// A TLS server on 127.0.0.1 with `pki`'s certificate that counts the connections it is offered in
/// `connections` and answers none (a client that distrusts the certificate gives up during the
/// handshake); its port. For tests that a certificate error is named and not retried.
pub async fn counting_tls_server(
    pki: &Pki,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> u16 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = vec![rustls::pki_types::CertificateDer::from(
        pki.cert_der.clone(),
    )];
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into());
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the test certificate and key");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let port = listener.local_addr().expect("its address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(stream).await;
            });
        }
    });
    port
}
