//! What a PostgreSQL failure says: the server's message, SQLSTATE code and the object it names,
//! not tokio-postgres's bare "db error" (issue #23). Provoked on the real server: a constraint the
//! batch violates, and a database that does not exist.

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::Submission;
use accelfed_schemas::usage::sample;
use accelfed_testkit::postgres::{DEFAULT_SERVER, TestDatabase};
use chrono::Utc;

/// Runs `sql` on the database at `url`, as an operator (or a broken migration) might.
async fn execute(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.batch_execute(sql).await.unwrap();
    drop(client);
    let _ = task.await;
}

#[tokio::test]
async fn a_violated_constraint_is_named_with_its_sqlstate_and_table() {
    let db = TestDatabase::create().await;
    let repo = Repository::open(&db.url).await.unwrap();
    execute(
        &db.url,
        "ALTER TABLE summaries ADD CONSTRAINT no_summary_at_all CHECK (records < 0)",
    )
    .await;
    let site = sample::record("vm-1").site;
    let batch = vec![Submission::from(sample::record("vm-1"))];
    let options = IngestOptions {
        max_batch: 10,
        now: Utc::now(),
    };
    let error = repo.ingest(&site, batch, options).await.unwrap_err();
    let message = error.to_string();
    for named in ["no_summary_at_all", "23514", "summaries", "ERROR"] {
        assert!(message.contains(named), "{named} missing: {message}");
    }
    assert!(!message.contains("db error"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(
        !error.is_transient(),
        "a constraint does not go away by retrying"
    );
}

#[tokio::test]
async fn a_missing_database_is_named_with_its_sqlstate() {
    let url = format!(
        "{DEFAULT_SERVER}/accelfed_no_such_database_{}",
        std::process::id()
    );
    let error = Repository::open(&url).await.unwrap_err();
    let message = error.to_string();
    for named in ["accelfed_no_such_database_", "does not exist", "3D000"] {
        assert!(message.contains(named), "{named} missing: {message}");
    }
    assert!(!message.contains("db error"), "{message}");
}
