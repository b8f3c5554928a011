//! Whether a document can be written where `-o` points, asked before anything is gathered, and
//! why it could not be when a write failed anyway: the OS error alone ("Permission denied") names
//! neither whose the folder is nor what to do. The packaged folder for documents,
//! /var/lib/accelfed, is the service user's, and a BDII or an administrator running `provide -o`
//! there as another user (or as root, whose document the service user's runs would then meet)
//! meets exactly this. The checks and their words are [`accelfed_net::write_access`]'s, shared
//! with the spool and the central repository.

use std::io;
use std::path::Path;

use accelfed_net::write_access::{self, describe_os, errno_of, folder_of, owner_and_fix};

/// Checks, before a document is made, that this process may write it at `path`: a new file
/// (the temporary renamed over it) in its folder. Root is refused on another user's document or
/// folder, with the `runuser` line to use. `Err` names the owner, the mode and the fix.
pub fn check_writable(path: &Path) -> Result<(), String> {
    // The document is replaced by renaming, never written in place: only its folder is written.
    write_access::check_writable(path, &[])
}

/// The OS error met writing the document `path`, by its symbolic name, and for the errors an
/// owner, a mount or a full disk causes, the folder's owner, its mode, who runs this and the fix.
pub(crate) fn explain(path: &Path, error: &io::Error) -> String {
    let described = describe_os(error);
    let owner_or_mount = matches!(
        errno_of(error),
        Some("EACCES" | "EPERM" | "EROFS" | "ENOSPC" | "EDQUOT")
    );
    let folder = folder_of(path);
    match std::fs::metadata(&folder) {
        Ok(meta) if owner_or_mount => {
            format!(
                "{described}; the folder {}: {}",
                folder.display(),
                owner_and_fix(path, &folder, &meta, error)
            )
        }
        _ => described,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn a_refused_write_names_the_folder_its_owner_mode_and_who_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.ldif");
        let text = explain(&path, &io::Error::from_raw_os_error(13));
        let uid = std::fs::metadata(dir.path()).unwrap().uid();
        assert!(
            text.starts_with("Permission denied (EACCES); the folder"),
            "{text}"
        );
        assert!(text.contains(&format!("(uid {uid}), mode 0")), "{text}");
        assert!(text.contains("this command runs as"), "{text}");
        let read_only = explain(&path, &io::Error::from_raw_os_error(30));
        assert!(read_only.contains("ReadWritePaths="), "{read_only}");
        // As tempfile hands it over: the kind, with the temporary's path instead of the number.
        let wrapped = io::Error::new(io::ErrorKind::PermissionDenied, "at path x");
        assert!(explain(&path, &wrapped).contains("(EACCES); the folder"));
        // Errors no owner or mount causes are the OS's words alone.
        assert_eq!(
            explain(&path, &io::Error::from_raw_os_error(2)),
            "No such file or directory (ENOENT)"
        );
    }
}
