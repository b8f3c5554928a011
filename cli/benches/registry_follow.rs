//! How soon a push through one `accelfed serve` instance is in another's answers, both on one
//! PostgreSQL database (the registry's LISTEN/NOTIFY follow). A `cargo bench` target without a
//! harness:
//!
//! ```text
//! cargo bench -p accelfed --locked --bench registry_follow
//! ```
//!
//! Both instances are the whole service, started through `central::run` by the test harness
//! (`accelfed_tests::central::Server`: run's listeners, limits and authentication), on a private
//! database of the machine's PostgreSQL. 20 sites push their documents over HTTPS with their own
//! tokens to instance A, one after another; the time is from the push's answer (its transaction
//! committed) until instance B's `GET /registry/v1/sites`, polled every millisecond over one
//! keep-alive connection, lists the site with the `received_at` A answered.
//!
//! `ACCELFED_BENCH_PUSHES` [400]: pushes measured. `ACCELFED_TEST_POSTGRES`
//! [postgres://postgres@127.0.0.1:5432]: the server; the run makes its own database there.
//!
//! BENCHMARKS.md (### Two instances on one PostgreSQL: a push visible on the other) records the
//! figures.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use accelfed_central::TokenHash;
use accelfed_net::HttpsClient;
use accelfed_publishers::registry;
use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use accelfed_tests::central::{Server, sha256_hex};
use accelfed_tests::pki::PkiFiles;
use accelfed_tests::postgres::TestDatabase;
use chrono::{DateTime, Utc};

const SITES: usize = 20;

fn site_name(site: usize) -> String {
    format!("SITE-{site:02}")
}

/// A site's token, of `accelfed token`'s form (64 hex digits).
fn token(site: usize) -> String {
    sha256_hex(&site_name(site))
}

/// The sample site's document under `site`'s name, made now.
fn document(site: usize) -> Vec<u8> {
    let mut snapshot = sample::snapshot(&site_name(site));
    snapshot.creation_time = Utc::now();
    json::render(&snapshot)
}

/// central.toml in `dir`: the registry on a free port, the test PKI, the shared database, the
/// 20 sites with their tokens.
fn central_config(dir: &Path, pki: &PkiFiles, database: &str) -> PathBuf {
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\n\
         [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n[database]\nurl = \"{database}\"\n",
        pki.cert.display(),
        pki.key.display(),
    );
    for site in 0..SITES {
        text.push_str(&format!(
            "\n[sites.{}]\ntoken_sha256 = \"{}\"\n",
            site_name(site),
            TokenHash::of(&token(site)).to_hex()
        ));
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `GET /registry/v1/sites` of `url`: each listed site's `received_at`.
async fn received(client: &HttpsClient, url: &str) -> Vec<(String, DateTime<Utc>)> {
    let body = client
        .http()
        .get(format!("{url}/registry/v1/sites"))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    answer["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|status| {
            let site = status["site"].as_str().unwrap().to_owned();
            let at = status["received_at"].as_str().unwrap().parse().unwrap();
            (site, at)
        })
        .collect()
}

/// Waits until `url` answers the registry API (its store opened, its schema made).
async fn until_serving(client: &HttpsClient, url: &str) {
    let started = Instant::now();
    loop {
        let answered = client
            .http()
            .get(format!("{url}/registry/v1/sites"))
            .send()
            .await
            .is_ok_and(|response| response.status().is_success());
        if answered {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url} never answered"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        bench_registry_follow_two_instances_20_sites();
    }
}

fn bench_registry_follow_two_instances_20_sites() {
    let pushes: usize = std::env::var("ACCELFED_BENCH_PUSHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let client_runtime = runtime();
    let database = client_runtime.block_on(TestDatabase::create());
    let dir = tempfile::tempdir().unwrap();
    let pki = accelfed_tests::pki::pki(dir.path());
    let ca = std::fs::read(&pki.ca).unwrap();
    let client = registry::client(Some(&ca)).unwrap();
    let poller = registry::client(Some(&ca)).unwrap();
    // A first, serving (its schema made) before B opens the same database.
    let a = Server::start(&central_config(&dir.path().join("a"), &pki, &database.url));
    client_runtime.block_on(until_serving(&client, &a.url()));
    let b = Server::start(&central_config(&dir.path().join("b"), &pki, &database.url));
    client_runtime.block_on(until_serving(&poller, &b.url()));
    let (url_a, url_b) = (a.url(), b.url());
    let mut bytes = 0;
    let times = client_runtime.block_on(async {
        // Let B's listener subscribe before measuring.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut times = Vec::with_capacity(pushes);
        for n in 0..pushes {
            let site = n % SITES;
            let body = document(site);
            bytes = body.len();
            let answer = registry::push(&client, &url_a, &token(site), body)
                .await
                .unwrap_or_else(|error| panic!("push {n} of {}: {error}", site_name(site)));
            let pushed = Instant::now();
            let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
            let at: DateTime<Utc> = answer["received_at"].as_str().unwrap().parse().unwrap();
            let name = site_name(site);
            loop {
                let statuses = received(&poller, &url_b).await;
                // The store keeps microseconds; the same site pushes again only 20 pushes later.
                let same =
                    |seen: &DateTime<Utc>| (*seen - at).abs() < chrono::Duration::milliseconds(1);
                if statuses.iter().any(|(s, seen)| *s == name && same(seen)) {
                    break;
                }
                assert!(
                    pushed.elapsed() < Duration::from_secs(10),
                    "push {n} of {name} never arrived at B"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            times.push(pushed.elapsed());
        }
        times
    });
    let mut times = times;
    times.sort();
    let at_quantile = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "registry follow: {pushes} pushes over HTTPS to A of ~{bytes} bytes, {SITES} sites, 2 \
         instances through central::run on one PostgreSQL database: in B's /registry/v1/sites \
         after p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        at_quantile(0.5).as_secs_f64() * 1e3,
        at_quantile(0.99).as_secs_f64() * 1e3,
        times.last().unwrap().as_secs_f64() * 1e3,
    );
    a.stop().unwrap();
    b.stop().unwrap();
    drop(database);
}
