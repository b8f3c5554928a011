//! Connections to PostgreSQL: one target per URL (TLS as its `sslmode` says, see
//! [`accelfed_net::postgres`]), single connections for work that holds one (the repository's
//! writer, the registry's listener), and the pool every other call takes a connection from.

use std::time::Duration;

use accelfed_net::Trust;
use accelfed_net::postgres::PostgresTarget;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::Client;

/// Connections a pool opens at most: reports, sync counts, registry reads and pushes of one
/// instance; PostgreSQL's default `max_connections` (100) leaves room for several instances.
pub const POOL_SIZE: usize = 16;

/// How long opening one connection may take before the call fails (and the site retries).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a call waits for a free connection of a full pool.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection taken from a [`PostgresPool`]; back to the pool when dropped. Derefs to the
/// tokio-postgres `Client`.
pub type PooledClient = deadpool_postgres::Object;

/// Why no connection was had.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL's settings (`sslmode`, `sslrootcert`, a tokio-postgres option) are wrong.
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// The pool gave none in time (the database is down or every connection is busy).
    #[error("no connection: {0}")]
    Pool(String),
}

/// Reads `url` with the project's trust for PostgreSQL: the system's roots and the URL's
/// `sslrootcert`.
pub fn target(url: &str) -> Result<PostgresTarget, ConnectError> {
    accelfed_net::postgres::target(url, &Trust::system()).map_err(ConnectError::Settings)
}

/// One connection, driven by a task on the current runtime, which logs why it closed. The
/// client's calls fail with a closed-connection error from then on; its owner reconnects.
pub async fn connect(target: &PostgresTarget) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = target.config.connect(target.tls.clone()).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            let why = crate::repository::postgres_message::describe(&error);
            tracing::warn!("PostgreSQL connection closed: {why}");
        }
    });
    Ok(client)
}

/// A pool of connections to one database. Cheap to clone (the clones share it). A connection the
/// server closed (a restart, an administrator's `pg_terminate_backend`) is dropped when next
/// taken and another opened in its place.
#[derive(Clone)]
pub struct PostgresPool {
    pool: Pool,
}

impl std::fmt::Debug for PostgresPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresPool")
            .field("size", &status.size)
            .field("available", &status.available)
            .finish()
    }
}

impl PostgresPool {
    /// A pool of at most `size` connections to `target`; opens none yet.
    pub fn new(target: &PostgresTarget, size: usize) -> Result<Self, ConnectError> {
        let manager = Manager::from_config(
            target.config.clone(),
            target.tls.clone(),
            ManagerConfig {
                // Checks the client's own closed flag: free, and a restart closes every socket.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(WAIT_TIMEOUT))
            .build()
            .map_err(|error| ConnectError::Settings(error.to_string()))?;
        Ok(Self { pool })
    }

    /// A connection, open and not in use; returned to the pool when dropped.
    pub async fn get(&self) -> Result<PooledClient, ConnectError> {
        self.pool.get().await.map_err(|error| match error {
            PoolError::Backend(error) => ConnectError::Postgres(error),
            other => ConnectError::Pool(other.to_string()),
        })
    }
}

/// Closes a pooled connection instead of returning it to the pool: its session ends, with every
/// session-level state it holds (an advisory lock, a `LISTEN`).
pub fn close(client: PooledClient) {
    drop(deadpool_postgres::Object::take(client));
}
