//! Opening the spool, checks first: the spool's folder must exist (unless the caller asks for it
//! to be created: `[accounting] spool_create = true`), and this process must be allowed to write
//! the spool as its owner would ([`crate::access`]), so that a mistyped path or a root run never
//! silently starts a second spool or leaves files the service user cannot open. SQLite errors
//! from a lack of access or space are given the OS error behind them ([`explained`]).

use std::path::Path;

use rusqlite::Connection;

use super::error::SpoolError;
use super::store::Spool;
use crate::access;

impl Spool {
    /// Opens the spool at `path` (creating the file if it is new) and brings its schema up to
    /// date. Its folder must exist: a missing one is [`SpoolError::MissingFolder`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SpoolError> {
        Self::open_with(path.as_ref(), false)
    }

    /// As [`Spool::open`], creating a missing folder (and those above it) with mode 0750 first.
    pub fn open_creating_folder(path: impl AsRef<Path>) -> Result<Self, SpoolError> {
        Self::open_with(path.as_ref(), true)
    }

    /// [`Spool::open`] or [`Spool::open_creating_folder`], as `create_folder` says.
    pub fn open_with(path: &Path, create_folder: bool) -> Result<Self, SpoolError> {
        let path = path.to_path_buf();
        let folder = access::folder_of(&path);
        if !folder.exists() {
            if !create_folder {
                return Err(SpoolError::MissingFolder { path, folder });
            }
            crate::private_file::create_folder(&path);
        }
        access::check_writable(&path).map_err(|message| SpoolError::Access {
            path: path.clone(),
            message,
        })?;
        crate::private_file::create_with_mode(&path, crate::private_file::SPOOL_MODE);
        let conn = Connection::open(&path).map_err(|source| {
            explained(SpoolError::Sqlite {
                path: path.clone(),
                source,
            })
        })?;
        Self::on(conn, path).map_err(explained)
    }
}

/// A SQLite error with the OS error behind it where it is one of access or space (see
/// [`access::explain`]); other errors as they are.
pub(super) fn explained(err: SpoolError) -> SpoolError {
    match err {
        SpoolError::Sqlite { path, source } => match access::explain(&path, &source) {
            Some(cause) => SpoolError::Os {
                path,
                source,
                cause,
            },
            None => SpoolError::Sqlite { path, source },
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_missing_folder_is_refused_unless_asked_to_create_it() {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().join("var/spool/acelfed/spool.sqlite");
        let err = Spool::open(&path).unwrap_err();
        assert!(matches!(err, SpoolError::MissingFolder { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("var/spool/acelfed does not exist") && text.contains("spool_create"),
            "{text}"
        );
        assert!(!dir.path().join("var").exists(), "nothing created");

        let spool = Spool::open_creating_folder(&path).unwrap();
        assert_eq!(spool.depth().unwrap(), 0);
        assert!(path.is_file());
    }
}
