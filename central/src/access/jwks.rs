//! The OIDC provider's signing keys (a JWKS): read from a file, or fetched from the `jwks_uri` of
//! the issuer's discovery document through the project's HTTPS client, and cached. A token whose
//! key id the cache does not hold makes one refetch, at most once a minute whatever the tokens say
//! (a stream of made-up key ids must not turn into a stream of calls to the provider); keys the
//! provider rotated away are gone after that refetch, and the cache is refetched hourly anyway.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::Deserialize;
use tokio::sync::Mutex;

use accelfed_net::{HttpsClient, HttpsUrl};

/// The least time between two fetches caused by unknown key ids.
pub const REFRESH_AT_MOST_EVERY: Duration = Duration::from_secs(60);
/// How long fetched keys are used before they are fetched again.
const KEEP_FOR: Duration = Duration::from_secs(3600);

/// A monotonic clock, replaceable in tests.
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Where the keys come from.
#[derive(Debug, Clone)]
pub enum KeySource {
    File(PathBuf),
    Discovery {
        issuer: HttpsUrl,
        client: HttpsClient,
    },
}

/// The cached keys and when they were fetched.
pub struct Keys {
    source: KeySource,
    clock: Clock,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    keys: Option<Arc<JwkSet>>,
    fetched_at: Option<Instant>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("source", &self.source)
            .finish()
    }
}

/// Why a key could not be found.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no key {0:?} in the provider's JWKS")]
    UnknownKid(String),
    #[error("the provider's keys could not be read: {0}")]
    Unavailable(String),
}

