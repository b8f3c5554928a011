//! A private PostgreSQL database per test: created on the server the machine runs (127.0.0.1:5432,
//! trust auth, user postgres; `ACCELFED_TEST_POSTGRES` overrides the server URL) and dropped when
//! the test ends, passed or failed.
//!
//! An unreachable server fails the test, in CI and out: a suite that quietly skipped PostgreSQL would
//! claim both backends behave the same while testing one.

use std::sync::atomic::{AtomicU32, Ordering};

use tokio_postgres::NoTls;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// One test's database; dropping it drops the database.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    server: String,
    name: String,
}

fn server() -> String {
    std::env::var("ACCELFED_TEST_POSTGRES").unwrap_or_else(|_| super::DEFAULT_SERVER.to_owned())
}

impl TestDatabase {
    /// Creates the database; call it inside a tokio runtime.
    pub async fn create() -> Self {
        let server = server();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "accelfed_test_{}_{}_{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        super::admin(
            &server,
            &format!("CREATE DATABASE {name}"),
            "the tests need it (set ACCELFED_TEST_POSTGRES to another server URL)",
        )
        .await;
        Self {
            url: format!("{server}/{name}"),
            server,
            name,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop may run inside the test's runtime, which must not block; a fresh thread with its
        // own runtime does the cleanup.
        let admin = format!("{}/postgres", self.server);
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let joined = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&admin, NoTls)
                    .await
                    .map_err(|e| e.to_string())?;
                let task = tokio::spawn(connection);
                let result = client.batch_execute(&sql).await.map_err(|e| e.to_string());
                drop(client);
                let _ = task.await;
                result
            })
        })
        .join();
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("could not drop test database {}: {error}", self.name),
            Err(_) => eprintln!(
                "could not drop test database {}: cleanup panicked",
                self.name
            ),
        }
    }
}
