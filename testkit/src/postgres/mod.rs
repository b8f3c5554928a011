//! PostgreSQL databases for tests and benchmarks: on the server this machine runs (127.0.0.1:5432,
//! trust auth, user postgres), [`TestDatabase`], one private database per test, and, with the
//! `bench-support` feature, [`BenchServer`], the benchmarks' server (`ACCELFED_BENCH_POSTGRES`);
//! and [`PrivateServer`], a server of a test's own that the test may stop and start.

#[cfg(feature = "bench-support")]
mod bench_server;
mod private_server;
mod test_database;

#[cfg(feature = "bench-support")]
pub use bench_server::{BenchDatabase, BenchServer};
pub use private_server::PrivateServer;
pub use test_database::TestDatabase;

/// The default server URL, without a database.
pub const DEFAULT_SERVER: &str = "postgres://postgres@127.0.0.1:5432";

/// Runs `sql` on the server's `postgres` database; panics with `what` when the server does not
/// answer or the statement fails.
async fn admin(server: &str, sql: &str, what: &str) {
    let admin = format!("{server}/postgres");
    let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|error| panic!("PostgreSQL at {admin} is unreachable ({error}); {what}"));
    let task = tokio::spawn(connection);
    client
        .batch_execute(sql)
        .await
        .unwrap_or_else(|error| panic!("{sql}: {error}"));
    drop(client);
    let _ = task.await;
}
