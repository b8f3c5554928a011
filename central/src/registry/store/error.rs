//! Why the document store failed. Nothing of a failed `put` was stored.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("registry store {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("registry store {url}: {source}")]
    Postgres {
        /// The URL without its password.
        url: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("registry database {0:?}: expected a file path or postgres://")]
    Location(String),
    #[error("registry store worker thread failed: {0}")]
    Worker(String),
}
