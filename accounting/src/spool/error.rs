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
    /// SQLite failed for want of access or space: its message and the OS error behind it.
    #[error("spool {path}: {source}: {cause}")]
    Os {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
        cause: String,
    },
    /// The spool's folder does not exist and the configuration does not ask to create it: a
    /// mistyped path would otherwise start a new, empty spool that nothing ships from.
    #[error(
        "spool {path}: its folder {folder} does not exist (a mistyped path?); nothing was \
         written. The packages create /var/spool/accelfed (owner accelfed, mode 0750); create \
         another folder with `install -d -o accelfed -g accelfed -m 0750 {folder}`, or set \
         `spool_create = true` in [accounting] to have accelfed create it"
    )]
    MissingFolder { path: PathBuf, folder: PathBuf },
    /// This process may not (or, as root, should not) write the spool: owner, mode and fix.
    #[error("spool {path}: {message}")]
    Access { path: PathBuf, message: String },
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
