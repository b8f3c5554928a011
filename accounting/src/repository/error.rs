//! Errors of the repository as a whole (a failed batch, an unreachable database). Problems with one
//! record are not errors: they are [`crate::wire::Rejection`]s in that record's outcome, and the rest of the
//! batch is stored.

use super::postgres_message::describe;

/// Why a repository operation failed. Nothing of a failed ingest was stored (its transaction rolled
/// back), so the whole batch may be re-sent.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    #[error("SQLite repository {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The file cannot or should not be written by this process (owner, mode, read-only or full
    /// file system): the owner, the mode, the OS error and the fix (`crate::access`).
    #[error("SQLite repository {path}: {message}")]
    Access { path: String, message: String },
    /// The server's message, SQLSTATE code and detail are in the text
    /// ([`super::postgres_message::describe`]): tokio-postgres's own `Display` says only "db
    /// error". The error is kept (not as `source()`, which would repeat it) for its code.
    #[error("PostgreSQL repository {url}: {}", describe(.error))]
    Postgres {
        /// The URL without its password.
        url: String,
        error: tokio_postgres::Error,
    },
    /// The location without its password.
    #[error("database URL {0:?}: expected a file path or postgres://")]
    Url(String),
    /// A file that is not an accelfed repository (another SQLite file, a site spool, not SQLite):
    /// refused rather than turned into one.
    #[error("{location} is not an accelfed accounting repository: {found}")]
    NotARepository { location: String, found: String },
    #[error(
        "repository {location}: schema version {found} is newer than this program knows ({known})"
    )]
    SchemaTooNew {
        location: String,
        found: i64,
        known: i64,
    },
    #[error("repository {location}: stored value out of range in {what}: {value}")]
    Corrupt {
        location: String,
        what: &'static str,
        value: String,
    },
    /// The database URL's settings are wrong (an unknown `sslmode`, an unreadable
    /// `sslrootcert`); the location is without its password.
    #[error("PostgreSQL repository {location}: {reason}")]
    Settings { location: String, reason: String },
    /// No connection could be had in time (the database is down or restarting); a retry can
    /// help.
    #[error("PostgreSQL repository {location}: {reason}")]
    Unavailable { location: String, reason: String },
    #[error("{database} worker thread failed: {reason}")]
    Worker {
        database: &'static str,
        reason: String,
    },
}

impl RepositoryError {
    /// Whether trying again later can help (a connection or lock problem rather than a bug or a
    /// schema mismatch). The gRPC layer maps this to UNAVAILABLE versus INTERNAL.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            Self::Postgres { error, .. } => error.is_closed() || error.code().is_none(),
            Self::Url(_)
            | Self::Access { .. }
            | Self::NotARepository { .. }
            | Self::SchemaTooNew { .. }
            | Self::Corrupt { .. }
            | Self::Settings { .. } => false,
            Self::Worker { .. } | Self::Unavailable { .. } => true,
        }
    }
}
