//! The PostgreSQL store, in the same database as the accounting repository (its own tables).
//! Several `accelfed serve` instances may share it: a push is one transaction.

use std::sync::Arc;

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use accelfed_accounting::repository::postgres_message::describe;
use accelfed_schemas::database_url::redact;

use super::{HistoryEntry, Keep, StoreError, StoredDocument, from_millis, millis};

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
    client: Arc<Mutex<Client>>,
}

impl PostgresStore {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let location = redact(url);
        let fail = |error| StoreError::Postgres {
            url: location.clone(),
            error,
        };
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(fail)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                let why = describe(&error);
                tracing::warn!("registry store: PostgreSQL connection closed: {why}");
            }
        });
        // Two instances starting together may both create the tables; a lock orders them.
        client
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock(7166001); {SCHEMA} COMMIT;"
            ))
            .await
            .map_err(fail)?;
        Ok(Self {
            location,
            client: Arc::new(Mutex::new(client)),
        })
    }

    fn fail(&self, error: tokio_postgres::Error) -> StoreError {
        StoreError::Postgres {
            url: self.location.clone(),
            error,
        }
    }

    pub async fn put(&self, document: StoredDocument, keep: Keep) -> Result<(), StoreError> {
        let mut client = self.client.lock().await;
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
        tx.commit().await.map_err(|e| self.fail(e))
    }

    pub async fn latest(&self) -> Result<Vec<StoredDocument>, StoreError> {
        let client = self.client.lock().await;
        let rows = client
            .query(
                "SELECT site, received_at, document FROM registry_latest ORDER BY site",
                &[],
            )
            .await
            .map_err(|e| self.fail(e))?;
        Ok(rows
            .iter()
            .map(|row| StoredDocument {
                site: row.get(0),
                received_at: from_millis(row.get(1)),
                document: row.get(2),
            })
            .collect())
    }

    pub async fn history(&self, site: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        let client = self.client.lock().await;
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
