//! How soon a push through one `accelfed serve` instance is in another's answers, both on one
//! PostgreSQL database (the registry's LISTEN/NOTIFY follow; not a timed test). Each push goes
//! through one instance, alternately, for 20 sites; the time is from the push's return (its
//! transaction committed) until the other instance's index holds that document.
//!
//! ```text
//! cargo bench -p accelfed-central --bench registry_follow
//! ```
//!
//! `ACCELFED_BENCH_PUSHES` [400]: pushes measured. `ACCELFED_TEST_POSTGRES`
//! [postgres://postgres@127.0.0.1:5432]: the server; the run makes its own database there.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use accelfed_central::{Checker, DocumentStore, Registry};
use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use accelfed_tests::postgres::TestDatabase;
use chrono::{DateTime, Utc};

fn document(site: &str) -> Vec<u8> {
    let time = (Utc::now() - chrono::Duration::minutes(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let mut json = json::document(&sample::snapshot(site));
    for list in json.as_object_mut().unwrap().values_mut() {
        for entity in list.as_array_mut().unwrap() {
            entity["CreationTime"] = serde_json::Value::from(time.as_str());
        }
    }
    serde_json::to_vec(&json).unwrap()
}

async fn instance(url: &str) -> Arc<Registry> {
    let store = DocumentStore::open(url).await.unwrap();
    let checker = Checker::new(16 * 1024 * 1024).unwrap();
    let registry = Arc::new(Registry::open(store, checker, 10).await.unwrap());
    tokio::spawn(Arc::clone(&registry).follow());
    registry
}

fn holds(registry: &Registry, site: &str, at: DateTime<Utc>) -> bool {
    registry.index().sites().iter().any(|view| {
        view.site == site && view.received_at.timestamp_millis() == at.timestamp_millis()
    })
}

#[tokio::main]
async fn main() {
    let pushes: usize = std::env::var("ACCELFED_BENCH_PUSHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let database = TestDatabase::create().await;
    let instances = [instance(&database.url).await, instance(&database.url).await];
    let sites: Vec<String> = (0..20).map(|n| format!("SITE-{n:02}")).collect();
    let documents: Vec<Vec<u8>> = sites.iter().map(|site| document(site)).collect();
    // Let both listeners subscribe before measuring.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut times = Vec::with_capacity(pushes);
    let mut at = Utc::now();
    for n in 0..pushes {
        let (from, to) = (&instances[n % 2], &instances[(n + 1) % 2]);
        let site = n % sites.len();
        at += chrono::Duration::milliseconds(1);
        from.push(&sites[site], &documents[site], at).await.unwrap();
        let pushed = Instant::now();
        while !holds(to, &sites[site], at) {
            assert!(pushed.elapsed() < Duration::from_secs(10), "never arrived");
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        times.push(pushed.elapsed());
    }
    times.sort();
    let at_quantile = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "registry follow: {pushes} pushes of {} bytes, 20 sites, 2 instances: visible on the other after p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        documents[0].len(),
        at_quantile(0.5).as_secs_f64() * 1e3,
        at_quantile(0.99).as_secs_f64() * 1e3,
        times.last().unwrap().as_secs_f64() * 1e3,
    );
}
