//! Where pushed documents are kept: the latest per site and a history, on SQLite (a file beside the
//! configuration, nothing to set up) or PostgreSQL (when `database.url` is `postgres://`, shared by
//! several `accelfed serve` instances). The same calls and the same tests run on both, as in the
//! accounting repository.
//!
//! Only checked documents reach the store, and a document replaces the previous one in the same
//! transaction that records it in the history: a failed push leaves the stored one as it was.

mod error;
mod leader;
mod listen;
mod postgres;
mod sqlite;

use std::path::Path;

use chrono::{DateTime, Utc};

pub use error::StoreError;
pub use leader::{LDAP_SYNC, Leadership};
pub use listen::Change;
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

/// How much of a site's history is kept: its newest `documents`, and of those only the newest
/// whose sizes add up to at most `bytes` (the latest is always kept, whatever its size), so that
/// large pushes cannot fill the database (issue #30: ten 16 MiB pushes grew it by 180 MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    pub documents: u32,
    pub bytes: u64,
}

/// The bytes of history kept per site, unless configured: two documents at the default size
/// limit, or a hundred of a few hundred kilobytes.
pub const DEFAULT_KEEP_HISTORY_BYTES: u64 = 32 * 1024 * 1024;

impl From<u32> for Keep {
    fn from(documents: u32) -> Self {
        Self {
            documents,
            bytes: DEFAULT_KEEP_HISTORY_BYTES,
        }
    }
}

/// The statement both databases run after a push: deletes the site's history entries past the
/// newest `documents` or past `bytes` in all (never the newest). `octet_length` reads a size
/// without reading the document. Parameters: site, documents, bytes (`?n` is SQLite's spelling,
/// PostgreSQL's is `$n`).
const PRUNE: &str = "DELETE FROM registry_history WHERE id IN (
       SELECT id FROM (
         SELECT id,
                ROW_NUMBER() OVER (ORDER BY id DESC) AS position,
                SUM(octet_length(document)) OVER (ORDER BY id DESC) AS total
         FROM registry_history WHERE site = ?1) AS sized
       WHERE position > ?2 OR (position > 1 AND total > ?3))";

/// [`PRUNE`] in PostgreSQL's spelling.
fn prune_postgres() -> String {
    PRUNE
        .replace("?1", "$1")
        .replace("?2", "$2")
        .replace("?3", "$3")
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

    /// Makes `document` its site's latest and adds it to the history, keeping what `keep_history`
    /// says of that site's.
    pub async fn put(
        &self,
        document: StoredDocument,
        keep_history: impl Into<Keep>,
    ) -> Result<(), StoreError> {
        let keep_history = keep_history.into();
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

    /// The changes other instances make, for a store several instances share (PostgreSQL); `None`
    /// for SQLite, whose file only this instance writes. Starts listening at once.
    pub fn changes(&self) -> Option<tokio::sync::mpsc::Receiver<Change>> {
        match self {
            Self::Sqlite(_) => None,
            Self::Postgres(store) => Some(store.changes()),
        }
    }

    /// The right to run the job `key` names while no other instance runs it, or `None` while
    /// another does (see [`leader`]).
    pub async fn try_lead(&self, key: i64) -> Result<Option<Leadership>, StoreError> {
        match self {
            Self::Sqlite(_) => Ok(Some(Leadership::Alone)),
            Self::Postgres(store) => store.try_lead(key).await,
        }
    }

    /// One site's latest document, if it has one.
    pub async fn latest_of(&self, site: &str) -> Result<Option<StoredDocument>, StoreError> {
        match self {
            Self::Sqlite(_) => Ok(self
                .latest()
                .await?
                .into_iter()
                .find(|stored| stored.site == site)),
            Self::Postgres(store) => store.latest_of(site).await,
        }
    }

    /// A site's history, newest first.
    pub async fn history(&self, site: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        match self {
            Self::Sqlite(store) => store.history(site.to_owned()).await,
            Self::Postgres(store) => store.history(site).await,
        }
    }

    /// Every stored document of every site's history, oldest first (by site, then as stored):
    /// what the capacity over time is read from at start.
    pub async fn history_documents(&self) -> Result<Vec<StoredDocument>, StoreError> {
        match self {
            Self::Sqlite(store) => store.history_documents().await,
            Self::Postgres(store) => store.history_documents().await,
        }
    }
}

/// The statement of [`DocumentStore::history_documents`], the same on both databases.
const HISTORY_DOCUMENTS: &str =
    "SELECT site, received_at, document FROM registry_history ORDER BY site, id";

/// Milliseconds since the epoch, as both databases store times.
fn millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

fn from_millis(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

#[cfg(test)]
mod leader_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod upgrade_tests;
