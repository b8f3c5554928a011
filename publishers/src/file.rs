//! A file replaced atomically: the document is written to a temporary file in the same directory,
//! synced, then renamed over the target. A reader (a BDII, a web server) sees the old document or the
//! new one, never a half-written one, and a failed run leaves the old one in place.
//!
//! The file is created with mode 0666 less the process's umask, as any Unix tool writes its output
//! (tempfile's own default, 0600, would hide a published document from the BDII or web server that
//! reads it under another user).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::PublishError;

pub use crate::file_access::check_writable;

pub fn replace(path: &Path, document: &[u8]) -> Result<(), PublishError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let error = |source: std::io::Error| PublishError::File {
        path: path.to_owned(),
        why: crate::file_access::explain(path, &source),
        source,
    };
    let mut temp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(error)?;
    temp.write_all(document).map_err(error)?;
    temp.as_file().sync_all().map_err(error)?;
    temp.persist(path).map_err(|err| error(err.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.ldif");
        std::fs::write(&path, b"old contents that are longer").unwrap();
        replace(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_file_follows_the_umask_like_any_unix_tool() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.json");
        replace(&path, b"{}").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // The test process's umask, read without changing it for other threads: /proc shows it.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|line| line.strip_prefix("Umask:"))
            .map(|value| u32::from_str_radix(value.trim(), 8).unwrap())
            .unwrap();
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o} with umask {umask:o}");
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_path() {
        let err = replace(Path::new("/nonexistent-dir/x/site.ldif"), b"x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot write /nonexistent-dir/x/site.ldif"),
            "{err}"
        );
    }
}
