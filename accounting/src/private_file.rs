//! Database files whose contents not every local user may read: the site spool (usage records
//! with user names) is created 0600, the central repository and registry 0640 (the owner writes,
//! its group, such as operators running `accelfed report`, reads). SQLite would create them
//! 0666 less the umask (0644 under the usual 022), and creates its `-wal` and `-shm` files with
//! the database file's own mode, so creating the empty file first with the right mode is enough.
//! An existing file keeps its mode: a site that chose another one is not overridden.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates `path` empty with `mode` when it does not exist yet. Other failures (a missing folder,
/// no permission) are left to SQLite's own open, which names them in its error.
pub fn create_with_mode(path: &Path, mode: u32) {
    // SQLite's special names are not files.
    let text = path.as_os_str().to_string_lossy();
    if text.starts_with(':') || text.starts_with("file:") {
        return;
    }
    let _ = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path);
}

/// Creates the folder `path` lives in, and any missing above it, with mode 0750 (less the umask)
/// when it does not exist: only where the configuration asks for it (`[accounting]
/// spool_create = true`), since a mistyped path must not silently start a new spool. Failures are
/// left to the checks that follow (`crate::access`), which name them.
pub fn create_folder(path: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(folder) = path.parent()
        && !folder.as_os_str().is_empty()
        && !folder.exists()
    {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(folder);
    }
}

/// The spool's mode.
pub const SPOOL_MODE: u32 = 0o600;
/// The central repository's and registry's mode.
pub const REPOSITORY_MODE: u32 = 0o640;

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_missing_folder_is_created_private_to_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("var/spool/accelfed/spool.sqlite");
        create_folder(&spool);
        let folder = spool.parent().unwrap();
        assert!(folder.is_dir());
        let mode = std::fs::metadata(folder).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o007, 0, "no access for others: {mode:o}");
    }

    #[test]
    fn a_new_file_gets_the_mode_and_an_existing_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("spool.sqlite");
        create_with_mode(&new, SPOOL_MODE);
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&new), 0o600);
        let existing = dir.path().join("accounting.sqlite");
        std::fs::write(&existing, b"").unwrap();
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o644)).unwrap();
        create_with_mode(&existing, REPOSITORY_MODE);
        assert_eq!(mode(&existing), 0o644);
    }
}