impl Keys {
    pub fn new(source: KeySource, clock: Clock) -> Self {
        Self {
            source,
            clock,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The key `kid` names (a token without `kid` uses the only key, where there is one).
    pub async fn find(&self, kid: Option<&str>) -> Result<Jwk, KeyError> {
        let mut cache = self.cache.lock().await;
        let now = (self.clock)();
        let stale = cache
            .fetched_at
            .is_none_or(|at| now.saturating_duration_since(at) >= KEEP_FOR);
        if stale {
            self.refresh(&mut cache, now).await?;
        }
        if let Some(key) = cache.keys.as_deref().and_then(|keys| pick(keys, kid)) {
            return Ok(key);
        }
        let may_refresh = cache
            .fetched_at
            .is_none_or(|at| now.saturating_duration_since(at) >= REFRESH_AT_MOST_EVERY);
        if may_refresh {
            self.refresh(&mut cache, now).await?;
            if let Some(key) = cache.keys.as_deref().and_then(|keys| pick(keys, kid)) {
                return Ok(key);
            }
        }
        Err(KeyError::UnknownKid(kid.unwrap_or("(none)").to_owned()))
    }

    async fn refresh(&self, cache: &mut Cache, now: Instant) -> Result<(), KeyError> {
        // A failed fetch also counts: a provider that is down is asked again in a minute.
        cache.fetched_at = Some(now);
        let keys = self.fetch().await?;
        tracing::info!(keys = keys.keys.len(), "OIDC provider keys read");
        cache.keys = Some(Arc::new(keys));
        Ok(())
    }

    async fn fetch(&self) -> Result<JwkSet, KeyError> {
        match &self.source {
            KeySource::File(path) => {
                let text = tokio::fs::read(path).await.map_err(|err| {
                    KeyError::Unavailable(format!("jwks_file {}: {err}", path.display()))
                })?;
                parse(&text).map_err(|err| {
                    KeyError::Unavailable(format!("jwks_file {}: {err}", path.display()))
                })
            }
            KeySource::Discovery { issuer, client } => {
                #[derive(Deserialize)]
                struct Discovery {
                    jwks_uri: String,
                }
                let discovery_url = issuer.join("/.well-known/openid-configuration");
                let discovery: Discovery = get_json(client, &discovery_url).await?;
                // The keys travel over TLS like the discovery document, or not at all.
                let jwks_uri = HttpsUrl::parse(&discovery.jwks_uri)
                    .map_err(|err| KeyError::Unavailable(format!("jwks_uri: {err}")))?;
                let body = get(client, jwks_uri.as_str()).await?;
                parse(&body)
                    .map_err(|err| KeyError::Unavailable(format!("{}: {err}", jwks_uri.as_str())))
            }
        }
    }
}

/// The key named `kid`, or the only key when the token names none. Keys for encryption only
/// (`use: enc`) never verify a signature.
fn pick(keys: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    let signing = |key: &&Jwk| {
        !matches!(
            key.common.public_key_use,
            Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
        )
    };
    match kid {
        Some(kid) => keys
            .keys
            .iter()
            .filter(signing)
            .find(|key| key.common.key_id.as_deref() == Some(kid))
            .cloned(),
        None => {
            let mut signing_keys = keys.keys.iter().filter(signing);
            match (signing_keys.next(), signing_keys.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}

/// A JWKS, key by key: a key `jsonwebtoken` cannot represent (an algorithm or curve it does not
/// know, such as the ES512 or RSA-OAEP-384 keys a provider may publish beside its signing key) is
/// left out with a warning, rather than making every token unverifiable. A set with keys of
/// which none is usable is an error, naming why for each.
fn parse(text: &[u8]) -> Result<JwkSet, String> {
    #[derive(Deserialize)]
    struct Raw {
        keys: Vec<serde_json::Value>,
    }
    let raw: Raw = serde_json::from_slice(text).map_err(|err| format!("not a JWKS: {err}"))?;
    let mut keys = Vec::with_capacity(raw.keys.len());
    let mut left_out = Vec::new();
    for value in raw.keys {
        let kid = value
            .get("kid")
            .and_then(|kid| kid.as_str())
            .unwrap_or("(no kid)")
            .to_owned();
        match serde_json::from_value::<Jwk>(value) {
            Ok(key) => keys.push(key),
            Err(err) => {
                tracing::warn!(kid, %err, "a key of the OIDC provider's JWKS is left out");
                left_out.push(format!("key {kid:?}: {err}"));
            }
        }
    }
    if keys.is_empty() && !left_out.is_empty() {
        return Err(format!(
            "no usable key in the JWKS: {}",
            left_out.join("; ")
        ));
    }
    Ok(JwkSet { keys })
}

async fn get_json<T: serde::de::DeserializeOwned>(
    client: &HttpsClient,
    url: &str,
) -> Result<T, KeyError> {
    let body = get(client, url).await?;
    serde_json::from_slice(&body)
        .map_err(|err| KeyError::Unavailable(format!("{url}: not the JSON expected: {err}")))
}

async fn get(client: &HttpsClient, url: &str) -> Result<hyper::body::Bytes, KeyError> {
    let call = async {
        let response = client
            .http()
            .get(url)
            .send()
            .await
            .map_err(|err| client.describe(&err))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("answered {status}"));
        }
        response.bytes().await.map_err(|err| client.describe(&err))
    };
    client
        .within(url, call)
        .await
        .map_err(|err| KeyError::Unavailable(err.to_string()))?
        .map_err(|err| KeyError::Unavailable(format!("{url}: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    /// A JWKS of EC keys with these ids (the coordinates are never used: only ids are looked up).
    fn jwks(kids: &[&str]) -> String {
        let keys: Vec<String> = kids
            .iter()
            .map(|kid| {
                format!(
                    r#"{{"kty":"EC","crv":"P-256","kid":"{kid}","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}}"#
                )
            })
            .collect();
        format!(r#"{{"keys":[{}]}}"#, keys.join(","))
    }

    /// The shape of a Keycloak realm's `certs` (EGI Check-in runs Keycloak): an RS256 signing
    /// key with its certificate chain and thumbprints, an RSA-OAEP encryption key, and here also
    /// keys of algorithms `jsonwebtoken` 9 does not know.
    #[test]
    fn a_keycloak_jwks_keeps_its_rsa_keys_and_leaves_out_what_it_cannot_read() {
        let n = "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0_IzW7yWR7QkrmBL7jTKEn5u-qKhbwKfBstIs-bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW_VDL5AaWTg0nLVkjRo9z-40RQzuVaE8AkAFmxZzow3x-VJYKdjykkJ0iT9wCS0DRTXu269V264Vf_3jvredZiKRkgwlL9xNAwxXFg0x_XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC-9aGVd-Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmw";
        let text = serde_json::json!({"keys": [
            {"kid": "sig-2026", "kty": "RSA", "alg": "RS256", "use": "sig", "n": n, "e": "AQAB",
             "x5c": ["MIICmzCCAYMCBgF"], "x5t": "bDy3f8_sUq6IKLkPSC12cCNQY5c",
             "x5t#S256": "G2PoGQWwcs8TiDGhHZJ1yrfbzNlHKzx7XsqrU-3nR3E"},
            {"kid": "enc-2026", "kty": "RSA", "alg": "RSA-OAEP", "use": "enc", "n": n, "e": "AQAB"},
            {"kid": "es512", "kty": "EC", "alg": "ES512", "use": "sig", "crv": "P-521",
             "x": "AQAB", "y": "AQAB"},
            {"kid": "oaep-384", "kty": "RSA", "alg": "RSA-OAEP-384", "use": "enc", "n": n,
             "e": "AQAB"},
        ]})
        .to_string();
        let keys = parse(text.as_bytes()).unwrap();
        let kids: Vec<_> = keys
            .keys
            .iter()
            .map(|k| k.common.key_id.as_deref())
            .collect();
        assert_eq!(kids, [Some("sig-2026"), Some("enc-2026")]);
        let signing = pick(&keys, Some("sig-2026")).unwrap();
        assert!(jsonwebtoken::DecodingKey::from_jwk(&signing).is_ok());
        // The encryption key never verifies, nor is it the only key of a token without `kid`.
        assert!(pick(&keys, Some("enc-2026")).is_none());
        assert_eq!(
            pick(&keys, None).and_then(|k| k.common.key_id),
            Some("sig-2026".to_owned())
        );
        // A set of which nothing is usable says why, key by key.
        let unusable =
            r#"{"keys":[{"kid":"x","kty":"EC","alg":"ES512","crv":"P-521","x":"AQ","y":"AQ"}]}"#;
        let err = parse(unusable.as_bytes()).unwrap_err();
        assert!(err.contains("key \"x\"") && err.contains("ES512"), "{err}");
        assert!(parse(b"{\"keys\": 3}").unwrap_err().contains("not a JWKS"));
    }

    #[tokio::test]
    async fn unknown_key_ids_refetch_at_most_once_a_minute_and_rotated_keys_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jwks.json");
        std::fs::write(&path, jwks(&["old"])).unwrap();
        let start = Instant::now();
        let offset = Arc::new(StdMutex::new(Duration::ZERO));
        let clock: Clock = {
            let offset = offset.clone();
            Arc::new(move || start + *offset.lock().unwrap())
        };
        let at = |seconds: u64| *offset.lock().unwrap() = Duration::from_secs(seconds);
        let keys = Keys::new(KeySource::File(path.clone()), clock);
        assert!(keys.find(Some("old")).await.is_ok());
        // The provider rotates: "new" replaces "old".
        std::fs::write(&path, jwks(&["new"])).unwrap();
        at(10);
        // Within the minute, an unknown id does not refetch: "new" is not known yet, "old" still is.
        assert!(matches!(
            keys.find(Some("new")).await,
            Err(KeyError::UnknownKid(_))
        ));
        assert!(keys.find(Some("old")).await.is_ok());
        at(61);
        // A minute on, the unknown id refetches: "new" is found and "old" is gone.
        assert!(keys.find(Some("new")).await.is_ok());
        at(62);
        assert!(matches!(
            keys.find(Some("old")).await,
            Err(KeyError::UnknownKid(_))
        ));
        // Unknown ids in a burst cause no refetch: the file could be gone without an error.
        std::fs::remove_file(&path).unwrap();
        for second in 63..100 {
            at(second);
            assert!(matches!(
                keys.find(Some("made-up")).await,
                Err(KeyError::UnknownKid(_))
            ));
        }
        // After the minute, the next unknown id refetches, and a provider that is gone says so.
        at(125);
        assert!(matches!(
            keys.find(Some("made-up")).await,
            Err(KeyError::Unavailable(_))
        ));
    }
}
