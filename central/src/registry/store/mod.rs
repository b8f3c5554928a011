//! Where pushed documents are kept: the latest per site and a history, on SQLite (a file beside the
//! configuration, nothing to set up) or PostgreSQL (when `database.url` is `postgres://`, shared by
//! several `accelfed serve` instances). The same calls and the same tests run on both, as in the
//! accounting repository.
//!
//! Only checked documents reach the store, and a document replaces the previous one in the same
//! transaction that records it in the history: a failed push leaves the stored one as it was.

mod error;
mod postgres;
mod sqlite;

use std::path::Path;

use chrono::{DateTime, Utc};

pub use error::StoreError;
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// One site's document as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDocument {
    pub site: String,
    pub received_at: DateTime<Utc>,
    /// The GLUE 2.1 JSON text, as the site sent it.
    pub document: String,
}

/// An entry of a site's history: a document that was stored (refused pushes never are).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HistoryEntry {
    pub received_at: DateTime<Utc>,
    /// The document's size in bytes, as the site sent it.
    pub bytes: u64,
}

/// The store over either database. Cloning is cheap and shares the connections.
#[derive(Debug, Clone)]
pub enum DocumentStore {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl DocumentStore {
    /// Opens `location`: a `postgres://` URL, or else an SQLite file path (created if missing).
    pub async fn open(location: &str) -> Result<Self, StoreError> {
        let url = accelfed_schemas::database_url::DatabaseUrl::new(location);
        if url.is_postgres() {
            Ok(Self::Postgres(PostgresStore::open(url.expose()).await?))
        } else if location.is_empty() || location.contains("://") {
            Err(StoreError::Location(url.redacted()))
        } else {
            Ok(Self::Sqlite(SqliteStore::open(Path::new(location)).await?))
        }
    }

    /// Makes `document` its site's latest and adds it to the history, keeping the newest
    /// `keep_history` entries of that site.
    pub async fn put(&self, document: StoredDocument, keep_history: u32) -> Result<(), StoreError> {
        match self {
            Self::Sqlite(store) => store.put(document, keep_history).await,
            Self::Postgres(store) => store.put(document, keep_history).await,
        }
    }

    /// Every site's latest document, by site name.
    pub async fn latest(&self) -> Result<Vec<StoredDocument>, StoreError> {
        match self {
            Self::Sqlite(store) => store.latest().await,
            Self::Postgres(store) => store.latest().await,
        }
    }

    /// A site's history, newest first.
    pub async fn history(&self, site: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        match self {
            Self::Sqlite(store) => store.history(site.to_owned()).await,
            Self::Postgres(store) => store.history(site).await,
        }
    }
}

/// Milliseconds since the epoch, as both databases store times.
fn millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

fn from_millis(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

#[cfg(test)]
mod tests;
