//! Files the CLI writes for an administrator (`init`, `token --output`, `token --add-to`): new
//! files are created with their mode from the start (a key or token is never readable by others,
//! not even for an instant) and never overwrite; an edited file is replaced atomically, keeping
//! its mode. Errors name the file.

use std::fs::{OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Why a file was not written: it exists (a usage error, exit 2) or the system refused (exit 1).
#[derive(Debug)]
pub enum WriteError {
    Exists(String),
    Io(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exists(message) | Self::Io(message) => f.write_str(message),
        }
    }
}

/// Creates `path` with `mode` holding `contents`; an existing file is left alone and refused.
pub fn create_new(path: &Path, contents: &[u8], mode: u32) -> Result<(), WriteError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::AlreadyExists => WriteError::Exists(format!(
                "{}: exists; nothing is overwritten (move it away first)",
                path.display()
            )),
            _ => WriteError::Io(format!("{}: {err}", path.display())),
        })?;
    // The umask may have taken bits the mode asked for (0644 under 027): set it exactly.
    let written = file
        .set_permissions(Permissions::from_mode(mode))
        .and_then(|()| file.write_all(contents))
        .and_then(|()| file.sync_all());
    written.map_err(|err| {
        let _ = std::fs::remove_file(path);
        WriteError::Io(format!("{}: {err}", path.display()))
    })
}

/// Creates the folder `path` (and those above it) when missing, `mode` for the ones made here.
pub fn create_folder(path: &Path, mode: u32) -> Result<(), WriteError> {
    use std::os::unix::fs::DirBuilderExt;
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)
        .map_err(|err| WriteError::Io(format!("{}: {err}", path.display())))
}

/// Replaces `path` with `contents` atomically (a temporary file beside it, renamed over it),
/// keeping the file's mode.
pub fn replace(path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    let io = |err: std::io::Error| WriteError::Io(format!("{}: {err}", path.display()));
    let mode = std::fs::metadata(path).map_err(io)?.permissions().mode() & 0o7777;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".accelfed-new");
    let temporary = path.with_file_name(name);
    let _ = std::fs::remove_file(&temporary);
    create_new(&temporary, contents, mode)?;
    std::fs::rename(&temporary, path).map_err(|err| {
        let _ = std::fs::remove_file(&temporary);
        io(err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_files_get_their_mode_and_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        create_new(&path, b"secret\n", 0o600).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let err = create_new(&path, b"other\n", 0o600).unwrap_err();
        assert!(matches!(err, WriteError::Exists(_)), "{err}");
        assert!(err.to_string().contains("token: exists"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"secret\n");
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("central.toml");
        create_new(&path, b"a = 1\n", 0o640).unwrap();
        replace(&path, b"a = 2\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a = 2\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }
}
