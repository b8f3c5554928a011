//! RS256 tokens, as EGI Check-in signs them: its JWKS (a Keycloak realm's `certs`) holds an RSA
//! signing key with `n`/`e` and its certificate's thumbprints, an RSA-OAEP encryption key, and
//! may hold keys `jsonwebtoken` cannot read; the signing key verifies, everything else is 401.

use accelfed_tests::pki::Pki;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use super::oidc::{Provider, SigningKey, unsigned};
use super::roles::{OPERATOR, access, claims};
use super::{client, configuration, repository};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rs256_tokens_verify_against_a_check_in_shaped_jwks_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    let key = SigningKey::generate_rsa("rsa-2026");
    let stranger = SigningKey::generate_rsa("rsa-2026");
    let rotated_away = SigningKey::generate_rsa("rsa-2025");
    let encryption = SigningKey::generate_rsa("enc-2026");
    let mut signing = key.jwk();
    // What Keycloak adds beside n and e (values of the form it writes; nothing checks them).
    signing["x5c"] = json!(["MIICnTCCAYUCBgGQ"]);
    signing["x5t"] = json!("hJ5b5hIvM0rDbSvwW4FzkYH2t7c");
    signing["x5t#S256"] = json!("uY1Sl7e0lYlPhBb3qWvGQ3H_N9m8qKQ2ZcS1aQk8h0I");
    let mut encrypting = encryption.jwk();
    encrypting["alg"] = json!("RSA-OAEP");
    encrypting["use"] = json!("enc");
    // A key of an algorithm jsonwebtoken 9 does not know: left out, not fatal to the others.
    let es512 = json!({"kid": "es512", "kty": "EC", "alg": "ES512", "use": "sig",
                       "crv": "P-521", "x": "AQAB", "y": "AQAB"});
    let provider = Provider::start_with(&pki, vec![signing, encrypting, es512]).await;
    let server = accelfed_tests::central::Server::start(&configuration(
        dir.path(),
        &pki,
        &database,
        &access(&provider.issuer),
    ));
    let url = format!(
        "https://localhost:{}/accounting/v1/report?by=vo",
        server.https.unwrap().port()
    );
    let client = client(&pki);
    let ask = |token: String| {
        let request = client.get(&url).bearer_auth(token);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        }
    };
    let good = claims(&provider.issuer, &[OPERATOR]);

    let (status, body) = ask(key.sign(&key.kid, &good)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"atlas\""), "{body}");

    // RS512 with the right key: the key declares RS256, so nothing else passes for it.
    let rs512 = {
        let mut header = Header::new(Algorithm::RS512);
        header.kid = Some(key.kid.clone());
        let der = key.private_der().to_vec();
        jsonwebtoken::encode(&header, &good, &EncodingKey::from_rsa_der(&der)).unwrap()
    };
    let refused: [(&str, String, &str); 7] = [
        (
            "bad signature",
            stranger.sign(&key.kid, &good),
            "InvalidSignature",
        ),
        (
            "HS256 keyed with the RSA public key's PEM",
            key.sign_hs256_with_public_key(&good),
            "HS256",
        ),
        ("alg none", unsigned(&key.kid, &good), "not a JWT"),
        (
            "unknown kid",
            key.sign("no-such-key", &good),
            "no key \\\"no-such-key\\\"",
        ),
        (
            "a key rotated away",
            rotated_away.sign(&rotated_away.kid, &good),
            "no key \\\"rsa-2025\\\"",
        ),
        (
            "signed with the encryption key",
            encryption.sign(&encryption.kid, &good),
            "no key \\\"enc-2026\\\"",
        ),
        ("RS512 for an RS256 key", rs512, "RS512"),
    ];
    for (why, token, words) in refused {
        let (status, body) = ask(token).await;
        assert_eq!(status, 401, "{why}: {body}");
        assert!(body.contains(words), "{why}: {body}");
    }
    let again: Value = serde_json::from_str(&ask(key.sign(&key.kid, &good)).await.1).unwrap();
    assert!(again["rows"].is_array(), "{again}");
    server.stop().unwrap();
}
