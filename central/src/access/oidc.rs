//! OIDC access tokens (JWTs) checked with `jsonwebtoken`: the signature against the provider's key
//! that the token's `kid` names, with only the asymmetric algorithms that key's type can verify (so
//! `alg: none` and HS256 keyed with the public key are refused before any check), then issuer,
//! audience, expiry and not-before.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::config::{OidcConfig, RoleRule};
use super::jwks::{KeyError, Keys};
use super::roles::Roles;

/// A token refused: the reason goes to the log and the 401's body, never the token.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the token is not a JWT: {0}")]
    Malformed(String),
    #[error("algorithm {0:?} is not accepted for the provider's {1} key")]
    Algorithm(Algorithm, &'static str),
    #[error("{0}")]
    Key(#[from] KeyError),
    #[error("the token is refused: {0}")]
    Invalid(String),
}

impl TokenError {
    /// Whether the fault is the provider's (its keys could not be read), not the token's.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Key(KeyError::Unavailable(_)))
    }
}

/// The claims read from a valid token.
#[derive(Debug, Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    /// `exp` and `nbf` read as numbers: `jsonwebtoken` 9 passes over a time claim of another
    /// type (a string) rather than refusing it, so such a token fails here.
    #[serde(rename = "exp")]
    _exp: i64,
    #[serde(default, rename = "nbf")]
    _nbf: Option<i64>,
    #[serde(default, deserialize_with = "one_or_many")]
    eduperson_entitlement: Vec<String>,
}

/// The issuer's tokens, checked.
#[derive(Debug)]
pub struct Verifier {
    issuer: String,
    audience: String,
    keys: Keys,
    rules: Vec<RoleRule>,
}

impl Verifier {
    pub fn new(config: &OidcConfig, keys: Keys, rules: Vec<RoleRule>) -> Self {
        Self {
            issuer: config.issuer.as_str().to_owned(),
            audience: config.audience.clone(),
            keys,
            rules,
        }
    }

    /// The subject and roles of a valid `token`.
    pub async fn verify(&self, token: &str) -> Result<(String, Roles), TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|err| TokenError::Malformed(err.to_string()))?;
        let key = self.keys.find(header.kid.as_deref()).await?;
        let (algorithms, kind) = accepted(&key);
        if !algorithms.contains(&header.alg) {
            return Err(TokenError::Algorithm(header.alg, kind));
        }
        let decoding =
            DecodingKey::from_jwk(&key).map_err(|err| TokenError::Invalid(err.to_string()))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = algorithms;
        // The issuer as configured, with or without the trailing `/` some providers write.
        validation.set_issuer(&[self.issuer.clone(), format!("{}/", self.issuer)]);
        validation.set_audience(&[self.audience.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.leeway = 30;
        let data = jsonwebtoken::decode::<Claims>(token, &decoding, &validation)
            .map_err(|err| TokenError::Invalid(err.to_string()))?;
        let roles = Roles::of(&self.rules, &data.claims.eduperson_entitlement);
        Ok((data.claims.sub.unwrap_or_default(), roles))
    }
}

/// The algorithms a key can verify, by its type: the asymmetric ones only (a symmetric `oct` key
/// in a provider's JWKS verifies nothing here). A key that declares its `alg` allows that one.
fn accepted(key: &Jwk) -> (Vec<Algorithm>, &'static str) {
    use Algorithm::*;
    let (all, kind): (Vec<Algorithm>, &'static str) = match &key.algorithm {
        AlgorithmParameters::RSA(_) => (vec![RS256, RS384, RS512, PS256, PS384, PS512], "RSA"),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => (vec![ES256], "EC P-256"),
            EllipticCurve::P384 => (vec![ES384], "EC P-384"),
            _ => (Vec::new(), "EC"),
        },
        AlgorithmParameters::OctetKeyPair(_) => (vec![EdDSA], "OKP"),
        AlgorithmParameters::OctetKey(_) => (Vec::new(), "symmetric"),
    };
    let declared = key
        .common
        .key_algorithm
        .and_then(|declared| declared.to_string().parse::<Algorithm>().ok());
    match key.common.key_algorithm.map(|_| declared) {
        Some(Some(declared)) => (all.into_iter().filter(|a| *a == declared).collect(), kind),
        // Declared for encryption (RSA-OAEP, as Keycloak's second key): it verifies nothing, even
        // where the provider leaves out `use: enc`.
        Some(None) => (Vec::new(), kind),
        None => (all, kind),
    }
}

/// `eduperson_entitlement` as a list, or as one string where a provider writes a single value.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rsa_key(alg: Option<&str>) -> Jwk {
        let mut key = serde_json::json!({"kty": "RSA", "kid": "k", "n": "AQAB", "e": "AQAB"});
        if let Some(alg) = alg {
            key["alg"] = alg.into();
        }
        serde_json::from_value(key).unwrap()
    }

    #[test]
    fn an_rsa_key_verifies_what_it_declares_and_an_encryption_key_nothing() {
        assert_eq!(accepted(&rsa_key(Some("RS256"))).0, [Algorithm::RS256]);
        assert_eq!(accepted(&rsa_key(None)).0.len(), 6);
        assert!(accepted(&rsa_key(Some("RSA-OAEP"))).0.is_empty());
        assert!(accepted(&rsa_key(Some("RSA1_5"))).0.is_empty());
    }
}
