//! Why the document store failed. Nothing of a failed `put` was stored.

use accelfed_accounting::repository::postgres_message::describe;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("registry store {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The server's message, SQLSTATE code and detail are in the text: tokio-postgres's own
    /// `Display` says only "db error".
    #[error("registry store {url}: {}", describe(.error))]
    Postgres {
        /// The URL without its password.
        url: String,
        error: tokio_postgres::Error,
    },
    /// The location without its password.
    #[error("registry database {0:?}: expected a file path or postgres://")]
    Location(String),
    /// No connection could be had (the database is down, the URL's TLS settings are wrong).
    #[error("registry store {location}: {reason}")]
    Unavailable { location: String, reason: String },
    #[error(
        "registry store {location}: schema version {found} is newer than this program knows ({known})"
    )]
    SchemaTooNew {
        location: String,
        found: i64,
        known: i64,
    },
    #[error("registry store worker thread failed: {0}")]
    Worker(String),
}
