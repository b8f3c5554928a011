//! Before a command writes a database file that the service user owns (the site spool, the central
//! repository), it checks who owns the file and its folder and whether this process may write
//! them, so that a failure is a sentence naming the owner, the mode and the fix instead of
//! SQLite's "unable to open database file". The checks and their words are
//! [`accelfed_net::write_access`]'s, which documents written with `provide --output` share; what
//! is SQLite's is here: the files beside the database, SQLite's special names, and [`explain`].
//!
//! After SQLite failed anyway, [`explain`] probes the folder to name the OS error behind SQLite's
//! words ("disk I/O error", "database or disk is full"): ENOSPC, EDQUOT, EROFS, EACCES.

use std::path::{Path, PathBuf};

use accelfed_net::write_access::{self, not_writable, probe};

pub use accelfed_net::write_access::{effective_uid, folder_of};

/// SQLite's special names (`:memory:`, `file:` URIs) are no files to check.
fn is_special(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    text.starts_with(':') || text.starts_with("file:")
}

/// The database file and the files SQLite keeps beside it: all written in place.
fn companions(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_owned()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files
}

/// Checks, before SQLite opens it, that this process may write the database `path` (which may not
/// exist yet), the files beside it and its folder (where SQLite creates and deletes its `-wal` and
/// `-shm`). `Err` is a sentence naming the owner, the mode and the fix. The folder must exist.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if is_special(path) {
        return Ok(());
    }
    write_access::check_writable(path, &companions(path))
}

/// How large the probe after a failed write is: a few pages more than SQLite's largest single
/// write to its log, so a file system with less room than a transaction needs says so.
const SPACE_PROBE_BYTES: usize = 256 * 1024;

/// The OS error behind a failed SQLite call on the database `path`, in words with the fix, where
/// the call failed for want of access or space; `None` for other errors, or when the folder shows
/// no fault (the fault was passing).
pub fn explain(path: &Path, error: &rusqlite::Error) -> Option<String> {
    use rusqlite::ErrorCode;
    let code = error.sqlite_error_code()?;
    if !matches!(
        code,
        ErrorCode::CannotOpen
            | ErrorCode::ReadOnly
            | ErrorCode::SystemIoFailure
            | ErrorCode::DiskFull
            | ErrorCode::PermissionDenied
    ) || is_special(path)
    {
        return None;
    }
    if let Err(access) = check_writable(path) {
        return Some(access);
    }
    let folder = folder_of(path);
    match probe(&folder, SPACE_PROBE_BYTES) {
        Err(error) => {
            let meta = std::fs::metadata(&folder).ok()?;
            Some(not_writable(path, &folder, &meta, &error))
        }
        Ok(()) if code == ErrorCode::DiskFull => Some(format!(
            "the file system of {} or its owner's quota was full (ENOSPC or EDQUOT); it has room \
             again now, run the command again",
            folder.display()
        )),
        Ok(()) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_and_the_files_beside_it_are_checked_but_not_sqlites_special_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool.sqlite");
        check_writable(&path).unwrap();
        std::fs::write(&path, b"").unwrap();
        check_writable(&path).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no probe left behind: {left:?}");
        check_writable(Path::new(":memory:")).unwrap();
        let err = check_writable(&dir.path().join("nope/spool.sqlite")).unwrap_err();
        assert!(err.contains("nope") && err.contains("ENOENT"), "{err}");
    }
}
