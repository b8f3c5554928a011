//! The report API's answer cache: an answer asked again comes from the cache (`Cache-Status` says
//! so) with the same bytes; a batch shipped through the gRPC ingest is in the very next answer, on
//! the instance that took it and, on PostgreSQL, on another instance of the same database; and a
//! VO manager's cached answer reaches no one else.

use std::path::Path;

use accelfed_accounting::spool::Spool;
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::sample;
use accelfed_tests::central::{Server, ship_once};
use accelfed_tests::pki::Pki;
use accelfed_tests::postgres::TestDatabase;

use super::oidc::{Provider, SigningKey};
use super::roles::{AUDIENCE, MANAGER, claims};
use super::{SITE_A_TOKEN, client, configuration, configuration_with, repository};

/// One answer: status, `Cache-Status`, body.
async fn get(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
) -> (u16, Option<String>, String) {
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let cache = response
        .headers()
        .get("cache-status")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, cache, response.text().await.unwrap())
}

const HIT: Option<&str> = Some("accelfed; hit");
const MISS: Option<&str> = Some("accelfed; fwd=miss");

/// Ships `n` new atlas records of SITE-A (January 2026) through the gRPC port `port`.
async fn ship(dir: &Path, pki: &Pki, port: u16, name: &str, n: usize) {
    let mut spool = Spool::open(dir.join(format!("spool-{name}.sqlite"))).unwrap();
    let records: Vec<_> = (0..n)
        .map(|i| {
            let mut r = sample::record(&format!("{name}-{i}"));
            r.site = SiteName::new("SITE-A").unwrap();
            r.vo = Some(VoName::new("atlas").unwrap());
            r
        })
        .collect();
    spool.write_run(&records).unwrap();
    let report = ship_once(&mut spool, port, &pki.ca_pem, SITE_A_TOKEN)
        .await
        .unwrap();
    assert_eq!(report.acknowledged, n, "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_answer_is_the_same_bytes_until_an_ingest_commits() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki, &database, ""));
    let base = format!(
        "https://localhost:{}/accounting/v1/report",
        server.https.unwrap().port()
    );
    let client = client(&pki);
    for query in ["by=vo,month", "by=site&format=csv", "by=vo&idle=true"] {
        let url = format!("{base}?{query}");
        let (status, cache, first) = get(&client, &url, None).await;
        assert_eq!((status, cache.as_deref()), (200, MISS), "{query}: {first}");
        let (status, cache, again) = get(&client, &url, None).await;
        assert_eq!((status, cache.as_deref()), (200, HIT), "{query}");
        assert_eq!(again, first, "{query}");
    }
    // The same request written otherwise is the same entry.
    let (_, cache, csv) = get(&client, &format!("{base}?format=csv&site=&by=site"), None).await;
    assert_eq!(cache.as_deref(), HIT);
    let (_, _, before) = get(&client, &format!("{base}?by=vo,month"), None).await;

    ship(dir.path(), &pki, server.grpc.port(), "new", 3).await;
    let (_, cache, after) = get(&client, &format!("{base}?by=vo,month"), None).await;
    assert_eq!(cache.as_deref(), MISS);
    assert_ne!(after, before);
    assert_eq!(
        after,
        super::accelfed_report(&database, &["--by", "vo,month", "--format", "json"])
    );
    let (_, cache, csv_after) = get(&client, &format!("{base}?by=site&format=csv"), None).await;
    assert_eq!(cache.as_deref(), MISS);
    assert_ne!(csv_after, csv);
    server.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vo_managers_cached_answer_reaches_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    let key = SigningKey::generate("key-2026");
    let provider = Provider::start(&pki, &[&key]).await;
    let access = format!(
        "[access]\n\
         [access.oidc]\nissuer = \"{}\"\naudience = \"{AUDIENCE}\"\nca = \"ca.pem\"\n\
         [[access.roles]]\nentitlement = \"{MANAGER}\"\nrole = \"vo-manager\"\n",
        provider.issuer
    );
    let server = Server::start(&configuration(dir.path(), &pki, &database, &access));
    let base = format!(
        "https://localhost:{}/accounting/v1/report",
        server.https.unwrap().port()
    );
    let client = client(&pki);
    let manager = |vo: &str| {
        key.sign(
            &key.kid,
            &claims(
                &provider.issuer,
                &[&format!(
                    "urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu"
                )],
            ),
        )
    };
    let (atlas, cms) = (manager("atlas"), manager("cms"));
    let users = format!("{base}?by=user&vo=atlas");
    let (status, cache, answer) = get(&client, &users, Some(&atlas)).await;
    assert_eq!((status, cache.as_deref()), (200, MISS), "{answer}");
    assert!(answer.contains("user-a"), "{answer}");
    let (status, cache, again) = get(&client, &users, Some(&atlas)).await;
    assert_eq!((status, cache.as_deref(), &again), (200, HIT, &answer));
    // Another VO's manager and anonymous readers are refused, as without the cache.
    let (status, cache, refusal) = get(&client, &users, Some(&cms)).await;
    assert_eq!((status, cache), (403, None), "{refusal}");
    assert!(!refusal.contains("user-a"), "{refusal}");
    let (status, cache, refusal) = get(&client, &users, None).await;
    assert_eq!((status, cache), (401, None), "{refusal}");
    // An aggregate both may read: each audience has its own entry.
    let by_site = format!("{base}?by=site&vo=atlas");
    let (_, cache, managers) = get(&client, &by_site, Some(&atlas)).await;
    assert_eq!(cache.as_deref(), MISS);
    let (_, cache, anonymous) = get(&client, &by_site, None).await;
    assert_eq!(cache.as_deref(), MISS);
    assert_eq!(anonymous, managers);
    let (_, cache, _) = get(&client, &by_site, Some(&cms)).await;
    assert_eq!(cache.as_deref(), MISS);
    server.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL on 127.0.0.1:5432"]
async fn an_ingest_through_one_instance_is_in_the_next_answer_of_the_other() {
    let database = TestDatabase::create().await;
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let config = configuration_with(dir.path(), &pki, &format!("url = \"{}\"", database.url), "");
    let (first, second) = (Server::start(&config), Server::start(&config));
    let client = client(&pki);
    let url = |server: &Server| {
        format!(
            "https://localhost:{}/accounting/v1/report?by=vo,month&format=csv",
            server.https.unwrap().port()
        )
    };
    ship(dir.path(), &pki, first.grpc.port(), "first", 2).await;
    let (_, cache, before) = get(&client, &url(&second), None).await;
    assert_eq!(cache.as_deref(), MISS);
    let (_, cache, again) = get(&client, &url(&second), None).await;
    assert_eq!((cache.as_deref(), &again), (HIT, &before));
    assert!(before.contains("atlas,2026-01,2,"), "{before}");
    // Through the first instance; the second's very next answer holds it, no waiting.
    ship(dir.path(), &pki, first.grpc.port(), "second", 3).await;
    let (_, cache, after) = get(&client, &url(&second), None).await;
    assert_eq!(cache.as_deref(), MISS);
    assert!(after.contains("atlas,2026-01,5,"), "{after}");
    let (_, _, on_first) = get(&client, &url(&first), None).await;
    assert_eq!(on_first, after);
    first.stop().unwrap();
    second.stop().unwrap();
}
