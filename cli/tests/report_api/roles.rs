//! Who may read what: with `[access] anonymous = false`, each credential kind asks within and
//! beyond its role, and each way a token can be wrong is refused with 401 and
//! `WWW-Authenticate: Bearer error="invalid_token"`.

use accelfed_tests::pki::Pki;
use serde_json::{Value, json};

use super::oidc::{Provider, SigningKey, unsigned};
use super::{SITE_A_TOKEN, client, configuration, repository};

pub(super) const AUDIENCE: &str = "accelfed-reports";
pub(super) const MANAGER: &str = "urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu";
pub(super) const OPERATOR: &str = "urn:mace:egi.eu:group:ops.accelfed.eu:role=member#aai.egi.eu";

pub(super) fn claims(issuer: &str, entitlements: &[&str]) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "iss": issuer, "aud": AUDIENCE, "sub": "someone@egi.eu",
        "iat": now, "nbf": now - 10, "exp": now + 600,
        "eduperson_entitlement": entitlements,
    })
}

/// `[access]` with anonymous reading off, OIDC tokens of `issuer` (its CA in `ca.pem`), and
/// the VO-manager and operator entitlements mapped.
pub fn access(issuer: &str) -> String {
    format!(
        "[access]\nanonymous = false\n\
         [access.oidc]\nissuer = \"{issuer}\"\naudience = \"{AUDIENCE}\"\nca = \"ca.pem\"\n\
         [[access.roles]]\nentitlement = \"{MANAGER}\"\nrole = \"vo-manager\"\n\
         [[access.roles]]\nentitlement = \"{OPERATOR}\"\nrole = \"operator\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_role_reads_its_own_and_bad_tokens_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    let key = SigningKey::generate("key-2026");
    let stranger = SigningKey::generate("key-2026");
    let rotated_away = SigningKey::generate("key-2025");
    let provider = Provider::start(&pki, &[&key]).await;
    let access = access(&provider.issuer);
    let server = accelfed_tests::central::Server::start(&configuration(
        dir.path(),
        &pki,
        &database,
        &access,
    ));
    let base = format!(
        "https://localhost:{}/accounting/v1/report",
        server.https.unwrap().port()
    );
    let client = client(&pki);
    let ask = |query: &str, token: Option<String>| {
        let mut request = client.get(format!("{base}?{query}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let challenge = response
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap().to_owned());
            (status, challenge, response.text().await.unwrap())
        }
    };
    let issuer = provider.issuer.clone();
    let atlas_manager = key.sign(
        &key.kid,
        &claims(
            &issuer,
            &[
                "urn:mace:egi.eu:group:atlas:role=manager#aai.egi.eu",
                "urn:mace:egi.eu:group:cms:role=member#aai.egi.eu",
            ],
        ),
    );
    let operator = key.sign(&key.kid, &claims(&issuer, &[OPERATOR]));
    let nobody = key.sign(&key.kid, &claims(&issuer, &[]));

    // Anonymous reading is off: no credential is 401.
    let (status, challenge, _) = ask("by=vo", None).await;
    assert_eq!(status, 401);
    assert_eq!(challenge.as_deref(), Some("Bearer realm=\"accelfed\""));

    // The operator reads everything.
    let (status, _, body) = ask("by=vo,site", Some(operator.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"cms\"") && body.contains("\"SITE-B\""));

    // A VO manager reads their VO, down to each site, and nothing else.
    let (status, _, body) = ask("by=site,month&vo=atlas", Some(atlas_manager.clone())).await;
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert!(json["rows"].as_array().unwrap().len() >= 2, "{body}");
    for query in ["by=vo&vo=cms", "by=vo"] {
        let (status, challenge, body) = ask(query, Some(atlas_manager.clone())).await;
        assert_eq!(status, 403, "{query}: {body}");
        assert!(challenge.unwrap().contains("insufficient_scope"));
    }
    // Down to each user of their VO, adding up to the VO's figure.
    let (status, _, body) = ask("by=user&vo=atlas", Some(atlas_manager.clone())).await;
    assert_eq!(status, 200, "{body}");
    let users: Value = serde_json::from_str(&body).unwrap();
    let (_, _, body) = ask("by=vo&vo=atlas", Some(atlas_manager.clone())).await;
    let vo: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(users["total"], vo["total"], "{users} {vo}");
    let names: Vec<&str> = users["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["user"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["user-a", "user-b"]);
    assert_eq!(
        ask("by=user&vo=cms", Some(atlas_manager.clone())).await.0,
        403
    );
    // The operator sees every user; a site its own.
    assert_eq!(ask("by=vo,user", Some(operator.clone())).await.0, 200);
    assert_eq!(
        ask("by=user&site=SITE-A", Some(SITE_A_TOKEN.into()))
            .await
            .0,
        200
    );
    // A valid token whose entitlements map to no role reads nothing while anonymous is off.
    assert_eq!(ask("by=vo&vo=atlas", Some(nobody)).await.0, 403);

    // A site administrator (the site's token) reads their site only.
    assert_eq!(
        ask("by=vo&site=SITE-A", Some(SITE_A_TOKEN.into())).await.0,
        200
    );
    assert_eq!(
        ask("by=vo&site=SITE-B", Some(SITE_A_TOKEN.into())).await.0,
        403
    );
    assert_eq!(ask("by=vo", Some(SITE_A_TOKEN.into())).await.0, 403);

    // Every bad token is 401 with invalid_token, whatever it asks.
    let now = chrono::Utc::now().timestamp();
    let atlas = ["urn:mace:egi.eu:group:atlas:role=manager#aai.egi.eu"];
    let mut expired = claims(&issuer, &atlas);
    expired["exp"] = json!(now - 3600);
    expired["nbf"] = json!(now - 7200);
    let mut early = claims(&issuer, &atlas);
    early["nbf"] = json!(now + 3600);
    let mut wrong_audience = claims(&issuer, &atlas);
    wrong_audience["aud"] = json!("another-service");
    let mut text_nbf = claims(&issuer, &atlas);
    text_nbf["nbf"] = json!((now + 3600).to_string());
    let good = claims(&issuer, &atlas);
    // Each with the words of its reason, so none passes for another reason.
    let refused = [
        ("expired", key.sign(&key.kid, &expired), "ExpiredSignature"),
        (
            "not yet valid",
            key.sign(&key.kid, &early),
            "ImmatureSignature",
        ),
        (
            "wrong issuer",
            key.sign(&key.kid, &claims("https://evil.example", &atlas)),
            "InvalidIssuer",
        ),
        (
            "wrong audience",
            key.sign(&key.kid, &wrong_audience),
            "InvalidAudience",
        ),
        (
            "bad signature",
            stranger.sign(&key.kid, &good),
            "InvalidSignature",
        ),
        ("alg none", unsigned(&key.kid, &good), "not a JWT"),
        (
            "HS256 with the public key",
            key.sign_hs256_with_public_key(&good),
            "HS256",
        ),
        (
            "unknown kid",
            key.sign("no-such-key", &good),
            "no key \\\"no-such-key\\\"",
        ),
        (
            "a key rotated away",
            rotated_away.sign(&rotated_away.kid, &good),
            "no key \\\"key-2025\\\"",
        ),
        ("garbage", "not.a.jwt".to_owned(), "not a JWT"),
        (
            "an unknown opaque token",
            "f".repeat(64),
            "unknown bearer token",
        ),
    ];
    for (why, token, words) in refused {
        let (status, challenge, body) = ask("by=vo&vo=atlas", Some(token.clone())).await;
        assert_eq!(status, 401, "{why}: {body}");
        assert!(body.contains(words), "{why}: {body}");
        assert!(!body.contains(&token), "{why}: the token is echoed");
        assert_eq!(
            challenge.as_deref(),
            Some("Bearer error=\"invalid_token\""),
            "{why}"
        );
    }
    // The unknown key ids made one refetch of the keys, not one each (at most once a minute).
    let fetches = *provider.fetches.lock().unwrap();
    assert!(fetches <= 2, "{fetches} fetches of the JWKS");
    // The token itself never shows in the service's answers (nor its log: it is not formatted).
    server.stop().unwrap();
}
