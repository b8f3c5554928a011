//! Databases made before the registry's tables had migrations (their tables created with
//! `CREATE TABLE IF NOT EXISTS` on every open) are upgraded in place, documents kept; and on
//! PostgreSQL a connection the server closed is replaced at the next call.

use accelfed_tests::postgres::TestDatabase;

use super::*;

/// The tables as the store created them before migrations, on PostgreSQL (byte for byte what it
/// ran), with one site's document.
const BEFORE_POSTGRES: &str = "
    CREATE TABLE IF NOT EXISTS registry_latest (
        site        TEXT   PRIMARY KEY,
        received_at BIGINT NOT NULL,
        document    TEXT   NOT NULL
    );
    CREATE TABLE IF NOT EXISTS registry_history (
        id          BIGSERIAL PRIMARY KEY,
        site        TEXT   NOT NULL,
        received_at BIGINT NOT NULL,
        document    TEXT   NOT NULL
    );
    CREATE INDEX IF NOT EXISTS registry_history_by_site ON registry_history (site, id);
    INSERT INTO registry_latest VALUES ('OLD', 1764000000000, '{\"old\":1}');
    INSERT INTO registry_history (site, received_at, document)
        VALUES ('OLD', 1764000000000, '{\"old\":1}');";

/// The same on SQLite.
const BEFORE_SQLITE: &str = "
    PRAGMA journal_mode = WAL;
    CREATE TABLE IF NOT EXISTS registry_latest (
        site        TEXT    PRIMARY KEY,
        received_at INTEGER NOT NULL,
        document    TEXT    NOT NULL
    );
    CREATE TABLE IF NOT EXISTS registry_history (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        site        TEXT    NOT NULL,
        received_at INTEGER NOT NULL,
        document    TEXT    NOT NULL
    );
    CREATE INDEX IF NOT EXISTS registry_history_by_site ON registry_history (site, id);
    INSERT INTO registry_latest VALUES ('OLD', 1764000000000, '{\"old\":1}');
    INSERT INTO registry_history (site, received_at, document)
        VALUES ('OLD', 1764000000000, '{\"old\":1}');";

async fn postgres_execute(url: &str, sql: &str) -> Vec<tokio_postgres::SimpleQueryMessage> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let result = client.simple_query(sql).await.unwrap();
    drop(client);
    let _ = task.await;
    result
}

/// The old document is kept, the version table says 1, and the store works on.
async fn check_upgraded(store: DocumentStore) {
    let latest = store.latest().await.unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(
        (latest[0].site.as_str(), latest[0].document.as_str()),
        ("OLD", "{\"old\":1}")
    );
    assert_eq!(store.history("OLD").await.unwrap().len(), 1);
    store
        .put(
            StoredDocument {
                site: "OLD".to_owned(),
                received_at: Utc::now(),
                document: "{\"new\":1}".to_owned(),
            },
            10,
        )
        .await
        .unwrap();
    assert_eq!(store.history("OLD").await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_postgres_database_made_before_migrations_is_upgraded_in_place() {
    let database = TestDatabase::create().await;
    postgres_execute(&database.url, BEFORE_POSTGRES).await;
    check_upgraded(DocumentStore::open(&database.url).await.unwrap()).await;
    let versions = postgres_execute(
        &database.url,
        "SELECT string_agg(version::text, ',') FROM registry_schema_migrations",
    )
    .await;
    let version = versions.iter().find_map(|message| match message {
        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
        _ => None,
    });
    assert_eq!(version.as_deref(), Some("1"));
    // Opening again (a second instance, a restart) applies nothing twice.
    check_upgraded_again(DocumentStore::open(&database.url).await.unwrap()).await;
}

async fn check_upgraded_again(store: DocumentStore) {
    assert_eq!(store.history("OLD").await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_sqlite_file_made_before_migrations_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(BEFORE_SQLITE)
        .unwrap();
    check_upgraded(DocumentStore::open(path.to_str().unwrap()).await.unwrap()).await;
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT MAX(version) FROM registry_schema_migrations",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(version, 1);
    check_upgraded_again(DocumentStore::open(path.to_str().unwrap()).await.unwrap()).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.sqlite");
    drop(DocumentStore::open(path.to_str().unwrap()).await.unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "INSERT INTO registry_schema_migrations (version) VALUES (99)",
            [],
        )
        .unwrap();
    let error = DocumentStore::open(path.to_str().unwrap())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("schema version 99 is newer"),
        "{error}"
    );
}

#[tokio::test]
async fn closed_postgres_connections_are_replaced_at_the_next_call() {
    let database = TestDatabase::create().await;
    let store = DocumentStore::open(&database.url).await.unwrap();
    for minute in 0..3 {
        postgres_execute(
            &database.url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        store
            .put(
                StoredDocument {
                    site: "A".to_owned(),
                    received_at: Utc::now(),
                    document: format!("{{\"minute\":{minute}}}"),
                },
                10,
            )
            .await
            .unwrap();
    }
    assert_eq!(store.history("A").await.unwrap().len(), 3);
}
