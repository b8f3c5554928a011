//! One instance of those sharing a PostgreSQL database leads a job at a time; the lead passes on
//! when its holder lets go (or dies: the server ends its session either way).

use std::time::{Duration, Instant};

use accelfed_tests::postgres::TestDatabase;

use super::*;

#[tokio::test]
async fn one_instance_leads_at_a_time_and_the_lead_passes_on() {
    let database = TestDatabase::create().await;
    let a = DocumentStore::open(&database.url).await.unwrap();
    let b = DocumentStore::open(&database.url).await.unwrap();
    let held = a.try_lead(LDAP_SYNC).await.unwrap();
    assert!(held.is_some());
    assert!(b.try_lead(LDAP_SYNC).await.unwrap().is_none());
    assert!(
        a.try_lead(LDAP_SYNC).await.unwrap().is_none(),
        "not twice, even by its holder's pool"
    );
    drop(held);
    // The holder's session ends asynchronously; the lock with it.
    let started = Instant::now();
    loop {
        if let Some(lead) = b.try_lead(LDAP_SYNC).await.unwrap() {
            drop(lead);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lock outlived its holder"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn on_sqlite_the_instance_always_leads() {
    let dir = tempfile::tempdir().unwrap();
    let store = DocumentStore::open(dir.path().join("r.sqlite").to_str().unwrap())
        .await
        .unwrap();
    let first = store.try_lead(LDAP_SYNC).await.unwrap();
    assert!(first.is_some());
    assert!(store.try_lead(LDAP_SYNC).await.unwrap().is_some());
}
