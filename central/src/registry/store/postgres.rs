//! The PostgreSQL store, in the same database as the accounting repository (its own tables,
//! migrated by the store layer's one runner), on pooled connections that are replaced when the
//! server closes them. Several `accelfed serve` instances may share it: a push is one transaction,
//! and announces itself to the others on the [`CHANNEL`] when it commits.

use accelfed_accounting::database::postgres::{
    ConnectError, POOL_SIZE, PooledClient, PostgresPool, target,
};
use accelfed_accounting::database::{MigrationSet, migrate};
use accelfed_schemas::database_url::redact;

use super::{HistoryEntry, Keep, StoreError, StoredDocument, from_millis, millis};

/// The channel a push is announced on (its payload: the site), for the other instances' indexes.
pub const CHANNEL: &str = "accelfed_registry";

/// The registry's migrations. Adding one: one entry at the end of the list.
const SET: MigrationSet = MigrationSet {
    owner: "registry store",
    table: "registry_schema_migrations",
    // The key the store locked its table creation with before it had migrations.
    lock: 7_166_001,
    // `IF NOT EXISTS`: a database made before the registry had migrations holds these tables
    // already (and its documents), and adopts them as version 1.
    migrations: &[(1, SCHEMA)],
};

const SCHEMA: &str = "
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
    CREATE INDEX IF NOT EXISTS registry_history_by_site ON registry_history (site, id);";

#[derive(Debug, Clone)]
pub struct PostgresStore {
    /// The URL without its password, for messages.
    location: String,
    /// For the listener's own connection.
    target: std::sync::Arc<accelfed_net::postgres::PostgresTarget>,
    pool: PostgresPool,
}

impl PostgresStore {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let location = redact(url);
        let target = target(url).map_err(|e| connect_failure(&location, e))?;
        let pool =
            PostgresPool::new(&target, POOL_SIZE).map_err(|e| connect_failure(&location, e))?;
        let store = Self {
            location,
            target: std::sync::Arc::new(target),
            pool,
        };
        let mut client = store.client().await?;
        match migrate::postgres(&mut client, &SET)
            .await
            .map_err(|e| store.fail(e))?
        {
            Ok(found) if found < SET.latest() => {
                tracing::info!(url = %store.location, from = found, to = SET.latest(), "migrated registry schema");
            }
            Ok(_) => {}
            Err(found) => {
                return Err(StoreError::SchemaTooNew {
                    location: store.location.clone(),
                    found,
                    known: SET.latest(),
                });
            }
        }
        drop(client);
        Ok(store)
    }

    /// Starts listening for committed pushes (see [`super::listen`]).
    pub fn changes(&self) -> tokio::sync::mpsc::Receiver<super::Change> {
        let (sender, receiver) = tokio::sync::mpsc::channel(1024);
        tokio::spawn(super::listen::listen(
            (*self.target).clone(),
            self.location.clone(),
            sender,
        ));
        receiver
    }

    /// A pooled connection.
    async fn client(&self) -> Result<PooledClient, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| connect_failure(&self.location, e))
    }

    fn fail(&self, error: tokio_postgres::Error) -> StoreError {
        StoreError::Postgres {
            url: self.location.clone(),
            error,
        }
    }

    pub async fn put(&self, document: StoredDocument, keep: Keep) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| self.fail(e))?;
        let at = millis(document.received_at);
        tx.execute(
            "INSERT INTO registry_history (site, received_at, document) VALUES ($1, $2, $3)",
            &[&document.site, &at, &document.document],
        )
        .await
        .map_err(|e| self.fail(e))?;
        tx.execute(
            "INSERT INTO registry_latest (site, received_at, document) VALUES ($1, $2, $3)
             ON CONFLICT (site) DO UPDATE SET received_at = excluded.received_at,
                                              document = excluded.document",
            &[&document.site, &at, &document.document],
        )
        .await
        .map_err(|e| self.fail(e))?;
        tx.execute(
            &super::prune_postgres(),
            &[
                &document.site,
                &i64::from(keep.documents.max(1)),
                &i64::try_from(keep.bytes).unwrap_or(i64::MAX),
            ],
        )
        .await
        .map_err(|e| self.fail(e))?;
        // Delivered to every listening instance when (and only if) the push commits.
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &document.site])
            .await
            .map_err(|e| self.fail(e))?;
        tx.commit().await.map_err(|e| self.fail(e))
    }

    pub async fn latest(&self) -> Result<Vec<StoredDocument>, StoreError> {
        self.documents("SELECT site, received_at, document FROM registry_latest ORDER BY site")
            .await
    }

    /// The documents `query` selects as (site, received_at, document).
    async fn documents(&self, query: &str) -> Result<Vec<StoredDocument>, StoreError> {
        let client = self.client().await?;
        let rows = client.query(query, &[]).await.map_err(|e| self.fail(e))?;
        Ok(rows
            .iter()
            .map(|row| StoredDocument {
                site: row.get(0),
                received_at: from_millis(row.get(1)),
                document: row.get(2),
            })
            .collect())
    }

    pub async fn try_lead(&self, key: i64) -> Result<Option<super::Leadership>, StoreError> {
        let client = self.client().await?;
        let locked: bool = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(|e| self.fail(e))?
            .get(0);
        // Not locked: the connection holds nothing and goes back to the pool.
        Ok(locked.then(|| super::Leadership::Locked(Some(Box::new(client)))))
    }

    pub async fn latest_of(&self, site: &str) -> Result<Option<StoredDocument>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT site, received_at, document FROM registry_latest WHERE site = $1",
                &[&site],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(row.map(|row| StoredDocument {
            site: row.get(0),
            received_at: from_millis(row.get(1)),
            document: row.get(2),
        }))
    }

    pub async fn history_documents(&self) -> Result<Vec<StoredDocument>, StoreError> {
        self.documents(super::HISTORY_DOCUMENTS).await
    }

    pub async fn history(&self, site: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT received_at, octet_length(document)::BIGINT FROM registry_history
                 WHERE site = $1 ORDER BY id DESC",
                &[&site],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(rows
            .iter()
            .map(|row| HistoryEntry {
                received_at: from_millis(row.get(0)),
                bytes: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
            })
            .collect())
    }
}

/// The error of a connection that could not be had, with the URL (without its password).
fn connect_failure(location: &str, error: ConnectError) -> StoreError {
    match error {
        ConnectError::Postgres(error) => StoreError::Postgres {
            url: location.to_owned(),
            error,
        },
        ConnectError::Settings(reason) | ConnectError::Pool(reason) => StoreError::Unavailable {
            location: location.to_owned(),
            reason,
        },
    }
}
