//! The same checks on both databases. PostgreSQL is the server the machine runs (127.0.0.1:5432,
//! trust auth; `ACCELFED_TEST_POSTGRES` overrides it); each test makes its own database
//! (`accelfed_tests::postgres::TestDatabase`), dropped when the test ends. An unreachable server
//! fails the test: both backends must be shown to behave the same.

use accelfed_tests::postgres::TestDatabase;
use chrono::TimeZone;

use super::*;

/// Runs `check` on a fresh SQLite store and a fresh PostgreSQL store.
async fn on_both<F, Fut>(check: F)
where
    F: Fn(DocumentStore) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.sqlite");
    check(DocumentStore::open(path.to_str().unwrap()).await.unwrap()).await;

    let database = TestDatabase::create().await;
    let store = DocumentStore::open(&database.url).await.unwrap();
    check(store).await;
}

fn document(site: &str, minute: u32, text: &str) -> StoredDocument {
    StoredDocument {
        site: site.to_owned(),
        received_at: Utc.with_ymd_and_hms(2026, 11, 1, 12, minute, 0).unwrap(),
        document: text.to_owned(),
    }
}

#[tokio::test]
async fn the_latest_document_per_site_replaces_the_previous_one() {
    on_both(|store| async move {
        store.put(document("B", 0, "{\"b\":1}"), 10).await.unwrap();
        store.put(document("A", 1, "{\"a\":1}"), 10).await.unwrap();
        store.put(document("A", 2, "{\"a\":2}"), 10).await.unwrap();
        let latest = store.latest().await.unwrap();
        assert_eq!(
            latest,
            vec![document("A", 2, "{\"a\":2}"), document("B", 0, "{\"b\":1}")]
        );
        let history = store.history("A").await.unwrap();
        assert_eq!(
            history,
            vec![
                HistoryEntry {
                    received_at: document("A", 2, "").received_at,
                    bytes: 7
                },
                HistoryEntry {
                    received_at: document("A", 1, "").received_at,
                    bytes: 7
                },
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn history_keeps_the_newest_entries_per_site() {
    on_both(|store| async move {
        for minute in 0..5 {
            store.put(document("A", minute, "{}"), 3).await.unwrap();
        }
        // Sizes are bytes, not characters: 7 characters, "é" is two bytes.
        store.put(document("B", 9, "{\"é\":1}"), 3).await.unwrap();
        let minutes: Vec<u32> = store
            .history("A")
            .await
            .unwrap()
            .iter()
            .map(|entry| chrono::Timelike::minute(&entry.received_at))
            .collect();
        assert_eq!(minutes, vec![4, 3, 2]);
        assert_eq!(
            store.history("B").await.unwrap(),
            vec![HistoryEntry {
                received_at: document("B", 9, "").received_at,
                bytes: 8
            }]
        );
        assert!(store.history("C").await.unwrap().is_empty());
        // The documents themselves, what the capacity over time is read from at start: by site,
        // oldest first, only those kept.
        let kept: Vec<(String, u32, String)> = store
            .history_documents()
            .await
            .unwrap()
            .into_iter()
            .map(|d| {
                let minute = chrono::Timelike::minute(&d.received_at);
                (d.site, minute, d.document)
            })
            .collect();
        assert_eq!(
            kept,
            [
                ("A", 2, "{}"),
                ("A", 3, "{}"),
                ("A", 4, "{}"),
                ("B", 9, "{\"é\":1}")
            ]
            .map(|(site, minute, text)| (site.to_owned(), minute, text.to_owned()))
        );
    })
    .await;
}

#[tokio::test]
async fn history_is_bounded_in_bytes_too_and_keeps_the_latest_whatever_its_size() {
    on_both(|store| async move {
        let keep = Keep {
            documents: 100,
            bytes: 25,
        };
        // Documents of 10 bytes: the newest two fit in 25 bytes, a third would not.
        for minute in 0..5 {
            let text = format!("{{\"n\":{minute:04}}}");
            assert_eq!(text.len(), 10);
            store.put(document("A", minute, &text), keep).await.unwrap();
        }
        let sizes = |history: Vec<HistoryEntry>| -> Vec<(u32, u64)> {
            history
                .iter()
                .map(|entry| (chrono::Timelike::minute(&entry.received_at), entry.bytes))
                .collect()
        };
        assert_eq!(
            sizes(store.history("A").await.unwrap()),
            vec![(4, 10), (3, 10)]
        );
        // One past the bound alone: it is the latest, so it stays, alone.
        let big = format!("{{\"x\":\"{}\"}}", "y".repeat(40));
        store.put(document("A", 7, &big), keep).await.unwrap();
        assert_eq!(
            sizes(store.history("A").await.unwrap()),
            vec![(7, big.len() as u64)]
        );
    })
    .await;
}

#[tokio::test]
async fn stored_documents_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.sqlite");
    let location = path.to_str().unwrap();
    DocumentStore::open(location)
        .await
        .unwrap()
        .put(document("A", 0, "{}"), 5)
        .await
        .unwrap();
    let reopened = DocumentStore::open(location).await.unwrap();
    assert_eq!(
        reopened.latest().await.unwrap(),
        vec![document("A", 0, "{}")]
    );
}

#[tokio::test]
async fn an_unknown_location_is_refused() {
    let error = DocumentStore::open("mysql://x").await.unwrap_err();
    assert!(error.to_string().contains("postgres://"), "{error}");
}

/// A failed statement names what the server refused (constraint, table, SQLSTATE), not
/// tokio-postgres's bare "db error", and a megabyte document in the server's detail ("Failing row
/// contains ...") is cut, not repeated whole.
#[tokio::test]
async fn a_postgres_failure_names_the_constraint_and_stays_short() {
    let database = TestDatabase::create().await;
    let store = DocumentStore::open(&database.url).await.unwrap();
    let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client
        .batch_execute(
            "ALTER TABLE registry_latest ADD CONSTRAINT document_fits CHECK (length(document) < 100)",
        )
        .await
        .unwrap();
    drop(client);
    let _ = task.await;

    let huge = format!("{{\"x\":\"{}\"}}", "y".repeat(1_000_000));
    let error = store.put(document("A", 0, &huge), 5).await.unwrap_err();
    let message = error.to_string();
    for named in ["document_fits", "23514", "registry_latest", "Failing row"] {
        assert!(message.contains(named), "{named} missing: {message}");
    }
    assert!(!message.contains("db error"), "{message}");
    assert!(message.len() < 2_000, "{} bytes", message.len());
    // Nothing of the failed push was stored.
    assert!(store.latest().await.unwrap().is_empty());
}
