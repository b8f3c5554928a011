//! Two registries on one PostgreSQL database, as two `accelfed serve` instances are: a push
//! through either is in the other's index without a restart, and after the connection that hears
//! them is closed (as a database restart closes it) pushes made meanwhile are read too.

use std::sync::Arc;
use std::time::{Duration, Instant};

use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use accelfed_tests::postgres::TestDatabase;
use serde_json::Value as Json;

use super::*;

/// The sample document of `site`, created a minute ago.
fn document(site: &str) -> Vec<u8> {
    let time = (Utc::now() - chrono::Duration::minutes(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let mut json = json::document(&sample::snapshot(site));
    for list in json.as_object_mut().unwrap().values_mut() {
        for entity in list.as_array_mut().unwrap() {
            entity["CreationTime"] = Json::from(time.as_str());
        }
    }
    serde_json::to_vec(&json).unwrap()
}

async fn instance(url: &str) -> Arc<Registry> {
    let store = DocumentStore::open(url).await.unwrap();
    let checker = Checker::new(DEFAULT_MAX_DOCUMENT_BYTES).unwrap();
    let registry = Arc::new(Registry::open(store, checker, 10).await.unwrap());
    tokio::spawn(Arc::clone(&registry).follow());
    registry
}

fn sites(registry: &Registry) -> Vec<(String, DateTime<Utc>)> {
    registry
        .index()
        .sites()
        .iter()
        .map(|view| (view.site.clone(), view.received_at))
        .collect()
}

/// Waits (up to 10 s, far beyond what it takes) until both indexes hold the same sites with the
/// same documents and `expected` sites; returns how long that took.
async fn converge(a: &Registry, b: &Registry, expected: usize) -> Duration {
    let started = Instant::now();
    loop {
        let (left, right) = (sites(a), sites(b));
        if left == right && left.len() == expected {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the instances disagree: {left:?} / {right:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_push_through_either_instance_reaches_the_other() {
    let database = TestDatabase::create().await;
    let a = instance(&database.url).await;
    let b = instance(&database.url).await;
    // The listeners subscribe in the background; a push before that is read by their first
    // full reload, so no wait is needed for correctness.
    a.push("SITE-A", &document("SITE-A"), Utc::now())
        .await
        .unwrap();
    converge(&a, &b, 1).await;
    b.push("SITE-B", &document("SITE-B"), Utc::now())
        .await
        .unwrap();
    converge(&a, &b, 2).await;
    // A site's newer document replaces its older one on both.
    let later = Utc::now() + chrono::Duration::seconds(1);
    b.push("SITE-A", &document("SITE-A"), later).await.unwrap();
    converge(&a, &b, 2).await;
    let on_a = sites(&a);
    assert_eq!(
        on_a[0],
        (
            "SITE-A".to_owned(),
            DateTime::from_timestamp_millis(later.timestamp_millis()).unwrap()
        )
    );
}

#[tokio::test]
async fn pushes_made_while_the_listener_was_cut_off_are_read_when_it_reconnects() {
    let database = TestDatabase::create().await;
    let a = instance(&database.url).await;
    let b = instance(&database.url).await;
    a.push("SITE-A", &document("SITE-A"), Utc::now())
        .await
        .unwrap();
    converge(&a, &b, 1).await;
    // Close every session (as a restart does), then push through A at once: B's listener is
    // reconnecting and hears no announcement; its reload after reconnecting reads the push.
    let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client
        .batch_execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .await
        .unwrap();
    drop(client);
    let _ = task.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    a.push("SITE-C", &document("SITE-C"), Utc::now())
        .await
        .unwrap();
    converge(&a, &b, 2).await;
}
