//! Spool errors. All are local (a file on the site's disk): retrying helps only for `Busy`-style
//! SQLite errors, which the connection already waits out (busy timeout).

use std::path::PathBuf;

use accelfed_schemas::usage::{RecordId, UsageError};

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("spool {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "spool {path}: schema version {found} is newer than this accelfed understands ({known}); \
         use a newer accelfed or a new spool file"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("spool {path}: meter run has record {id} twice; nothing from this run was stored")]
    DuplicateRecord { path: PathBuf, id: RecordId },
    #[error("spool {path}: refused a meter run, nothing from it was stored: {source}")]
    InvalidRecord {
        path: PathBuf,
        #[source]
        source: Box<UsageError>,
    },
    #[error("spool {path}: stored record {id} cannot be read back: {reason}")]
    Corrupt {
        path: PathBuf,
        id: String,
        reason: String,
    },
    #[error("spool {path}: {message}")]
    Thread { path: PathBuf, message: String },
}
