//! Opening the repository as `serve` starts, as one step retried within `database.start_wait_s`:
//! waiting for PostgreSQL ([`super::reachable`]), connecting and migrating. A database that goes
//! away during the migrations (restarted, shut down: the connection is lost, or the server says
//! it is shutting down) is waited for and the step begins again: the migration runner applies
//! each migration in one transaction, so what was cut off was rolled back and is applied again.
//! A failed migration statement, a refused login or a schema newer than this program ends the
//! start at once: trying again would fail alike.

use std::time::{Duration, Instant};

use crate::repository::{Repository, RepositoryError};

/// Between two tries.
const RETRY: Duration = Duration::from_secs(1);

/// The repository at `location` (a file path or a `postgres://` URL), opened and migrated; for
/// PostgreSQL retried within `limit` while [`retry_helps`].
pub async fn open_repository(location: &str, limit: Duration) -> Result<Repository, String> {
    let postgres = accelfed_schemas::database_url::DatabaseUrl::new(location).is_postgres();
    let started = Instant::now();
    loop {
        if postgres {
            super::reachable::wait_until_reachable(
                location,
                limit.saturating_sub(started.elapsed()),
            )
            .await?;
        }
        let error = match Repository::open(location).await {
            Ok(repository) => return Ok(repository),
            Err(error) => error,
        };
        let why = accelfed_schemas::cause::chain(&error);
        if !postgres || !retry_helps(&error) || started.elapsed() >= limit {
            return Err(why);
        }
        tracing::warn!(
            "{why}; the database went away while the repository was opened: trying again \
             (for up to {} s from the start)",
            limit.as_secs()
        );
        tokio::time::sleep(RETRY).await;
    }
}

/// Whether opening again can succeed: the connection was lost or the server is going away or
/// not ready ([`super::reachable::curable`]), or no connection could be had in time; never an
/// error the server answered a statement with (a failed migration), nor settings, access or a
/// schema this program does not know.
pub fn retry_helps(error: &RepositoryError) -> bool {
    match error {
        RepositoryError::Postgres { error, .. } => {
            error.is_closed() || super::reachable::curable(error)
        }
        RepositoryError::Unavailable { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_testkit::postgres::TestDatabase;

    /// A real server's errors: a statement that fails (as a broken migration would) is final; a
    /// connection the server ends (`pg_terminate_backend`, what a shutdown does to it) is
    /// retried.
    #[tokio::test]
    async fn a_lost_connection_is_retried_and_a_failed_statement_is_not() {
        let db = TestDatabase::create().await;
        let url = db.url.clone();
        let postgres = |error| RepositoryError::Postgres {
            url: "test".to_owned(),
            error,
        };
        let target = crate::database::postgres::target(&url).unwrap();
        let client = crate::database::postgres::connect(&target).await.unwrap();
        let failed = client
            .batch_execute("CREATE TABLE t (a int); ALTER TABLE t ADD COLUMN a int")
            .await
            .unwrap_err();
        assert!(!retry_helps(&postgres(failed)));
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let other = crate::database::postgres::connect(&target).await.unwrap();
        other
            .execute("SELECT pg_terminate_backend($1)", &[&pid])
            .await
            .unwrap();
        let lost = client.simple_query("SELECT 1").await.unwrap_err();
        assert!(retry_helps(&postgres(lost)));
        assert!(retry_helps(&RepositoryError::Unavailable {
            location: "test".to_owned(),
            reason: "no connection within 10 s".to_owned(),
        }));
        assert!(!retry_helps(&RepositoryError::SchemaTooNew {
            location: "test".to_owned(),
            found: 99,
            known: 7,
        }));
    }

    /// The database goes away during the migrations, deterministically: the test holds the
    /// migrations' advisory lock, so the opener's migration waits on it; the test ends that
    /// connection (as a shutdown does), sees the opener come back and wait again, and releases
    /// the lock: the repository opens, migrated.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_lost_during_the_migrations_is_opened_again() {
        let db = TestDatabase::create().await;
        let target = crate::database::postgres::target(&db.url).unwrap();
        let mut holder = crate::database::postgres::connect(&target).await.unwrap();
        let lock = holder.transaction().await.unwrap();
        lock.execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[&crate::repository::POSTGRES_MIGRATION_LOCK],
        )
        .await
        .unwrap();
        let url = db.url.clone();
        let opening = tokio::spawn(async move {
            open_repository(&url, Duration::from_secs(60))
                .await
                .map(drop)
        });
        let held = &lock;
        let waiting = |other_than: i32| async move {
            loop {
                let rows = held
                    .query(
                        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
                         AND database = (SELECT oid FROM pg_database \
                                         WHERE datname = current_database())",
                        &[],
                    )
                    .await
                    .unwrap();
                let pids = rows.iter().map(|row| row.get::<_, i32>(0));
                if let Some(pid) = pids.into_iter().find(|pid| *pid != other_than) {
                    return pid;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let first = waiting(0).await;
        lock.execute("SELECT pg_terminate_backend($1)", &[&first])
            .await
            .unwrap();
        // The opener, on a new connection, waits for the lock again.
        waiting(first).await;
        lock.commit().await.unwrap();
        let opened = tokio::time::timeout(Duration::from_secs(30), opening)
            .await
            .unwrap()
            .unwrap();
        assert!(opened.is_ok(), "{opened:?}");
    }
}
