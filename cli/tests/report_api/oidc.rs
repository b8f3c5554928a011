//! An OIDC provider for the tests: EC P-256 signing keys made here, their JWKS and the discovery
//! document served over TLS (the test PKI) by the test kit's fake HTTP server, and access tokens
//! signed with `jsonwebtoken` (the crate the service verifies with; what is tested is the
//! service's checks, not the signing).

use std::sync::{Arc, Mutex};

use accelfed_tests::fake_http;
use accelfed_tests::pki::Pki;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http_body_util::Full;
use hyper::body::Bytes;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key and its id.
pub struct SigningKey {
    pub kid: String,
    pair: rcgen::KeyPair,
}

impl SigningKey {
    pub fn generate(kid: &str) -> Self {
        Self {
            kid: kid.to_owned(),
            pair: rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap(),
        }
    }

    /// The public key as a JWK (RFC 7518, 6.2.1): x and y of the uncompressed point.
    pub fn jwk(&self) -> Value {
        let point = self.pair.public_key_raw();
        assert_eq!(
            (point.len(), point[0]),
            (65, 4),
            "an uncompressed P-256 point"
        );
        json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..]),
        })
    }

    /// `claims` signed ES256 with this key, naming `kid`.
    pub fn sign(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        let key = EncodingKey::from_ec_der(&self.pair.serialize_der());
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }

    /// `claims` with HS256, keyed with this key's public JWK as the secret: the key-confusion
    /// attack on verifiers that take the algorithm from the token.
    pub fn sign_hs256_with_public_key(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.kid.clone());
        let secret = self.jwk().to_string();
        let key = EncodingKey::from_secret(secret.as_bytes());
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }
}

/// A token with `alg: none` and no signature.
pub fn unsigned(kid: &str, claims: &Value) -> String {
    let header = json!({"alg": "none", "typ": "JWT", "kid": kid});
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

/// The provider: its issuer URL and how often its JWKS was fetched.
pub struct Provider {
    pub issuer: String,
    pub fetches: Arc<Mutex<usize>>,
    _task: AbortOnDrop,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

struct State {
    issuer: String,
    jwks: Arc<Mutex<Value>>,
    fetches: Arc<Mutex<usize>>,
}

impl Provider {
    /// Serves `keys`' JWKS on a free port with `pki`'s certificate (for `localhost`).
    pub async fn start(pki: &Pki, keys: &[&SigningKey]) -> Provider {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki.cert_der.clone().into()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
            )
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!(
            "https://localhost:{}",
            listener.local_addr().unwrap().port()
        );
        let jwks = Arc::new(Mutex::new(
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}),
        ));
        let fetches = Arc::new(Mutex::new(0));
        let state = Arc::new(State {
            issuer: issuer.clone(),
            jwks: jwks.clone(),
            fetches: fetches.clone(),
        });
        let task = fake_http::serve(
            listener,
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls))),
            state,
            |state, request| async move {
                let body = match request.uri().path() {
                    "/.well-known/openid-configuration" => json!({
                        "issuer": state.issuer,
                        "jwks_uri": format!("{}/jwks", state.issuer),
                    }),
                    "/jwks" => {
                        *state.fetches.lock().unwrap() += 1;
                        state.jwks.lock().unwrap().clone()
                    }
                    _ => {
                        return hyper::Response::builder()
                            .status(404)
                            .body(Full::new(Bytes::new()))
                            .unwrap();
                    }
                };
                hyper::Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body.to_string())))
                    .unwrap()
            },
        );
        Provider {
            issuer,
            fetches,
            _task: AbortOnDrop(task),
        }
    }
}
