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
    pair: Pair,
}

enum Pair {
    /// ES256, made with rcgen.
    Ec(rcgen::KeyPair),
    /// RS256 as EGI Check-in (Keycloak) signs, made with `openssl` (no crate in the tree makes
    /// RSA keys): the private key as PKCS#1 DER, the public one as PEM, and the JWK's parameters.
    Rsa {
        private_der: Vec<u8>,
        public_pem: String,
        n: String,
        e: String,
    },
}

/// `openssl <args>`'s standard output, the input file in `dir`.
fn openssl(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let output = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl, to make RSA keys");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

impl SigningKey {
    pub fn generate(kid: &str) -> Self {
        Self {
            kid: kid.to_owned(),
            pair: Pair::Ec(rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap()),
        }
    }

    /// A 2048-bit RSA key (the size Check-in publishes; `ring` verifies no smaller one).
    pub fn generate_rsa(kid: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        openssl(
            dir.path(),
            &[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
                "-out",
                "key.pem",
            ],
        );
        let private_der = openssl(
            dir.path(),
            &["rsa", "-in", "key.pem", "-traditional", "-outform", "DER"],
        );
        let public_pem = openssl(dir.path(), &["rsa", "-in", "key.pem", "-pubout"]);
        // `-modulus` prints `Modulus=<hex>`; the exponent is the one openssl always uses.
        let modulus = String::from_utf8(openssl(
            dir.path(),
            &["rsa", "-in", "key.pem", "-noout", "-modulus"],
        ))
        .unwrap();
        let hex = modulus.trim().strip_prefix("Modulus=").unwrap();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect();
        Self {
            kid: kid.to_owned(),
            pair: Pair::Rsa {
                private_der,
                public_pem: String::from_utf8(public_pem).unwrap(),
                n: URL_SAFE_NO_PAD.encode(&bytes),
                e: URL_SAFE_NO_PAD.encode([1, 0, 1]),
            },
        }
    }

    /// The public key as a JWK (RFC 7518, 6.2.1 and 6.3.1): x and y of the uncompressed point, or
    /// n and e, in the fields a Keycloak realm's `certs` has.
    pub fn jwk(&self) -> Value {
        match &self.pair {
            Pair::Ec(pair) => {
                let point = pair.public_key_raw();
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
            Pair::Rsa { n, e, .. } => json!({
                "kid": self.kid, "kty": "RSA", "alg": "RS256", "use": "sig", "n": n, "e": e,
            }),
        }
    }

    /// The RSA private key as PKCS#1 DER, for tokens of other RSA algorithms.
    pub fn private_der(&self) -> &[u8] {
        match &self.pair {
            Pair::Rsa { private_der, .. } => private_der,
            Pair::Ec(_) => panic!("{} is not an RSA key", self.kid),
        }
    }

    /// `claims` signed with this key (ES256 or RS256), naming `kid`.
    pub fn sign(&self, kid: &str, claims: &Value) -> String {
        let (algorithm, key) = match &self.pair {
            Pair::Ec(pair) => (
                Algorithm::ES256,
                EncodingKey::from_ec_der(&pair.serialize_der()),
            ),
            Pair::Rsa { private_der, .. } => {
                (Algorithm::RS256, EncodingKey::from_rsa_der(private_der))
            }
        };
        let mut header = Header::new(algorithm);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }

    /// `claims` with HS256, keyed with this key's public key as the secret (the JWK, or for RSA
    /// the PEM, the form the attack is known in): the key-confusion attack on verifiers that take
    /// the algorithm from the token.
    pub fn sign_hs256_with_public_key(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.kid.clone());
        let secret = match &self.pair {
            Pair::Ec(_) => self.jwk().to_string(),
            Pair::Rsa { public_pem, .. } => public_pem.clone(),
        };
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
        Self::start_with(pki, keys.iter().map(|k| k.jwk()).collect()).await
    }

    /// Serves a JWKS of these keys as they are (keys of other kinds beside the signing ones).
    pub async fn start_with(pki: &Pki, jwks: Vec<Value>) -> Provider {
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
        let jwks = Arc::new(Mutex::new(json!({ "keys": jwks })));
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
