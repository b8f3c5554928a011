//! The repository's connections to PostgreSQL: every one the server closes (as a restart closes
//! them all) is replaced at the next call, with nothing lost and no reopening; and TLS as the
//! URL's `sslmode` asks, seen from the server's side (`pg_stat_ssl`).

use accelfed_accounting::repository::{
    Dimension, IngestOptions, Repository, SummaryFilter, SummaryQuery,
};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_schemas::usage::sample;
use accelfed_testkit::postgres::TestDatabase;
use chrono::Utc;

/// Runs `sql` on the database at `url` from a connection of its own; returns the first column of
/// each row as text.
async fn as_operator(url: &str, sql: &str) -> Vec<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let rows = client.simple_query(sql).await.unwrap();
    drop(client);
    let _ = task.await;
    rows.iter()
        .filter_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// Closes every other session of the database, as a restart of the server does.
async fn terminate_sessions(url: &str) -> usize {
    as_operator(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .await
    .len()
}

async fn ingest(repo: &Repository, resources: &[&str]) {
    let site = sample::record("vm-0").site;
    let batch = resources
        .iter()
        .map(|resource| Submission::from(sample::record(resource)))
        .collect();
    let options = IngestOptions {
        max_batch: 100,
        now: Utc::now(),
    };
    let report = repo.ingest(&site, batch, options).await.unwrap();
    assert!(
        report
            .outcomes
            .iter()
            .all(|outcome| matches!(outcome, Outcome::Stored)),
        "{report:?}"
    );
}

async fn records(repo: &Repository) -> i64 {
    repo.summaries(SummaryQuery {
        group_by: vec![Dimension::Site],
        filter: SummaryFilter::default(),
    })
    .await
    .unwrap()
    .iter()
    .map(|row| row.totals.records)
    .sum()
}

#[tokio::test]
async fn closed_connections_are_replaced_without_reopening_and_nothing_is_lost() {
    let db = TestDatabase::create().await;
    let repo = Repository::open(&db.url).await.unwrap();
    ingest(&repo, &["vm-1", "vm-2"]).await;
    assert_eq!(records(&repo).await, 2);
    for round in 0..3 {
        let closed = terminate_sessions(&db.url).await;
        assert!(
            closed >= 2,
            "round {round}: the writer and a reader were open: {closed}"
        );
        // The connections' tasks see the server's goodbye at once; give them a moment.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        ingest(&repo, &[&format!("vm-new-{round}")]).await;
        assert_eq!(records(&repo).await, 3 + round);
    }
    // And the stored rows agree with the summaries: nothing counted twice.
    let stored = as_operator(&db.url, "SELECT count(*) FROM records").await;
    assert_eq!(stored, ["5"]);
}

#[tokio::test]
async fn every_connection_is_encrypted_when_sslmode_requires_it() {
    let db = TestDatabase::create().await;
    let url = format!(
        "{}?sslmode=require&application_name=accelfed_tls_test",
        db.url
    );
    let repo = Repository::open(&url).await.unwrap();
    ingest(&repo, &["vm-1"]).await;
    assert_eq!(records(&repo).await, 1);
    let sessions = as_operator(
        &db.url,
        "SELECT s.ssl::text FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
         WHERE a.application_name = 'accelfed_tls_test'",
    )
    .await;
    assert!(sessions.len() >= 2, "writer and reader: {sessions:?}");
    assert!(sessions.iter().all(|ssl| ssl == "true"), "{sessions:?}");

    let error = Repository::open(&format!("{}?sslmode=verify_ca", db.url))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("sslmode=\"verify_ca\""),
        "{error}"
    );
    assert!(!error.is_transient());
}
